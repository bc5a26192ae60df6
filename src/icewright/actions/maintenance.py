"""The maintenance verbs: ``expire`` snapshots, ``remove_orphan_files`` and
``rewrite_manifests``.

Each wraps the commit engine's (:func:`icewright.commit.expire_snapshots`,
:func:`icewright.commit.remove_orphan_files`,
:class:`icewright.commit.rewrite_manifests.RewriteManifests`). The commit and the
deletes run in this process; deciding what to delete (expire's reachable-file walk, the
orphan listing and comparison) and writing the rewritten manifests run here too, or as a
Spark job on the runner's Spark for big tables (:mod:`icewright.actions.distributed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions._common import CatalogLike, TableLike, Timer, load, runner_or_default
from icewright.actions.arguments import check_commit_key, check_rewrite_manifests
from icewright.actions.distributed import use_distributed
from icewright.actions.instants import Instant, instant_ms
from icewright.actions.results import ActionResult, ManifestRewriteResult

if TYPE_CHECKING:
    from icewright.commit.expire import ExpireResult
    from icewright.commit.orphans import FoundOrphans, OrphanResult, OrphanSearch
    from icewright.commit.reachability import UnreachableFiles
    from icewright.io.base import FileIO
    from icewright.runners.base import Runner
    from icewright.spec.snapshots import Snapshot

__all__ = ["expire", "remove_orphan_files", "rewrite_manifests"]


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


def rewrite_manifests(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    spec_id: int | None = None,
    target_size_bytes: int | None = None,
    commit_key: str | None = None,
    distributed: bool | None = None,
    runner: Runner | None = None,
) -> ManifestRewriteResult:
    """Rewrite the data manifests of ``table``'s current snapshot clustered by partition
    into manifests of ``target_size_bytes`` (default: the table's
    ``commit.manifest.target-size-bytes``, 8 MiB), as one ``replace`` snapshot whose
    entries keep their snapshot ids and sequence numbers
    (:mod:`icewright.commit.rewrite_manifests`); delete manifests stay as they are.

    ``spec_id`` rewrites only the manifests of that partition spec (default: every spec;
    Iceberg Java's procedure takes the current one). ``distributed`` writes the new
    manifests in a Spark job on ``runner`` (True), here (False), or by the table's size
    (None: :mod:`icewright.actions.distributed`). Nothing to rewrite (no snapshot, or each
    spec's data manifests are one manifest within the target size): a no-op result
    (``committed`` False). A commit that finds a rewritten manifest gone from the table
    (another commit rewrote it) raises ``ValidationError`` and leaves nothing behind.
    """
    from icewright.actions.append import find_key
    from icewright.commit.in_flight import in_flight
    from icewright.commit.rewrite_manifests import RewriteManifests
    from icewright.commit.update import CommitResult

    check_rewrite_manifests(spec_id, target_size_bytes)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    spread = use_distributed(current, distributed)

    def result(commit: CommitResult, done: RewriteManifests | None = None) -> ManifestRewriteResult:
        rewrite = done.rewrite if done is not None and commit.committed else None
        return ManifestRewriteResult(
            **_fields(ActionResult.from_commit(commit, timer.done())),
            manifests_replaced=len(rewrite.replaced) if rewrite else 0,
            manifests_created=len(rewrite.created) if rewrite else 0,
            manifests_kept=done.manifests_kept if rewrite and done else 0,
            entries_processed=rewrite.entries if rewrite else 0,
            distributed=spread,
        )

    if commit_key is not None:
        found = find_key(current.metadata, "main", commit_key)
        if found is not None:
            return result(CommitResult.for_snapshot(current, found, committed=False))
    op = RewriteManifests(
        current, spec_id=spec_id, target_size_bytes=target_size_bytes, commit_key=commit_key
    )
    with in_flight(current.io, current.metadata.location, "rewrite-manifests"):
        with timer.phase("write"):
            if not spread:
                op.plan()
            elif groups := op.selection(current.metadata):
                written = runner_or_default(runner).rewrite_manifests(
                    current.metadata,
                    current.io,
                    groups,
                    snapshot_id=op.snapshot_id,
                    target_size_bytes=op.target_size_bytes,
                    prefix=op.manifest_prefix(current.metadata),
                )
                op.use_rewrite(written)
        if op.rewrite is None or not op.rewrite.replaced:
            snapshot = current.metadata.current_snapshot()
            return result(CommitResult.for_snapshot(current, snapshot, committed=False))
        with timer.phase("commit"):
            committed = op.commit()
    return result(committed, op)


def _fields(base: ActionResult) -> dict[str, Any]:
    return {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
