"""The ``wait_for_snapshot`` verb: wait until a branch has a new snapshot passing filters.

Each poll reads only the catalog's pointer (the current metadata location) where the
catalog can give it alone; the metadata file is read only when the pointer moved.
A timeout is not an error: the result says ``timed_out`` (so an orchestrator's sensor can
poke with ``timeout=0`` and decide itself).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, catalog_of, identifier
from icewright.actions.results import WaitResult
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["wait_for_snapshot"]

DEFAULT_POLL_INTERVAL = 30.0
"""Seconds between polls of the catalog pointer."""


def wait_for_snapshot(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    after_snapshot_id: int | None = None,
    branch: str = "main",
    operations: Sequence[str] | None = ("append", "overwrite", "delete"),
    summary_filters: Mapping[str, str] | None = None,
    min_added_records: int | None = None,
    timeout: float | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
) -> WaitResult:
    """Wait until ``branch`` has snapshots newer than ``after_snapshot_id`` that pass the
    filters, and return them (oldest first).

    Newer means: on the branch's ancestry after ``after_snapshot_id`` (with None, every
    snapshot of the branch counts). A snapshot passes when its operation is one of
    ``operations`` (None: any), each ``summary_filters`` key has that value in its
    summary, and its ``added-records`` is at least ``min_added_records``. ``timeout``
    (seconds; None waits forever, 0 polls once) ends the wait with ``timed_out`` True.
    A missing table raises ``NoSuchTable``; an ``after_snapshot_id`` the branch does not
    have (expired, or another branch's) counts every snapshot of the branch as newer.
    """
    if poll_interval <= 0:
        raise ValidationError(f"poll_interval must be positive, got {poll_interval!r}")
    if timeout is not None and timeout < 0:
        raise ValidationError(f"timeout must be >= 0 seconds, got {timeout!r}")
    cat = catalog_of(table, catalog)
    ident = identifier(table)
    wanted = None if operations is None else {str(o) for o in operations}
    started = time.monotonic()
    polls = 0
    seen: str | None = None
    head: int | None = None
    while True:
        polls += 1
        location = _pointer(cat, ident)
        if location != seen:
            loaded = cat.load_table(ident)
            seen = loaded.metadata_location
            metadata = loaded.metadata
            found = _new_snapshots(metadata, branch, after_snapshot_id)
            head_snapshot = metadata.snapshot_for_ref(branch)
            head = None if head_snapshot is None else head_snapshot.snapshot_id
            matched = tuple(
                s for s in found if _passes(s, wanted, summary_filters, min_added_records)
            )
            if matched:
                return WaitResult(
                    table=str(ident),
                    snapshots=matched,
                    timed_out=False,
                    latest_snapshot_id=head,
                    metadata_location=seen,
                    polls=polls,
                    waited_seconds=time.monotonic() - started,
                )
        waited = time.monotonic() - started
        if timeout is not None and waited + poll_interval > timeout:
            return WaitResult(
                table=str(ident),
                snapshots=(),
                timed_out=True,
                latest_snapshot_id=head,
                metadata_location=seen,
                polls=polls,
                waited_seconds=waited,
            )
        time.sleep(poll_interval)


def _pointer(cat: Catalog, ident: Identifier) -> str:
    """The current metadata location, without reading the metadata file where possible."""
    return cat.table_metadata_location(ident)


def _new_snapshots(metadata: TableMetadata, branch: str, after: int | None) -> list[Snapshot]:
    """The branch's ancestry after ``after``, oldest first."""
    chain: list[Snapshot] = []
    snapshot = metadata.snapshot_for_ref(branch)
    seen: set[int] = set()
    while snapshot is not None and snapshot.snapshot_id not in seen:
        if snapshot.snapshot_id == after:
            break
        seen.add(snapshot.snapshot_id)
        chain.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)
    return list(reversed(chain))


def _passes(
    snapshot: Snapshot,
    operations: set[str] | None,
    filters: Mapping[str, str] | None,
    min_added_records: int | None,
) -> bool:
    summary: Mapping[str, str] = snapshot.summary or {}
    if operations is not None and str(snapshot.operation) not in operations:
        return False
    if filters and any(summary.get(k) != str(v) for k, v in filters.items()):
        return False
    if min_added_records is not None:
        try:
            added = int(summary.get("added-records", "0"))
        except ValueError:
            return False
        if added < min_added_records:
            return False
    return True
