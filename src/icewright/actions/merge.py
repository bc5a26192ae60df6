"""The ``merge`` verb: upsert a source into a table by key columns (updates, inserts and
deletes of a change feed), in one commit, written merge-on-read or copy-on-write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, cast

from icewright.actions._common import (
    CatalogLike,
    TableLike,
    Timer,
    load,
    resolve_source,
    runner_or_default,
)
from icewright.actions.append import (
    already_committed,
    commit_written,
    delete_paths,
    find_key,
    keyed,
)
from icewright.actions.arguments import check_branch, check_commit_key, check_source_argument
from icewright.actions.results import ActionResult, RowChangeResult
from icewright.commit.in_flight import in_flight
from icewright.errors import ValidationError
from icewright.runners.store import forget_job, job_key

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.commit.update import CommitResult
    from icewright.runners.base import Runner
    from icewright.spark.row_changes import RowChanges, WriteMode
    from icewright.spark.write import Source

__all__ = [
    "commit_row_changes",
    "merge",
    "parse_assignments",
    "parse_columns",
    "row_result",
    "write_mode",
]


def merge(
    table: TableLike,
    source: Source,
    *,
    on: str | Sequence[str],
    catalog: CatalogLike = None,
    delete_when: str | None = None,
    update_set: str | Sequence[tuple[str, str]] | None = None,
    only_insert: bool = False,
    only_update: bool = False,
    dedupe_by: str | None = None,
    mode: WriteMode | None = None,
    branch: str = "main",
    commit_key: str | None = None,
    wap_id: str | None = None,
    runner: Runner | None = None,
) -> RowChangeResult:
    """Merge ``source`` into ``table`` by the key columns ``on``, in one snapshot.

    A source row whose key equals a target row's updates it (every table column the
    source has, or the ``update_set`` assignments ``"col = expr, ..."`` -- SQL on the
    source row, the target's value as ``target.col``); other source rows are inserted
    (table columns the source lacks are NULL). ``delete_when`` (SQL on the source row,
    e.g. ``"op = 'D'"``) deletes the matched target row instead, and drops an unmatched
    source row. ``only_insert`` leaves matched rows alone, ``only_update`` drops
    unmatched ones. A NULL key matches nothing. Several source rows for one target row
    are an error (nothing is committed) unless ``dedupe_by`` keeps, per key, the source
    row with the greatest value of that SQL expression. Source columns the table lacks
    (``op``, ``seq``) may be used in the expressions and are not written.

    ``mode`` (default: the table's ``write.merge.mode``, else copy-on-write):
    ``merge-on-read`` writes position delete files for the changed rows and new data
    files; ``copy-on-write`` rewrites the data files holding changed rows. Only files
    whose key range overlaps the source's keys are read. The commit (a row delta, or an
    overwrite) is validated from the snapshot read, at the table's
    ``write.merge.isolation-level`` (serializable by default), with the source's key
    range as the conflict filter: a concurrent commit that added rows in that range
    (serializable), or deleted or rewrote a file this merge changes, fails it with
    :class:`~icewright.errors.ValidationError`; a retry then merges into the new state.

    Bad arguments raise :class:`ValidationError` before any job runs.

    With ``wap_id`` the snapshot is staged for write-audit-publish (see
    :func:`icewright.actions.append`).
    """
    keys = parse_columns(on, "on")
    assignments = None if update_set is None else parse_assignments(update_set)
    if only_insert and only_update:
        raise ValidationError("pass only_insert or only_update, not both")
    if only_insert and assignments is not None:
        raise ValidationError("update_set needs matched rows to update; only_insert has none")
    for name, value in (("delete_when", delete_when), ("dedupe_by", dedupe_by)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValidationError(f"{name} must be a non-empty SQL expression, got {value!r}")
    check_source_argument(source)
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    source = resolve_source(source, current.catalog)
    schema = current.metadata.schema()
    names = {f.name.lower() for f in schema.fields}
    unknown = [k for k in keys if k.lower() not in names]
    if unknown:
        raise ValidationError(
            f"key column {', '.join(unknown)} is not a column of {current.identifier} "
            f"(its columns: {', '.join(f.name for f in schema.fields)})"
        )
    for column, _ in assignments or ():
        if column.lower() not in names:
            raise ValidationError(f"update_set assigns {column!r}, which is not a table column")
    chosen = write_mode(current, "merge", mode)
    if commit_key is not None:
        found = find_key(current.metadata, branch, commit_key, wap_id)
        if found is not None:
            return row_result(already_committed(current, found, timer), chosen, None)
    from icewright.spark.row_changes import MergeSpec

    spec = MergeSpec(
        on=keys,
        delete_when=delete_when,
        update_set=assignments,
        when_matched="ignore" if only_insert else "update",
        when_not_matched="ignore" if only_update else "insert",
        dedupe_by=dedupe_by,
        mode=chosen,
    )
    jobs = runner_or_default(runner)
    start = current.metadata.branch_head(branch)
    key = job_key(commit_key, "merge")
    with in_flight(current.io, current.metadata.location, "merge"):
        with timer.phase("write"):
            changes = jobs.merge(
                current.metadata, current.io, source, spec, branch=branch, **keyed(key)
            )
        with timer.phase("commit"):
            result = commit_row_changes(
                current,
                changes,
                start_snapshot_id=None if start is None else start.snapshot_id,
                command="merge",
                branch=branch,
                commit_key=commit_key,
                wap_id=wap_id,
                forget=lambda: forget_job(jobs, current.metadata, current.io, key),
            )
    return row_result(ActionResult.from_commit(result, timer.done()), chosen, changes)


def commit_row_changes(
    table: Table,
    changes: RowChanges,
    *,
    start_snapshot_id: int | None,
    command: Literal["merge", "delete", "update"],
    branch: str = "main",
    commit_key: str | None = None,
    wap_id: str | None = None,
    forget: Callable[[], None] | None = None,
) -> CommitResult:
    """Commit what a row-level job wrote: a row delta for position deletes, else an
    overwrite, validated from ``start_snapshot_id`` at the table's
    ``write.<command>.isolation-level`` with the job's conflict filter (Iceberg Java's
    rules for Spark's merge-on-read and copy-on-write commits). Nothing to commit (no
    row changed) commits nothing; the job's files are deleted when the commit fails, and
    ``forget`` (the job's stored result) is called once the outcome is known."""
    from icewright.commit import OverwriteFiles
    from icewright.commit.overwrite import IsolationLevel, isolation_level_for
    from icewright.commit.row_delta import RowDelta
    from icewright.commit.update import CommitResult

    written = [*changes.data_files, *changes.delete_files]
    if changes.changes_nothing and not (changes.removed_files or changes.removed_deletes):
        delete_paths(table.io, [f.file_path for f in written])
        if forget is not None:
            forget()
        snapshot = table.metadata.branch_head(branch)
        return CommitResult.for_snapshot(table, snapshot, committed=False)

    level = isolation_level_for(table.metadata.properties, command)

    def commit() -> CommitResult:
        if changes.delete_files:
            delta = RowDelta(table, branch=branch, commit_key=commit_key, wap_id=wap_id)
            for f in changes.data_files:
                delta.add_rows(f)
            for d in changes.delete_files:
                delta.add_deletes(d)
            for f in changes.removed_files:
                delta.remove_rows(f)
            for d in changes.removed_deletes:
                delta.remove_deletes(d)
            delta.validate_from_snapshot(start_snapshot_id)
            delta.conflict_detection_filter(changes.conflict_filter)
            delta.validate_data_files_exist(changes.referenced_files)
            delta.validate_deleted_files()
            if level is IsolationLevel.SERIALIZABLE:
                delta.validate_no_conflicting_data_files()
            delta.validate_no_conflicting_delete_files()
            return delta.commit()
        op = OverwriteFiles(table, branch=branch, commit_key=commit_key, wap_id=wap_id)
        for f in changes.removed_files:
            op.delete_file(f)
        for d in changes.removed_deletes:
            op.delete_delete_file(d)
        op.add_files(changes.data_files)
        op.validate_from_snapshot(start_snapshot_id)
        op.conflict_detection_filter(changes.conflict_filter)
        op.isolation_level(level)
        return op.commit()

    return commit_written(table.io, written, commit, forget=forget)


def write_mode(
    table: Table, command: Literal["merge", "delete", "update"], mode: str | None
) -> WriteMode:
    """The write mode of a row-level ``command``: ``mode``, else the table's
    ``write.<command>.mode`` (copy-on-write by default). Merge-on-read needs format
    version 2 (v1 has no delete files; v3 tables take deletion vectors, which icewright
    does not write yet)."""
    from icewright.spec.properties import read_property

    chosen = (
        mode
        if mode is not None
        else read_property(table.metadata.properties, f"write.{command}.mode")
    )
    if chosen not in ("copy-on-write", "merge-on-read"):
        raise ValidationError(f"mode must be copy-on-write or merge-on-read, got {chosen!r}")
    version = table.metadata.format_version
    if chosen == "merge-on-read" and version != 2:
        why = (
            "format version 1 has no delete files"
            if version == 1
            else "format version 3 takes deletion vectors instead of position delete files, "
            "and icewright does not write them yet"
        )
        raise ValidationError(
            f"{table.identifier} cannot be changed merge-on-read: {why}; use copy-on-write"
        )
    return cast("WriteMode", chosen)


def parse_columns(on: str | Sequence[str], what: str) -> tuple[str, ...]:
    """Column names from ``"a, b"`` or a sequence; at least one, none repeated."""
    parts = on.split(",") if isinstance(on, str) else list(on) if on is not None else []
    names = tuple(p.strip() if isinstance(p, str) else p for p in parts)
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise ValidationError(
            f'{what} must name at least one column ("id" or "id, day"), got {on!r}'
        )
    repeated = sorted({n for n in names if [m.lower() for m in names].count(n.lower()) > 1})
    if repeated:
        raise ValidationError(f"{what} names {', '.join(repeated)} more than once")
    return names


def parse_assignments(text: str | Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``"a = expr, b = expr"`` (commas inside parentheses or quotes belong to the
    expression) or (column, expression) pairs."""
    if not isinstance(text, str):
        pairs = tuple((str(c).strip(), str(e).strip()) for c, e in text)
    else:
        pairs = tuple(_assignment(part) for part in _split_top_level(text))
    if not pairs or any(not c or not e for c, e in pairs):
        raise ValidationError(f"update_set must be 'col = expr, ...', got {text!r}")
    return pairs


def _assignment(part: str) -> tuple[str, str]:
    column, equals, expr = part.partition("=")
    if not equals:
        raise ValidationError(f"update_set part {part.strip()!r} is not 'col = expr'")
    return column.strip().strip("`"), expr.strip()


def _split_top_level(text: str) -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def row_result(result: ActionResult, mode: str, changes: RowChanges | None) -> RowChangeResult:
    """``result`` with the row counts of ``changes`` (none: the job did not run)."""
    fields = {f: getattr(result, f) for f in ActionResult.__dataclass_fields__}
    if changes is None:
        return RowChangeResult(**fields, mode=mode)
    return RowChangeResult(
        **fields,
        mode=mode,
        rows_inserted=changes.inserted,
        rows_updated=changes.updated,
        rows_deleted=changes.deleted,
        delete_files_added=len(changes.delete_files),
        files_read=changes.files_read,
    )
