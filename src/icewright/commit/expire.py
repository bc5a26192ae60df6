"""Expire snapshots (Iceberg Java's ``RemoveSnapshots``) and delete what only they reached.

Spec sections: "Snapshot Retention Policy" and "Snapshot References" (the retention
fields of refs), "Table Metadata Fields" (``snapshot-log``, ``statistics``,
``partition-statistics``), "Table Behavior Properties" (``history.expire.*``,
``gc.enabled``).

Which snapshots stay follows Java exactly:

* a ref other than ``main`` whose snapshot is older than its ``max-ref-age-ms`` (default
  ``history.expire.max-ref-age-ms``, forever) is removed;
* each remaining branch keeps its ancestors newer than its cutoff (its own
  ``max-snapshot-age-ms``, else :meth:`ExpireSnapshots.expire_older_than`, else
  ``history.expire.max-snapshot-age-ms``, 5 days) and at least its
  ``min-snapshots-to-keep`` (else :meth:`ExpireSnapshots.retain_last`, else
  ``history.expire.min-snapshots-to-keep``, 1);
* each remaining tag keeps its snapshot; a snapshot on no ref's history is kept while it
  is newer than the default cutoff;
* ids given to :meth:`ExpireSnapshots.expire_snapshot_id` go too, unless a remaining
  ref points at them.

The commit goes through the one retry loop, re-applied on refreshed metadata. Only after
it succeeds are the manifest lists, manifests and data/delete files that no retained
snapshot reaches deleted (:func:`icewright.commit.reachability.unreachable_files`), with
the statistics files of expired snapshots; after a failed commit or an unknown outcome
nothing is deleted.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Self

from icewright.catalog.base import Table
from icewright.commit.reachability import (
    DEFAULT_READ_WORKERS,
    UnreachableFiles,
    UnreachableFinder,
    ancestors_of,
    statistics_paths,
    unreachable_files,
)
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.spec.documents import (
    FrozenMap,
)
from icewright.spec.snapshots import (
    MAIN_BRANCH,
    Snapshot,
    SnapshotLogEntry,
)
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "GC_ENABLED",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS_DEFAULT",
    "MIN_SNAPSHOTS_TO_KEEP",
    "MIN_SNAPSHOTS_TO_KEEP_DEFAULT",
    "ExpireResult",
    "ExpireSnapshots",
    "expire_snapshots",
    "gc_enabled",
]

log = logging.getLogger(__name__)

MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MAX_SNAPSHOT_AGE_MS_DEFAULT = 5 * 24 * 60 * 60 * 1000
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
_FOREVER = 2**63 - 1  # Java's Long.MAX_VALUE: refs never age out by default
GC_ENABLED = "gc.enabled"


def gc_enabled(metadata: TableMetadata) -> bool:
    """Whether ``gc.enabled`` (default true) allows deleting the table's files.

    Like Java's ``Boolean.parseBoolean``, only ``true`` (any case) enables it.
    """
    return metadata.properties.get(GC_ENABLED, "true").strip().lower() == "true"


def _check_gc(metadata: TableMetadata, what: str) -> None:
    if not gc_enabled(metadata):
        raise ValidationError(
            f"cannot {what}: garbage collection is disabled on this table "
            f"({GC_ENABLED}={metadata.properties.get(GC_ENABLED)!r}), because its files may "
            f"be shared with other tables; set {GC_ENABLED}=true only if they are not"
        )


def _int_property(metadata: TableMetadata, key: str, default: int, minimum: int) -> int:
    raw = metadata.properties.get(key)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValidationError(
            f"table property {key}={raw!r} is not a whole number; set it to an integer"
        ) from None
    if value < minimum:
        raise ValidationError(f"table property {key}={raw!r} must be at least {minimum}")
    return value


def _check_int(value: object, what: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValidationError(f"{what} must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class ExpireResult:
    """What an expiration did (or, for a dry run, would do).

    The ``deleted_*`` counts are the files deleted; for a dry run, the files that would
    be. The ``*_paths`` fields list them when the run was a dry run or paths were asked
    for, and are empty otherwise. ``data_files_skipped`` says why no data or delete file
    was deleted although some may be unreachable (a retained manifest list or manifest
    could not be read). ``errors`` lists what could not be read or deleted; expiry itself
    succeeded when ``commit`` is set. ``commit`` is None for a dry run and when there was
    nothing to expire.
    """

    expired_snapshot_ids: tuple[int, ...]
    removed_refs: tuple[str, ...]
    deleted_manifest_lists: int = 0
    deleted_manifests: int = 0
    deleted_data_files: int = 0
    deleted_delete_files: int = 0
    deleted_statistics_files: int = 0
    dry_run: bool = False
    files_cleaned: bool = True
    data_files_skipped: str | None = None
    errors: tuple[str, ...] = ()
    manifest_list_paths: tuple[str, ...] = ()
    manifest_paths: tuple[str, ...] = ()
    data_file_paths: tuple[str, ...] = ()
    delete_file_paths: tuple[str, ...] = ()
    statistics_file_paths: tuple[str, ...] = ()
    commit: CommitResult | None = None


class ExpireSnapshots(PendingUpdate):
    """Remove old snapshots and refs from a table, then delete the files only they reached.

    Build it, set options, then :meth:`execute` (or :meth:`commit`)::

        ExpireSnapshots(table).expire_older_than(cutoff_ms).retain_last(10).execute()

    ``now_ms`` is the clock for ref ages and the default cutoff (taken once, at
    construction, so that every retry decides alike).

    Files are cleaned by :meth:`execute` only. Committed together with other updates
    through :func:`~icewright.commit.update.commit_updates`, it removes the snapshots
    but deletes nothing; :func:`~icewright.commit.orphans.remove_orphan_files` finds
    those files later.
    """

    def __init__(self, table: Table, *, now_ms: int | None = None) -> None:
        _check_gc(table.metadata, "expire snapshots")
        self._table = table
        self._now = int(time.time() * 1000) if now_ms is None else _check_int(now_ms, "now_ms")
        self._older_than: int | None = None
        self._retain_last: int | None = None
        self._ids: set[int] = set()
        self._clean = True
        self._dry_run = False
        self._report_paths = False
        self._workers = DEFAULT_READ_WORKERS
        self._find: UnreachableFinder | None = None
        self._last_base: TableMetadata | None = None

    # --- options ------------------------------------------------------------------

    def expire_older_than(self, timestamp_ms: int) -> Self:
        """Expire snapshots older than this time (ms since the epoch) unless kept otherwise."""
        self._older_than = _check_int(timestamp_ms, "expire_older_than timestamp")
        return self

    def retain_last(self, count: int) -> Self:
        """Keep at least the last ``count`` ancestors of each branch without its own setting."""
        self._retain_last = _check_int(count, "the number of snapshots to retain", minimum=1)
        return self

    def expire_snapshot_id(self, snapshot_id: int) -> Self:
        """Expire this snapshot too; refused if a branch or tag still points at it."""
        sid = _check_int(snapshot_id, "snapshot id")
        if self._table.metadata.snapshot_by_id(sid) is None:
            raise ValidationError(
                f"cannot expire snapshot {sid}: table {self._table.identifier} has no such "
                "snapshot (it may have expired already)"
            )
        self._ids.add(sid)
        return self

    def clean_expired_files(self, clean: bool) -> Self:
        """Whether to delete the files only expired snapshots reached (default true)."""
        self._clean = bool(clean)
        return self

    def dry_run(self, enabled: bool = True) -> Self:
        """Commit nothing, delete nothing: report what would be expired and deleted."""
        self._dry_run = bool(enabled)
        return self

    def report_paths(self, enabled: bool = True) -> Self:
        """List the deleted paths in the result (a dry run always lists them)."""
        self._report_paths = bool(enabled)
        return self

    def read_workers(self, workers: int) -> Self:
        """How many manifest lists and manifests are read at once (default 8)."""
        self._workers = _check_int(workers, "read_workers", minimum=1)
        return self

    def find_unreachable_with(self, find: UnreachableFinder | None) -> Self:
        """Decide which files only the expired snapshots reach with ``find`` (default:
        :func:`~icewright.commit.reachability.unreachable_files` in this process; a Spark
        job for big tables). The commit and the deletes stay here either way."""
        self._find = find
        return self

    # --- the metadata change ------------------------------------------------------

    def _retained_refs(self, base: TableMetadata) -> dict[str, int]:
        """Refs that survive their max age, as name -> snapshot id (``main`` always)."""
        default_max_age = _int_property(base, MAX_REF_AGE_MS, _FOREVER, 1)
        kept: dict[str, int] = {}
        for name, ref in base.refs.items():
            snapshot = base.snapshot_by_id(ref.snapshot_id)
            if name == MAIN_BRANCH:
                kept[name] = ref.snapshot_id
                continue
            if snapshot is None:
                continue  # a dangling ref (cannot be built here, but never kept)
            max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_age
            if self._now - snapshot.timestamp_ms <= max_age:
                kept[name] = ref.snapshot_id
        return kept

    def _snapshots_to_retain(self, base: TableMetadata, kept_refs: dict[str, int]) -> set[int]:
        max_age = _int_property(base, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT, 0)
        default_cutoff = self._now - max_age if self._older_than is None else self._older_than
        default_min = self._retain_last
        if default_min is None:
            default_min = _int_property(
                base, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT, 1
            )
        retain = set(kept_refs.values())
        on_some_history: set[int] = set()
        for name, sid in kept_refs.items():
            ref = base.refs[name]
            if not ref.is_branch:
                on_some_history.add(sid)
                continue
            cutoff = (
                self._now - ref.max_snapshot_age_ms
                if ref.max_snapshot_age_ms is not None
                else default_cutoff
            )
            minimum = (
                ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else default_min
            )
            history = list(ancestors_of(base, sid))
            # The whole history counts as referenced, whether it is kept or not.
            on_some_history.update(a.snapshot_id for a in history)
            kept_here = 0
            for ancestor in history:
                # Java stops at the first ancestor that is both old and beyond the minimum.
                if kept_here < minimum or ancestor.timestamp_ms >= cutoff:
                    retain.add(ancestor.snapshot_id)
                    kept_here += 1
                else:
                    break
        # Snapshots on no ref's history (e.g. staged for write-audit-publish) stay while new.
        retain.update(
            s.snapshot_id
            for s in base.snapshots
            if s.snapshot_id not in on_some_history and s.timestamp_ms >= default_cutoff
        )
        return retain

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` without the expired snapshots, their log entries, refs and statistics."""
        _check_gc(base, "expire snapshots")
        self._last_base = base
        if not base.snapshots:
            return base
        kept_refs = self._retained_refs(base)
        by_snapshot: dict[int, list[str]] = {}
        for name, sid in kept_refs.items():
            by_snapshot.setdefault(sid, []).append(name)
        for sid in sorted(self._ids):
            if sid in by_snapshot:
                names = ", ".join(
                    f"{base.refs[n].type.value} {n!r}" for n in sorted(by_snapshot[sid])
                )
                raise ValidationError(
                    f"cannot expire snapshot {sid}: it is still referenced by {names}; remove "
                    "or move those references first"
                )
        retain = self._snapshots_to_retain(base, kept_refs)
        remove = {s.snapshot_id for s in base.snapshots if s.snapshot_id not in retain}
        remove |= self._ids & {s.snapshot_id for s in base.snapshots}
        removed_refs = [n for n in base.refs if n not in kept_refs]
        if not remove and not removed_refs:
            return base
        return _without(base, remove, kept_refs, int(time.time() * 1000))

    # --- running it ---------------------------------------------------------------

    def execute(self) -> ExpireResult:
        """Commit the expiration and delete what only expired snapshots reached.

        A dry run commits and deletes nothing. Raises what the commit raises
        (``CommitFailed``, ``CommitStateUnknown``, ``ValidationError``); files are
        deleted only after a successful commit.
        """
        # Decide on the table as it is now: a stale handle could otherwise see nothing
        # to expire (Java's RemoveSnapshots refreshes before applying, too).
        table = self._table = self._table.refresh()
        base = table.metadata
        planned = self.apply(base)
        if planned is base:
            return ExpireResult(expired_snapshot_ids=(), removed_refs=(), dry_run=self._dry_run)
        if self._dry_run:
            return self._clean_up(table.io, base, planned, (), commit=None)

        commit = commit_updates(table, [self])
        before = self._last_base
        assert before is not None  # apply ran in the successful attempt
        committed = commit.table.metadata
        # Reachability is judged on the newest state too: a commit that landed after ours
        # must not lose files it still reads.
        extra: tuple[Snapshot, ...] = ()
        if self._clean:
            try:
                extra = commit.table.refresh().metadata.snapshots
            except Exception as exc:
                # As in Java, where the refresh before cleanup would throw: without the
                # newest state, nothing is deleted.
                message = (
                    f"expired, but cannot reload {table.identifier} to decide what to delete "
                    f"({type(exc).__name__}: {exc}); no file was deleted: run "
                    "remove_orphan_files later"
                )
                log.warning("%s", message)
                kept = {s.snapshot_id for s in committed.snapshots}
                return ExpireResult(
                    expired_snapshot_ids=tuple(
                        s.snapshot_id for s in before.snapshots if s.snapshot_id not in kept
                    ),
                    removed_refs=tuple(n for n in before.refs if n not in committed.refs),
                    files_cleaned=False,
                    errors=(message,),
                    commit=commit,
                )
        return self._clean_up(table.io, before, committed, extra, commit=commit)

    def commit(self, table: Table | None = None) -> CommitResult:
        """Run :meth:`execute` (on ``table``, or the table it was built on); its commit.

        Returns a not-committed result for the current table when nothing expired.
        """
        if table is not None:
            self._table = table
        result = self.execute()
        if result.commit is not None:
            return result.commit
        current = self._table
        return CommitResult.for_snapshot(
            current, current.metadata.current_snapshot(), committed=False
        )

    def _clean_up(
        self,
        io: FileIO,
        before: TableMetadata,
        after: TableMetadata,
        also_retained: Sequence[Snapshot],
        *,
        commit: CommitResult | None,
    ) -> ExpireResult:
        kept_ids = {s.snapshot_id for s in after.snapshots}
        expired = [s for s in before.snapshots if s.snapshot_id not in kept_ids]
        retained = list({s.snapshot_id: s for s in (*after.snapshots, *also_retained)}.values())
        removed_refs = tuple(n for n in before.refs if n not in after.refs)
        ids = tuple(s.snapshot_id for s in expired)
        if not self._clean:
            return ExpireResult(
                expired_snapshot_ids=ids,
                removed_refs=removed_refs,
                dry_run=self._dry_run,
                files_cleaned=False,
                commit=commit,
            )
        if self._find is not None:
            plan = self._find(io, expired, retained)
        else:
            plan = unreachable_files(io, expired, retained, workers=self._workers)
        stats = tuple(sorted(statistics_paths(before) - statistics_paths(after)))
        if self._dry_run:
            return _result(
                ids, removed_refs, plan, stats, dry_run=True, with_paths=True, commit=commit
            )
        failed: set[str] = set()
        errors: list[str] = []
        # Content files first, metadata last, as Java does: an interrupted cleanup leaves
        # unreferenced files, never a manifest that names deleted files.
        for group in (
            (*plan.data_files, *plan.delete_files),
            plan.manifests,
            plan.manifest_lists,
            stats,
        ):
            for path, exc in io.delete_many(group) if group else ():
                failed.add(path)
                errors.append(f"cannot delete {path}: {type(exc).__name__}: {exc}")
        for message in errors:
            log.warning("expire snapshots: %s", message)
        return _result(
            ids,
            removed_refs,
            plan,
            stats,
            failed=failed,
            dry_run=False,
            with_paths=self._report_paths,
            commit=commit,
            delete_errors=errors,
        )


def _result(
    ids: tuple[int, ...],
    removed_refs: tuple[str, ...],
    plan: UnreachableFiles,
    stats: tuple[str, ...],
    *,
    failed: Iterable[str] = (),
    dry_run: bool,
    with_paths: bool,
    commit: CommitResult | None,
    delete_errors: Sequence[str] = (),
) -> ExpireResult:
    failures = set(failed)

    def done(paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p for p in paths if p not in failures)

    groups = {
        "lists": done(plan.manifest_lists),
        "manifests": done(plan.manifests),
        "data": done(plan.data_files),
        "deletes": done(plan.delete_files),
        "stats": done(stats),
    }
    return ExpireResult(
        expired_snapshot_ids=ids,
        removed_refs=removed_refs,
        deleted_manifest_lists=len(groups["lists"]),
        deleted_manifests=len(groups["manifests"]),
        deleted_data_files=len(groups["data"]),
        deleted_delete_files=len(groups["deletes"]),
        deleted_statistics_files=len(groups["stats"]),
        dry_run=dry_run,
        data_files_skipped=plan.data_files_skipped,
        errors=(*plan.errors, *delete_errors),
        manifest_list_paths=groups["lists"] if with_paths else (),
        manifest_paths=groups["manifests"] if with_paths else (),
        data_file_paths=groups["data"] if with_paths else (),
        delete_file_paths=groups["deletes"] if with_paths else (),
        statistics_file_paths=groups["stats"] if with_paths else (),
        commit=commit,
    )


def _without(
    base: TableMetadata, remove: set[int], kept_refs: dict[str, int], now_ms: int
) -> TableMetadata:
    """``base`` without the snapshots ``remove`` and the refs not in ``kept_refs``."""
    snapshots = tuple(s for s in base.snapshots if s.snapshot_id not in remove)
    remaining = {s.snapshot_id for s in snapshots}
    refs = FrozenMap(
        (name, ref)
        for name, ref in base.refs.items()
        if name in kept_refs and ref.snapshot_id in remaining
    )
    return dataclasses.replace(
        base,
        snapshots=snapshots,
        refs=refs,
        snapshot_log=_snapshot_log(base.snapshot_log, remaining) if remove else base.snapshot_log,
        statistics=tuple(s for s in base.statistics if s.snapshot_id in remaining),
        partition_statistics=tuple(
            s for s in base.partition_statistics if s.snapshot_id in remaining
        ),
        last_updated_ms=max(base.last_updated_ms, now_ms),
    )


def _snapshot_log(
    entries: Sequence[SnapshotLogEntry], remaining: set[int]
) -> tuple[SnapshotLogEntry, ...]:
    """The snapshot log after removals (Java's ``TableMetadata.Builder.updateSnapshotLog``).

    An entry for a removed snapshot also drops every entry before it: keeping them would
    leave a gap in which the log claims an older snapshot was current, and time travel
    to that moment would read the wrong data.
    """
    kept: list[SnapshotLogEntry] = []
    for entry in entries:
        if entry.snapshot_id in remaining:
            kept.append(entry)
        else:
            kept.clear()
    return tuple(kept)


def expire_snapshots(
    table: Table,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] = (),
    clean_files: bool = True,
    dry_run: bool = False,
    report_paths: bool = False,
    find: UnreachableFinder | None = None,
) -> ExpireResult:
    """Expire snapshots of ``table`` and delete the files only they reached.

    ``older_than_ms`` and ``retain_last`` override the table's ``history.expire.*``
    defaults (a branch's own retention settings still win, as in Iceberg Java);
    ``snapshot_ids`` are expired as well; ``find`` decides which files only they reach
    (:meth:`ExpireSnapshots.find_unreachable_with`). See :class:`ExpireSnapshots`.
    """
    update = ExpireSnapshots(table)
    if older_than_ms is not None:
        update.expire_older_than(older_than_ms)
    if retain_last is not None:
        update.retain_last(retain_last)
    for sid in snapshot_ids:
        update.expire_snapshot_id(sid)
    return (
        update.clean_expired_files(clean_files)
        .dry_run(dry_run)
        .report_paths(report_paths)
        .find_unreachable_with(find)
        .execute()
    )
