"""Overwrites: by row filter or by explicit files, and dynamic partition replacement
(Iceberg Java's ``BaseOverwriteFiles`` and ``BaseReplacePartitions``).

:class:`OverwriteFiles` removes data files -- every file all of whose rows match a row
filter, or named files (the copy-on-write output: rewritten files replace the originals)
-- and adds new ones in one ``overwrite`` snapshot. What a concurrent commit may do is
up to the caller, as in Java:

* ``validate_from_snapshot`` -- the snapshot the caller read (default: the branch head of
  the table handle the operation was built on);
* ``conflict_detection_filter`` -- the rows the operation read;
* ``validate_no_conflicting_data`` -- no data that may match the filter was added since
  the start;
* ``validate_no_conflicting_deletes`` -- no rows matching the filter were deleted since
  the start (no new delete files, no removed data files, no new deletes for the files
  this operation removes).

The isolation level of the table (``write.delete.isolation-level``,
``write.update.isolation-level``, ``write.merge.isolation-level``; default
``serializable``) picks these the way Spark's copy-on-write commit does: serializable
checks both, snapshot only conflicting deletes (:meth:`OverwriteFiles.isolation_level`,
:func:`overwrite`).

:class:`ReplacePartitions` replaces every partition that the new files touch (Spark's
dynamic overwrite): operation ``overwrite``, summary ``replace-partitions=true``; it
validates, if asked, that nothing was added to or deleted from the replaced partitions
since the start, or that nothing is replaced at all (``validate_append_only``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit import summary as keys
from icewright.commit.merge_append import MergingSnapshotProducer
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions
from icewright.commit.update import CommitResult
from icewright.commit.validation import ConflictScope, PartitionSet
from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Evaluator,
    Expression,
    StrictMetricsEvaluator,
    inclusive_projection,
    strict_projection,
)
from icewright.manifest.data_file import DataFile, FileContent
from icewright.spec.properties import read_property
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DELETE_ISOLATION_LEVEL",
    "MERGE_ISOLATION_LEVEL",
    "UPDATE_ISOLATION_LEVEL",
    "IsolationLevel",
    "OverwriteFiles",
    "ReplacePartitions",
    "isolation_level_for",
    "overwrite",
    "replace_partitions",
]

DELETE_ISOLATION_LEVEL = "write.delete.isolation-level"
UPDATE_ISOLATION_LEVEL = "write.update.isolation-level"
MERGE_ISOLATION_LEVEL = "write.merge.isolation-level"
_COMMANDS = {
    "delete": DELETE_ISOLATION_LEVEL,
    "update": UPDATE_ISOLATION_LEVEL,
    "merge": MERGE_ISOLATION_LEVEL,
}


class IsolationLevel(StrEnum):
    """How much concurrent change an overwrite tolerates (Iceberg's ``IsolationLevel``)."""

    SERIALIZABLE = "serializable"
    """No data matching the conflict filter may be added, and none deleted, concurrently."""
    SNAPSHOT = "snapshot"
    """Only concurrent deletes of the rows this operation read fail it."""

    @classmethod
    def parse(cls, value: IsolationLevel | str) -> IsolationLevel:
        """The level named ``value`` (case-insensitive)."""
        if isinstance(value, IsolationLevel):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ValidationError(
                f"unknown isolation level {value!r}: use 'serializable' or 'snapshot'"
            ) from None


def isolation_level_for(properties: Mapping[str, str], command: str = "update") -> IsolationLevel:
    """The isolation level the table asks for a ``delete``, ``update`` or ``merge``."""
    key = _COMMANDS.get(command)
    if key is None:
        raise ValidationError(f"unknown command {command!r}: use 'delete', 'update' or 'merge'")
    value = read_property(properties, key)  # invalid: the default, with a warning
    return IsolationLevel.SERIALIZABLE if value is None else IsolationLevel.parse(value)


class OverwriteFiles(MergingSnapshotProducer):
    """Remove data files by row filter or by file, add new ones, in one snapshot."""

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        self._deleted_data_files: dict[str, DataFile] = {}
        self._conflict_filter: Expression | None = None
        self._check_added_match_filter = False
        self._validate_new_data = False
        self._validate_new_deletes = False

    # --- configuration -----------------------------------------------------------

    def overwrite_by_row_filter(self, expr: Expression | str) -> OverwriteFiles:
        """Remove every data file all of whose rows match ``expr`` (a file where only some
        rows match makes the commit fail)."""
        self._delete_by_row_filter(self._expression(expr))
        return self

    def add_file(self, data_file: DataFile) -> OverwriteFiles:
        """Add a data file."""
        self._add_data_file(data_file)
        return self

    def add_files(self, data_files: Iterable[DataFile]) -> OverwriteFiles:
        """Add data files."""
        for f in data_files:
            self._add_data_file(f)
        return self

    def delete_file(self, data_file: DataFile) -> OverwriteFiles:
        """Remove a data file (it must be live when the commit applies, if validating)."""
        if not isinstance(data_file, DataFile) or data_file.content is not FileContent.DATA:
            raise ValidationError(
                f"{data_file!r}: delete_file takes a data file; use delete_delete_file for "
                "delete files"
            )
        self._deleted_data_files[data_file.file_path] = data_file
        self._delete_data_file(data_file)
        return self

    def delete_delete_file(self, delete_file: DataFile) -> OverwriteFiles:
        """Remove a delete file (one whose rows the rewritten data no longer needs)."""
        self._delete_delete_file(delete_file)
        return self

    def validate_added_files_match_overwrite_filter(self) -> OverwriteFiles:
        """Fail unless every added file's rows all match the overwrite filter."""
        self._check_added_match_filter = True
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> OverwriteFiles:
        """Check conflicts against commits after ``snapshot_id`` (None: the whole history)."""
        self._set_starting_snapshot(snapshot_id)
        return self

    def conflict_detection_filter(self, expr: Expression | str) -> OverwriteFiles:
        """The rows the operation read: only changes that may touch them conflict."""
        self._conflict_filter = self._expression(expr)
        return self

    def validate_no_conflicting_data(self) -> OverwriteFiles:
        """Fail if data that may match the conflict filter was added since the start."""
        self._validate_new_data = True
        self._fail_missing_delete_paths()
        return self

    def validate_no_conflicting_deletes(self) -> OverwriteFiles:
        """Fail if rows that may match the conflict filter were deleted since the start."""
        self._validate_new_deletes = True
        self._fail_missing_delete_paths()
        return self

    def isolation_level(self, level: IsolationLevel | str) -> OverwriteFiles:
        """Validate as Spark's copy-on-write commit does at ``level``."""
        parsed = IsolationLevel.parse(level)
        if parsed is IsolationLevel.SERIALIZABLE:
            self.validate_no_conflicting_data()
        self.validate_no_conflicting_deletes()
        return self

    def isolation_level_from_properties(self, command: str = "update") -> OverwriteFiles:
        """Validate at the level of the table's ``write.<command>.isolation-level``."""
        return self.isolation_level(isolation_level_for(self.table.metadata.properties, command))

    # --- the operation -----------------------------------------------------------

    def operation(self) -> Operation:
        if self.deletes_data_files() and not self.adds_data_files():
            return Operation.DELETE
        if self.adds_data_files() and not self.deletes_data_files():
            return Operation.APPEND
        return Operation.OVERWRITE

    def _data_conflict_filter(self) -> Expression:
        if self._conflict_filter is not None:
            return self._conflict_filter
        if self.row_filter() is not ALWAYS_FALSE and not self._deleted_data_files:
            return self.row_filter()
        return ALWAYS_TRUE

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        scope = ConflictScope(
            base, self.table.io, self.starting_snapshot_id, parent, self.case_sensitive
        )
        if self._check_added_match_filter:
            self._check_added_files_match(base)
        if self._validate_new_data:
            scope.validate_added_data_files(data_filter=self._data_conflict_filter())
        if self._validate_new_deletes:
            if self.row_filter() is not ALWAYS_FALSE:
                expr = self._conflict_filter or self.row_filter()
                scope.validate_no_new_delete_files(data_filter=expr)
                scope.validate_deleted_data_files(data_filter=expr)
            if self._deleted_data_files:
                scope.validate_no_new_deletes_for_data_files(
                    self._deleted_data_files.values(), data_filter=self._conflict_filter
                )

    def _check_added_files_match(self, base: TableMetadata) -> None:
        spec = self.data_spec()
        schema = base.schema()
        expr = self.row_filter()
        ptype = spec.partition_type(schema)
        inclusive = Evaluator(ptype, inclusive_projection(spec, schema, expr, self.case_sensitive))
        strict = Evaluator(ptype, strict_projection(spec, schema, expr, self.case_sensitive))
        metrics = StrictMetricsEvaluator(schema, expr, self.case_sensitive)
        for f in self.added_data_files():
            # Strict projection or metrics must prove every row matches; the inclusive test
            # only avoids reading metrics for files that cannot match at all.
            if not (inclusive.eval(f.partition) and (strict.eval(f.partition) or metrics.eval(f))):
                raise ValidationError(
                    f"cannot append file with rows that do not match filter {expr}: "
                    f"{f.file_path}; an overwrite by filter may only add rows the filter selects"
                )


class ReplacePartitions(MergingSnapshotProducer):
    """Replace every partition the added files belong to (a dynamic overwrite)."""

    def __init__(
        self,
        table: Table,
        files: Iterable[DataFile] = (),
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        self._set_summary(keys.REPLACE_PARTITIONS, "true")
        self._replaced = PartitionSet()
        self._validate_data = False
        self._validate_deletes = False
        self._replace_all = False
        for f in files:
            self.add_file(f)

    def add_file(self, data_file: DataFile) -> ReplacePartitions:
        """Add a data file; its partition's current files are replaced."""
        self._add_data_file(data_file)
        self._drop_partition(data_file.spec_id, data_file.partition)
        self._replaced.add(data_file.spec_id, data_file.partition)
        return self

    def validate_append_only(self) -> ReplacePartitions:
        """Fail if the commit would replace any existing file."""
        self._fail_any_delete()
        return self

    def validate_from_snapshot(self, snapshot_id: int | None) -> ReplacePartitions:
        """Check conflicts against commits after ``snapshot_id`` (None: the whole history)."""
        self._set_starting_snapshot(snapshot_id)
        return self

    def validate_no_conflicting_data(self) -> ReplacePartitions:
        """Fail if data was added to a replaced partition since the start."""
        self._validate_data = True
        return self

    def validate_no_conflicting_deletes(self) -> ReplacePartitions:
        """Fail if rows of a replaced partition were deleted since the start."""
        self._validate_deletes = True
        return self

    @property
    def replaced_partitions(self) -> PartitionSet:
        """The partitions this commit replaces."""
        return self._replaced

    def operation(self) -> Operation:
        return Operation.OVERWRITE

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        scope = ConflictScope(
            base, self.table.io, self.starting_snapshot_id, parent, self.case_sensitive
        )
        unpartitioned = self.data_spec().is_unpartitioned
        if self._validate_data:
            if unpartitioned:
                scope.validate_added_data_files(data_filter=ALWAYS_TRUE)
            else:
                scope.validate_added_data_files(partitions=self._replaced)
        if self._validate_deletes:
            if unpartitioned:
                scope.validate_deleted_data_files(data_filter=ALWAYS_TRUE)
                scope.validate_no_new_delete_files(data_filter=ALWAYS_TRUE)
            else:
                scope.validate_deleted_data_files(partitions=self._replaced)
                scope.validate_no_new_delete_files(partitions=self._replaced)

    def apply(self, base: TableMetadata) -> TableMetadata:
        if not self.adds_data_files():
            raise ValidationError(
                "replace partitions needs at least one data file: the partitions to replace "
                "are those of the added files"
            )
        if self.data_spec().is_unpartitioned and not self._replace_all:
            # An unpartitioned table has one partition: replace everything.
            self._delete_by_row_filter(ALWAYS_TRUE)
            self._replace_all = True
        return super().apply(base)


def overwrite(
    table: Table,
    *,
    row_filter: Expression | str | None = None,
    delete_files: Iterable[DataFile] = (),
    add_files: Iterable[DataFile] = (),
    conflict_detection_filter: Expression | str | None = None,
    start_snapshot_id: int | None = None,
    isolation_level: IsolationLevel | str | None = None,
    command: str = "update",
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Commit a copy-on-write overwrite as Spark does.

    Removes the files whose rows all match ``row_filter`` and/or ``delete_files``, adds
    ``add_files``, and validates against commits made after ``start_snapshot_id`` (default:
    the branch head of ``table``, the state the caller read) at ``isolation_level``
    (default: the table's ``write.<command>.isolation-level``, serializable if unset).
    """
    op = OverwriteFiles(
        table,
        options=options,
        **keywords,
    )
    if row_filter is not None:
        op.overwrite_by_row_filter(row_filter)
    for f in delete_files:
        op.delete_file(f)
    op.add_files(add_files)
    if start_snapshot_id is not None:
        op.validate_from_snapshot(start_snapshot_id)
    if conflict_detection_filter is not None:
        op.conflict_detection_filter(conflict_detection_filter)
    if isolation_level is None:
        op.isolation_level_from_properties(command)
    else:
        op.isolation_level(isolation_level)
    return op.commit()


def replace_partitions(
    table: Table,
    files: Iterable[DataFile],
    *,
    start_snapshot_id: int | None = None,
    validate_append_only: bool = False,
    validate_no_conflicting_data: bool = False,
    validate_no_conflicting_deletes: bool = False,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Replace the partitions of ``files`` with ``files`` (a dynamic overwrite) and commit.

    Like Java, nothing is validated unless asked; conflicts are checked against commits
    after ``start_snapshot_id`` (default: the branch head of ``table``).
    """
    op = ReplacePartitions(table, files, options=options, **keywords)
    if start_snapshot_id is not None:
        op.validate_from_snapshot(start_snapshot_id)
    if validate_append_only:
        op.validate_append_only()
    if validate_no_conflicting_data:
        op.validate_no_conflicting_data()
    if validate_no_conflicting_deletes:
        op.validate_no_conflicting_deletes()
    return op.commit()
