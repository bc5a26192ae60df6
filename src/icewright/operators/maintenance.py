"""Maintenance operators: rewrite (compaction), rewrite manifests, expire snapshots,
remove orphan files.

Each calls one action (:func:`icewright.actions.rewrite`, ``rewrite_manifests``,
``expire``, ``remove_orphan_files``); see :mod:`icewright.operators.base`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.arguments import check_expire, check_rewrite, check_rewrite_manifests
from icewright.actions.instants import instant_ms
from icewright.operators.base import MAX_DEFERRALS, IcebergBaseOperator, to_jsonable

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = [
    "IcebergExpireSnapshotsOperator",
    "IcebergRemoveOrphanFilesOperator",
    "IcebergRewriteDataFilesOperator",
    "IcebergRewriteManifestsOperator",
]


class IcebergRewriteDataFilesOperator(IcebergBaseOperator):
    """Compact data files (:func:`icewright.actions.rewrite`).

    :param table: ``"ns.table"`` (templated).
    :param where: only files that may hold rows matching this Spark SQL predicate
        (templated; a NULL never matches a comparison, as in Spark SQL).
    :param target_file_size: bytes (default: the table's ``write.target-file-size-bytes``).
    :param min_input_files: a group needs at least this many files.
    :param sort: range-sort each group by the table's sort order.
    :param partial_progress_max_commits: commit the groups in up to N commits.
    :param branch: the branch (templated).
    :param distributed: plan the groups in a Spark job (True), in the task (False), or by
        the table's ``icewright.maintenance.distributed.min-data-files`` (None).
    :param deletes_only: compact the position delete files instead, and remove dangling
        delete files (:func:`icewright.actions.rewrite_position_delete_files`; one Spark
        job, one deferral; ``target_file_size`` is then the delete files' target).

    Deferrable (``deferrable=True`` with ``spark-submit``): each file group's job runs
    detached while the task defers, one deferral per group; on each resume the action
    runs again with the same commit key, reuses the finished groups' jobs (keyed by their
    input files) and starts the next one. With ``partial_progress_max_commits`` every
    commit that landed stays when a later group's job fails (the task fails; a retry
    rewrites only the groups that did not land).
    """

    template_fields: Sequence[str] = ("table", "where", "branch", "commit_key")

    def __init__(
        self,
        *,
        table: str,
        where: str | None = None,
        target_file_size: int | None = None,
        min_input_files: int = 5,
        sort: bool = False,
        partial_progress_max_commits: int | None = None,
        branch: str = "main",
        distributed: bool | None = None,
        deletes_only: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # The numbers are not templated: refused when the DAG is parsed.
        check_rewrite(min_input_files, target_file_size, partial_progress_max_commits)
        self.table = table
        self.deletes_only = deletes_only
        self.distributed = distributed
        self.where = where
        self.target_file_size = target_file_size
        self.min_input_files = min_input_files
        self.sort = sort
        self.partial_progress_max_commits = partial_progress_max_commits
        self.branch = branch
        self._groups = 0

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.rewrite`."""
        from icewright.actions import rewrite

        if self.deferrable and self.uses_spark_submit and not self.deletes_only:
            # The first call's plan counts: later calls plan only what has not landed.
            earlier = int((self.resumed or {}).get("groups", 0))
            self._groups = max(earlier, self._planned_groups())
            self.defer_extra["groups"] = self._groups
        return rewrite(
            self.table,
            catalog=self.catalog,
            where=self.where,
            target_file_size=self.target_file_size,
            min_input_files=self.min_input_files,
            sort=self.sort,
            partial_progress_max_commits=self.partial_progress_max_commits,
            branch=self.branch,
            commit_key=commit_key,
            runner=self.make_runner(),
            distributed=self.distributed,
            deletes_only=self.deletes_only,
        )

    @property
    def max_deferrals(self) -> int:
        """One deferral per file group still to rewrite, beyond the usual allowance."""
        return MAX_DEFERRALS + self._groups

    def _planned_groups(self) -> int:
        """How many file groups the compaction plans now."""
        from icewright.actions._common import load
        from icewright.actions.rewrite import plan_groups, target_size

        counts = (self.min_input_files, self.target_file_size, self.partial_progress_max_commits)
        check_rewrite(*counts, where=self.where)
        current = load(self.table, self.catalog)
        groups = plan_groups(
            current,
            where=self.where,
            target_file_size=target_size(current, self.target_file_size),
            min_input_files=self.min_input_files,
            branch=self.branch,
            distributed=self.distributed,
            runner=self.make_runner(),
        )
        self.log.info("deferrable: %d file group(s) to rewrite, a deferral each", len(groups))
        return len(groups)


class IcebergRewriteManifestsOperator(IcebergBaseOperator):
    """Cluster the data manifests by partition into manifests of the target size, one
    ``replace`` snapshot (:func:`icewright.actions.rewrite_manifests`)::

        IcebergRewriteManifestsOperator(task_id="manifests", table="sales.orders")

    :param table: ``"ns.table"`` (templated).
    :param spec_id: only the manifests of this partition spec (default: every spec).
    :param target_size_bytes: the size of a new manifest (default: the table's
        ``commit.manifest.target-size-bytes``, 8 MiB).
    :param distributed: write the manifests in a Spark job (True), in the task (False),
        or by the table's ``icewright.maintenance.distributed.min-data-files`` (None).

    The XCom value is the result: the snapshot, ``manifests_replaced``,
    ``manifests_created``, ``manifests_kept``, ``entries_processed``; ``committed`` is
    False when there was nothing to rewrite.
    """

    template_fields: Sequence[str] = ("table", "commit_key")

    def __init__(
        self,
        *,
        table: str,
        spec_id: int | None = None,
        target_size_bytes: int | None = None,
        distributed: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_rewrite_manifests(spec_id, target_size_bytes)  # refused when the DAG is parsed
        self.table = table
        self.spec_id = spec_id
        self.target_size_bytes = target_size_bytes
        self.distributed = distributed

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.rewrite_manifests`."""
        from icewright.actions import rewrite_manifests

        return rewrite_manifests(
            self.table,
            catalog=self.catalog,
            spec_id=self.spec_id,
            target_size_bytes=self.target_size_bytes,
            commit_key=commit_key,
            distributed=self.distributed,
            runner=self.make_runner(),
        )


class IcebergExpireSnapshotsOperator(IcebergBaseOperator):
    """Expire old snapshots and delete the files only they reached
    (:func:`icewright.actions.expire`).

    :param table: ``"ns.table"`` (templated).
    :param older_than: expire snapshots older than this (ms, datetime, ISO text,
        timedelta; templated); default the table's ``history.expire.max-snapshot-age-ms``.
    :param retain_last: always keep this many of the newest snapshots.
    :param dry_run: commit and delete nothing; report what would go.
    :param distributed: find the files to delete in a Spark job (True), in the task
        (False), or by the table's ``icewright.maintenance.distributed.min-data-files`` (None).
    """

    template_fields: Sequence[str] = ("table", "older_than")
    commits_snapshot = False

    def __init__(
        self,
        *,
        table: str,
        older_than: Any = None,
        retain_last: int | None = None,
        dry_run: bool = False,
        distributed: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_expire(retain_last=retain_last)  # not templated: refused when the DAG is parsed
        self.table = table
        self.older_than = older_than
        self.retain_last = retain_last
        self.distributed = distributed
        self.is_dry_run = dry_run  # BaseOperator has a dry_run() method

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.expire`."""
        from icewright.actions import expire

        return expire(
            self.table,
            catalog=self.catalog,
            older_than=instant_ms(self.older_than),
            retain_last=self.retain_last,
            dry_run=self.is_dry_run,
            distributed=self.distributed,
            runner=self.make_runner(),
        )

    def result_payload(self, result: Any) -> dict[str, Any]:
        """The expiry's counts, with the table state after it (the expiry's commit)."""
        payload = to_jsonable(result)
        commit = payload.pop("commit", None)
        state = self.table_state(self.table)
        if commit:
            state.update({k: commit[k] for k in ("metadata_location",) if k in commit})
        return {**state, "committed": bool(commit), **payload}


class IcebergRemoveOrphanFilesOperator(IcebergBaseOperator):
    """Delete files under the table location that no metadata references
    (:func:`icewright.actions.remove_orphan_files`).

    :param table: ``"ns.table"`` (templated).
    :param older_than: only files older than this (default: three days ago; templated).
    :param dry_run: only list them.
    :param distributed: list and compare in a Spark job (True), in the task (False), or
        by the table's ``icewright.maintenance.distributed.min-data-files`` (None).
    """

    template_fields: Sequence[str] = ("table", "older_than")
    commits_snapshot = False

    def __init__(
        self,
        *,
        table: str,
        older_than: Any = None,
        dry_run: bool = False,
        distributed: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.distributed = distributed
        self.older_than = older_than
        self.is_dry_run = dry_run  # BaseOperator has a dry_run() method

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.remove_orphan_files`."""
        from icewright.actions import remove_orphan_files

        return remove_orphan_files(
            self.table,
            catalog=self.catalog,
            older_than=instant_ms(self.older_than),
            dry_run=self.is_dry_run,
            distributed=self.distributed,
            runner=self.make_runner(),
        )

    def result_payload(self, result: Any) -> dict[str, Any]:
        """The removal's counts, with the (unchanged) table state."""
        return {**self.table_state(self.table), "committed": False, **to_jsonable(result)}
