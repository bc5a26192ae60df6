"""Snapshot summaries: the keys and totals rules of the reference implementation.

Spec: "Snapshots" (``summary``, ``operation``) and "Optional Snapshot Summary
Fields". The keys and the totals arithmetic match Iceberg Java's
``SnapshotSummary`` and ``SnapshotProducer`` so that tools reading summaries
(Spark's ``snapshots`` table, Trino, pyiceberg) see what they expect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from icewright.manifest.data_file import DataFile, FileContent, ManifestContent, ManifestFile
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema

ADDED_DATA_FILES = "added-data-files"
DELETED_DATA_FILES = "deleted-data-files"
TOTAL_DATA_FILES = "total-data-files"
ADDED_DELETE_FILES = "added-delete-files"
ADDED_EQ_DELETE_FILES = "added-equality-delete-files"
REMOVED_EQ_DELETE_FILES = "removed-equality-delete-files"
ADDED_POS_DELETE_FILES = "added-position-delete-files"
REMOVED_POS_DELETE_FILES = "removed-position-delete-files"
REMOVED_DELETE_FILES = "removed-delete-files"
TOTAL_DELETE_FILES = "total-delete-files"
ADDED_RECORDS = "added-records"
DELETED_RECORDS = "deleted-records"
TOTAL_RECORDS = "total-records"
ADDED_FILES_SIZE = "added-files-size"
REMOVED_FILES_SIZE = "removed-files-size"
TOTAL_FILES_SIZE = "total-files-size"
ADDED_POS_DELETES = "added-position-deletes"
REMOVED_POS_DELETES = "removed-position-deletes"
TOTAL_POS_DELETES = "total-position-deletes"
ADDED_EQ_DELETES = "added-equality-deletes"
REMOVED_EQ_DELETES = "removed-equality-deletes"
TOTAL_EQ_DELETES = "total-equality-deletes"
DELETED_DUPLICATE_FILES = "deleted-duplicate-files"
CHANGED_PARTITION_COUNT = "changed-partition-count"
CHANGED_PARTITION_PREFIX = "partitions."
PARTITION_SUMMARIES_INCLUDED = "partition-summaries-included"
REPLACE_PARTITIONS = "replace-partitions"
SOURCE_SNAPSHOT_ID = "source-snapshot-id"
STAGED_WAP_ID = "wap.id"
PUBLISHED_WAP_ID = "published-wap-id"
ENGINE_NAME = "engine-name"
ENGINE_VERSION = "engine-version"
COMMIT_KEY = "icewright.commit-key"

PARTITION_SUMMARY_LIMIT = "write.summary.partition-limit"

# Partition value classes whose equal values always render the same partition path.
_MEMO_SAFE = frozenset({int, str, bytes, type(None)})

# (total, added, removed): the totals a snapshot carries forward from its parent.
TOTALS: tuple[tuple[str, str, str], ...] = (
    (TOTAL_RECORDS, ADDED_RECORDS, DELETED_RECORDS),
    (TOTAL_FILES_SIZE, ADDED_FILES_SIZE, REMOVED_FILES_SIZE),
    (TOTAL_DATA_FILES, ADDED_DATA_FILES, DELETED_DATA_FILES),
    (TOTAL_DELETE_FILES, ADDED_DELETE_FILES, REMOVED_DELETE_FILES),
    (TOTAL_POS_DELETES, ADDED_POS_DELETES, REMOVED_POS_DELETES),
    (TOTAL_EQ_DELETES, ADDED_EQ_DELETES, REMOVED_EQ_DELETES),
)


@dataclass(slots=True)
class _Counts:
    """Added and removed files, records and bytes (Java's ``UpdateMetrics``)."""

    added_size: int = 0
    removed_size: int = 0
    added_files: int = 0
    removed_files: int = 0
    added_eq_delete_files: int = 0
    removed_eq_delete_files: int = 0
    added_pos_delete_files: int = 0
    removed_pos_delete_files: int = 0
    added_delete_files: int = 0
    removed_delete_files: int = 0
    added_records: int = 0
    deleted_records: int = 0
    added_pos_deletes: int = 0
    removed_pos_deletes: int = 0
    added_eq_deletes: int = 0
    removed_eq_deletes: int = 0
    trust_sizes: bool = True

    def file(self, f: DataFile, added: bool) -> None:
        if added:
            self.added_size += f.file_size_in_bytes
        else:
            self.removed_size += f.file_size_in_bytes
        if f.content is FileContent.DATA:
            if added:
                self.added_files += 1
                self.added_records += f.record_count
            else:
                self.removed_files += 1
                self.deleted_records += f.record_count
        elif f.content is FileContent.POSITION_DELETES:
            if added:
                self.added_delete_files += 1
                self.added_pos_delete_files += 1
                self.added_pos_deletes += f.record_count
            else:
                self.removed_delete_files += 1
                self.removed_pos_delete_files += 1
                self.removed_pos_deletes += f.record_count
        elif added:
            self.added_delete_files += 1
            self.added_eq_delete_files += 1
            self.added_eq_deletes += f.record_count
        else:
            self.removed_delete_files += 1
            self.removed_eq_delete_files += 1
            self.removed_eq_deletes += f.record_count

    def manifest(self, m: ManifestFile) -> None:
        if m.content is ManifestContent.DATA:
            self.added_files += m.added_files_count or 0
            self.added_records += m.added_rows_count or 0
            self.removed_files += m.deleted_files_count or 0
            self.deleted_records += m.deleted_rows_count or 0
        else:
            self.added_delete_files += m.added_files_count or 0
            self.removed_delete_files += m.deleted_files_count or 0
            self.trust_sizes = False

    def to_properties(self) -> dict[str, str]:
        pairs: list[tuple[str, int]] = [
            (ADDED_DATA_FILES, self.added_files),
            (DELETED_DATA_FILES, self.removed_files),
            (ADDED_EQ_DELETE_FILES, self.added_eq_delete_files),
            (REMOVED_EQ_DELETE_FILES, self.removed_eq_delete_files),
            (ADDED_POS_DELETE_FILES, self.added_pos_delete_files),
            (REMOVED_POS_DELETE_FILES, self.removed_pos_delete_files),
            (ADDED_DELETE_FILES, self.added_delete_files),
            (REMOVED_DELETE_FILES, self.removed_delete_files),
            (ADDED_RECORDS, self.added_records),
            (DELETED_RECORDS, self.deleted_records),
        ]
        if self.trust_sizes:
            pairs += [
                (ADDED_FILES_SIZE, self.added_size),
                (REMOVED_FILES_SIZE, self.removed_size),
                (ADDED_POS_DELETES, self.added_pos_deletes),
                (REMOVED_POS_DELETES, self.removed_pos_deletes),
                (ADDED_EQ_DELETES, self.added_eq_deletes),
                (REMOVED_EQ_DELETES, self.removed_eq_deletes),
            ]
        return {key: str(value) for key, value in pairs if value > 0}


@dataclass(slots=True)
class SummaryBuilder:
    """Collects what a snapshot changes; :meth:`build` gives its summary properties.

    ``partition_limit`` is ``write.summary.partition-limit``: per-partition
    summaries are written only when at most that many partitions changed.
    """

    schema: Schema
    partition_limit: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    _counts: _Counts = field(default_factory=_Counts)
    _partitions: dict[str, _Counts] = field(default_factory=dict)
    _trust_partitions: bool = True
    _duplicate_deletes: int = 0
    _paths: dict[tuple[int, int, tuple[Any, ...]], str] = field(default_factory=dict)
    _specs: dict[int, PartitionSpec] = field(default_factory=dict)

    def added_file(self, spec: PartitionSpec, f: DataFile) -> None:
        self._counts.file(f, added=True)
        self._partition(spec, f, added=True)

    def deleted_file(self, spec: PartitionSpec, f: DataFile) -> None:
        self._counts.file(f, added=False)
        self._partition(spec, f, added=False)

    def added_manifest(self, m: ManifestFile) -> None:
        """Count a whole manifest whose files are not listed one by one."""
        self._trust_partitions = False
        self._partitions.clear()
        self._counts.manifest(m)

    def duplicate_delete(self) -> None:
        self._duplicate_deletes += 1

    def set(self, key: str, value: str) -> None:
        self.properties[key] = value

    def _partition(self, spec: PartitionSpec, f: DataFile, added: bool) -> None:
        if self._trust_partitions:
            path = self._partition_path(spec, f.partition) if spec.fields else ""
            self._partitions.setdefault(path, _Counts()).file(f, added)

    def _partition_path(self, spec: PartitionSpec, partition: tuple[Any, ...]) -> str:
        # Memoized per spec and tuple: a commit adds many files to few partitions, and
        # rendering a path (transform to text, URL escaping) is costly. Only tuples of
        # values whose equality means equal text (not floats: 0.0 == -0.0, not Decimals:
        # 1.0 == 1.00, not bools: True == 1) are remembered.
        if not all(v.__class__ in _MEMO_SAFE for v in partition):
            return spec.partition_to_path(partition, self.schema)
        key = (spec.spec_id, id(spec), partition)
        path = self._paths.get(key)
        if path is None:
            path = spec.partition_to_path(partition, self.schema)
            self._paths[key] = path
            self._specs[id(spec)] = spec  # keeps id(spec) unique while the key is in use
        return path

    def build(self) -> dict[str, str]:
        """This snapshot's own summary properties (no totals, no operation)."""
        out = dict(self.properties)
        out.update(self._counts.to_properties())
        if self._duplicate_deletes:
            out[DELETED_DUPLICATE_FILES] = str(self._duplicate_deletes)
        if self._trust_partitions:
            out[CHANGED_PARTITION_COUNT] = str(len(self._partitions))
            if self._partitions and len(self._partitions) <= self.partition_limit:
                out[PARTITION_SUMMARIES_INCLUDED] = "true"
                for path, counts in self._partitions.items():
                    if path:
                        joined = ",".join(f"{k}={v}" for k, v in counts.to_properties().items())
                        out[CHANGED_PARTITION_PREFIX + path] = joined
        return out


def with_totals(summary: Mapping[str, str], previous: Mapping[str, str] | None) -> dict[str, str]:
    """Add the ``total-*`` keys carried forward from the parent snapshot's summary.

    A table's first snapshot starts every total at 0. A parent without a total
    (or with a summary the reference implementation could not compute) leaves
    that total out rather than guess it.
    """
    if previous is None:
        previous = {total: "0" for total, _, _ in TOTALS}
    out = dict(summary)
    for total, added, removed in TOTALS:
        base = previous.get(total)
        if base is None:
            continue
        try:
            value = int(base)
        except ValueError:
            continue
        if value >= 0 and added in summary:
            value += int(summary[added])
        if value >= 0 and removed in summary:
            value -= int(summary[removed])
        if value >= 0:
            out[total] = str(value)
    return out
