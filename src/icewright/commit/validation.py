"""Conflict checks shared by the data operations (spec: "Commit Conflict Resolution and Retry").

An operation that read the table at a *starting snapshot* and commits later must check
what other writers committed to its branch in between. These helpers answer, for the
snapshots between the start and the branch head (Iceberg Java's
``SnapshotUtil.ancestorsBetween`` and ``MergingSnapshotProducer.validationHistory``), as
methods of one :class:`ConflictScope` (the table, the start and the head):

* which data files were added (``append`` and ``overwrite`` snapshots) matching a row
  filter or a set of partitions -- :meth:`~ConflictScope.validate_added_data_files`;
* which delete files were added (``overwrite`` and ``delete`` snapshots) that apply to
  rows matching a filter, a set of partitions, or given data files --
  :meth:`~ConflictScope.validate_no_new_delete_files`,
  :meth:`~ConflictScope.validate_no_new_deletes_for_data_files`;
* which data files were removed (``overwrite``, ``replace``, ``delete`` snapshots) --
  :meth:`~ConflictScope.validate_deleted_data_files`,
  :meth:`~ConflictScope.validate_data_files_exist`.

Each check raises :class:`~icewright.errors.ValidationError` naming the conflicting files.
Delete files are matched to data files by the spec's rules ("Scan Planning": sequence
numbers, partition, ``referenced_data_file``, column bounds) through
:class:`~icewright.scan.DeleteFileIndex`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions import (
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    PartitionEvaluator,
    bind,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.scan.delete_index import DeleteFileIndex, partition_key
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import PrimitiveType
from icewright.spec.values import from_bytes

__all__ = [
    "ADDED_DATA_OPERATIONS",
    "ADDED_DELETE_OPERATIONS",
    "REMOVED_DATA_OPERATIONS",
    "ConflictScope",
    "PartitionSet",
    "RowFilter",
    "ancestors_between",
    "is_ancestor_of",
    "read_entries",
    "snapshot_manifests",
    "starting_sequence_number",
    "validation_history",
]

ADDED_DATA_OPERATIONS = frozenset({Operation.APPEND, Operation.OVERWRITE})
"""Snapshots of these operations may add data files."""
REMOVED_DATA_OPERATIONS = frozenset({Operation.OVERWRITE, Operation.REPLACE, Operation.DELETE})
"""Snapshots of these operations may remove data files."""
ADDED_DELETE_OPERATIONS = frozenset({Operation.OVERWRITE, Operation.DELETE})
"""Snapshots of these operations may add delete files that change table rows."""


# --- history ---------------------------------------------------------------------------


def ancestors_between(
    metadata: TableMetadata, latest_snapshot_id: int, oldest_snapshot_id: int | None
) -> list[Snapshot]:
    """The snapshots from ``latest_snapshot_id`` back to, not including, ``oldest_snapshot_id``.

    Newest first. With ``oldest_snapshot_id`` None the walk goes to the first snapshot;
    it also stops where a parent is missing (expired), as Java's ``ancestorsBetween`` does.
    """
    if oldest_snapshot_id is not None and latest_snapshot_id == oldest_snapshot_id:
        return []
    out: list[Snapshot] = []
    seen: set[int] = set()
    snapshot = metadata.snapshot_by_id(latest_snapshot_id)
    while snapshot is not None and snapshot.snapshot_id not in seen:
        if snapshot.snapshot_id == oldest_snapshot_id:
            break
        seen.add(snapshot.snapshot_id)
        out.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = metadata.snapshot_by_id(parent) if parent is not None else None
    return out


def is_ancestor_of(metadata: TableMetadata, snapshot_id: int, ancestor_id: int) -> bool:
    """Whether ``ancestor_id`` is ``snapshot_id`` or one of its ancestors."""
    return any(s.snapshot_id == ancestor_id for s in ancestors_between(metadata, snapshot_id, None))


def snapshot_manifests(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    """Every manifest of ``snapshot``, from its manifest list."""
    if snapshot.manifest_list is None:
        # An early v1 snapshot lists manifest paths inline, without the counts and ids the
        # conflict rules need.
        raise ValidationError(
            f"snapshot {snapshot.snapshot_id} lists its manifests inline (an early v1 table); "
            "icewright cannot validate or rewrite it: rewrite the table with another engine first"
        )
    return read_manifest_list(io.read(snapshot.manifest_list), snapshot.manifest_list)


def read_entries(io: FileIO, manifest: ManifestFile) -> list[ManifestEntry]:
    """Every entry of ``manifest`` with inherited snapshot ids and sequence numbers."""
    return read_manifest(io.read(manifest.manifest_path), manifest)


def starting_sequence_number(metadata: TableMetadata, starting_snapshot_id: int | None) -> int:
    """The sequence number of the starting snapshot (0 when unknown, as Java's initial one)."""
    if starting_snapshot_id is not None:
        snapshot = metadata.snapshot_by_id(starting_snapshot_id)
        if snapshot is not None:
            return snapshot.sequence_number
    return 0


def validation_history(
    metadata: TableMetadata,
    io: FileIO,
    starting_snapshot_id: int | None,
    parent: Snapshot,
    *,
    operations: Iterable[Operation],
    content: ManifestContent,
) -> tuple[list[ManifestFile], set[int]]:
    """The manifests of ``content`` that snapshots of ``operations`` wrote since the start,
    and the ids of those snapshots.

    Only manifests a snapshot added itself count (``added_snapshot_id``). Raises
    ``ValidationError`` when the history from ``parent`` back to the start is not complete
    (the start is not an ancestor, or snapshots in between expired).
    """
    wanted = frozenset(operations)
    manifests: list[ManifestFile] = []
    snapshot_ids: set[int] = set()
    last: Snapshot | None = None
    for snapshot in ancestors_between(metadata, parent.snapshot_id, starting_snapshot_id):
        last = snapshot
        if snapshot.operation in wanted:
            snapshot_ids.add(snapshot.snapshot_id)
            for m in snapshot_manifests(io, snapshot):
                if m.content is content and m.added_snapshot_id == snapshot.snapshot_id:
                    manifests.append(m)
    if last is not None and last.parent_snapshot_id != starting_snapshot_id:
        raise ValidationError(
            f"cannot determine the history between the starting snapshot {starting_snapshot_id} "
            f"and snapshot {last.snapshot_id}: the starting snapshot is not an ancestor of the "
            f"branch head {parent.snapshot_id}, or snapshots in between expired; read the table "
            "again and start the operation from its current state"
        )
    return manifests, snapshot_ids


# --- partitions ------------------------------------------------------------------------


def _key(spec_id: int, partition: Sequence[Any]) -> tuple[Any, ...]:
    # spec "Scan Planning" note 3: floats are equal when their bits are (NaNs normalized).
    return partition_key(spec_id, partition)


class PartitionSet:
    """A set of (spec id, partition tuple) pairs (Java's ``PartitionSet``)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[int, Sequence[Any]]] = ()) -> None:
        self._items: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for spec_id, partition in items:
            self.add(spec_id, partition)

    def add(self, spec_id: int, partition: Sequence[Any]) -> None:
        """Add one partition of spec ``spec_id``."""
        self._items.setdefault(_key(spec_id, partition), tuple(partition))

    def contains(self, spec_id: int, partition: Sequence[Any]) -> bool:
        """Whether the partition of spec ``spec_id`` is in the set."""
        return _key(spec_id, partition) in self._items

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        return self.contains(item[0], item[1])

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[tuple[int, tuple[Any, ...]]]:
        for key, partition in self._items.items():
            yield key[0], partition

    def describe(self, specs: Mapping[int, PartitionSpec], schema: Schema) -> str:
        """The partitions as Hive-style paths, for messages."""
        parts = []
        for spec_id, partition in self:
            spec = specs.get(spec_id)
            try:
                path = spec.partition_to_path(partition, schema) if spec and spec.fields else ""
            except ValidationError:
                path = repr(partition)
            parts.append(f"{path or 'the unpartitioned data'} (spec {spec_id})")
        return "[" + ", ".join(parts) + "]"

    def may_contain_any(
        self, manifest: ManifestFile, specs: Mapping[int, PartitionSpec], schema: Schema
    ) -> bool:
        """Whether ``manifest``'s partition summaries allow a partition of this set
        (Java's ``ManifestFileUtil.canContainAny``)."""
        if manifest.partitions is None:
            return True
        spec = specs.get(manifest.partition_spec_id)
        if spec is None:
            return True
        types = [f.field_type for f in spec.partition_type(schema).fields]
        for spec_id, partition in self:
            if spec_id == manifest.partition_spec_id and _summaries_allow(
                manifest, types, partition
            ):
                return True
        return False


def _summaries_allow(
    manifest: ManifestFile, types: Sequence[Any], partition: Sequence[Any]
) -> bool:
    summaries = manifest.partitions or ()
    for pos, value in enumerate(partition):
        if pos >= len(summaries) or pos >= len(types):
            continue
        s = summaries[pos]
        if value is None:
            if not s.contains_null:
                return False
            continue
        if isinstance(value, float) and math.isnan(value):
            if s.contains_nan is False:
                return False
            continue
        t = types[pos]
        if not isinstance(t, PrimitiveType):
            continue
        try:
            lower = None if s.lower_bound is None else from_bytes(t, s.lower_bound)
            upper = None if s.upper_bound is None else from_bytes(t, s.upper_bound)
            if lower is None and upper is None:
                return False  # only nulls and NaNs in this manifest
            if lower is not None and value < lower:
                return False
            if upper is not None and value > upper:
                return False
        except (TypeError, ValidationError):
            continue  # cannot compare: the manifest may hold the partition
    return True


# --- matching files against a row filter -----------------------------------------------


class RowFilter:
    """Whether manifests and files may hold rows matching a filter (Java's
    ``ManifestGroup.filterData``): partition summaries, partition values, column metrics."""

    def __init__(self, metadata: TableMetadata, expr: Expression, case_sensitive: bool = True):
        self.schema = metadata.schema()
        self.specs = metadata.specs_by_id()
        self.expr = bind(expr, self.schema, case_sensitive)
        self.case_sensitive = case_sensitive
        self._manifest: dict[int, ManifestEvaluator] = {}
        self._partition: dict[int, PartitionEvaluator] = {}
        self._metrics = InclusiveMetricsEvaluator(self.schema, self.expr, case_sensitive)

    def manifest_may_match(self, manifest: ManifestFile) -> bool:
        """False only when no file of ``manifest`` can hold a matching row."""
        spec_id = manifest.partition_spec_id
        if spec_id not in self.specs:
            return True
        if spec_id not in self._manifest:
            self._manifest[spec_id] = ManifestEvaluator(
                self.specs[spec_id], self.schema, self.expr, self.case_sensitive
            )
        return self._manifest[spec_id].eval(manifest)

    def file_may_match(self, data_file: DataFile) -> bool:
        """False only when the file's partition or metrics rule out every matching row."""
        spec_id = data_file.spec_id
        if spec_id in self.specs:
            if spec_id not in self._partition:
                self._partition[spec_id] = PartitionEvaluator(
                    self.specs[spec_id], self.schema, self.expr, self.case_sensitive
                )
            if not self._partition[spec_id].eval(data_file.partition):
                return False
        return self._metrics.eval(data_file)


def _matching_entries(
    metadata: TableMetadata,
    io: FileIO,
    manifests: Iterable[ManifestFile],
    *,
    data_filter: Expression | None,
    partitions: PartitionSet | None,
    case_sensitive: bool,
) -> Iterator[ManifestEntry]:
    row_filter = None if data_filter is None else RowFilter(metadata, data_filter, case_sensitive)
    specs = metadata.specs_by_id()
    schema = metadata.schema()
    for m in manifests:
        if row_filter is not None and not row_filter.manifest_may_match(m):
            continue
        if partitions is not None and not partitions.may_contain_any(m, specs, schema):
            continue
        for entry in read_entries(io, m):
            f = entry.data_file
            if partitions is not None and not partitions.contains(f.spec_id, f.partition):
                continue
            if row_filter is not None and not row_filter.file_may_match(f):
                continue
            yield entry


def _describe(
    metadata: TableMetadata, data_filter: Expression | None, partitions: PartitionSet | None
) -> str:
    if partitions is not None:
        return f"partitions {partitions.describe(metadata.specs_by_id(), metadata.schema())}"
    return str(data_filter) if data_filter is not None else "true"


def _paths(entries: Iterable[ManifestEntry], limit: int = 20) -> str:
    paths = [e.data_file.file_path for e in entries]
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


_RETRY_HINT = "read the table again and redo the operation on its current state"


@dataclass(frozen=True)
class ConflictScope:
    """What a commit's conflict checks look at: the snapshots of ``metadata``'s branch after
    ``starting_snapshot_id`` (the snapshot the operation read) up to ``parent`` (the branch
    head it commits onto), read through ``io``. ``case_sensitive`` binds the row filters.
    Each check raises :class:`~icewright.errors.ValidationError` naming the conflicting
    files."""

    metadata: TableMetadata
    io: FileIO
    starting_snapshot_id: int | None
    parent: Snapshot | None
    case_sensitive: bool = True

    def _history(
        self,
        operations: Iterable[Operation],
        content: ManifestContent,
        data_filter: Expression | None,
        partitions: PartitionSet | None,
    ) -> tuple[Iterator[ManifestEntry], set[int]]:
        """The entries of the manifests of ``content`` that snapshots of ``operations``
        wrote since the start and that may match the filter/partitions, and the ids of
        those snapshots."""
        assert self.parent is not None
        manifests, snapshot_ids = validation_history(
            self.metadata,
            self.io,
            self.starting_snapshot_id,
            self.parent,
            operations=operations,
            content=content,
        )
        entries = _matching_entries(
            self.metadata,
            self.io,
            manifests,
            data_filter=data_filter,
            partitions=partitions,
            case_sensitive=self.case_sensitive,
        )
        return entries, snapshot_ids

    # --- added data files ------------------------------------------------------------------

    def added_data_files(
        self,
        *,
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> list[ManifestEntry]:
        """Data files added to the branch since the start that may match the filter/partitions."""
        if self.parent is None:
            return []
        entries, snapshot_ids = self._history(
            ADDED_DATA_OPERATIONS, ManifestContent.DATA, data_filter, partitions
        )
        return [
            e for e in entries if e.status is EntryStatus.ADDED and e.snapshot_id in snapshot_ids
        ]

    def validate_added_data_files(
        self,
        *,
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> None:
        """Fail if data files that may hold matching rows were added since the start."""
        conflicts = self.added_data_files(
            data_filter=data_filter,
            partitions=partitions,
        )
        if conflicts:
            raise ValidationError(
                "found conflicting files that can contain records matching "
                f"{_describe(self.metadata, data_filter, partitions)}: {_paths(conflicts)}; "
                f"another writer added them after snapshot {self.starting_snapshot_id}: "
                f"{_RETRY_HINT}"
            )

    # --- added delete files ----------------------------------------------------------------

    def added_delete_files(
        self,
        *,
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> list[ManifestEntry]:
        """Live delete files added since the start (data sequence number above the start's)
        that may apply to rows matching the filter/partitions (Java's ``addedDeleteFiles``)."""
        if self.parent is None or self.metadata.format_version < 2:
            return []
        entries, _ = self._history(
            ADDED_DELETE_OPERATIONS, ManifestContent.DELETES, data_filter, partitions
        )
        start_seq = starting_sequence_number(self.metadata, self.starting_snapshot_id)
        return [e for e in entries if e.is_live and (e.sequence_number or 0) > start_seq]

    def validate_no_new_delete_files(
        self,
        *,
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> None:
        """Fail if delete files that may apply to matching rows were added since the start."""
        deletes = self.added_delete_files(
            data_filter=data_filter,
            partitions=partitions,
        )
        if deletes:
            raise ValidationError(
                "found new conflicting delete files that can apply to records matching "
                f"{_describe(self.metadata, data_filter, partitions)}: {_paths(deletes)}; "
                f"another writer deleted rows after snapshot {self.starting_snapshot_id}: "
                f"{_RETRY_HINT}"
            )

    def validate_no_new_deletes_for_data_files(
        self,
        data_files: Iterable[DataFile],
        *,
        data_filter: Expression | None = None,
        ignore_equality_deletes: bool = False,
    ) -> None:
        """Fail if a delete file added since the start applies to one of ``data_files``.

        The data files are taken to be as old as the starting snapshot, as Java does. With
        ``ignore_equality_deletes`` only position deletes count (a rewrite that keeps the old
        data sequence number stays subject to newer equality deletes).
        """
        if self.parent is None or self.metadata.format_version < 2:
            return
        deletes = self.added_delete_files(
            data_filter=data_filter,
        )
        if not deletes:
            return
        start_seq = starting_sequence_number(self.metadata, self.starting_snapshot_id)
        index = DeleteFileIndex(deletes, self.metadata.specs_by_id(), self.metadata.schemas)
        for data_file in data_files:
            # The data file is taken to be as old as the starting snapshot (Java does so).
            applying = [
                d
                for d in index.for_data_file(data_file, start_seq)
                if not (ignore_equality_deletes and d.content is FileContent.EQUALITY_DELETES)
            ]
            if applying:
                kind = "position delete" if ignore_equality_deletes else "delete"
                shown = ", ".join(d.file_path for d in applying[:20])
                raise ValidationError(
                    f"cannot commit: found a new {kind} for replaced data file "
                    f"{data_file.file_path}: {shown}; another writer deleted rows from it after "
                    f"snapshot {self.starting_snapshot_id}, and replacing the file would bring "
                    f"them back: {_RETRY_HINT}"
                )

    # --- removed data files ----------------------------------------------------------------

    def validate_deleted_data_files(
        self,
        *,
        data_filter: Expression | None = None,
        partitions: PartitionSet | None = None,
    ) -> None:
        """Fail if data files that may hold matching rows were removed since the start."""
        if self.parent is None:
            return
        entries, snapshot_ids = self._history(
            REMOVED_DATA_OPERATIONS, ManifestContent.DATA, data_filter, partitions
        )
        conflicts = [
            e for e in entries if e.status is EntryStatus.DELETED and e.snapshot_id in snapshot_ids
        ]
        if conflicts:
            raise ValidationError(
                "found conflicting deleted files that can contain records matching "
                f"{_describe(self.metadata, data_filter, partitions)}: {_paths(conflicts)}; "
                f"another writer removed them after snapshot {self.starting_snapshot_id}: "
                f"{_RETRY_HINT}"
            )

    def validate_data_files_exist(
        self,
        paths: Iterable[str],
        *,
        skip_deletes: bool = False,
        conflict_detection_filter: Expression | None = None,
    ) -> None:
        """Fail if one of ``paths`` was removed since the start.

        With ``skip_deletes``, removals by ``delete`` snapshots are ignored (Java's
        ``validateDataFilesExist`` for row deltas that do not validate deleted files).
        """
        required = set(paths)
        if self.parent is None or not required:
            return
        operations = (
            {Operation.OVERWRITE, Operation.REPLACE} if skip_deletes else REMOVED_DATA_OPERATIONS
        )
        entries, snapshot_ids = self._history(
            operations, ManifestContent.DATA, conflict_detection_filter, None
        )
        missing = [
            e
            for e in entries
            if e.status is EntryStatus.DELETED
            and e.snapshot_id in snapshot_ids
            and e.data_file.file_path in required
        ]
        if missing:
            raise ValidationError(
                f"cannot commit, missing data files: {_paths(missing)}; another writer removed "
                f"them after snapshot {self.starting_snapshot_id}: {_RETRY_HINT}"
            )
