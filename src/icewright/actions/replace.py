"""The ``replace`` verb: overwrite the whole table, the rows matching a predicate
(copy-on-write), or the partitions present in the new data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

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
from icewright.actions.arguments import (
    check_branch,
    check_commit_key,
    check_replace,
    check_source_argument,
    check_where_columns,
)
from icewright.actions.results import ActionResult
from icewright.commit.in_flight import in_flight
from icewright.errors import ValidationError
from icewright.runners.store import JobSubmitted, forget_job, job_key
from icewright.scan import file_scoped_deletes

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.commit.update import CommitResult
    from icewright.expressions import Expression
    from icewright.manifest.data_file import DataFile
    from icewright.runners.base import Runner
    from icewright.scan.tasks import FileScanTask
    from icewright.spark.write import Source

__all__ = ["check_rows_match", "plan_copy_on_write", "plan_row_filter", "replace"]


def replace(
    table: TableLike,
    source: Source,
    *,
    catalog: CatalogLike = None,
    where: Expression | str | None = None,
    dynamic_partitions: bool = False,
    rows_must_match: bool = False,
    branch: str = "main",
    commit_key: str | None = None,
    wap_id: str | None = None,
    runner: Runner | None = None,
) -> ActionResult:
    """Replace rows of ``table`` with the rows of ``source``, in one snapshot.

    * Neither ``where`` nor ``dynamic_partitions``: every live data file is removed
      (``overwrite`` by the always-true filter) and the new files added.
    * ``where`` (an icewright expression or SQL-like text): copy-on-write. Files whose
      rows all match (by partition or by column metrics) are removed; files where only
      some rows match are rewritten keeping the rows that do not match (read with their
      deletes applied), and position delete files scoped to a removed file go with it;
      the new files are added. Committed as an ``overwrite`` validated
      against commits after the snapshot read, with ``where`` as the conflict-detection
      filter, at the table's ``write.update.isolation-level`` (serializable by default).
      The new rows are not required to match ``where``.
    * ``dynamic_partitions``: the partitions the new files fall in are replaced
      (``replace_partitions``; conflicting data or deletes committed since the snapshot
      read fail the commit). An empty source commits nothing.

    With ``rows_must_match`` (and ``where``) the new rows must all match ``where``, as
    their files' column metrics prove: a replace of one partition (an orchestrator's
    partition run) then cannot write rows into another. A file that may hold other rows
    fails the call with :class:`ValidationError`, its files deleted, nothing committed.

    ``where`` is checked before any job runs: an unknown column raises
    :class:`ValidationError` and nothing changes.

    With ``wap_id`` the snapshot is staged for write-audit-publish instead (the table
    needs ``write.wap.enabled=true``): added with ``wap.id`` in its summary and
    ``branch``'s head as its parent, no branch moved, until
    :func:`icewright.actions.publish` publishes it.
    """
    check_replace(where, dynamic_partitions, rows_must_match)
    check_source_argument(source)
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    source = resolve_source(source, current.catalog)
    check_where_columns(where, current.metadata.schema())
    jobs = runner_or_default(runner)
    keys = (job_key(commit_key, "replace"), job_key(commit_key, "replace", "keep"))

    def forget() -> None:
        for key in keys:
            forget_job(jobs, current.metadata, current.io, key)

    if commit_key is not None:
        found = find_key(current.metadata, branch, commit_key, wap_id)
        if found is not None:
            forget()
            return already_committed(current, found, timer)
    start = current.metadata.branch_head(branch)
    start_id = None if start is None else start.snapshot_id
    removed: list[DataFile] = []
    full: list[FileScanTask] = []
    partial: list[FileScanTask] = []
    condition: Expression | None = None
    if where is not None:
        with timer.phase("plan"):
            condition, full, partial = plan_row_filter(current, where, branch)
            removed = [t.data_file for t in full]
    with in_flight(current.io, current.metadata.location, "replace"):
        with timer.phase("write"):
            written = jobs.write(current.metadata, current.io, source, **keyed(keys[0]))
            files = list(written.data_files)
            if partial:
                from icewright.expressions import not_

                assert condition is not None
                try:
                    kept = jobs.rewrite(
                        current.metadata,
                        current.io,
                        partial,
                        keep=not_(condition),
                        **keyed(keys[1]),
                    )
                except JobSubmitted:
                    raise  # a detached job runs on: the first job's result is reused on resume
                except BaseException:
                    delete_paths(current.io, [f.file_path for f in files])
                    raise
                files.extend(kept.data_files)
                removed.extend(t.data_file for t in partial)

        def commit() -> CommitResult:
            from icewright.commit import OverwriteFiles, replace_partitions
            from icewright.expressions import ALWAYS_TRUE

            if rows_must_match:
                assert condition is not None
                check_rows_match(current, written.data_files, condition, where)

            if dynamic_partitions:
                return replace_partitions(
                    current,
                    files,
                    start_snapshot_id=start_id,
                    validate_no_conflicting_data=True,
                    validate_no_conflicting_deletes=True,
                    branch=branch,
                    commit_key=commit_key,
                    wap_id=wap_id,
                )
            op = OverwriteFiles(current, branch=branch, commit_key=commit_key, wap_id=wap_id)
            if condition is None:
                op.overwrite_by_row_filter(ALWAYS_TRUE)
                op.conflict_detection_filter(ALWAYS_TRUE)
            else:
                for f in removed:
                    op.delete_file(f)
                # position deletes scoped to a removed file go with it (not left dangling)
                gone = {f.file_path for f in removed}
                for d in file_scoped_deletes([*full, *partial], gone):
                    op.delete_delete_file(d)
                op.conflict_detection_filter(condition)
            op.add_files(files)
            op.validate_from_snapshot(start_id)
            op.isolation_level_from_properties("update")
            return op.commit()

        if dynamic_partitions and not files:
            forget()
            snapshot = current.metadata.branch_head(branch)
            from icewright.commit.update import CommitResult

            return ActionResult.from_commit(
                CommitResult.for_snapshot(current, snapshot, committed=False), timer.done()
            )
        with timer.phase("commit"):
            result = commit_written(current.io, files, commit, forget=forget)
        return ActionResult.from_commit(result, timer.done())


def check_rows_match(
    table: Table, files: Sequence[DataFile], condition: Expression, where: object
) -> None:
    """Raise :class:`ValidationError` unless the metrics of every file in ``files`` prove
    that all its rows match the bound ``condition``."""
    from icewright.expressions import StrictMetricsEvaluator

    strict = StrictMetricsEvaluator(table.metadata.schema(), condition)
    outside = [f for f in files if not strict.eval(f)]
    if outside:
        raise ValidationError(
            f"{len(outside)} of {len(files)} new data files may hold rows outside {where!r} "
            f"(e.g. {outside[0].file_path}): the source must only give rows of the "
            "partition(s) being replaced; nothing was committed"
        )


def plan_copy_on_write(
    table: Table, where: Expression | str, branch: str = "main"
) -> tuple[Expression, list[DataFile], list[FileScanTask]]:
    """The parsed ``where``, the data files all of whose rows match it, and the scan
    tasks of the files where only some rows may match (to rewrite); see
    :func:`plan_row_filter`."""
    condition, full, partial = plan_row_filter(table, where, branch)
    return condition, [t.data_file for t in full], partial


def plan_row_filter(
    table: Table, where: Expression | str, branch: str = "main"
) -> tuple[Expression, list[FileScanTask], list[FileScanTask]]:
    """The parsed ``where`` (bound), the scan tasks of the data files all of whose rows
    match it, and those of the files where only some rows may match.

    A file matches fully when its partition alone proves every row matches (its residual
    is always-true) or when its column metrics do (strict metrics evaluation).
    """
    from icewright.expressions import ALWAYS_TRUE, StrictMetricsEvaluator, bind, sql_filter
    from icewright.scan import TableScan

    condition = sql_filter(where) if isinstance(where, str) else where
    scan = TableScan.of(
        table, ref=table.metadata.write_ref(branch), row_filter=condition
    )  # binds: unknown columns fail
    # bound once: the rewrite job's keep filter (JSON for a detached job) is then the
    # two-valued form, NaN handling of SQL's x > v included (expressions.sql)
    condition = bind(condition, scan.schema())
    strict = StrictMetricsEvaluator(scan.schema(), condition)
    full: list[FileScanTask] = []
    partial: list[FileScanTask] = []
    if scan.snapshot() is None:
        return condition, full, partial
    # streamed: only the matching files are kept, not the whole plan (1M-file tables)
    for task in scan.iter_tasks():
        if task.residual is ALWAYS_TRUE or strict.eval(task.data_file):
            full.append(task)
        else:
            partial.append(task)
    return condition, full, partial
