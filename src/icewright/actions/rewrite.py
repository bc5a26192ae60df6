"""The ``rewrite`` verb: compaction of data files by bin-packing, committed as ``replace``.

Candidates (Iceberg Java's ``SizeBasedFileRewriter`` defaults): data files under 75% or
over 180% of the target file size, and files of older partition specs (they move into the
current spec). Candidates are grouped per (spec, partition) and bin-packed into groups of
at most 100 GiB. A group is rewritten when it has ``min_input_files`` files, or more than
one file and more than a target file's worth of data, or a file too large, or files of an
older spec. Each group is read with its delete files applied and written anew in the
current schema, spec and sort order (a global range sort with ``sort=True``); the new
files take the data sequence number of the snapshot read (``use_starting_sequence_number``,
as Java's default), so deletes committed meanwhile still apply to them. Position delete
files scoped to one rewritten data file (``referenced_data_file``, or equal ``file_path``
bounds: what Iceberg Java and icewright write) are removed in the same commit, and so is
every delete file that then applies to no live data file (partition-scoped position
deletes all of whose files were rewritten, equality deletes of an emptied partition:
:mod:`icewright.actions.rewrite_deletes`), so that after a full compaction no delete file
stays live. ``deletes_only`` compacts the position delete files instead
(:func:`~icewright.actions.rewrite_deletes.rewrite_position_delete_files`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, Timer, load, runner_or_default
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
    check_rewrite,
    check_where_columns,
)
from icewright.actions.distributed import use_distributed
from icewright.actions.results import ActionResult, GroupFailure, RewriteResult
from icewright.actions.rewrite_deletes import (
    noop_result,
    rewrite_position_delete_files,
    size_property,
    table_delete_use,
)
from icewright.commit.in_flight import in_flight
from icewright.commit.reachability import ancestors_of
from icewright.commit.summary import CHANGED_PARTITION_COUNT, COMMIT_KEY
from icewright.errors import CommitStateUnknown, IcewrightError, ValidationError
from icewright.runners.store import JobSubmitted, forget_job, job_key
from icewright.scan import file_scoped_deletes
from icewright.scan.compaction import CompactionRules

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.commit.update import CommitResult
    from icewright.expressions import Expression
    from icewright.manifest.data_file import DataFile
    from icewright.runners.base import Runner
    from icewright.scan.tasks import FileScanTask
    from icewright.spec.snapshots import Snapshot

__all__ = ["FileGroup", "group_digest", "plan_groups", "rewrite"]

TARGET_FILE_SIZE = "write.target-file-size-bytes"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileGroup:
    """Files of one partition rewritten together."""

    spec_id: int
    partition: tuple[object, ...]
    tasks: tuple[FileScanTask, ...]

    @property
    def size(self) -> int:
        """Bytes of the data files."""
        return sum(t.data_file.file_size_in_bytes for t in self.tasks)


def rewrite(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    where: Expression | str | None = None,
    target_file_size: int | None = None,
    min_input_files: int = 5,
    sort: bool = False,
    partial_progress_max_commits: int | None = None,
    branch: str = "main",
    commit_key: str | None = None,
    runner: Runner | None = None,
    distributed: bool | None = None,
    delete_file_threshold: int | None = None,
    deletes_only: bool = False,
) -> RewriteResult:
    """Compact the data files of ``table`` (see the module docstring); one ``replace``
    snapshot, validated against commits since the snapshot read.

    ``where`` limits the candidates to files that may hold matching rows. ``distributed``
    plans the groups as a Spark job on ``runner`` (True), here (False) or by the table's
    size (None: :mod:`icewright.actions.distributed`).
    ``target_file_size`` defaults to the table's ``write.target-file-size-bytes``
    (512 MiB). ``sort`` range-sorts each group by the table's sort order (which must
    exist). With ``partial_progress_max_commits`` N the groups are committed in up to N
    commits; a commit that conflicts is reported in ``failed_groups`` while the others
    land (commit keys ``<commit_key>:<digest of the commit's input files>``); a failing
    Spark job still raises (the commits before it stay, and a call that runs again
    rewrites only the groups that have not landed). Without it a conflict raises and
    nothing lands. No candidates: a no-op result (``committed`` False), not an error.

    With a detached ``spark-submit`` runner each group's job is started detached and
    :class:`~icewright.runners.store.JobSubmitted` raised; calling again with the same
    ``commit_key`` reuses the finished jobs (keyed by the group's input files) and goes on
    with the next group: one deferral per group for an orchestrator.

    ``delete_file_threshold`` N also rewrites every data file to which at least N delete
    files apply, whatever its size (Iceberg Java's ``delete-file-threshold``; planned in
    this process).

    Delete files that no longer apply to any live data file once the rewritten files are
    gone (dangling; :mod:`icewright.actions.rewrite_deletes`) are removed in the same
    commit. ``deletes_only`` compacts the position delete files instead of the data files
    (:func:`~icewright.actions.rewrite_deletes.rewrite_position_delete_files`;
    ``target_file_size`` is then the delete files' target, and ``sort``, partial
    progress, ``distributed`` and ``delete_file_threshold`` do not apply).
    """
    if deletes_only:
        _check_deletes_only(sort, partial_progress_max_commits, distributed, delete_file_threshold)
        return rewrite_position_delete_files(
            table,
            catalog=catalog,
            where=where,
            target_file_size=target_file_size,
            min_input_files=min_input_files,
            branch=branch,
            commit_key=commit_key,
            runner=runner,
        )
    check_rewrite(
        min_input_files,
        target_file_size,
        partial_progress_max_commits,
        where,
        delete_file_threshold,
    )
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    check_where_columns(where, current.metadata.schema())
    if commit_key is not None and partial_progress_max_commits is None:
        found = find_key(current.metadata, branch, commit_key)
        if found is not None:
            return noop_result(current, branch, timer, found.snapshot_id)
    target = target_size(current, target_file_size)
    with timer.phase("plan"):
        groups = plan_groups(
            current,
            where=where,
            target_file_size=target,
            min_input_files=min_input_files,
            branch=branch,
            distributed=distributed,
            runner=runner,
            delete_file_threshold=delete_file_threshold,
        )
    if not groups:
        return noop_result(current, branch, timer)
    start = current.metadata.branch_head(branch)
    assert start is not None  # groups come from it
    properties = {TARGET_FILE_SIZE: str(target)}
    if sort:
        if not current.metadata.sort_order().is_sorted:
            raise ValidationError(
                "sort=True needs a table sort order; set one (ReplaceSortOrder) or rewrite "
                "without sort"
            )
        properties["write.distribution-mode"] = "range"
    jobs = runner_or_default(runner)
    batches = _batches(groups, partial_progress_max_commits)
    with timer.phase("plan"):
        deletes = table_delete_use(current, branch)
    gone: set[str] = set()  # data files of the batches so far, and the delete files removed
    commits: list[ActionResult] = []
    failures: list[GroupFailure] = []
    landed = 0
    with in_flight(current.io, current.metadata.location, "rewrite"):
        for batch in batches:
            added: list[DataFile] = []
            # Keys name a group by its input files, not by its place in the plan: a call that
            # runs again (a retry, a deferred task resuming) plans again without the groups
            # that already landed, and must neither reuse another group's job nor find an
            # earlier batch's commit key.
            group_keys = [job_key(commit_key, "rewrite", group_digest([g])) for g in batch]

            def forget(group_keys: list[str | None] = group_keys) -> None:
                for group_key in group_keys:
                    forget_job(jobs, current.metadata, current.io, group_key)

            try:
                with timer.phase("write"):
                    for group, group_key in zip(batch, group_keys, strict=True):
                        written = jobs.rewrite(
                            current.metadata,
                            current.io,
                            group.tasks,
                            properties=properties,
                            **keyed(group_key),
                        )
                        added.extend(written.data_files)
            except JobSubmitted:
                raise  # a detached job runs on: the groups written so far are reused on resume
            except Exception:
                delete_paths(current.io, [f.file_path for f in added])
                forget()
                raise
            removed = [t.data_file for g in batch for t in g.tasks]
            # position delete files scoped to a rewritten file go with it (they name rows
            # of a file that is no longer live); the rewritten rows have them applied
            batch_tasks = [t for g in batch for t in g.tasks]
            removed += file_scoped_deletes(batch_tasks, {f.file_path for f in removed})
            after = gone | {f.file_path for f in removed}
            removed += [d for d in deletes.dangling(after) if d.file_path not in after]
            key = commit_key
            if commit_key is not None and partial_progress_max_commits is not None:
                key = f"{commit_key}:{group_digest(batch)}"

            def commit(
                removed: Sequence[DataFile] = removed,
                added: Sequence[DataFile] = added,
                key: str | None = key,
            ) -> CommitResult:
                from icewright.commit import rewrite_files

                return rewrite_files(
                    current,
                    removed,
                    added,
                    start_snapshot_id=start.snapshot_id,
                    use_starting_sequence_number=True,
                    branch=branch,
                    commit_key=key,
                )

            try:
                with timer.phase("commit"):
                    result = commit_written(current.io, added, commit, forget=forget)
            except CommitStateUnknown:
                raise
            except IcewrightError as e:
                if partial_progress_max_commits is None:
                    raise
                failures.extend(
                    GroupFailure(g.partition, g.spec_id, len(g.tasks), str(e)) for g in batch
                )
                continue
            gone.update(f.file_path for f in removed)
            commits.append(ActionResult.from_commit(result, {}))
            landed += len(batch)
    if commit_key is not None and partial_progress_max_commits is not None:
        earlier = _earlier_series(current, branch, commit_key, {c.snapshot_id for c in commits})
        commits = [already_committed(current, s, timer) for s in earlier] + commits
        landed += sum(_count(s.summary, CHANGED_PARTITION_COUNT) for s in earlier)
    return _combined(
        current, branch, commits=commits, failures=failures, landed=landed, timer=timer
    )


def _check_deletes_only(
    sort: bool,
    partial_progress_max_commits: int | None,
    distributed: bool | None,
    delete_file_threshold: int | None,
) -> None:
    given = [
        name
        for name, value in (
            ("sort", sort),
            ("partial_progress_max_commits", partial_progress_max_commits),
            ("distributed", distributed),
            ("delete_file_threshold", delete_file_threshold),
        )
        if value
    ]
    if given:
        raise ValidationError(
            f"{', '.join(given)} do(es) not apply to a rewrite of delete files only; leave "
            "them out, or rewrite the data files without deletes_only"
        )


def _earlier_series(
    table: Table, branch: str, commit_key: str, skip: set[int | None]
) -> list[Snapshot]:
    """Commits of ``commit_key``'s series (``<commit_key>:<digest>``) on the branch that an
    earlier call made (one interrupted by a detached job, or a retried one), oldest first:
    the result covers every commit of the key."""
    found: list[Snapshot] = []
    head = table.metadata.branch_head(branch)
    chain = [] if head is None else ancestors_of(table.metadata, head.snapshot_id)
    for snapshot in chain:
        summary: Mapping[str, str] = snapshot.summary or {}
        key = summary.get(COMMIT_KEY, "")
        if key.startswith(f"{commit_key}:") and snapshot.snapshot_id not in skip:
            found.append(snapshot)
    return found[::-1]


def _count(summary: Mapping[str, str] | None, key: str) -> int:
    try:
        return int((summary or {}).get(key, "0"))
    except ValueError:
        return 0


def group_digest(groups: Sequence[FileGroup]) -> str:
    """16 hex digits naming ``groups`` by their input data files."""
    paths = sorted(t.data_file.file_path for g in groups for t in g.tasks)
    return hashlib.sha256("\n".join(paths).encode("utf-8")).hexdigest()[:16]


def plan_groups(
    table: Table,
    *,
    where: Expression | str | None = None,
    target_file_size: int,
    min_input_files: int = 5,
    branch: str = "main",
    distributed: bool | None = None,
    runner: Runner | None = None,
    delete_file_threshold: int | None = None,
) -> list[FileGroup]:
    """The file groups a rewrite would compact (see the module docstring); planned by a
    Spark job on ``runner`` when ``distributed`` says so (see :func:`rewrite`), except
    with a ``delete_file_threshold`` (a job spec does not carry it)."""
    from icewright.expressions import sql_filter
    from icewright.scan import TableScan

    options: dict[str, object] = {"ref": branch}
    if where is not None:
        options["row_filter"] = where
    scan = TableScan.of(table, **options)
    if scan.snapshot() is None:
        return []
    rules = CompactionRules(
        target_file_size, min_input_files, table.metadata.default_spec_id, delete_file_threshold
    )
    if delete_file_threshold is None and use_distributed(table, distributed):
        snapshot = scan.snapshot()
        assert snapshot is not None
        planned = runner_or_default(runner).plan_rewrite(
            table.metadata,
            table.io,
            snapshot.snapshot_id,
            where=sql_filter(where) if isinstance(where, str) else where,
            rules=rules,
        )
        return [FileGroup(sid, partition, tasks) for sid, partition, tasks in planned]
    by_partition: dict[tuple[int, tuple[object, ...]], list[FileScanTask]] = {}
    for task in scan.iter_tasks():  # streamed: only candidates are kept
        if rules.is_candidate(task):
            by_partition.setdefault((task.spec_id, task.partition), []).append(task)
    return [
        FileGroup(sid, partition, tuple(packed))
        for (sid, partition), tasks in by_partition.items()
        for packed in rules.groups(sid, tasks)
    ]


def _batches(groups: list[FileGroup], max_commits: int | None) -> list[list[FileGroup]]:
    if max_commits is None:
        return [groups]
    per_commit = math.ceil(len(groups) / max_commits)
    return [groups[i : i + per_commit] for i in range(0, len(groups), per_commit)]


def target_size(table: Table, target_file_size: int | None = None) -> int:
    """The compaction's target file size: ``target_file_size`` if given, else the table's
    ``write.target-file-size-bytes`` (512 MiB by default); a bad property is refused."""
    return size_property(table, TARGET_FILE_SIZE, DEFAULT_TARGET_FILE_SIZE, target_file_size)


def _combined(
    table: Table,
    branch: str,
    *,
    commits: list[ActionResult],
    failures: list[GroupFailure],
    landed: int,
    timer: Timer,
) -> RewriteResult:
    if not commits:
        return dataclasses.replace(noop_result(table, branch, timer), failed_groups=tuple(failures))
    last = commits[-1]
    return RewriteResult(
        table=last.table,
        metadata_location=last.metadata_location,
        committed=any(c.committed for c in commits),
        snapshot_id=last.snapshot_id,
        sequence_number=last.sequence_number,
        operation=last.operation,
        summary=last.summary,
        files_added=sum(c.files_added for c in commits),
        files_removed=sum(c.files_removed for c in commits),
        records_added=sum(c.records_added for c in commits),
        records_removed=sum(c.records_removed for c in commits),
        timings=timer.done(),
        groups_rewritten=landed,
        failed_groups=tuple(failures),
        commits=tuple(commits),
    )
