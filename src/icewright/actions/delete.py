"""The ``delete`` verb: remove the rows matching a SQL predicate, in one commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, Timer, load, runner_or_default
from icewright.actions.append import already_committed, find_key, keyed
from icewright.actions.arguments import check_branch, check_commit_key, check_where_columns
from icewright.actions.merge import commit_row_changes, row_result, write_mode
from icewright.actions.replace import plan_row_filter
from icewright.actions.results import ActionResult, RowChangeResult
from icewright.commit.in_flight import in_flight
from icewright.errors import ValidationError
from icewright.runners.store import forget_job, job_key

if TYPE_CHECKING:
    from icewright.expressions import Expression
    from icewright.runners.base import Runner
    from icewright.spark.row_changes import WriteMode

__all__ = ["delete"]


def delete(
    table: TableLike,
    where: Expression | str,
    *,
    catalog: CatalogLike = None,
    mode: WriteMode | None = None,
    branch: str = "main",
    commit_key: str | None = None,
    wap_id: str | None = None,
    runner: Runner | None = None,
) -> RowChangeResult:
    """Delete the rows of ``table`` for which ``where`` is true, in one snapshot.

    ``where`` means what Spark SQL means (a row where it is NULL stays). Data files
    whose rows all match (by partition or column metrics) are dropped from metadata
    alone, with no Spark job; the rows of files where only some match are removed as
    ``mode`` says (default: the table's ``write.delete.mode``, else copy-on-write):
    position delete files (``merge-on-read``) or the files rewritten without them
    (``copy-on-write``). Validated from the snapshot read at the table's
    ``write.delete.isolation-level``, ``where`` as the conflict filter. Nothing
    matching commits nothing.

    With ``wap_id`` the snapshot is staged for write-audit-publish instead (the table
    needs ``write.wap.enabled=true``): added with ``wap.id`` in its summary and
    ``branch``'s head as its parent, no branch moved, until
    :func:`icewright.actions.publish` publishes it.
    """
    if where is None:
        raise ValidationError("delete needs where (a SQL predicate); to empty a table, use replace")
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    check_where_columns(where, current.metadata.schema())
    chosen = write_mode(current, "delete", mode)
    if commit_key is not None:
        found = find_key(current.metadata, branch, commit_key, wap_id)
        if found is not None:
            return row_result(already_committed(current, found, timer), chosen, None)
    start = current.metadata.branch_head(branch)
    with timer.phase("plan"):
        condition, full, partial = plan_row_filter(current, where, branch)
    from icewright.scan import file_scoped_deletes
    from icewright.spark.row_changes import RowChanges

    jobs = runner_or_default(runner)
    key = job_key(commit_key, "delete")
    with in_flight(current.io, current.metadata.location, "delete"):
        if partial:
            with timer.phase("write"):
                written = jobs.delete_rows(
                    current.metadata,
                    current.io,
                    partial,
                    condition=condition,
                    mode=chosen,
                    **keyed(key),
                )
        else:
            written = RowChanges((), (), (), (), condition)
        gone = {t.file_path for t in full}
        changes = RowChanges(
            data_files=written.data_files,
            delete_files=written.delete_files,
            removed_files=(*(t.data_file for t in full), *written.removed_files),
            referenced_files=written.referenced_files,
            conflict_filter=condition,
            removed_deletes=(*file_scoped_deletes(full, gone), *written.removed_deletes),
            deleted=written.deleted + sum(t.data_file.record_count for t in full),
            files_read=written.files_read,
        )
        with timer.phase("commit"):
            result = commit_row_changes(
                current,
                changes,
                start_snapshot_id=None if start is None else start.snapshot_id,
                command="delete",
                branch=branch,
                commit_key=commit_key,
                wap_id=wap_id,
                forget=lambda: forget_job(jobs, current.metadata, current.io, key),
            )
    return row_result(ActionResult.from_commit(result, timer.done()), chosen, changes)
