"""View metadata (the Iceberg view spec, format version 1).

A view is a stored SQL definition: its metadata file lists the known schemas,
the versions of the definition (each with one SQL text per dialect), the log of
changes to the current version, and properties. Every value is immutable.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.spec.documents import (
    EMPTY_STRING_MAP,
    FrozenMap,
    StringMap,
    as_metadata_error,
    check_unique_ids,
    dump_document,
    freeze_json,
    join_ids,
    json_list,
    json_object,
    load_document,
    opt_str,
    req_int,
    req_long,
    req_str,
    required_field,
    string_map,
    thaw_json,
)
from icewright.spec.schema import Schema

SUPPORTED_VIEW_FORMAT_VERSIONS = (1,)
"""The view format versions icewright reads and writes (the view spec: "must be 1")."""

VERSION_HISTORY_SIZE = "version.history.num-entries"
"""View property: how many versions to keep (view spec note 1)."""


@dataclass(frozen=True, slots=True)
class SQLViewRepresentation:
    """The ``sql`` representation: a SELECT statement in one SQL dialect."""

    sql: str
    dialect: str

    type = "sql"

    def __post_init__(self) -> None:
        if not isinstance(self.sql, str) or not self.sql:
            raise ValidationError("a SQL view representation needs a non-empty 'sql' string")
        if not isinstance(self.dialect, str) or not self.dialect:
            raise ValidationError(
                "a SQL view representation needs a 'dialect' such as 'spark' or 'trino'"
            )

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the view spec."""
        return {"type": "sql", "sql": self.sql, "dialect": self.dialect}


@dataclass(frozen=True, slots=True)
class UnknownViewRepresentation:
    """A representation of a type this version of icewright does not know.

    The spec allows other representation types; the object is kept as read so
    that rewriting the metadata does not drop another engine's definition.
    """

    type: str
    raw: FrozenMap[str, Any] = field(default_factory=FrozenMap)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the view spec."""
        out: dict[str, Any] = thaw_json(self.raw)
        out.setdefault("type", self.type)
        return out


ViewRepresentation = SQLViewRepresentation | UnknownViewRepresentation


def representation_from_json(obj: Any) -> ViewRepresentation:
    """Parse one entry of a version's ``representations`` list."""
    what = "view representation"
    o = json_object(obj, f"a {what}")
    rep_type = req_str(o, "type", what).lower()
    if rep_type == "sql":
        return as_metadata_error(
            "SQL view representation",
            lambda: SQLViewRepresentation(
                sql=req_str(o, "sql", "SQL view representation"),
                dialect=req_str(o, "dialect", "SQL view representation"),
            ),
        )
    return UnknownViewRepresentation(rep_type, freeze_json(o))


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewVersion:
    """One version of the view definition (view spec: "Versions").

    ``default_namespace`` is the namespace (as levels) used for single-part
    names in the SQL; ``default_catalog`` None means the view's own catalog.
    """

    version_id: int
    timestamp_ms: int
    schema_id: int
    representations: tuple[ViewRepresentation, ...]
    default_namespace: tuple[str, ...]
    summary: StringMap = EMPTY_STRING_MAP
    default_catalog: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "representations", tuple(self.representations))
        object.__setattr__(self, "default_namespace", tuple(self.default_namespace))
        if not isinstance(self.summary, StringMap):
            object.__setattr__(self, "summary", StringMap(self.summary))
        if not all(isinstance(level, str) for level in self.default_namespace):
            raise ValidationError(
                f"view version {self.version_id}: default-namespace must be a list of strings"
            )
        # View spec: "only one SQL representation per dialect". Java compares
        # dialects case-insensitively, so "Spark" and "spark" collide.
        seen: set[str] = set()
        for rep in self.representations:
            if isinstance(rep, SQLViewRepresentation):
                dialect = rep.dialect.lower()
                if dialect in seen:
                    raise ValidationError(
                        f"view version {self.version_id} has more than one SQL representation "
                        f"for dialect {dialect!r}; keep one query per dialect"
                    )
                seen.add(dialect)

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The SQL representation of this dialect (case-insensitive), if any."""
        for rep in self.representations:
            if isinstance(rep, SQLViewRepresentation) and rep.dialect.lower() == dialect.lower():
                return rep
        return None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the view spec."""
        out: dict[str, Any] = {
            "version-id": self.version_id,
            "timestamp-ms": self.timestamp_ms,
            "schema-id": self.schema_id,
            "summary": self.summary.to_dict(),
        }
        if self.default_catalog is not None:
            out["default-catalog"] = self.default_catalog
        out["default-namespace"] = list(self.default_namespace)
        out["representations"] = [r.to_json() for r in self.representations]
        return out

    @classmethod
    def from_json(cls, obj: Any) -> ViewVersion:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "view version"
        o = json_object(obj, f"a {what}")
        version_id = req_int(o, "version-id", what)
        what = f"view version {version_id}"
        reps = json_list(required_field(o, "representations", what), f"{what} representations")
        namespace = json_list(required_field(o, "default-namespace", what), f"{what} namespace")
        return as_metadata_error(
            what,
            lambda: cls(
                version_id=version_id,
                timestamp_ms=req_long(o, "timestamp-ms", what),
                schema_id=req_int(o, "schema-id", what),
                summary=string_map(required_field(o, "summary", what), f"{what} summary"),
                representations=tuple(representation_from_json(r) for r in reps),
                default_namespace=tuple(namespace),
                default_catalog=opt_str(o, "default-catalog", what),
            ),
        )


@dataclass(frozen=True, slots=True)
class ViewHistoryEntry:
    """One ``version-log`` entry: when ``current-version-id`` was set, and to what."""

    timestamp_ms: int
    version_id: int

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the view spec."""
        return {"timestamp-ms": self.timestamp_ms, "version-id": self.version_id}

    @classmethod
    def from_json(cls, obj: Any) -> ViewHistoryEntry:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "view version-log entry"
        o = json_object(obj, f"a {what}")
        return cls(req_long(o, "timestamp-ms", what), req_int(o, "version-id", what))


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewMetadata:
    """The content of a view metadata file (view spec: "View Metadata")."""

    view_uuid: uuid.UUID
    location: str
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...]
    schemas: tuple[Schema, ...]
    properties: StringMap = EMPTY_STRING_MAP
    format_version: int = 1

    def __post_init__(self) -> None:
        if self.format_version not in SUPPORTED_VIEW_FORMAT_VERSIONS:
            raise UnsupportedFormatVersion(
                f"view format-version {self.format_version} is not supported: icewright "
                f"supports view format version(s) {join_ids(SUPPORTED_VIEW_FORMAT_VERSIONS)}; "
                "use a newer icewright to read this view"
            )
        if not isinstance(self.view_uuid, uuid.UUID):
            raise ValidationError(f"view-uuid must be a UUID, got {self.view_uuid!r}")
        if not isinstance(self.location, str) or not self.location:
            raise ValidationError("a view needs a non-empty location")
        for name in ("versions", "version_log", "schemas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not isinstance(self.properties, StringMap):
            object.__setattr__(self, "properties", StringMap(self.properties))
        if not self.versions:
            raise ValidationError("a view needs at least one version")
        check_unique_ids((v.version_id for v in self.versions), "view version-id")
        check_unique_ids((s.schema_id for s in self.schemas), "view schema-id")
        schema_ids = {s.schema_id for s in self.schemas}
        for version in self.versions:
            if version.schema_id not in schema_ids:
                raise ValidationError(
                    f"view version {version.version_id} refers to schema-id {version.schema_id}, "
                    f"which is not in the view's schemas {sorted(schema_ids)}"
                )
        if self.current_version_id not in {v.version_id for v in self.versions}:
            raise ValidationError(
                f"current-version-id {self.current_version_id} is not one of the view's "
                f"versions {[v.version_id for v in self.versions]}"
            )

    # --- accessors ------------------------------------------------------------

    def current_version(self) -> ViewVersion:
        """The version the view currently resolves to."""
        return self.version_by_id(self.current_version_id)

    def version_by_id(self, version_id: int) -> ViewVersion:
        """The version with this id; :class:`ValidationError` if there is none."""
        for version in self.versions:
            if version.version_id == version_id:
                return version
        raise ValidationError(f"the view has no version with id {version_id}")

    def schema_by_id(self, schema_id: int) -> Schema:
        """The schema with this id; :class:`ValidationError` if there is none."""
        for schema in self.schemas:
            if schema.schema_id == schema_id:
                return schema
        raise ValidationError(f"the view has no schema with id {schema_id}")

    def schema(self) -> Schema:
        """The schema of the current version."""
        return self.schema_by_id(self.current_version().schema_id)

    def property(self, key: str, default: str | None = None) -> str | None:
        """A view property, or ``default``."""
        return self.properties.get(key, default)

    # --- JSON -----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, in the key order Java writes."""
        out: dict[str, Any] = {
            "view-uuid": str(self.view_uuid),
            "format-version": self.format_version,
            "location": self.location,
        }
        if self.properties:
            out["properties"] = self.properties.to_dict()
        out["schemas"] = [s.to_json() for s in self.schemas]
        out["current-version-id"] = self.current_version_id
        out["versions"] = [v.to_json() for v in self.versions]
        out["version-log"] = [e.to_json() for e in self.version_log]
        return out

    def to_json(self) -> bytes:
        """The metadata file content: UTF-8 JSON."""
        return dump_document(self.to_dict())

    @classmethod
    def from_json(cls, data: bytes | bytearray | str | Mapping[str, Any]) -> ViewMetadata:
        """Parse a view metadata file (bytes, text, or a parsed JSON object).

        Raises :class:`UnsupportedFormatVersion` for a format version other
        than 1 and :class:`InvalidMetadata` for anything malformed.
        """
        what = "view metadata"
        o = load_document(data, what)
        version = req_int(o, "format-version", what)
        if version not in SUPPORTED_VIEW_FORMAT_VERSIONS:
            raise UnsupportedFormatVersion(
                f"view format-version {version} is not supported: icewright supports view "
                f"format version(s) {join_ids(SUPPORTED_VIEW_FORMAT_VERSIONS)}"
            )
        raw_uuid = req_str(o, "view-uuid", what)
        try:
            view_uuid = uuid.UUID(raw_uuid)
        except ValueError:
            raise InvalidMetadata(f"view-uuid {raw_uuid!r} is not a UUID") from None
        schemas = tuple(
            _schema_from_json(s)
            for s in json_list(required_field(o, "schemas", what), "view schemas")
        )
        versions = tuple(
            ViewVersion.from_json(v)
            for v in json_list(required_field(o, "versions", what), "view versions")
        )
        log = tuple(
            ViewHistoryEntry.from_json(e)
            for e in json_list(required_field(o, "version-log", what), "view version-log")
        )
        props = o.get("properties")
        return as_metadata_error(
            what,
            lambda: cls(
                view_uuid=view_uuid,
                format_version=version,
                location=req_str(o, "location", what),
                current_version_id=req_int(o, "current-version-id", what),
                versions=versions,
                version_log=log,
                schemas=schemas,
                properties=EMPTY_STRING_MAP
                if props is None
                else string_map(props, "view properties"),
            ),
        )


def _schema_from_json(obj: Any) -> Schema:
    return as_metadata_error("view schema", lambda: Schema.from_json(obj))
