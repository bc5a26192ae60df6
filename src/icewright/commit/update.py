"""Pending updates and the one commit loop (spec: "Commit Conflict Resolution and Retry").

Every change to a table is a :class:`PendingUpdate`, shaped like Iceberg Java's:
:meth:`~PendingUpdate.apply` turns base metadata into new metadata, is pure with
respect to the table, and may run again on refreshed metadata; it raises
``ValidationError`` when the change no longer holds on that base. The single retry
loop, :func:`commit_updates`, applies one or more updates in order on the latest
metadata, asks the catalog to swap the pointer, and retries only a lost race.

Cleanup follows the three outcomes:

* success: each update deletes what its losing attempts wrote;
* definite failure (retries exhausted, validation): each update deletes every
  file it wrote;
* ``CommitStateUnknown`` or an unexpected error: nothing is deleted, because the new
  metadata may already be the table's current state.
"""

from __future__ import annotations

import dataclasses
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from icewright.catalog.base import Table
from icewright.catalog.changes import TableChanges, table_changes
from icewright.commit.commit_keys import RememberedCommit
from icewright.commit.retry import RetryPolicy
from icewright.errors import CommitFailed, CommitStateUnknown, IcewrightError, NoSuchFile
from icewright.io.base import FileIO
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What a commit did.

    For a snapshot-producing update, ``snapshot_id`` and its fields describe the new
    snapshot (or the one found for a repeated commit key, with ``committed`` False).
    For metadata-only updates they describe the table's current snapshot, if any.
    """

    table: Table
    metadata_location: str
    committed: bool
    snapshot_id: int | None = None
    sequence_number: int | None = None
    operation: Operation | None = None
    summary: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def for_snapshot(
        cls, table: Table, snapshot: Snapshot | RememberedCommit | None, *, committed: bool
    ) -> CommitResult:
        return cls(
            table=table,
            metadata_location=table.metadata_location,
            committed=committed,
            snapshot_id=snapshot.snapshot_id if snapshot else None,
            sequence_number=snapshot.sequence_number if snapshot else None,
            operation=snapshot.operation if snapshot else None,
            summary=dict(snapshot.summary or {}) if snapshot else {},
        )


class PendingUpdate(ABC):
    """One change to a table, applied afresh on every commit attempt."""

    @abstractmethod
    def apply(self, base: TableMetadata) -> TableMetadata:
        """The new metadata; raises ``ValidationError`` if the change conflicts with ``base``."""

    def already_committed(self, base: TableMetadata) -> Snapshot | RememberedCommit | None:
        """The commit that shows this update is already on the table (commit keys)."""
        return None

    def result_snapshot(self, metadata: TableMetadata) -> Snapshot | None:
        """The snapshot a successful commit should report (default: the current one)."""
        return metadata.current_snapshot()

    def files_written(self) -> Sequence[str]:
        """Every file this update wrote so far, for cleanup after a definite failure."""
        return ()

    def files_not_committed(self) -> Sequence[str]:
        """After success: the files of losing attempts that no metadata references."""
        return ()

    def commit(self, table: Table) -> CommitResult:
        """Commit this update alone."""
        return commit_updates(table, [self])


@dataclass(frozen=True, slots=True)
class PreparedCommit:
    """One table's part of a commit attempt (:func:`prepare_commit`).

    ``table`` is the handle the updates were applied on (refreshed when the given one
    turned out stale), ``base`` its metadata and ``new`` the metadata the updates make.
    ``done`` is set when there is nothing to send: the last update's commit key is
    already on the table, or the updates change nothing on the current metadata.
    """

    table: Table
    base: TableMetadata
    new: TableMetadata
    done: CommitResult | None = None

    def changes(self) -> TableChanges:
        """The requirements and updates that take ``base`` to ``new``."""
        return table_changes(self.base, self.new)


def prepare_commit(table: Table, updates: Sequence[PendingUpdate]) -> PreparedCommit:
    """Apply ``updates`` in order on ``table``'s metadata for one commit attempt: what
    :func:`commit_updates` sends for one table, and
    :func:`~icewright.commit.multi_table.commit_tables` for each of its tables.

    Looks up the last update's commit key first. A ``NoSuchFile`` while applying on a
    base the table has moved on from (another writer's expire removed a file of it)
    raises ``CommitFailed``, so the caller's retry loop refreshes and applies again;
    on the current metadata it is re-raised, as no retry mends it.
    """
    if not updates:
        raise ValueError("a commit needs at least one update")
    current = table
    while True:
        base = current.metadata
        found = updates[-1].already_committed(base)
        if found is not None:
            done = CommitResult.for_snapshot(current, found, committed=False)
            return PreparedCommit(current, base, base, done)
        try:
            new = _apply_all(updates, base)
        except NoSuchFile as missing:
            # If the table moved on (an expire removed the parent's manifest list), this
            # handle was stale: a conflict, retried on refreshed metadata like a lost race
            # (Java refreshes before each apply). If it did not, the table itself lacks
            # the file and no retry mends that.
            if current.refresh().metadata_location == current.metadata_location:
                raise
            raise CommitFailed(
                f"the base of {current.identifier} moved on since it was loaded "
                f"({missing}): retrying on the current metadata"
            ) from missing
        if new is not base:
            return PreparedCommit(current, base, new)
        # Nothing changes on this base (a property set to its value, a rollback to the
        # current snapshot). The handle may be stale: decide on the current table, and
        # like Java write no metadata file for a no-op.
        fresh = current.refresh()
        if fresh.metadata_location == current.metadata_location:
            done = CommitResult.for_snapshot(current, base.current_snapshot(), committed=False)
            return PreparedCommit(current, base, base, done)
        current = fresh


def clean_up(io: FileIO, updates: Sequence[PendingUpdate], *, committed: bool) -> None:
    """Delete what ``updates`` wrote that no metadata references: after their commit
    (``committed``), the files of losing attempts; after a definite failure or when
    nothing was committed, every file they wrote. Never call it when the outcome is
    unknown (``CommitStateUnknown``)."""
    if committed:
        _delete(io, (p for u in updates for p in u.files_not_committed()))
    else:
        _delete(io, (p for u in updates for p in u.files_written()))


def commit_updates(table: Table, updates: Sequence[PendingUpdate]) -> CommitResult:
    """Apply ``updates`` in order on the latest metadata and swap the catalog pointer.

    Retries lost races per the table's ``commit.retry.*`` properties. If the last
    update reports its work is already on the table (a repeated commit key), nothing is
    committed and that snapshot is returned.
    """
    if not updates:
        raise ValueError("commit_updates needs at least one update")
    policy = RetryPolicy.from_properties(table.metadata.properties)
    current = table

    def attempt(n: int) -> CommitResult:
        nonlocal current
        if n > 1:
            current = current.refresh()
        prepared = prepare_commit(current, updates)
        current = prepared.table
        if prepared.done is not None:
            return prepared.done
        # The commit travels as the spec's updates and requirements (what a REST
        # catalog sends); the metadata-file catalogs apply them to the base with the one
        # function that applies updates, so every catalog commits what the updates say.
        try:
            new, location = current.catalog.commit_changes(
                current.identifier,
                current.metadata_location,
                prepared.base,
                prepared.changes(),
                prepared.new.last_updated_ms,
            )
        except CommitFailed:
            log.info("commit to %s lost a race (attempt %d)", current.identifier, n)
            raise
        current = dataclasses.replace(current, metadata=new, metadata_location=location)
        return CommitResult.for_snapshot(current, updates[-1].result_snapshot(new), committed=True)

    try:
        result = policy.run(attempt)
    except CommitStateUnknown:
        log.warning("the outcome of a commit to %s is unknown: keeping its files", table.identifier)
        raise
    except IcewrightError:
        # CommitFailed after the last retry, or a validation error: nothing references
        # what these updates wrote.
        clean_up(table.io, updates, committed=False)
        raise
    clean_up(table.io, updates, committed=result.committed)
    return result


def _apply_all(updates: Sequence[PendingUpdate], base: TableMetadata) -> TableMetadata:
    new = base
    for update in updates:
        new = update.apply(new)
    return new


def _delete(io: FileIO, paths: Iterable[str]) -> None:
    unique = list(dict.fromkeys(paths))
    if unique:
        for path, error in io.delete_many(unique):
            log.warning("could not delete uncommitted file %s: %s", path, error)
