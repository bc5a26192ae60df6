"""Table metadata: the content of a ``*.metadata.json`` file.

Spec sections: "Table Metadata Fields", Appendix C ("Table Metadata and
Snapshots") and Appendix E (how v1 fields default for later versions, and
what v1 and v2 writers must write). icewright reads format versions 1, 2 and
3 and writes 1 and 2; a v3 file is read completely (row lineage, encryption
keys and unknown top-level keys are kept) but not written yet. The file's
fields are read by :mod:`icewright.spec.table_metadata_parser`.

:class:`TableMetadata` is immutable. Its transitions (``add_snapshot``,
``set_ref``, ``with_previous_metadata``, ``with_last_updated``) return a new
object built with :func:`dataclasses.replace`, so every invariant checked at
construction holds for the result too.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from icewright.collector import gc_paused
from icewright.errors import UnsupportedFormatVersion, ValidationError
from icewright.spec.documents import (
    EMPTY_STRING_MAP,
    FrozenMap,
    StringMap,
    Utf8,
    check_unique_ids,
    dump_document,
    freeze_json,
    join_ids,
    load_document,
    req_int,
    thaw_json,
)
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import (
    MAIN_BRANCH,
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
)
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortOrder
from icewright.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icewright.spec.table_metadata_parser import (
    _SNAPSHOT_JSON,
    _remember_snapshot_json,
    parse_table_metadata,
)

SUPPORTED_READ_FORMAT_VERSIONS = (1, 2, 3)
"""Table format versions icewright can read."""
SUPPORTED_WRITE_FORMAT_VERSIONS = (1, 2)
"""Table format versions icewright can write (v3 is read-only for now)."""
DEFAULT_FORMAT_VERSION = 2

METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
"""Table property: how many previous metadata files the metadata-log keeps."""
METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT = 100

RESERVED_PROPERTIES = frozenset(
    "format-version uuid snapshot-count current-snapshot-id current-snapshot-summary "  # noqa: SIM905
    "current-snapshot-timestamp-ms current-schema default-partition-spec default-sort-order".split()
)
"""Keys Java treats as table facts rather than properties; never stored as properties."""

INITIAL_SORT_ORDER_ID = 1
"""The id a new table's sorted order gets (0 is the unsorted order)."""


def _unsupported_read(version: int) -> UnsupportedFormatVersion:
    return UnsupportedFormatVersion(
        f"table format-version {version} is not supported: icewright reads table format "
        f"versions {join_ids(SUPPORTED_READ_FORMAT_VERSIONS)} and writes "
        f"{join_ids(SUPPORTED_WRITE_FORMAT_VERSIONS)}; use an engine that supports v{version}"
    )


@dataclass(frozen=True, kw_only=True)
class TableMetadata:
    """Every field of a table metadata file, for format versions 1, 2 and 3.

    The deprecated v1 fields ``schema`` and ``partition-spec`` are not stored:
    they are always the current schema and the default spec's fields, which is
    how they are written for v1 (as Java does). ``current_snapshot_id`` is None
    when the table has no current snapshot (the file says -1, null, or
    nothing). ``encryption_keys`` (v3) and ``extra`` (unknown top-level keys)
    hold the JSON as read, deep-frozen, so it is written back unchanged.
    """

    format_version: int
    table_uuid: uuid.UUID | None
    location: str
    last_sequence_number: int = 0
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    properties: StringMap = EMPTY_STRING_MAP
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: tuple[SortOrder, ...] = (UNSORTED_SORT_ORDER,)
    default_sort_order_id: int = 0
    refs: FrozenMap[str, SnapshotRef] = field(default_factory=FrozenMap)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    next_row_id: int | None = None
    encryption_keys: tuple[FrozenMap[str, Any], ...] = ()
    extra: FrozenMap[str, Any] = field(default_factory=FrozenMap)

    # --- invariants -----------------------------------------------------------

    def __post_init__(self) -> None:
        version = self.format_version
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValidationError(f"format-version must be an integer, got {version!r}")
        if version not in SUPPORTED_READ_FORMAT_VERSIONS:
            raise _unsupported_read(version)
        self._normalize()
        if version >= 2 and self.table_uuid is None:
            raise ValidationError(f"table-uuid is required in format v{version}")
        if not isinstance(self.location, str) or not self.location:
            raise ValidationError("table metadata needs a non-empty location")
        if version == 1 and self.last_sequence_number != 0:
            raise ValidationError(
                f"last-sequence-number must be 0 in format v1, got {self.last_sequence_number}"
            )
        if version >= 3 and self.next_row_id is None:
            raise ValidationError("next-row-id is required in format v3")
        if self.next_row_id is not None and self.next_row_id < 0:
            raise ValidationError(f"next-row-id must not be negative, got {self.next_row_id}")
        self._check_schemas_specs_orders()
        self._check_snapshots_and_refs()

    def _normalize(self) -> None:
        # Accept lists and plain dicts from callers; store tuples and frozen maps.
        for f in dataclasses.fields(self):
            if isinstance(getattr(self, f.name), list):
                object.__setattr__(self, f.name, tuple(getattr(self, f.name)))
        if not isinstance(self.properties, StringMap):
            object.__setattr__(self, "properties", StringMap(self.properties))
        if not isinstance(self.refs, FrozenMap):
            object.__setattr__(self, "refs", FrozenMap(self.refs))
        object.__setattr__(
            self, "encryption_keys", tuple(freeze_json(k) for k in self.encryption_keys)
        )
        if not isinstance(self.extra, FrozenMap):
            object.__setattr__(self, "extra", freeze_json(self.extra))
        # Java writes -1 for "no current snapshot" in v1/v2 (Appendix F).
        if self.current_snapshot_id == -1:
            object.__setattr__(self, "current_snapshot_id", None)

    def _check_schemas_specs_orders(self) -> None:
        if not self.schemas:
            raise ValidationError("table metadata needs at least one schema")
        check_unique_ids((s.schema_id for s in self.schemas), "schema-id")
        if self.current_schema_id not in {s.schema_id for s in self.schemas}:
            raise ValidationError(
                f"current-schema-id {self.current_schema_id} is not one of the schemas "
                f"{sorted(s.schema_id for s in self.schemas)}"
            )
        if not self.partition_specs:
            raise ValidationError("table metadata needs at least one partition spec")
        check_unique_ids((s.spec_id for s in self.partition_specs), "partition spec-id")
        if self.default_spec_id not in self.specs_by_id():
            raise ValidationError(
                f"default-spec-id {self.default_spec_id} is not one of the partition specs "
                f"{sorted(self.specs_by_id())}"
            )
        check_unique_ids((o.order_id for o in self.sort_orders), "sort order-id")
        order_ids = {o.order_id for o in self.sort_orders}
        # Id 0 is the unsorted order, meaningful even when the list omits it.
        if self.default_sort_order_id != 0 and self.default_sort_order_id not in order_ids:
            raise ValidationError(
                f"default-sort-order-id {self.default_sort_order_id} is not one of the sort "
                f"orders {sorted(order_ids)}"
            )

    def _check_snapshots_and_refs(self) -> None:
        by_id = self._snapshots_by_id
        if len(by_id) != len(self.snapshots):
            check_unique_ids((s.snapshot_id for s in self.snapshots), "snapshot-id")
        if self.current_snapshot_id is not None and self.current_snapshot_id not in by_id:
            raise ValidationError(
                f"current-snapshot-id {self.current_snapshot_id} is not in the snapshots list"
            )
        for name, ref in self.refs.items():
            if not isinstance(name, str) or not isinstance(ref, SnapshotRef):
                raise ValidationError(f"refs must map names to SnapshotRef, got {name!r}: {ref!r}")
            if ref.snapshot_id not in by_id:
                raise ValidationError(
                    f"reference {name!r} points to snapshot {ref.snapshot_id}, which is not in "
                    "the snapshots list"
                )
        main = self.refs.get(MAIN_BRANCH)
        if main is not None:
            if not main.is_branch:
                raise ValidationError("the 'main' reference must be a branch, not a tag")
            # Spec: current-snapshot-id "must be the same as the current ID of the main branch".
            if main.snapshot_id != self.current_snapshot_id:
                raise ValidationError(
                    f"current-snapshot-id {self.current_snapshot_id} does not match the main "
                    f"branch, which points to {main.snapshot_id}"
                )

    # --- accessors ------------------------------------------------------------

    @cached_property
    def _snapshots_by_id(self) -> dict[int, Snapshot]:
        # A commit makes several metadata objects in a row from the same snapshots tuple
        # (add a snapshot, move the branch, log the previous file, stamp the time): the
        # tuple is indexed once (see _SnapshotIndex). The dict is never changed.
        return _LAST_INDEX.of(self.snapshots)

    def schema(self) -> Schema:
        """The current schema."""
        return self.schema_by_id(self.current_schema_id)

    def schema_by_id(self, schema_id: int) -> Schema:
        """The schema with this id; :class:`ValidationError` if the table has none."""
        for schema in self.schemas:
            if schema.schema_id == schema_id:
                return schema
        raise ValidationError(
            f"the table has no schema with id {schema_id}; known ids: "
            f"{sorted(s.schema_id for s in self.schemas)}"
        )

    def spec(self) -> PartitionSpec:
        """The default partition spec (the one writers use)."""
        return self.spec_by_id(self.default_spec_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        """The partition spec with this id; :class:`ValidationError` if there is none."""
        spec = self.specs_by_id().get(spec_id)
        if spec is None:
            raise ValidationError(
                f"the table has no partition spec with id {spec_id}; known ids: "
                f"{sorted(self.specs_by_id())}"
            )
        return spec

    def specs_by_id(self) -> dict[int, PartitionSpec]:
        """Every partition spec by its id (a fresh dict)."""
        return {s.spec_id: s for s in self.partition_specs}

    def sort_order(self) -> SortOrder:
        """The default sort order."""
        return self.sort_order_by_id(self.default_sort_order_id)

    def sort_order_by_id(self, order_id: int) -> SortOrder:
        """The sort order with this id (id 0 is always the unsorted order)."""
        for order in self.sort_orders:
            if order.order_id == order_id:
                return order
        if order_id == 0:
            return UNSORTED_SORT_ORDER
        raise ValidationError(f"the table has no sort order with id {order_id}")

    def current_snapshot(self) -> Snapshot | None:
        """The snapshot ``main`` points to, or None for a table without data."""
        if self.current_snapshot_id is None:
            return None
        return self._snapshots_by_id[self.current_snapshot_id]

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot with this id, or None (it may have expired)."""
        return self._snapshots_by_id.get(snapshot_id)

    def ref(self, name: str) -> SnapshotRef | None:
        """The branch or tag of this name, or None."""
        return self.refs.get(name)

    def snapshot_for_ref(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points to, or None if there is no such reference."""
        ref = self.refs.get(name)
        return None if ref is None else self._snapshots_by_id.get(ref.snapshot_id)

    def write_ref(self, branch: str) -> str:
        """The ref a write to ``branch`` starts from: the branch, or ``main`` when the
        branch does not exist yet (the write creates it at main's current snapshot, as
        Iceberg Java's ``SnapshotUtil.latestSnapshot`` does)."""
        return branch if branch in self.refs else MAIN_BRANCH

    def branch_head(self, branch: str) -> Snapshot | None:
        """The snapshot a write to ``branch`` builds on (see :meth:`write_ref`)."""
        return self.snapshot_for_ref(self.write_ref(branch))

    def property(self, key: str, default: str | None = None) -> str | None:
        """A table property, or ``default``."""
        return self.properties.get(key, default)

    # --- transitions ----------------------------------------------------------

    def add_snapshot(self, snapshot: Snapshot) -> TableMetadata:
        """A copy with ``snapshot`` added (no reference moves: see :meth:`set_ref`).

        Checks what the spec requires of a new snapshot for this format version
        (Appendix E): v1 snapshots have sequence number 0; from v2 on a
        snapshot needs a summary, a manifest list and a sequence number above
        the table's last one (sequence numbers only increase, "Sequence Numbers"); v3
        needs ``first-row-id`` at or above ``next-row-id`` and ``added-rows``,
        and advances ``next-row-id`` by ``added-rows`` ("Snapshot Row IDs").
        """
        if not isinstance(snapshot, Snapshot):
            raise ValidationError(f"add_snapshot needs a Snapshot, got {snapshot!r}")
        sid = snapshot.snapshot_id
        if sid in self._snapshots_by_id:
            raise ValidationError(
                f"snapshot {sid} already exists in the table; generate a new snapshot id"
            )
        version = self.format_version
        if version == 1 and snapshot.sequence_number != 0:
            raise ValidationError(
                f"snapshot {sid}: a v1 table has no sequence numbers, "
                f"got {snapshot.sequence_number}"
            )
        if version >= 2:
            if snapshot.summary is None:
                raise ValidationError(f"snapshot {sid}: a v{version} snapshot needs a summary")
            if snapshot.manifest_list is None:
                raise ValidationError(
                    f"snapshot {sid}: a v{version} snapshot needs a manifest-list"
                )
            if snapshot.sequence_number <= self.last_sequence_number:
                raise ValidationError(
                    f"snapshot {sid} has sequence number {snapshot.sequence_number}, not above "
                    f"the table's last sequence number {self.last_sequence_number}; another "
                    "commit went first: refresh the table and retry"
                )
        next_row_id = self.next_row_id
        if version >= 3:
            if snapshot.first_row_id is None or snapshot.added_rows is None:
                raise ValidationError(
                    f"snapshot {sid}: a v3 snapshot needs first-row-id and added-rows"
                )
            assert next_row_id is not None  # checked at construction for v3
            if snapshot.first_row_id < next_row_id:
                raise ValidationError(
                    f"snapshot {sid}: first-row-id {snapshot.first_row_id} is below the table's "
                    f"next-row-id {next_row_id}; refresh the table and retry"
                )
            next_row_id += snapshot.added_rows
        snapshots = (*self.snapshots, snapshot)
        _LAST_INDEX.keep(snapshots, {**self._snapshots_by_id, sid: snapshot})
        return dataclasses.replace(
            self,
            snapshots=snapshots,
            last_sequence_number=max(self.last_sequence_number, snapshot.sequence_number),
            last_updated_ms=max(self.last_updated_ms, snapshot.timestamp_ms),
            next_row_id=next_row_id,
        )

    def set_ref(
        self, name: str, ref: SnapshotRef, timestamp_ms: int | None = None
    ) -> TableMetadata:
        """A copy with the branch or tag ``name`` set to ``ref``.

        Setting ``main`` also moves ``current-snapshot-id`` and appends a
        ``snapshot-log`` entry stamped ``timestamp_ms`` (default: this
        metadata's ``last-updated-ms``, which :meth:`add_snapshot` has set to
        the new snapshot's timestamp), as "Table Metadata Fields" asks. Setting
        a reference to exactly what it already is changes nothing.
        """
        if not isinstance(ref, SnapshotRef):
            raise ValidationError(f"set_ref needs a SnapshotRef, got {ref!r}")
        if not isinstance(name, str) or not name:
            raise ValidationError("a reference name must be a non-empty string")
        if self.refs.get(name) == ref:
            return self
        if ref.snapshot_id not in self._snapshots_by_id:
            raise ValidationError(
                f"cannot set {name!r} to snapshot {ref.snapshot_id}: it is not in the table; "
                "add the snapshot first"
            )
        if name == MAIN_BRANCH and not ref.is_branch:
            raise ValidationError("'main' must be a branch; it cannot be set to a tag")
        refs = {**self.refs, name: ref}
        if name != MAIN_BRANCH:
            return dataclasses.replace(self, refs=FrozenMap(refs))
        stamp = self.last_updated_ms if timestamp_ms is None else timestamp_ms
        return dataclasses.replace(
            self,
            refs=FrozenMap(refs),
            current_snapshot_id=ref.snapshot_id,
            snapshot_log=(*self.snapshot_log, SnapshotLogEntry(stamp, ref.snapshot_id)),
            last_updated_ms=max(self.last_updated_ms, stamp),
        )

    def set_branch_snapshot(
        self, snapshot_id: int, branch: str = MAIN_BRANCH, timestamp_ms: int | None = None
    ) -> TableMetadata:
        """Point ``branch`` at ``snapshot_id``, keeping the branch's retention settings."""
        existing = self.refs.get(branch)
        if existing is not None and not existing.is_branch:
            raise ValidationError(f"cannot move {branch!r}: it is a tag, not a branch")
        if existing is None:
            ref = SnapshotRef(snapshot_id, SnapshotRefType.BRANCH)
        else:
            ref = dataclasses.replace(existing, snapshot_id=snapshot_id)
        return self.set_ref(branch, ref, timestamp_ms)

    def with_previous_metadata(
        self, metadata_file: str, timestamp_ms: int, max_entries: int | None = None
    ) -> TableMetadata:
        """A copy whose metadata-log ends with the previous metadata file.

        ``timestamp_ms`` is the previous file's ``last-updated-ms``. The log
        keeps the most recent ``max_entries`` entries (default: the table
        property ``write.metadata.previous-versions-max``, else 100; at least
        one), as the reference implementation trims it.
        """
        if max_entries is None:
            from icewright.spec.properties import read_property

            max_entries = int(read_property(self.properties, METADATA_PREVIOUS_VERSIONS_MAX))
        keep = max(1, max_entries)
        log = (*self.metadata_log, MetadataLogEntry(timestamp_ms, metadata_file))
        return dataclasses.replace(self, metadata_log=log[-keep:])

    def with_last_updated(self, timestamp_ms: int) -> TableMetadata:
        """A copy with ``last-updated-ms`` set (do this just before writing)."""
        return dataclasses.replace(self, last_updated_ms=timestamp_ms)

    # --- JSON -----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON object for this metadata, in the key order Java writes.

        This works for every readable version (v3 included) so that metadata
        can be shown and compared; use :meth:`to_json` to produce a file.
        v1 output carries the deprecated ``schema`` and ``partition-spec`` for
        older readers and omits ``last-sequence-number`` and snapshot sequence
        numbers (Appendix E, "Writing v1 metadata").
        """
        return self._document(None)

    def _document(self, snapshots: Any) -> dict[str, Any]:
        """:meth:`to_dict`, with ``snapshots`` as the snapshots value unless it is None."""
        version = self.format_version
        out: dict[str, Any] = {"format-version": version}
        if self.table_uuid is not None:
            out["table-uuid"] = str(self.table_uuid)
        out["location"] = self.location
        if version >= 2:
            out["last-sequence-number"] = self.last_sequence_number
        out["last-updated-ms"] = self.last_updated_ms
        out["last-column-id"] = self.last_column_id
        if version == 1:
            out["schema"] = self.schema().to_json()
        out["current-schema-id"] = self.current_schema_id
        out["schemas"] = [s.to_json() for s in self.schemas]
        if version == 1:
            out["partition-spec"] = self.spec().fields_to_json()
        out["default-spec-id"] = self.default_spec_id
        out["partition-specs"] = [s.to_json() for s in self.partition_specs]
        out["last-partition-id"] = self.last_partition_id
        out["default-sort-order-id"] = self.default_sort_order_id
        out["sort-orders"] = [o.to_json() for o in self.sort_orders]
        out["properties"] = self.properties.to_dict()
        # Appendix F: Java writes -1 for "no current snapshot" in v1 and v2, null from v3 on.
        if self.current_snapshot_id is not None:
            out["current-snapshot-id"] = self.current_snapshot_id
        else:
            out["current-snapshot-id"] = -1 if version < 3 else None
        if version >= 3:
            out["next-row-id"] = self.next_row_id
        if self.encryption_keys:
            out["encryption-keys"] = [thaw_json(k) for k in self.encryption_keys]
        out["refs"] = {name: ref.to_json() for name, ref in self.refs.items()}
        out["snapshots"] = (
            [s.to_json(version) for s in self.snapshots] if snapshots is None else snapshots
        )
        out["statistics"] = [s.to_json() for s in self.statistics]
        out["partition-statistics"] = [s.to_json() for s in self.partition_statistics]
        out["snapshot-log"] = [e.to_json() for e in self.snapshot_log]
        out["metadata-log"] = [e.to_json() for e in self.metadata_log]
        for key, value in self.extra.items():
            out[key] = thaw_json(value)
        return out

    def to_json(self) -> bytes:
        """The metadata file content (UTF-8 JSON) for a v1 or v2 table.

        Raises :class:`UnsupportedFormatVersion` for v3, which icewright reads
        but does not write yet.
        """
        if self.format_version not in SUPPORTED_WRITE_FORMAT_VERSIONS:
            raise UnsupportedFormatVersion(
                f"writing table format-version {self.format_version} is not supported: "
                f"icewright writes format versions {join_ids(SUPPORTED_WRITE_FORMAT_VERSIONS)} "
                f"(and reads {join_ids(SUPPORTED_READ_FORMAT_VERSIONS)}); commit to this table "
                "with an engine that supports it"
            )
        head, tail = dump_document(self._document(_SNAPSHOTS_SLOT)).split(_ENCODED_SLOT, 1)
        # Snapshots are immutable and shared by every metadata that descends from the one
        # they were added to: each is encoded once (see _snapshot_json) and spliced in,
        # the whole file copied together once.
        pieces: list[Utf8] = [head, b"["]
        for n, snapshot in enumerate(self.snapshots):
            if n:
                pieces.append(b",")
            pieces.append(_snapshot_json(snapshot, self.format_version))
        pieces += (b"]", tail)
        return b"".join(pieces)

    @classmethod
    def from_json(cls, data: bytes | bytearray | str | Mapping[str, Any]) -> TableMetadata:
        """Parse a metadata file: UTF-8 (or GZIP) bytes, text, or a parsed JSON object.

        Raises :class:`UnsupportedFormatVersion` for a version icewright cannot
        read and :class:`InvalidMetadata` naming the field for anything
        malformed or missing.
        """
        with gc_paused():  # a snapshot per commit, each kept (see icewright.collector)
            document = load_document(data, "table metadata", "snapshots")
            version = req_int(document, "format-version", "table metadata")
            if version not in SUPPORTED_READ_FORMAT_VERSIONS:
                raise _unsupported_read(version)
            return parse_table_metadata(document, version, TableMetadata)


class _SnapshotIndex:
    """The snapshot-id index of the last snapshots tuple indexed (in any thread).

    The tuple is held, so its identity cannot be reused while it is kept; a thread that
    reads the slot while another replaces it sees one whole pair or the other.
    """

    def __init__(self) -> None:
        self._last: tuple[tuple[Snapshot, ...], dict[int, Snapshot]] = ((), {})

    def of(self, snapshots: tuple[Snapshot, ...]) -> dict[int, Snapshot]:
        last_snapshots, index = self._last
        if last_snapshots is snapshots:
            return index
        index = {s.snapshot_id: s for s in snapshots}
        self._last = (snapshots, index)
        return index

    def keep(self, snapshots: tuple[Snapshot, ...], index: dict[int, Snapshot]) -> None:
        """Take ``index`` as the index of ``snapshots`` (made from a known one)."""
        self._last = (snapshots, index)


_LAST_INDEX = _SnapshotIndex()
_SNAPSHOTS_SLOT = f"icewright-snapshots-{uuid.uuid4().hex}"
_ENCODED_SLOT = f'"{_SNAPSHOTS_SLOT}"'.encode()


def _snapshot_json(snapshot: Snapshot, format_version: int) -> Utf8:
    """The encoded JSON of ``snapshot``, kept while the object lives in this cache.

    The key is the object's identity: the entry holds the object, so its id cannot be
    reused while the entry exists, and an equal snapshot parsed anew is simply encoded.
    """
    key = (id(snapshot), format_version)
    hit = _SNAPSHOT_JSON.get(key)
    if hit is not None and hit[0] is snapshot:
        return hit[1]
    encoded = dump_document(snapshot.to_json(format_version))
    _remember_snapshot_json(snapshot, format_version, encoded)
    return encoded
