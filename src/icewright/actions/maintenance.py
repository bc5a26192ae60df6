"""The maintenance verbs: ``expire`` snapshots and ``remove_orphan_files``.

Both wrap the commit engine's (:func:`icewright.commit.expire_snapshots`,
:func:`icewright.commit.remove_orphan_files`) and return its results. The commit and the
deletes run in this process; deciding what to delete (expire's reachable-file walk, the
orphan listing and comparison) runs here too, or as a Spark job on the runner's Spark
for big tables (:mod:`icewright.actions.distributed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, load, runner_or_default
from icewright.actions.distributed import use_distributed
from icewright.actions.instants import Instant, instant_ms

if TYPE_CHECKING:
    from icewright.commit.expire import ExpireResult
    from icewright.commit.orphans import FoundOrphans, OrphanResult, OrphanSearch
    from icewright.commit.reachability import UnreachableFiles
    from icewright.io.base import FileIO
    from icewright.runners.base import Runner
    from icewright.spec.snapshots import Snapshot

__all__ = ["expire", "remove_orphan_files"]


def expire(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    older_than: Instant | None = None,
    retain_last: int | None = None,
    dry_run: bool = False,
    distributed: bool | None = None,
    runner: Runner | None = None,
    report_paths: bool = False,
) -> ExpireResult:
    """Expire snapshots older than ``older_than`` beyond the last ``retain_last`` (defaults:
    the table's ``history.expire.*``), deleting the files only they reached.

    ``dry_run`` commits and deletes nothing and reports what would go; ``report_paths``
    lists the deleted paths in the result. ``distributed`` runs the reachable-file walk as
    a Spark job on ``runner`` (True), in this process (False), or by the table's size
    (None: :mod:`icewright.actions.distributed`).
    """
    from icewright.commit import expire_snapshots

    current = load(table, catalog)
    find = None
    if use_distributed(current, distributed):
        jobs = runner_or_default(runner)
        metadata = current.metadata

        def find(
            io: FileIO, expired: Sequence[Snapshot], retained: Sequence[Snapshot]
        ) -> UnreachableFiles:
            return jobs.unreachable_files(metadata, io, expired, retained)

    return expire_snapshots(
        current,
        older_than_ms=instant_ms(older_than, "older_than"),
        retain_last=retain_last,
        dry_run=dry_run,
        report_paths=report_paths,
        find=find,
    )


def remove_orphan_files(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    older_than: Instant | None = None,
    dry_run: bool = False,
    distributed: bool | None = None,
    runner: Runner | None = None,
) -> OrphanResult:
    """Delete files under the table location that no metadata references and that are
    older than ``older_than`` (default: three days ago); ``dry_run`` only lists them.
    ``distributed`` lists and compares as a Spark job on ``runner`` (see :func:`expire`)."""
    from icewright.commit import remove_orphan_files as remove

    current = load(table, catalog)
    find = None
    if use_distributed(current, distributed):
        jobs = runner_or_default(runner)

        def find(io: FileIO, search: OrphanSearch) -> FoundOrphans:
            return jobs.find_orphans(io, search)

    return remove(
        current, older_than_ms=instant_ms(older_than, "older_than"), dry_run=dry_run, find=find
    )
