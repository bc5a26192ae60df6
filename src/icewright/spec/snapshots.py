"""Snapshots, snapshot references and the metadata history logs.

Spec sections: "Snapshots", "Snapshot References", "Table Metadata Fields"
(``snapshot-log``, ``metadata-log``) and Appendix C (JSON). Every value here is
immutable; the JSON codecs follow the reference implementation's key order so
a file written by icewright diffs cleanly against one written by Java.

This module also holds the small JSON readers and the immutable mapping types
that the other metadata codecs (statistics, table and view metadata) share.
"""

from __future__ import annotations

import enum
import gzip
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, TypeVar

from icewright.errors import InvalidMetadata, ValidationError

MAIN_BRANCH = "main"
"""The branch that ``current-snapshot-id`` follows (spec: "Snapshot References")."""

_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1
_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


# --- immutable mappings ------------------------------------------------------


class FrozenMap(Mapping[K, V]):
    """An immutable, hashable mapping that keeps insertion order.

    Used for every map field of the metadata (properties, refs, summaries), so
    metadata objects stay frozen all the way down.
    """

    __slots__ = ("_data",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(items)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def to_dict(self) -> dict[K, V]:
        """A mutable copy, in insertion order."""
        return dict(self._data)


class StringMap(FrozenMap[str, str]):
    """An immutable string-to-string map (properties, summaries).

    The spec stores properties and summaries as ``map<string, string>``; a
    non-string key or value is refused here rather than written as-is.
    """

    __slots__ = ()

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(items)
        for key, value in self._data.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ValidationError(
                    f"string map entry {key!r}: {value!r} is not a string pair; "
                    "Iceberg properties and summaries hold strings only (write numbers as '120')"
                )


EMPTY_STRING_MAP = StringMap()


# --- JSON readers shared by the metadata codecs ------------------------------


def _load_document(data: bytes | bytearray | str | Mapping[str, Any], what: str) -> dict[str, Any]:
    """Decode a metadata document given as UTF-8 bytes, text or an already parsed object.

    GZIP-compressed bytes are accepted too: the spec allows metadata JSON files
    to be compressed (Appendix C, "Table Metadata and Snapshots").
    """
    if isinstance(data, Mapping):
        return _json_object(dict(data), what)
    if isinstance(data, bytes | bytearray):
        raw = bytes(data)
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise InvalidMetadata(
                    f"{what} is GZIP data that cannot be decompressed: {exc}"
                ) from None
        try:
            # utf-8-sig: a leading byte-order mark is tolerated, as JSON parsers do.
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidMetadata(f"{what} is not UTF-8 text: {exc}") from None
    elif isinstance(data, str):
        text = data
    else:
        raise InvalidMetadata(f"{what} must be given as bytes, str or dict, got {type(data)}")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidMetadata(
            f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "the file is corrupt or not a metadata file"
        ) from None
    return _json_object(parsed, what)


def _dump_document(obj: Mapping[str, Any]) -> bytes:
    """Serialize a metadata document as compact UTF-8 JSON.

    The spec prescribes no layout, and Java, pyiceberg and DuckDB read any. Compact
    output is what the standard library's C encoder produces in one call; an indented
    document is a third larger and is encoded node by node in Python, which for a table
    with a long history (thousands of snapshots) was most of a commit's time.
    """
    return _COMPACT.encode(obj).encode("utf-8")


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _freeze_json(value: Any) -> Any:
    """Deep-freeze a parsed JSON value (objects to FrozenMap, lists to tuples)."""
    if isinstance(value, Mapping):
        return FrozenMap((k, _freeze_json(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_freeze_json(v) for v in value)
    return value


def _thaw_json(value: Any) -> Any:
    """The inverse of :func:`_freeze_json`: plain dicts and lists again."""
    if isinstance(value, Mapping):
        return {k: _thaw_json(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw_json(v) for v in value]
    return value


def _json_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidMetadata(f"{what} must be a JSON object, got {_show(value)}")
    return value


def _json_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidMetadata(f"{what} must be a JSON list, got {_show(value)}")
    return value


def _required(obj: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in obj or obj[key] is None:
        raise InvalidMetadata(f"{what} is missing the required field {key!r}")
    return obj[key]


def _check_int(value: Any, what: str, low: int = _LONG_MIN, high: int = _LONG_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMetadata(f"{what} must be an integer, got {_show(value)}")
    if not low <= value <= high:
        raise InvalidMetadata(f"{what} = {value} is out of range [{low}, {high}]")
    return value


def _req_long(obj: Mapping[str, Any], key: str, what: str) -> int:
    return _check_int(_required(obj, key, what), f"{what} field {key!r}")


def _req_int(obj: Mapping[str, Any], key: str, what: str) -> int:
    return _check_int(_required(obj, key, what), f"{what} field {key!r}", _INT_MIN, _INT_MAX)


def _opt_long(obj: Mapping[str, Any], key: str, what: str) -> int | None:
    value = obj.get(key)
    return None if value is None else _check_int(value, f"{what} field {key!r}")


def _opt_int(obj: Mapping[str, Any], key: str, what: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    return _check_int(value, f"{what} field {key!r}", _INT_MIN, _INT_MAX)


def _req_str(obj: Mapping[str, Any], key: str, what: str) -> str:
    value = _required(obj, key, what)
    if not isinstance(value, str):
        raise InvalidMetadata(f"{what} field {key!r} must be a string, got {_show(value)}")
    return value


def _opt_str(obj: Mapping[str, Any], key: str, what: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidMetadata(f"{what} field {key!r} must be a string, got {_show(value)}")
    return value


def _string_map(value: Any, what: str) -> StringMap:
    obj = _json_object(value, what)
    for key, item in obj.items():
        if not isinstance(item, str):
            raise InvalidMetadata(
                f"{what} entry {key!r} must be a string, got {_show(item)}; "
                "Iceberg maps of this kind hold strings only"
            )
    return StringMap(obj)


def _parse(what: str, build: Callable[[], T]) -> T:
    """Run ``build``, turning a plain ValidationError into InvalidMetadata.

    Constructors raise :class:`ValidationError` for bad arguments; when the bad
    value came from a file, the caller should see :class:`InvalidMetadata`.
    Subclasses such as UnsupportedFormatVersion pass through unchanged.
    """
    try:
        return build()
    except ValidationError as exc:
        if type(exc) is ValidationError:
            raise InvalidMetadata(f"invalid {what}: {exc}") from exc
        raise


def _check_unique(ids: Iterable[int], what: str) -> None:
    seen: set[int] = set()
    for item in ids:
        if item in seen:
            raise ValidationError(f"{what} {item} appears more than once; ids must be unique")
        seen.add(item)


def _join(versions: Iterable[int]) -> str:
    return ", ".join(str(v) for v in versions)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_positive(value: int | None, what: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValidationError(f"{what} must be a positive integer, got {value!r}")


def _check_id(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be an integer, got {value!r}")


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
        entries = _json_object(obj, "snapshot summary")
        if not entries:
            return None
        # Checked once here and built directly (not through __init__, which would copy and
        # check every entry again): a table's metadata holds a summary per snapshot.
        if not all(k.__class__ is str and v.__class__ is str for k, v in entries.items()):
            _string_map(entries, "snapshot summary")  # raises, naming the entry
        op_name = entries.get("operation", Operation.OVERWRITE.value)
        op = _OPERATIONS.get(op_name) if isinstance(op_name, str) else None
        if op is None:
            return _parse("snapshot summary", lambda: cls(op_name, entries))
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
        _check_id(self.snapshot_id, "snapshot-id")
        _check_id(self.timestamp_ms, "snapshot timestamp-ms")
        _check_id(self.sequence_number, "snapshot sequence-number")
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
                _check_id(value, f"snapshot {key}")
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
        o = _json_object(obj, "a snapshot")
        fast = _plain_snapshot(cls, o)
        if fast is not None:
            return fast
        what = "snapshot"
        snapshot_id = _req_long(o, "snapshot-id", what)
        what = f"snapshot {snapshot_id}"
        summary = None if o.get("summary") is None else Summary.from_json(o["summary"])
        manifest_list = _opt_str(o, "manifest-list", what)
        manifests: tuple[str, ...] | None = None
        if manifest_list is None:
            raw = _json_list(_required(o, "manifests", what + " (no manifest-list)"), what)
            if not all(isinstance(m, str) for m in raw):
                raise InvalidMetadata(f"{what} field 'manifests' must be a list of strings")
            manifests = tuple(raw)
        return _parse(
            what,
            lambda: cls(
                snapshot_id=snapshot_id,
                timestamp_ms=_req_long(o, "timestamp-ms", what),
                manifest_list=manifest_list,
                manifests=manifests,
                summary=summary,
                parent_snapshot_id=_opt_long(o, "parent-snapshot-id", what),
                sequence_number=_opt_long(o, "sequence-number", what) or 0,
                schema_id=_opt_int(o, "schema-id", what),
                first_row_id=_opt_long(o, "first-row-id", what),
                added_rows=_opt_long(o, "added-rows", what),
                key_id=_opt_str(o, "key-id", what),
            ),
        )


_PLAIN_SNAPSHOT_KEYS = frozenset(
    "sequence-number snapshot-id parent-snapshot-id timestamp-ms summary manifest-list "  # noqa: SIM905
    "schema-id".split()
)


def _is_long(value: Any) -> TypeGuard[int]:
    return value.__class__ is int and _LONG_MIN <= value <= _LONG_MAX


def _long_or_none(value: Any) -> bool:
    return value is None or _is_long(value)


def _plain_snapshot(cls: type[Snapshot], o: dict[str, Any]) -> Snapshot | None:
    """The snapshot of a v2-style object whose every value is well formed, else None.

    For speed: a table's metadata holds a snapshot per commit, and the general reader's
    per-field helpers cost more than building the snapshot. Anything unusual (v1 inline
    manifests, v3 fields, a wrong type or range) returns None and goes the general way,
    which also words the errors.
    """
    if not o.keys() <= _PLAIN_SNAPSHOT_KEYS:
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
            schema_id is None or (schema_id.__class__ is int and _INT_MIN <= schema_id <= _INT_MAX)
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
        _check_id(self.snapshot_id, "reference snapshot-id")
        if not isinstance(self.type, SnapshotRefType):
            try:
                object.__setattr__(self, "type", SnapshotRefType(self.type))
            except ValueError:
                raise ValidationError(
                    f"unknown reference type {self.type!r}: it must be 'branch' or 'tag'"
                ) from None
        _check_positive(self.min_snapshots_to_keep, "min-snapshots-to-keep")
        _check_positive(self.max_snapshot_age_ms, "max-snapshot-age-ms")
        _check_positive(self.max_ref_age_ms, "max-ref-age-ms")
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
        o = _json_object(obj, f"a {what}")
        ref_type = _req_str(o, "type", what).lower()
        if ref_type not in ("branch", "tag"):
            raise InvalidMetadata(f"{what} type {ref_type!r} is neither 'branch' nor 'tag'")
        return _parse(
            what,
            lambda: cls(
                snapshot_id=_req_long(o, "snapshot-id", what),
                type=SnapshotRefType(ref_type),
                min_snapshots_to_keep=_opt_int(o, "min-snapshots-to-keep", what),
                max_snapshot_age_ms=_opt_long(o, "max-snapshot-age-ms", what),
                max_ref_age_ms=_opt_long(o, "max-ref-age-ms", what),
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
        o = _json_object(obj, f"a {what}")
        return cls(_req_long(o, "timestamp-ms", what), _req_long(o, "snapshot-id", what))


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
        o = _json_object(obj, f"a {what}")
        return cls(_req_long(o, "timestamp-ms", what), _req_str(o, "metadata-file", what))
