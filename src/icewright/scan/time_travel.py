"""Which snapshot, and which schema, a scan reads (time travel).

A scan reads one snapshot: the table's current one, one named by id, the one a branch or
tag points to, or the one that was current at a point in time according to the table's
``snapshot-log`` (spec: "Table Metadata Fields", ``snapshot-log``; Iceberg Java's
``SnapshotUtil.snapshotIdAsOfTime``).

The schema a scan binds its filter to follows Iceberg Java's data table scan: time travel
by snapshot id or timestamp, or to a tag, uses the schema the snapshot was written with
(``schema-id`` of the snapshot); the current snapshot and branches use the table's
current schema, because a branch's next commit would use it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from icewright.errors import InvalidMetadata, ValidationError
from icewright.spec.schema import Schema
from icewright.spec.snapshots import MAIN_BRANCH, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "ScanTarget",
    "resolve_scan_target",
    "schema_for_snapshot",
    "snapshot_as_of_time",
    "snapshot_id_as_of_time",
    "to_timestamp_ms",
]


def _format_ms(timestamp_ms: int) -> str:
    try:
        moment = dt.datetime.fromtimestamp(timestamp_ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{timestamp_ms} ms"
    return f"{moment.isoformat(timespec='milliseconds')} ({timestamp_ms} ms)"


def to_timestamp_ms(value: int | dt.datetime) -> int:
    """Milliseconds since the epoch for ``value``: an int as is, or an aware datetime.

    A naive datetime is refused: which time zone it means is a guess.
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError(
                f"time travel needs an aware datetime, got naive {value.isoformat()}: "
                "attach a time zone (for example tzinfo=datetime.UTC)"
            )
        delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        return delta // dt.timedelta(milliseconds=1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(
            f"a time-travel timestamp must be milliseconds since the epoch (int) or an aware "
            f"datetime, got {value!r}"
        )
    return value


def snapshot_id_as_of_time(metadata: TableMetadata, timestamp_ms: int | dt.datetime) -> int:
    """The id of the snapshot that was current at ``timestamp_ms`` (inclusive).

    Walks the ``snapshot-log`` as Iceberg Java does: the entry with the greatest timestamp
    not after ``timestamp_ms`` wins, and among entries with that same timestamp the first
    one. Raises :class:`ValidationError` when no entry is that old (a time before the
    table's first snapshot, or a log emptied by expiry).
    """
    ts = to_timestamp_ms(timestamp_ms)
    best_id: int | None = None
    best_ts: int | None = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms <= ts and (best_ts is None or entry.timestamp_ms > best_ts):
            best_id, best_ts = entry.snapshot_id, entry.timestamp_ms
    if best_id is None:
        first = min((e.timestamp_ms for e in metadata.snapshot_log), default=None)
        hint = (
            f"the oldest snapshot-log entry is at {_format_ms(first)}"
            if first is not None
            else "the table's snapshot log is empty"
        )
        raise ValidationError(
            f"no snapshot was current at {_format_ms(ts)}: {hint}; pick a later time"
        )
    return best_id


def snapshot_as_of_time(metadata: TableMetadata, timestamp_ms: int | dt.datetime) -> Snapshot:
    """The snapshot that was current at ``timestamp_ms``; see :func:`snapshot_id_as_of_time`.

    Raises :class:`ValidationError` if that snapshot has since expired.
    """
    snapshot_id = snapshot_id_as_of_time(metadata, timestamp_ms)
    snapshot = metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise ValidationError(
            f"snapshot {snapshot_id}, current at {_format_ms(to_timestamp_ms(timestamp_ms))}, "
            "has expired and can no longer be read; pick a later time"
        )
    return snapshot


def schema_for_snapshot(metadata: TableMetadata, snapshot: Snapshot) -> Schema:
    """The schema ``snapshot`` was written with; the current schema if it records none."""
    if snapshot.schema_id is None:
        # Snapshots written before schema ids were recorded: Java falls back the same way.
        return metadata.schema()
    return metadata.schema_by_id(snapshot.schema_id)


@dataclass(frozen=True, slots=True)
class ScanTarget:
    """What a scan reads: a snapshot (None for a table without one) and the schema it binds
    filters and column names to."""

    snapshot: Snapshot | None
    schema: Schema


def _known(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:10])
    return shown + (", ..." if len(ids) > 10 else "") if ids else "none"


def resolve_scan_target(
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of_ms: int | dt.datetime | None = None,
) -> ScanTarget:
    """The snapshot and schema of a scan; at most one selector may be given.

    * nothing: the current snapshot (``main``) and the current schema;
    * ``snapshot_id``: that snapshot and the schema it was written with;
    * ``ref``: the snapshot of that branch or tag; a tag reads with its snapshot's schema,
      a branch with the current schema; ``main`` is the current state;
    * ``as_of_ms``: the snapshot current at that time per the snapshot log, with its
      schema.

    Raises :class:`ValidationError` for an unknown id or ref, a time before the first
    snapshot, or more than one selector.
    """
    given = [
        name
        for name, value in (("snapshot_id", snapshot_id), ("ref", ref), ("as_of_ms", as_of_ms))
        if value is not None
    ]
    if len(given) > 1:
        raise ValidationError(
            f"a scan reads one snapshot: pass only one of snapshot_id, ref and as_of_ms, "
            f"not {' and '.join(given)}"
        )
    if snapshot_id is not None:
        if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
            raise ValidationError(f"snapshot_id must be an integer, got {snapshot_id!r}")
        snapshot = metadata.snapshot_by_id(snapshot_id)
        if snapshot is None:
            ids = [s.snapshot_id for s in metadata.snapshots]
            raise ValidationError(
                f"the table has no snapshot {snapshot_id} (it may have expired); "
                f"known snapshot ids: {_known(ids)}"
            )
        return ScanTarget(snapshot, schema_for_snapshot(metadata, snapshot))
    if ref is not None:
        if not isinstance(ref, str) or not ref:
            raise ValidationError(f"ref must be a branch or tag name, got {ref!r}")
        if ref == MAIN_BRANCH:
            return ScanTarget(metadata.current_snapshot(), metadata.schema())
        found = metadata.ref(ref)
        if found is None:
            names = ", ".join(sorted(metadata.refs)) or "none"
            raise ValidationError(
                f"the table has no branch or tag named {ref!r}; known refs: {names}"
            )
        snapshot = metadata.snapshot_by_id(found.snapshot_id)
        if snapshot is None:  # TableMetadata refuses dangling refs; belt and braces
            raise InvalidMetadata(
                f"ref {ref!r} points to snapshot {found.snapshot_id}, which is missing"
            )
        schema = schema_for_snapshot(metadata, snapshot) if found.is_tag else metadata.schema()
        return ScanTarget(snapshot, schema)
    if as_of_ms is not None:
        snapshot = snapshot_as_of_time(metadata, as_of_ms)
        return ScanTarget(snapshot, schema_for_snapshot(metadata, snapshot))
    return ScanTarget(metadata.current_snapshot(), metadata.schema())
