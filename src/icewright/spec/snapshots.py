"""Snapshots, snapshot references and the metadata history logs.

Spec sections: "Snapshots", "Snapshot References", "Table Metadata Fields"
(``snapshot-log``, ``metadata-log``) and Appendix C (JSON). Every value here is
immutable; the JSON codecs follow the reference implementation's key order so
a file written by icewright diffs cleanly against one written by Java.

The JSON readers and immutable mappings every metadata codec shares are in
:mod:`icewright.spec.documents`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from icewright.errors import InvalidMetadata, ValidationError
from icewright.spec.documents import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    StringMap,
    as_metadata_error,
    check_id,
    check_positive,
    json_list,
    json_object,
    opt_int,
    opt_long,
    opt_str,
    req_long,
    req_str,
    required_field,
    string_map,
)

MAIN_BRANCH = "main"
"""The branch that ``current-snapshot-id`` follows (spec: "Snapshot References")."""

# --- summary -----------------------------------------------------------------


class Operation(enum.StrEnum):
    """The snapshot summary ``operation`` (spec: "Snapshots")."""

    APPEND = "append"
    """Only data files were added; nothing was removed."""
    REPLACE = "replace"
    """Files were added and removed without changing table data (compaction)."""
    OVERWRITE = "overwrite"
    """Files were added and removed in a logical overwrite."""
    DELETE = "delete"
    """Data files were removed or delete files added to delete rows."""

    def __str__(self) -> str:
        return self.value


class Summary(StringMap):
    """A snapshot summary: the required ``operation`` plus other string fields.

    As a mapping it holds every key of the JSON object, ``"operation"`` included,
    so ``summary["added-records"]`` and ``summary["operation"]`` both work.

    >>> s = Summary(Operation.APPEND, {"added-records": "3"})
    >>> s.operation, s["added-records"]
    (<Operation.APPEND: 'append'>, '3')
    """

    __slots__ = ("_operation",)

    def __init__(
        self, operation: Operation | str, properties: Mapping[str, str] | None = None
    ) -> None:
        op = _operation(operation)
        extra = dict(properties or {})
        given = extra.pop("operation", op.value)
        if given != op.value:
            raise ValidationError(
                f"summary operation {op.value!r} conflicts with the 'operation' entry {given!r}"
            )
        super().__init__({"operation": op.value, **extra})
        self._operation = op

    @property
    def operation(self) -> Operation:
        """What kind of change the snapshot made."""
        return self._operation

    def properties(self) -> dict[str, str]:
        """The summary entries other than ``operation``."""
        return {k: v for k, v in self._data.items() if k != "operation"}

    def to_json(self) -> dict[str, str]:
        """The JSON object, ``operation`` first (as Java writes it)."""
        return dict(self._data)

    @classmethod
    def from_json(cls, obj: Any) -> Summary | None:
        """Parse a summary object; an empty object means "no summary" (None).

        Like the reference implementation, a non-empty summary without an
        ``operation`` is read as ``overwrite``, the operation that claims least.
        """
        entries = json_object(obj, "snapshot summary")
        if not entries:
            return None
        # Checked once here and built directly (not through __init__, which would copy and
        # check every entry again): a table's metadata holds a summary per snapshot.
        if not all(k.__class__ is str and v.__class__ is str for k, v in entries.items()):
            string_map(entries, "snapshot summary")  # raises, naming the entry
        op_name = entries.get("operation", Operation.OVERWRITE.value)
        op = _OPERATIONS.get(op_name) if isinstance(op_name, str) else None
        if op is None:
            return as_metadata_error("snapshot summary", lambda: cls(op_name, entries))
        summary = cls.__new__(cls)
        summary._data = {"operation": op.value}
        summary._data.update(entries)
        summary._operation = op
        return summary

    def __repr__(self) -> str:
        return f"Summary({self._operation.value!r}, {self.properties()!r})"


_OPERATIONS = {o.value: o for o in Operation}


def _operation(value: Operation | str) -> Operation:
    if isinstance(value, Operation):
        return value
    try:
        return Operation(value)
    except ValueError:
        allowed = ", ".join(o.value for o in Operation)
        raise ValidationError(
            f"unknown snapshot operation {value!r}: it must be one of {allowed}"
        ) from None


# --- snapshot ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Snapshot:
    """One snapshot of a table (spec: "Snapshots").

    ``manifest_list`` is required from v2 on; a v1 snapshot may list its
    ``manifests`` inline instead, which is kept as read. ``summary`` is None
    for old v1 snapshots that have none (the operation is then unknown).
    ``sequence_number`` is 0 for v1 snapshots. ``first_row_id``,
    ``added_rows`` and ``key_id`` are the v3 row-lineage and encryption fields.
    """

    snapshot_id: int
    timestamp_ms: int
    manifest_list: str | None = None
    summary: Summary | None = None
    parent_snapshot_id: int | None = None
    sequence_number: int = 0
    schema_id: int | None = None
    manifests: tuple[str, ...] | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None

    def __post_init__(self) -> None:
        check_id(self.snapshot_id, "snapshot-id")
        check_id(self.timestamp_ms, "snapshot timestamp-ms")
        check_id(self.sequence_number, "snapshot sequence-number")
        if self.sequence_number < 0:
            raise ValidationError(f"sequence-number must not be negative: {self.sequence_number}")
        if self.manifests is not None:
            object.__setattr__(self, "manifests", tuple(self.manifests))
        # Spec: "manifests ... Must be omitted if manifest-list is present".
        if self.manifest_list is not None and self.manifests is not None:
            raise ValidationError(
                f"snapshot {self.snapshot_id} has both a manifest-list and inline manifests; "
                "keep only the manifest-list"
            )
        if self.manifest_list is None and self.manifests is None:
            raise ValidationError(
                f"snapshot {self.snapshot_id} has neither a manifest-list nor a manifests list"
            )
        for key, value in (("first-row-id", self.first_row_id), ("added-rows", self.added_rows)):
            if value is not None:
                check_id(value, f"snapshot {key}")
                if value < 0:
                    raise ValidationError(f"snapshot {key} must not be negative, got {value}")

    @property
    def operation(self) -> Operation | None:
        """The summary's operation, or None when the snapshot has no summary."""
        return None if self.summary is None else self.summary.operation

    def to_json(self, format_version: int = 2) -> dict[str, Any]:
        """The Appendix C JSON object for a table of this format version.

        v1 omits ``sequence-number`` (Appendix E, "Writing v1 metadata").
        """
        out: dict[str, Any] = {}
        if format_version >= 2:
            out["sequence-number"] = self.sequence_number
        out["snapshot-id"] = self.snapshot_id
        if self.parent_snapshot_id is not None:
            out["parent-snapshot-id"] = self.parent_snapshot_id
        out["timestamp-ms"] = self.timestamp_ms
        if self.summary is not None:
            out["summary"] = self.summary.to_json()
        if self.manifest_list is not None:
            out["manifest-list"] = self.manifest_list
        else:
            out["manifests"] = list(self.manifests or ())
        if self.schema_id is not None:
            out["schema-id"] = self.schema_id
        if self.first_row_id is not None:
            out["first-row-id"] = self.first_row_id
        if self.added_rows is not None:
            out["added-rows"] = self.added_rows
        if self.key_id is not None:
            out["key-id"] = self.key_id
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Snapshot:
        """Parse a snapshot object of any format version.

        Reading is lenient in the way the spec asks ("Implementations should
        remain backward-compatible with v1 metadata requirements"): a v2 table
        upgraded from v1 may still hold v1 snapshots, so a missing
        ``sequence-number`` reads as 0 and a missing summary as None.
        """
        o = json_object(obj, "a snapshot")
        fast = _plain_snapshot(cls, o)
        if fast is not None:
            return fast
        what = "snapshot"
        snapshot_id = req_long(o, "snapshot-id", what)
        what = f"snapshot {snapshot_id}"
        summary = None if o.get("summary") is None else Summary.from_json(o["summary"])
        manifest_list = opt_str(o, "manifest-list", what)
        manifests: tuple[str, ...] | None = None
        if manifest_list is None:
            raw = json_list(required_field(o, "manifests", what + " (no manifest-list)"), what)
            if not all(isinstance(m, str) for m in raw):
                raise InvalidMetadata(f"{what} field 'manifests' must be a list of strings")
            manifests = tuple(raw)
        return as_metadata_error(
            what,
            lambda: cls(
                snapshot_id=snapshot_id,
                timestamp_ms=req_long(o, "timestamp-ms", what),
                manifest_list=manifest_list,
                manifests=manifests,
                summary=summary,
                parent_snapshot_id=opt_long(o, "parent-snapshot-id", what),
                sequence_number=opt_long(o, "sequence-number", what) or 0,
                schema_id=opt_int(o, "schema-id", what),
                first_row_id=opt_long(o, "first-row-id", what),
                added_rows=opt_long(o, "added-rows", what),
                key_id=opt_str(o, "key-id", what),
            ),
        )


PLAIN_SNAPSHOT_KEYS = frozenset(
    "sequence-number snapshot-id parent-snapshot-id timestamp-ms summary manifest-list "  # noqa: SIM905
    "schema-id".split()
)


def _is_long(value: Any) -> TypeGuard[int]:
    return value.__class__ is int and LONG_MIN <= value <= LONG_MAX


def _long_or_none(value: Any) -> bool:
    return value is None or _is_long(value)


def _plain_snapshot(cls: type[Snapshot], o: dict[str, Any]) -> Snapshot | None:
    """The snapshot of a v2-style object whose every value is well formed, else None.

    For speed: a table's metadata holds a snapshot per commit, and the general reader's
    per-field helpers cost more than building the snapshot. Anything unusual (v1 inline
    manifests, v3 fields, a wrong type or range) returns None and goes the general way,
    which also words the errors.
    """
    if not o.keys() <= PLAIN_SNAPSHOT_KEYS:
        return None
    snapshot_id = o.get("snapshot-id")
    timestamp_ms = o.get("timestamp-ms")
    manifest_list = o.get("manifest-list")
    sequence_number = o.get("sequence-number")
    parent = o.get("parent-snapshot-id")
    schema_id = o.get("schema-id")
    summary = o.get("summary")
    if (
        snapshot_id is None
        or timestamp_ms is None
        or manifest_list.__class__ is not str
        or not _long_or_none(snapshot_id)
        or not _long_or_none(timestamp_ms)
        or not _long_or_none(sequence_number)
        or not _long_or_none(parent)
        or not (
            schema_id is None or (schema_id.__class__ is int and INT_MIN <= schema_id <= INT_MAX)
        )
        or (sequence_number is not None and sequence_number < 0)
        or not (summary is None or summary.__class__ is dict)
    ):
        return None
    try:
        return cls(
            snapshot_id=snapshot_id,
            timestamp_ms=timestamp_ms,
            manifest_list=manifest_list,
            summary=None if summary is None else Summary.from_json(summary),
            parent_snapshot_id=parent,
            sequence_number=sequence_number or 0,
            schema_id=schema_id,
        )
    except ValidationError:
        return None


def written_as_read(o: Any, format_version: int) -> bool:
    """Whether the snapshot object ``o`` read from a file of ``format_version`` equals, as
    a JSON value, what :meth:`Snapshot.to_json` writes for the snapshot parsed from it: only
    the plain fields, none of them null, a sequence number exactly from v2 on, and a summary
    that names its operation (an empty one reads as none, one without an operation as an
    overwrite)."""
    if not isinstance(o, dict) or not o.keys() <= PLAIN_SNAPSHOT_KEYS:
        return False
    if ("sequence-number" in o) != (format_version >= 2) or None in o.values():
        return False
    summary = o.get("summary")
    return summary is None or (isinstance(summary, dict) and "operation" in summary)


def _read_plain_in_python(
    objects: list[Any], format_version: int
) -> tuple[list[Snapshot | None], list[int]]:
    snapshots = [_plain_snapshot(Snapshot, o) if o.__class__ is dict else None for o in objects]
    written = [
        i
        for i, (snapshot, o) in enumerate(zip(snapshots, objects, strict=True))
        if snapshot is not None and written_as_read(o, format_version)
    ]
    return snapshots, written


try:  # built from _snapshots.pyx when the package is installed; Python does the same, slower
    from icewright.spec._snapshots import SnapshotReader

    _COMPILED_READER: SnapshotReader | None = SnapshotReader(Snapshot, Summary, _OPERATIONS)
except ImportError:  # pragma: no cover - a build without a C compiler
    _COMPILED_READER = None


def read_plain_snapshots(
    objects: list[Any], format_version: int
) -> tuple[list[Snapshot | None], list[int]]:
    """The snapshots of a metadata file's ``snapshots`` objects, built in one pass.

    Each object that :func:`_plain_snapshot` would build (the fields every engine writes
    for a v2 table, each well formed) gives its snapshot, any other None: the caller reads
    those with :meth:`Snapshot.from_json`, which words the errors. The second list holds
    the positions of the built snapshots whose object is :func:`written_as_read`. A table
    loads its whole history before its first commit in a process, so this runs compiled
    (``_snapshots.pyx``) when the package was built with it.
    """
    if _COMPILED_READER is not None:
        return _COMPILED_READER.read(objects, format_version)
    return _read_plain_in_python(objects, format_version)


# --- references --------------------------------------------------------------


class SnapshotRefType(enum.StrEnum):
    """Whether a reference is a mutable branch or a fixed tag."""

    BRANCH = "branch"
    TAG = "tag"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class SnapshotRef:
    """A named branch or tag (spec: "Snapshot References").

    The retention fields are optional and must be positive. Only branches may
    carry ``min_snapshots_to_keep`` and ``max_snapshot_age_ms``; any reference
    except ``main`` may carry ``max_ref_age_ms`` (the spec says ``main`` never
    expires, but that is enforced where refs are expired, not here).
    """

    snapshot_id: int
    type: SnapshotRefType = SnapshotRefType.BRANCH
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    def __post_init__(self) -> None:
        check_id(self.snapshot_id, "reference snapshot-id")
        if not isinstance(self.type, SnapshotRefType):
            try:
                object.__setattr__(self, "type", SnapshotRefType(self.type))
            except ValueError:
                raise ValidationError(
                    f"unknown reference type {self.type!r}: it must be 'branch' or 'tag'"
                ) from None
        check_positive(self.min_snapshots_to_keep, "min-snapshots-to-keep")
        check_positive(self.max_snapshot_age_ms, "max-snapshot-age-ms")
        check_positive(self.max_ref_age_ms, "max-ref-age-ms")
        if self.type is SnapshotRefType.TAG and (
            self.min_snapshots_to_keep is not None or self.max_snapshot_age_ms is not None
        ):
            raise ValidationError(
                "a tag cannot carry min-snapshots-to-keep or max-snapshot-age-ms: "
                "those retention settings are for branches only; drop them or make it a branch"
            )

    @property
    def is_branch(self) -> bool:
        """True for a branch."""
        return self.type is SnapshotRefType.BRANCH

    @property
    def is_tag(self) -> bool:
        """True for a tag."""
        return self.type is SnapshotRefType.TAG

    def to_json(self) -> dict[str, Any]:
        """The Appendix C JSON object."""
        out: dict[str, Any] = {"snapshot-id": self.snapshot_id, "type": self.type.value}
        if self.min_snapshots_to_keep is not None:
            out["min-snapshots-to-keep"] = self.min_snapshots_to_keep
        if self.max_snapshot_age_ms is not None:
            out["max-snapshot-age-ms"] = self.max_snapshot_age_ms
        if self.max_ref_age_ms is not None:
            out["max-ref-age-ms"] = self.max_ref_age_ms
        return out

    @classmethod
    def from_json(cls, obj: Any) -> SnapshotRef:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "snapshot reference"
        o = json_object(obj, f"a {what}")
        ref_type = req_str(o, "type", what).lower()
        if ref_type not in ("branch", "tag"):
            raise InvalidMetadata(f"{what} type {ref_type!r} is neither 'branch' nor 'tag'")
        return as_metadata_error(
            what,
            lambda: cls(
                snapshot_id=req_long(o, "snapshot-id", what),
                type=SnapshotRefType(ref_type),
                min_snapshots_to_keep=opt_int(o, "min-snapshots-to-keep", what),
                max_snapshot_age_ms=opt_long(o, "max-snapshot-age-ms", what),
                max_ref_age_ms=opt_long(o, "max-ref-age-ms", what),
            ),
        )


# --- history logs ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SnapshotLogEntry:
    """One ``snapshot-log`` entry: when ``current-snapshot-id`` changed, and to what."""

    timestamp_ms: int
    snapshot_id: int

    def to_json(self) -> dict[str, Any]:
        """The Appendix C JSON object."""
        return {"timestamp-ms": self.timestamp_ms, "snapshot-id": self.snapshot_id}

    @classmethod
    def from_json(cls, obj: Any) -> SnapshotLogEntry:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        if obj.__class__ is dict:
            # The common, well-formed case without the per-field helpers (a table has an
            # entry per commit); anything else goes the checked way, for its message.
            timestamp, snapshot_id = obj.get("timestamp-ms"), obj.get("snapshot-id")
            if _is_long(timestamp) and _is_long(snapshot_id):
                return cls(timestamp, snapshot_id)
        what = "snapshot-log entry"
        o = json_object(obj, f"a {what}")
        return cls(req_long(o, "timestamp-ms", what), req_long(o, "snapshot-id", what))


@dataclass(frozen=True, slots=True)
class MetadataLogEntry:
    """One ``metadata-log`` entry: a previous metadata file and its last-updated-ms."""

    timestamp_ms: int
    metadata_file: str

    def to_json(self) -> dict[str, Any]:
        """The Appendix C JSON object."""
        return {"timestamp-ms": self.timestamp_ms, "metadata-file": self.metadata_file}

    @classmethod
    def from_json(cls, obj: Any) -> MetadataLogEntry:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        if obj.__class__ is dict:
            timestamp, metadata_file = obj.get("timestamp-ms"), obj.get("metadata-file")
            if _is_long(timestamp) and isinstance(metadata_file, str):
                return cls(timestamp, metadata_file)
        what = "metadata-log entry"
        o = json_object(obj, f"a {what}")
        return cls(req_long(o, "timestamp-ms", what), req_str(o, "metadata-file", what))
