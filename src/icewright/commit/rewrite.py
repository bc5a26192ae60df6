"""Rewriting files without changing table data: compaction (Iceberg Java's
``BaseRewriteFiles``).

A :class:`RewriteFiles` commit is a ``replace`` snapshot: it removes data (and delete)
files and adds files holding the same rows. Because it claims the rows are unchanged, it
fails (``ValidationError``) when that may no longer hold on the table it commits to:

* a rewritten file is no longer live (another commit removed or replaced it);
* a delete file added since the starting snapshot applies to a rewritten file (the new
  files would bring the deleted rows back); with the starting snapshot's data sequence
  number kept for the new files, newer equality deletes still apply to them, so only
  position deletes conflict (Java's ``dataSequenceNumber`` option);
* the new files hold more records than the removed ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.merge_append import MergingSnapshotProducer
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions
from icewright.commit.update import CommitResult
from icewright.commit.validation import ConflictScope
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileContent
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["RewriteFiles", "rewrite_files"]


class RewriteFiles(MergingSnapshotProducer):
    """Replace files with files holding the same rows."""

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        # Every file named for removal must be found live (Java: failMissingDeletePaths).
        self._fail_missing_delete_paths()
        self._replaced: dict[str, DataFile] = {}
        self._use_starting_sequence_number = False
        self._explicit_sequence_number = False

    # --- configuration -----------------------------------------------------------

    def delete_file(self, data_file: DataFile) -> RewriteFiles:
        """Remove a data file or, if it is a delete file, that delete file."""
        if not isinstance(data_file, DataFile):
            raise ValidationError(f"{data_file!r}: a rewrite removes DataFile objects")
        if data_file.content is FileContent.DATA:
            self._replaced[data_file.file_path] = data_file
            self._delete_data_file(data_file)
        else:
            self._delete_delete_file(data_file)
        return self

    def add_file(
        self, data_file: DataFile, data_sequence_number: int | None = None
    ) -> RewriteFiles:
        """Add a data file or, if it is a delete file, a delete file (a delete file may
        carry its own data sequence number)."""
        if not isinstance(data_file, DataFile):
            raise ValidationError(f"{data_file!r}: a rewrite adds DataFile objects")
        if data_file.content is FileContent.DATA:
            if data_sequence_number is not None:
                raise ValidationError(
                    f"{data_file.file_path}: set the data sequence number of new data files "
                    "with data_sequence_number() or use_starting_sequence_number()"
                )
            self._add_data_file(data_file)
        else:
            self._add_delete_file(data_file, data_sequence_number)
        return self

    def rewrite_files(self, deleted: Iterable[DataFile], added: Iterable[DataFile]) -> RewriteFiles:
        """Remove ``deleted`` and add ``added`` (data or delete files, by content)."""
        for f in deleted:
            self.delete_file(f)
        for f in added:
            self.add_file(f)
        return self

    def data_sequence_number(self, sequence_number: int) -> RewriteFiles:
        """Give the new data files this data sequence number (that of the data they hold),
        so that equality deletes committed since still apply to them."""
        if isinstance(sequence_number, bool) or sequence_number < 0:
            raise ValidationError(f"a data sequence number must be >= 0, got {sequence_number}")
        self._explicit_sequence_number = True
        self._use_starting_sequence_number = False
        self._set_new_data_sequence_number(sequence_number)
        return self

    def use_starting_sequence_number(self) -> RewriteFiles:
        """Give the new data files the starting snapshot's sequence number."""
        self._use_starting_sequence_number = True
        self._explicit_sequence_number = False
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> RewriteFiles:
        """Check conflicts against commits after ``snapshot_id`` (None: the whole history)."""
        self._set_starting_snapshot(snapshot_id)
        return self

    # --- the operation -----------------------------------------------------------

    def operation(self) -> Operation:
        return Operation.REPLACE

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if not (self.deletes_data_files() or self.deletes_delete_files()):
            raise ValidationError("a rewrite needs files to delete: none were given")
        if self.adds_data_files() and not self.deletes_data_files():
            raise ValidationError(
                "data files to add must be empty because there is no data file to be rewritten"
            )
        if self.adds_delete_files() and not self.deletes_delete_files():
            raise ValidationError(
                "delete files to add must be empty because there is no delete file to be rewritten"
            )
        added = sum(f.record_count for f in self.added_data_files())
        removed = sum(f.record_count for f in self._replaced.values())
        if added > removed:
            raise ValidationError(
                f"a rewrite may not add rows: the new data files hold {added} records but the "
                f"rewritten ones {removed}; commit new rows with an append or an overwrite"
            )
        if self._use_starting_sequence_number:
            self._set_new_data_sequence_number(self._starting_sequence_number(base))
        keeps_sequence = self._use_starting_sequence_number or self._explicit_sequence_number
        if self._replaced:
            scope = ConflictScope(base, self.table.io, self.starting_snapshot_id, parent)
            scope.validate_no_new_deletes_for_data_files(
                self._replaced.values(), ignore_equality_deletes=keeps_sequence
            )

    def _starting_sequence_number(self, base: TableMetadata) -> int:
        start = self.starting_snapshot_id
        snapshot = base.snapshot_by_id(start) if start is not None else None
        if snapshot is None:
            raise ValidationError(
                f"cannot keep the starting snapshot's sequence number: snapshot {start} is not "
                "in the table (expired, or no starting snapshot); call validate_from_snapshot "
                "with the snapshot the rewritten files were read from"
            )
        return snapshot.sequence_number


def rewrite_files(
    table: Table,
    deleted: Iterable[DataFile],
    added: Iterable[DataFile],
    *,
    start_snapshot_id: int | None = None,
    use_starting_sequence_number: bool = False,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Replace ``deleted`` with ``added`` (compaction) and commit.

    Conflicts are checked against commits after ``start_snapshot_id`` (default: the branch
    head of ``table``, the state the rewritten files were read from).
    """
    op = RewriteFiles(table, options=options, **keywords)
    op.rewrite_files(deleted, added)
    if start_snapshot_id is not None:
        op.validate_from_snapshot(start_snapshot_id)
    if use_starting_sequence_number:
        op.use_starting_sequence_number()
    return op.commit()
