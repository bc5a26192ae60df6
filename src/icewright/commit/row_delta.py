"""Row-level changes with delete files (Iceberg Java's ``BaseRowDelta``, v2 merge-on-read).

A :class:`RowDelta` adds data files (new rows) and position or equality delete files
(deleted rows), and may remove data and delete files, in one snapshot. Its operation
follows Java: ``append`` when it only adds data, ``delete`` when it only adds deletes,
``overwrite`` otherwise. Deletion vectors (v3) are not written.

Like Java, it validates only what the caller asks for, against commits after the
starting snapshot (default: the branch head of the table handle it was built on):

* ``validate_data_files_exist`` -- data files the new deletes refer to are still live
  (removals by ``delete`` snapshots count only with ``validate_deleted_files``);
* ``validate_no_conflicting_data_files`` -- no data matching the conflict filter added;
* ``validate_no_conflicting_delete_files`` -- no delete files matching it added, and none
  for the data files this delta removes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.merge_append import MergingSnapshotProducer
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions
from icewright.commit.validation import ConflictScope, is_ancestor_of
from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE, Expression
from icewright.manifest.data_file import DataFile, FileContent
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["RowDelta"]


class RowDelta(MergingSnapshotProducer):
    """Add rows and delete files (and remove files) in one snapshot."""

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        self._referenced: set[str] = set()
        self._removed: dict[str, DataFile] = {}
        self._validate_deletes = False
        self._conflict_filter: Expression = ALWAYS_TRUE
        self._validate_new_data = False
        self._validate_new_deletes = False

    def add_rows(self, data_file: DataFile) -> RowDelta:
        """Add a data file."""
        self._add_data_file(data_file)
        return self

    def add_deletes(self, delete_file: DataFile) -> RowDelta:
        """Add a position or equality delete file (format version 2)."""
        self._add_delete_file(delete_file)
        return self

    def remove_rows(self, data_file: DataFile) -> RowDelta:
        """Remove a data file."""
        if not isinstance(data_file, DataFile) or data_file.content is not FileContent.DATA:
            raise ValidationError(f"{data_file!r}: remove_rows takes a data file")
        self._removed[data_file.file_path] = data_file
        self._delete_data_file(data_file)
        return self

    def remove_deletes(self, delete_file: DataFile) -> RowDelta:
        """Remove a delete file."""
        self._delete_delete_file(delete_file)
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> RowDelta:
        """Check conflicts against commits after ``snapshot_id`` (None: the whole history)."""
        self._set_starting_snapshot(snapshot_id)
        return self

    def validate_deleted_files(self) -> RowDelta:
        """Fail if files named for removal are gone, and count removals by deletes too."""
        self._validate_deletes = True
        return self

    def validate_data_files_exist(self, paths: Iterable[str]) -> RowDelta:
        """Fail if a data file the new deletes refer to was removed since the start."""
        self._referenced.update(paths)
        return self

    def conflict_detection_filter(self, expr: Expression | str) -> RowDelta:
        """The rows this delta read: only changes that may touch them conflict."""
        self._conflict_filter = self._expression(expr)
        return self

    def validate_no_conflicting_data_files(self) -> RowDelta:
        """Fail if data matching the conflict filter was added since the start."""
        self._validate_new_data = True
        return self

    def validate_no_conflicting_delete_files(self) -> RowDelta:
        """Fail if deletes matching the conflict filter were added since the start."""
        self._validate_new_deletes = True
        return self

    def operation(self) -> Operation:
        if (
            self.adds_data_files()
            and not self.adds_delete_files()
            and not self.deletes_data_files()
        ):
            return Operation.APPEND
        if self.adds_delete_files() and not self.adds_data_files():
            return Operation.DELETE
        return Operation.OVERWRITE

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if parent is None:
            return
        io = self.table.io
        start = self.starting_snapshot_id
        cs = self.case_sensitive
        if start is not None and not is_ancestor_of(base, parent.snapshot_id, start):
            raise ValidationError(
                f"snapshot {start} is not an ancestor of {parent.snapshot_id}: the branch was "
                "reset or rolled back since this delta read it; read the table again"
            )
        scope = ConflictScope(base, io, start, parent, cs)
        if self._referenced:
            scope.validate_data_files_exist(
                self._referenced,
                skip_deletes=not self._validate_deletes,
                conflict_detection_filter=self._conflict_filter,
            )
        if self._validate_deletes:
            self._fail_missing_delete_paths()
        if self._validate_new_data:
            scope.validate_added_data_files(data_filter=self._conflict_filter)
        if self._validate_new_deletes:
            if self._removed:
                scope.validate_no_new_deletes_for_data_files(
                    self._removed.values(), data_filter=self._conflict_filter
                )
            scope.validate_no_new_delete_files(data_filter=self._conflict_filter)
        conflicting = sorted(p for p in self._removed if p in self._referenced)
        if conflicting:
            raise ValidationError(
                f"cannot delete data files {conflicting} that are referenced by new delete files"
            )
