"""The ``wait_for_snapshot`` verb: wait until a branch has a new snapshot passing filters.

A loop over :class:`icewright.actions.watch.SnapshotWatch`: each poll reads only the
catalog's pointer (the current metadata location) where the catalog can give it alone;
the metadata file is read only when the pointer moved. A timeout is not an error: the
result says ``timed_out`` (so an orchestrator's sensor can poke with ``timeout=0`` and
decide itself).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from icewright.actions._common import CatalogLike, TableLike, catalog_of, identifier
from icewright.actions.results import WaitResult
from icewright.actions.watch import SnapshotFilter, SnapshotWatch, Watermark
from icewright.errors import ValidationError

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
    min_timestamp_ms: int | None = None,
    timeout: float | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
) -> WaitResult:
    """Wait until ``branch`` has snapshots newer than ``after_snapshot_id`` that pass the
    filters, and return them (oldest first).

    Newer means: on the branch's ancestry after ``after_snapshot_id`` (with None, every
    snapshot of the branch counts). A snapshot passes when its operation is one of
    ``operations`` (None: any), each ``summary_filters`` key has that value in its
    summary, its ``added-records`` is at least ``min_added_records``, and its
    ``timestamp-ms`` is after ``min_timestamp_ms`` (milliseconds since the epoch).
    ``timeout`` (seconds; None waits forever, 0 polls once) ends the wait with
    ``timed_out`` True. A missing table raises ``NoSuchTable``; an ``after_snapshot_id``
    the branch does not have (expired, or another branch's) counts every snapshot of the
    branch as newer.
    """
    if poll_interval <= 0:
        raise ValidationError(f"poll_interval must be positive, got {poll_interval!r}")
    if timeout is not None and timeout < 0:
        raise ValidationError(f"timeout must be >= 0 seconds, got {timeout!r}")
    if min_timestamp_ms is not None and (
        isinstance(min_timestamp_ms, bool) or not isinstance(min_timestamp_ms, int)
    ):
        raise ValidationError(
            f"min_timestamp_ms must be milliseconds since the epoch (an int), "
            f"got {min_timestamp_ms!r}"
        )
    cat = catalog_of(table, catalog)
    ident = identifier(table)
    watch = SnapshotWatch(
        cat,
        ident,
        branch=branch,
        # A bare id: when it left the branch, every snapshot of the branch is newer.
        after=None if after_snapshot_id is None else Watermark(after_snapshot_id),
        # Checked: an unknown operation name would otherwise wait forever.
        filter=SnapshotFilter.build(
            operations, summary_filters, min_added_records, min_timestamp_ms
        ),
    )
    started = time.monotonic()
    polls = 0
    head: Watermark | None = None
    while True:
        polls += 1
        result = watch.poll()
        if result.changed:  # an unchanged pointer: the head read before still holds
            head = result.head
        latest = None if head is None else head.snapshot_id
        if result.found:
            return WaitResult(
                table=str(ident),
                snapshots=result.snapshots,
                timed_out=False,
                latest_snapshot_id=latest,
                metadata_location=result.metadata_location,
                polls=polls,
                waited_seconds=time.monotonic() - started,
            )
        waited = time.monotonic() - started
        if timeout is not None and waited + poll_interval > timeout:
            return WaitResult(
                table=str(ident),
                snapshots=(),
                timed_out=True,
                latest_snapshot_id=latest,
                metadata_location=result.metadata_location,
                polls=polls,
                waited_seconds=waited,
            )
        time.sleep(poll_interval)
