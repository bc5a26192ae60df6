"""Deleting whole data files, by path or by row filter (Iceberg Java's ``StreamingDelete``).

A :class:`DeleteFiles` commit is a ``delete`` snapshot whose manifests mark the removed
files DELETED. A row filter removes every data file all of whose rows match it (decided
from the partition and the column metrics); a data file where only some rows match
cannot be removed whole, and the commit fails with a ``ValidationError`` that says so:
such deletes are a copy-on-write overwrite -- rewrite the file without the matching rows
and commit an :class:`~icewright.commit.overwrite.OverwriteFiles` that deletes the old
file and adds the new one. Delete files (v2) whose rows all match the filter go too.

A delete never conflicts with concurrent commits: on a lost race it applies again to the
refreshed table (a filter then also removes matching files added in between, as Java
does). ``validate_files_exist`` makes a delete by path fail when a named file is no
longer live.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.merge_append import MergingSnapshotProducer
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions
from icewright.commit.update import CommitResult
from icewright.errors import ValidationError
from icewright.expressions import Expression
from icewright.manifest.data_file import DataFile, FileContent
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["DeleteFiles", "delete_files"]


class DeleteFiles(MergingSnapshotProducer):
    """Remove data files by path, by :class:`DataFile` or by row filter."""

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        self._validate_files_exist = False

    def delete_file(self, file: DataFile | str) -> DeleteFiles:
        """Remove the data file at this path (or this :class:`DataFile`)."""
        if isinstance(file, DataFile) and file.content is not FileContent.DATA:
            raise ValidationError(
                f"{file.file_path}: DeleteFiles removes data files; remove delete files with "
                "a rewrite or a row delta"
            )
        if isinstance(file, str) and not file:
            raise ValidationError("a path to delete must not be empty")
        self._delete_data_file(file)
        return self

    def delete_from_row_filter(self, expr: Expression | str) -> DeleteFiles:
        """Remove every data file all of whose rows match ``expr``."""
        self._delete_by_row_filter(self._expression(expr))
        return self

    def validate_files_exist(self) -> DeleteFiles:
        """Fail if a file named for removal is not live when the commit applies."""
        self._validate_files_exist = True
        return self

    def operation(self) -> Operation:
        return Operation.DELETE

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        if self._validate_files_exist:
            self._fail_missing_delete_paths()


def delete_files(
    table: Table,
    *,
    paths: Iterable[DataFile | str] = (),
    row_filter: Expression | str | None = None,
    validate_files_exist: bool = False,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Remove the data files at ``paths`` and those whose rows all match ``row_filter``."""
    op = DeleteFiles(
        table,
        options=options,
        **keywords,
    )
    for p in paths:
        op.delete_file(p)
    if row_filter is not None:
        op.delete_from_row_filter(row_filter)
    if validate_files_exist:
        op.validate_files_exist()
    if not op.deletes_data_files():
        raise ValidationError("nothing to delete: give paths or a row filter")
    return op.commit()
