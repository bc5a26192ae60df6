"""``rewrite --deletes-only``: compaction of position delete files, and removal of
dangling delete files (Iceberg Java's ``RewritePositionDeleteFiles`` and
``RemoveDanglingDeleteFiles``), committed as one ``replace`` snapshot.

Planning reads the branch head's live delete files and plans an unfiltered scan of it, so
every delete file is known with the live data files it applies to
(:mod:`icewright.scan.delete_files`). Then:

* **dangling** delete files, which apply to no live data file (position or equality;
  Java's rule and more, see :mod:`icewright.scan.delete_files`), are removed, metadata
  only;
* **candidates** are the other position delete files in Parquet (not deletion vectors;
  none in a v3 table, whose position deletes are vectors), chosen as Java's
  ``BinPackRewritePositionDeletePlanner`` does by default: files under 75% or over 180% of
  ``write.delete.target-file-size-bytes`` (64 MiB), grouped by (spec, partition) and
  bin-packed; a group is rewritten when it has ``min_input_files`` (5) files, or more
  than one and more than a target's worth of bytes, or a file too large. ``where`` keeps
  the candidates that apply to some data file that may hold matching rows.

A Spark job reads the candidates and writes what still applies
(:mod:`icewright.spark.position_delete_rewrite`): rows naming a data file that is no
longer live, or one the delete file does not apply to, are dropped; the rest are written
one file per data file (``referenced_data_file``, exact ``file_path`` bounds), as
icewright writes position deletes everywhere, rather than one per partition as Java does:
a reader applies each to its one data file only, and the next data compaction removes it
with that file (:func:`icewright.scan.file_scoped_deletes`) instead of leaving it to
dangle. So the count of delete files after the rewrite is the count of data files with
deletes (Java's: the count of partitions with deletes, at most a target size each).

Sequence numbers: a position delete applies to a data file whose data sequence number is
at most its own (spec: "Scan Planning"). Each new file takes the largest data sequence
number of the rewritten files that applied to its data file, so it applies to exactly the
rows they did; Java lets the new files take the new snapshot's, which also applies to
them (paths are never reused) but makes a data compaction that read the table before this
commit fail on "new" position deletes of its files, though its rows already have them
applied. Conflicts (:class:`~icewright.commit.rewrite.RewriteFiles`, validated from the
snapshot read): a rewritten or dangling delete file that another commit removed fails
the commit, and nothing lands.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, Timer, load, runner_or_default
from icewright.actions.append import commit_written, find_key, keyed
from icewright.actions.arguments import check_branch, check_commit_key, check_rewrite
from icewright.actions.results import ActionResult, RewriteResult
from icewright.commit.in_flight import in_flight
from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE
from icewright.manifest.data_file import FileFormat
from icewright.runners.store import forget_job, job_key
from icewright.scan.compaction import CompactionRules
from icewright.scan.delete_files import (
    DeleteFileUse,
    LiveDeleteFile,
    delete_file_use,
    live_delete_files,
)
from icewright.scan.tasks import FileScanTask

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.commit.update import CommitResult
    from icewright.expressions import Expression
    from icewright.manifest.data_file import DataFile
    from icewright.runners.base import Runner

__all__ = [
    "DEFAULT_DELETE_TARGET_FILE_SIZE",
    "DELETE_TARGET_FILE_SIZE",
    "delete_target_size",
    "noop_result",
    "plan_delete_groups",
    "rewrite_position_delete_files",
    "size_property",
    "table_delete_use",
]

DELETE_TARGET_FILE_SIZE = "write.delete.target-file-size-bytes"
DEFAULT_DELETE_TARGET_FILE_SIZE = 64 * 1024 * 1024


def rewrite_position_delete_files(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    where: Expression | str | None = None,
    target_file_size: int | None = None,
    min_input_files: int = 5,
    branch: str = "main",
    commit_key: str | None = None,
    runner: Runner | None = None,
) -> RewriteResult:
    """Compact the position delete files of ``table`` and remove its dangling delete
    files (see the module docstring); one ``replace`` snapshot, validated against commits
    since the snapshot read. ``target_file_size`` defaults to the table's
    ``write.delete.target-file-size-bytes`` (64 MiB). Nothing to do: a no-op result
    (``committed`` False). ``groups_rewritten`` counts the delete file groups rewritten.

    With ``commit_key`` a retry finds the commit made and does nothing; a detached
    ``spark-submit`` runner raises :class:`~icewright.runners.store.JobSubmitted` and a
    call with the same key reuses the finished job.
    """
    check_rewrite(min_input_files, target_file_size, None, where, None)
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    if commit_key is not None:
        found = find_key(current.metadata, branch, commit_key)
        if found is not None:
            return noop_result(current, branch, timer, found.snapshot_id)
    start = current.metadata.branch_head(branch)
    if start is None:
        return noop_result(current, branch, timer)
    target = delete_target_size(current, target_file_size)
    with timer.phase("plan"):
        use = table_delete_use(current, branch)
        dangling = use.dangling()
        groups = plan_delete_groups(
            current,
            use,
            where=where,
            target_file_size=target,
            min_input_files=min_input_files,
            branch=branch,
        )
    if not groups and not dangling:
        return noop_result(current, branch, timer)
    chosen = {d.file_path: d for group in groups for d in group}
    tasks = _job_tasks(use, chosen)
    jobs = runner_or_default(runner)
    key = job_key(commit_key, "rewrite-deletes", _digest(chosen))
    added: tuple[DataFile, ...] = ()
    with in_flight(current.io, current.metadata.location, "rewrite"):
        if tasks:
            with timer.phase("write"):
                changes = jobs.rewrite_position_deletes(
                    current.metadata, current.io, tasks, **keyed(key)
                )
            added = changes.delete_files
        sequence = _sequence_numbers(tasks, chosen)
        removed = [d.delete_file for d in chosen.values()] + dangling

        def forget() -> None:
            forget_job(jobs, current.metadata, current.io, key)

        def commit() -> CommitResult:
            from icewright.commit.rewrite import RewriteFiles

            op = RewriteFiles(current, branch=branch, commit_key=commit_key)
            op.validate_from_snapshot(start.snapshot_id)
            for f in removed:
                op.delete_file(f)
            for f in added:
                op.add_file(f, sequence[f.referenced_data_file or ""])
            return op.commit()

        with timer.phase("commit"):
            result = commit_written(current.io, added, commit, forget=forget)
    one = ActionResult.from_commit(result, {})
    fields = {f.name: getattr(one, f.name) for f in dataclasses.fields(ActionResult)}
    fields["timings"] = timer.done()
    return RewriteResult(**fields, groups_rewritten=len(groups), commits=(one,))


def table_delete_use(table: Table, branch: str = "main") -> DeleteFileUse:
    """The :class:`~icewright.scan.delete_files.DeleteFileUse` of the head of ``branch``
    (no scan is planned when it has no delete file)."""
    from icewright.scan import TableScan

    head = table.metadata.branch_head(branch)
    deletes = live_delete_files(table.io, head)
    if not deletes:
        return DeleteFileUse({}, {}, ())
    return delete_file_use(TableScan.of(table, ref=branch).iter_tasks(), deletes)


def plan_delete_groups(
    table: Table,
    use: DeleteFileUse,
    *,
    where: Expression | str | None = None,
    target_file_size: int,
    min_input_files: int = 5,
    branch: str = "main",
) -> list[list[LiveDeleteFile]]:
    """The groups of position delete files a rewrite compacts (see the module
    docstring), each of one (spec, partition)."""
    if table.metadata.format_version >= 3:
        return []  # a v3 table's position deletes are deletion vectors
    dangling = {d.file_path for d in use.dangling()}
    wanted: set[str] | None = None
    if where is not None:
        from icewright.scan import TableScan

        scan = TableScan.of(table, row_filter=where, ref=branch)
        wanted = {d.file_path for t in scan.iter_tasks() for d in t.delete_files}
    by_partition: dict[tuple[int, tuple[object, ...]], list[FileScanTask]] = {}
    live: dict[str, LiveDeleteFile] = {}
    for d in use.position_delete_files():
        f = d.delete_file
        if f.file_format is not FileFormat.PARQUET or d.file_path in dangling:
            continue
        if wanted is not None and d.file_path not in wanted:
            continue
        # the compaction rules take scan tasks: a delete file stands in for a data file
        task = FileScanTask(f, (), ALWAYS_TRUE, f.spec_id, d.data_sequence_number)
        rules = CompactionRules(target_file_size, min_input_files, f.spec_id)
        if rules.is_candidate(task):
            by_partition.setdefault((f.spec_id, tuple(f.partition)), []).append(task)
            live[d.file_path] = d
    groups: list[list[LiveDeleteFile]] = []
    for (spec_id, _), tasks in sorted(by_partition.items(), key=lambda kv: repr(kv[0])):
        rules = CompactionRules(target_file_size, min_input_files, spec_id)
        groups += [[live[t.file_path] for t in packed] for packed in rules.groups(spec_id, tasks)]
    return groups


def delete_target_size(table: Table, target_file_size: int | None = None) -> int:
    """The delete compaction's target file size: ``target_file_size`` if given, else the
    table's ``write.delete.target-file-size-bytes`` (64 MiB by default)."""
    return size_property(
        table, DELETE_TARGET_FILE_SIZE, DEFAULT_DELETE_TARGET_FILE_SIZE, target_file_size
    )


def size_property(table: Table, name: str, default: int, given: int | None = None) -> int:
    """``given`` if set, else the table's byte size property ``name`` (``default`` when
    unset); a value that is not a positive integer is refused."""
    if given:
        return given
    text = table.metadata.properties.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValidationError(
            f"table property {name}={text!r} is not a positive integer; fix it or pass "
            "target_file_size"
        )
    return value


def _job_tasks(use: DeleteFileUse, chosen: dict[str, LiveDeleteFile]) -> list[FileScanTask]:
    """The tasks of the data files the chosen delete files apply to, each with only
    those delete files."""
    found = []
    for task in use.tasks:
        mine = tuple(d for d in task.delete_files if d.file_path in chosen)
        if mine:
            found.append(dataclasses.replace(task, delete_files=mine))
    return found


def _sequence_numbers(
    tasks: Sequence[FileScanTask], chosen: dict[str, LiveDeleteFile]
) -> dict[str, int]:
    """For each data file, the largest data sequence number of the rewritten delete files
    that apply to it: what its new delete file carries."""
    return {
        t.file_path: max(chosen[d.file_path].data_sequence_number for d in t.delete_files)
        for t in tasks
    }


def _digest(chosen: dict[str, LiveDeleteFile]) -> str:
    return hashlib.sha256("\n".join(sorted(chosen)).encode("utf-8")).hexdigest()[:16]


def noop_result(
    table: Table, branch: str, timer: Timer, snapshot_id: int | None = None
) -> RewriteResult:
    """The result of a rewrite that commits nothing: the branch head (or the snapshot
    ``snapshot_id``, a commit key's) as it is."""
    metadata = table.metadata
    snapshot = (
        metadata.snapshot_by_id(snapshot_id)
        if snapshot_id is not None
        else metadata.branch_head(branch)
    )
    return RewriteResult.describing(table, snapshot, committed=False, timings=timer.done())
