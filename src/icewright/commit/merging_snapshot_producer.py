"""The base of operations that rewrite manifests (Iceberg Java's ``MergingSnapshotProducer``).

:class:`MergingSnapshotProducer` is the base of every data-changing operation except the
fast append (merge append, overwrite, replace partitions, delete, rewrite, row delta): it
adds data and delete files in new manifests (written once, reused by every attempt),
removes files by rewriting the parent's manifests
(:class:`~icewright.commit.manifest_filter.ManifestFilter`), and bin-packs the result
(:class:`~icewright.commit.manifest_merge.ManifestMerger`). On every attempt it works
from the refreshed base: the operation's ``validate`` runs against the new branch head,
and the parent's manifests are filtered again (reusing what an earlier attempt wrote for
manifests it saw before). After a successful commit, every manifest an attempt wrote that
the committed snapshot does not list is reported by :meth:`files_not_committed` (spec:
"Commit Conflict Resolution and Retry").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.manifest_filter import ManifestFilter
from icewright.commit.manifest_merge import ManifestMerger
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions, SnapshotProducer
from icewright.commit.summary import SummaryBuilder
from icewright.commit.validation import read_entries, snapshot_manifests
from icewright.errors import ValidationError
from icewright.expressions import Expression, bind, sql_filter
from icewright.manifest.data_file import (
    UNASSIGNED_SEQ,
    DataFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.manifest import ManifestWriter
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["MergingSnapshotProducer", "to_expression"]


def to_expression(expr: Expression | str) -> Expression:
    """``expr`` as an expression; a string is SQL with Spark SQL's meaning (:func:`sql_filter`)."""
    if isinstance(expr, str):
        return sql_filter(expr)
    if not isinstance(expr, Expression):
        raise ValidationError(
            f"a row filter must be an Expression or a string to parse, got {type(expr).__name__}"
        )
    return expr


class _Store:
    """Reads manifests and writes this commit's new ones for one base."""

    def __init__(self, producer: MergingSnapshotProducer, base: TableMetadata) -> None:
        self._producer = producer
        self._base = base

    def read_entries(self, manifest: ManifestFile) -> list[ManifestEntry]:
        return read_entries(self._producer.table.io, manifest)

    def write_manifest(
        self, spec_id: int, content: ManifestContent, entries: Sequence[ManifestEntry]
    ) -> ManifestFile:
        base = self._base
        writer = ManifestWriter(
            format_version=base.format_version,
            spec=base.spec_by_id(spec_id),
            schema=base.schema(),
            snapshot_id=self._producer.snapshot_id,
            content=content,
        )
        for entry in entries:
            writer.add_entry(entry)
        path = self._producer.new_manifest_path(base)
        data, manifest = writer.finish(path)
        self._producer.table.io.create(path, data)
        return manifest


class MergingSnapshotProducer(SnapshotProducer):
    """Base of operations that add and remove data and delete files.

    Subclasses state ``operation`` and ``validate`` and configure files through the
    protected ``_add_*`` / ``_delete_*`` methods. The *starting snapshot* for conflict
    checks defaults to the branch head of the table handle the operation was built on
    (what the caller read); :meth:`_set_starting_snapshot` changes it.
    """

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        props = table.metadata.properties
        case_sensitive = self.case_sensitive
        self._data_filter = ManifestFilter(ManifestContent.DATA, case_sensitive=case_sensitive)
        self._delete_filter = ManifestFilter(ManifestContent.DELETES, case_sensitive=case_sensitive)
        self._data_merger = ManifestMerger.from_properties(props)
        self._delete_merger = ManifestMerger.from_properties(props)
        self._new_data: dict[int, dict[str, DataFile]] = {}
        self._new_deletes: dict[str, tuple[DataFile, int | None]] = {}
        self._new_data_sequence_number: int | None = None
        self._new_data_manifests: list[ManifestFile] | None = None
        self._new_delete_manifests: list[ManifestFile] | None = None
        self._summary_properties: dict[str, str] = {}
        self._last_manifests: set[str] = set()
        head = table.metadata.branch_head(self.branch)
        self.starting_snapshot_id: int | None = head.snapshot_id if head else None

    # --- configuration (for subclasses) ---------------------------------------------

    def _set_starting_snapshot(self, snapshot_id: int | None) -> None:
        # None validates against the branch's whole history (Java's default); a snapshot
        # that is not an ancestor of the branch head fails at validation time.
        self.starting_snapshot_id = snapshot_id

    def _expression(self, expr: Expression | str) -> Expression:
        """Parse and check ``expr`` against the table schema now, before any file is written."""
        parsed = to_expression(expr)
        bind(parsed, self.table.metadata.schema(), self.case_sensitive)
        return parsed

    def _spec(self, f: DataFile) -> PartitionSpec:
        specs = self.table.metadata.specs_by_id()
        if f.spec_id not in specs:
            raise ValidationError(
                f"{f.file_path}: partition spec {f.spec_id} is not a spec of table "
                f"{self.table.identifier}"
            )
        spec = specs[f.spec_id]
        if len(f.partition) != len(spec.fields):
            raise ValidationError(
                f"{f.file_path}: the partition tuple has {len(f.partition)} values but spec "
                f"{f.spec_id} has {len(spec.fields)} fields"
            )
        return spec

    def _add_data_file(self, f: DataFile) -> None:
        if not isinstance(f, DataFile) or f.content is not FileContent.DATA:
            raise ValidationError(
                f"{getattr(f, 'file_path', f)!r}: only data files (content=DATA) can be added "
                "here; delete files go through add_delete_file or a row delta"
            )
        self._spec(f)
        files = self._new_data.setdefault(f.spec_id, {})
        if f.file_path not in files:  # a file added twice is added once (Java's DataFileSet)
            files[f.file_path] = f
            self._new_data_manifests = None

    def _add_delete_file(self, f: DataFile, data_sequence_number: int | None = None) -> None:
        if not isinstance(f, DataFile) or f.content is FileContent.DATA:
            raise ValidationError(
                f"{getattr(f, 'file_path', f)!r}: expected a position or equality delete file"
            )
        self._check_delete_for_version(f, self.table.metadata.format_version)
        self._spec(f)
        self._new_deletes[f.file_path] = (f, data_sequence_number)
        self._new_delete_manifests = None

    @staticmethod
    def _check_delete_for_version(f: DataFile, format_version: int) -> None:
        if format_version < 2:
            raise ValidationError(
                f"{f.file_path}: delete files need format version 2; upgrade the table "
                "(format-version=2) first"
            )
        if f.file_format is FileFormat.PUFFIN or f.content_offset is not None:
            raise ValidationError(
                f"{f.file_path}: deletion vectors belong to format version 3; a v2 table "
                "takes position delete files"
            )

    def _delete_data_file(self, f: DataFile | str) -> None:
        if isinstance(f, str):
            self._data_filter.delete_path(f)
        elif isinstance(f, DataFile) and f.content is FileContent.DATA:
            self._data_filter.delete_file(f)
        else:
            raise ValidationError(f"{f!r}: expected a data file or a data file path to remove")

    def _delete_delete_file(self, f: DataFile) -> None:
        if not isinstance(f, DataFile) or f.content is FileContent.DATA:
            raise ValidationError(f"{f!r}: expected a delete file to remove")
        self._delete_filter.delete_file(f)

    def _delete_by_row_filter(self, expr: Expression) -> None:
        # Deleting rows also removes delete files whose rows all match (Java does the same).
        self._data_filter.delete_by_row_filter(expr)
        self._delete_filter.delete_by_row_filter(expr)

    def _drop_partition(self, spec_id: int, partition: Sequence[object]) -> None:
        self._data_filter.drop_partition(spec_id, partition)
        self._delete_filter.drop_partition(spec_id, partition)

    def _fail_any_delete(self) -> None:
        self._data_filter.fail_any_delete()
        self._delete_filter.fail_any_delete()

    def _fail_missing_delete_paths(self) -> None:
        self._data_filter.fail_missing_delete_paths()
        self._delete_filter.fail_missing_delete_paths()

    def _set_new_data_sequence_number(self, sequence_number: int | None) -> None:
        if sequence_number != self._new_data_sequence_number:
            self._new_data_sequence_number = sequence_number
            self._new_data_manifests = None

    def _set_summary(self, key: str, value: str) -> None:
        self._summary_properties[key] = value

    # --- state questions -------------------------------------------------------------

    def adds_data_files(self) -> bool:
        """Whether the operation adds data files."""
        return any(self._new_data.values())

    def adds_delete_files(self) -> bool:
        """Whether the operation adds delete files."""
        return bool(self._new_deletes)

    def deletes_data_files(self) -> bool:
        """Whether the operation removes data files (by path, file, filter or partition)."""
        return self._data_filter.contains_deletes()

    def deletes_delete_files(self) -> bool:
        """Whether the operation removes delete files."""
        return self._delete_filter.contains_deletes()

    def row_filter(self) -> Expression:
        """The combined delete filter (``ALWAYS_FALSE`` when there is none)."""
        return self._data_filter.row_filter

    def added_data_files(self) -> list[DataFile]:
        """The data files this operation adds."""
        return [f for files in self._new_data.values() for f in files.values()]

    def added_delete_files(self) -> list[DataFile]:
        """The delete files this operation adds."""
        return [f for f, _ in self._new_deletes.values()]

    def data_spec(self) -> PartitionSpec:
        """The one partition spec of the added data files."""
        spec_ids = [s for s, files in self._new_data.items() if files]
        if not spec_ids:
            raise ValidationError("cannot determine the partition spec: no data files were added")
        if len(spec_ids) > 1:
            raise ValidationError(
                "cannot use one partition spec: data files of different partition specs "
                f"({sorted(spec_ids)}) were added"
            )
        return self.table.metadata.spec_by_id(spec_ids[0])

    # --- the new snapshot's manifests -------------------------------------------------

    def _new_manifests(
        self,
        base: TableMetadata,
        groups: Mapping[int, Sequence[tuple[DataFile, int | None]]],
        content: ManifestContent,
    ) -> list[ManifestFile]:
        written = []
        for spec_id, files in sorted(groups.items()):
            if not files:
                continue
            writer = ManifestWriter(
                format_version=base.format_version,
                spec=base.spec_by_id(spec_id),
                schema=base.schema(),
                snapshot_id=self.snapshot_id,
                content=content,
            )
            for f, seq in files:
                writer.add(f, data_sequence_number=seq)
            path = self.new_manifest_path(base)
            data, manifest = writer.finish(path)
            self.table.io.create(path, data)
            written.append(manifest)
        return written

    def _parent_manifests(
        self, parent: Snapshot | None
    ) -> tuple[list[ManifestFile], list[ManifestFile]]:
        if parent is None:
            return [], []
        manifests = snapshot_manifests(self.table.io, parent)
        data = [m for m in manifests if m.content is ManifestContent.DATA]
        deletes = [m for m in manifests if m.content is ManifestContent.DELETES]
        return data, deletes

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        for f, _ in self._new_deletes.values():
            # Guard against a concurrent format change (Java's validateDeleteFilesForVersion).
            self._check_delete_for_version(f, base.format_version)
        store = _Store(self, base)
        specs = base.specs_by_id()
        data_manifests, delete_manifests = self._parent_manifests(parent)

        filtered = self._data_filter.filter_manifests(base, store, data_manifests)
        # Delete files older than every remaining data file can apply to nothing.
        min_data_seq = min(
            [m.min_sequence_number for m in filtered if m.min_sequence_number != UNASSIGNED_SEQ],
            default=base.last_sequence_number,
        )
        min_data_seq = min(min_data_seq, base.last_sequence_number)
        self._delete_filter.drop_delete_files_older_than(min_data_seq)
        filtered_deletes = self._delete_filter.filter_manifests(base, store, delete_manifests)

        if self._new_data_manifests is None:
            groups = {
                spec_id: [(f, self._new_data_sequence_number) for f in files.values()]
                for spec_id, files in self._new_data.items()
            }
            self._new_data_manifests = self._new_manifests(base, groups, ManifestContent.DATA)
        if self._new_delete_manifests is None:
            delete_groups: dict[int, list[tuple[DataFile, int | None]]] = {}
            for f, seq in self._new_deletes.values():
                delete_groups.setdefault(f.spec_id, []).append((f, seq))
            self._new_delete_manifests = self._new_manifests(
                base, delete_groups, ManifestContent.DELETES
            )

        def keep(m: ManifestFile) -> bool:
            # A manifest with no live file is listed only by the snapshot that wrote it.
            written_here = m.added_snapshot_id == self.snapshot_id
            return m.has_added_files() or m.has_existing_files() or written_here

        unmerged = [m for m in [*self._new_data_manifests, *filtered] if keep(m)]
        unmerged_deletes = [m for m in [*self._new_delete_manifests, *filtered_deletes] if keep(m)]

        for key, value in self._summary_properties.items():
            summary.set(key, value)
        for f in self.added_data_files():
            summary.added_file(specs[f.spec_id], f)
        for f in self.added_delete_files():
            summary.added_file(specs[f.spec_id], f)
        self._data_filter.build_summary(filtered, summary, specs)
        self._delete_filter.build_summary(filtered_deletes, summary, specs)

        result = [
            *self._data_merger.merge(
                unmerged, snapshot_id=self.snapshot_id, content=ManifestContent.DATA, store=store
            ),
            *self._delete_merger.merge(
                unmerged_deletes,
                snapshot_id=self.snapshot_id,
                content=ManifestContent.DELETES,
                store=store,
            ),
        ]
        self._last_manifests = {m.manifest_path for m in result}
        return result

    def files_not_committed(self) -> Sequence[str]:
        """The losing attempts' manifest lists, and every manifest written by an attempt
        (filtered, merged, or new and then merged) that the committed snapshot does not list."""
        committed = self._last_manifests
        return [
            *super().files_not_committed(),
            *(p for p in self.written_manifests if p not in committed),
        ]
