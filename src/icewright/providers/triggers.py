"""Airflow triggers that watch an Iceberg table for new snapshots.

* :class:`IcebergSnapshotTrigger` (a ``BaseTrigger``): the deferrable mode of
  :class:`icewright.sensors.IcebergSnapshotSensor`; fires once, when the branch has
  snapshots after the given watermark passing the filters.
* :class:`IcebergSnapshotEventTrigger` (a ``BaseEventTrigger``): event-driven scheduling
  with ``Asset(..., watchers=[AssetWatcher(name=..., trigger=...)])``; fires one event per
  batch of new snapshots, for as long as the triggerer runs it.

Both poll cheaply (one ``Catalog.table_metadata_location`` per poll while nothing changed,
:class:`icewright.actions.watch.SnapshotWatch`) and run every blocking catalog call
through ``asyncio.to_thread`` so the triggerer's event loop never blocks.

The event trigger's watermark (the branch head it last examined) is durable, so that a
restarted triggerer does not announce the same snapshots again. Its kwargs cannot hold it
(they are fixed when the DAG is parsed and identify the trigger), so it lives in:

* the asset state store (Airflow 3.3+, AIP-103): the triggerer hands a watcher accessors
  for the assets it watches (``BaseEventTrigger.asset_state_store``); the value is kept in
  the metadata database with the asset, under a key derived from the trigger's kwargs;
* otherwise (the trigger run outside a triggerer, or an Airflow without the store), a
  small JSON file under ``$ICEWRIGHT_HOME/airflow/watermarks/``, replaced atomically.

One commit, one event: a snapshot committed by an icewright operator that has the
watched asset among its outlets is announced by that operator's outlet event, not by the
watcher. The operator claims its commit key in the asset's state store before it
commits (:mod:`icewright.actions.announce`); the watcher leaves claimed snapshots out of
its events (a poll that finds only claimed ones fires nothing) and deletes the claims it
has passed. Commits made outside Airflow, or by tasks without the outlet, carry no claim
and are announced by the watcher. Run one watcher per asset: claims are released by the
first watcher that passes them.

The watermark is written right after an event is handed to the triggerer: a clean
cancellation (triggerer shutdown) while the event is still being handed over leaves the
watermark unmoved and the event is fired again after the restart, not lost; only a hard
crash in the sub-second window between the watermark write and the triggerer storing its
queued event could lose one batch.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from airflow.triggers.base import BaseEventTrigger, BaseTrigger, TriggerEvent

from icewright.actions.announce import announcement, claimed_by
from icewright.actions.arguments import check_seconds
from icewright.actions.watch import (
    DEFAULT_OPERATIONS,
    PollResult,
    SnapshotFilter,
    SnapshotWatch,
    Watermark,
    snapshot_record,
    stable_digest,
)
from icewright.catalog import Identifier
from icewright.errors import NoSuchTable, ValidationError
from icewright.providers import DEFAULT_CONN_ID
from icewright.providers.hooks import catalog_for

if TYPE_CHECKING:
    from icewright.spec.snapshots import Snapshot

__all__ = [
    "DEFAULT_CONN_ID",
    "AssetStateWatermarks",
    "FileWatermarks",
    "IcebergSnapshotEventTrigger",
    "IcebergSnapshotTrigger",
    "WatermarkStore",
]

DEFAULT_POLL_INTERVAL = 60.0
"""Seconds between pointer reads (the snapshot trigger's default; an event trigger
without one reads ``[icewright] watcher_poll_interval``, default this)."""
START_FROM = ("latest", "earliest")


def _operations(operations: Sequence[str] | str | None) -> list[str] | None:
    """Operations as a JSON-native list (kwargs must round-trip through serialization)."""
    checked = SnapshotFilter.build(operations).operations
    return None if checked is None else list(checked)


def _filters(summary_filters: Mapping[str, object] | None) -> dict[str, str] | None:
    pairs = SnapshotFilter.build(None, summary_filters).summary_filters
    return dict(pairs) if pairs else None


def _poll_interval(value: float) -> float:
    return check_seconds(value, "poll_interval")


def configured_poll_interval() -> float:
    """``[icewright] watcher_poll_interval`` of the Airflow configuration where the
    trigger runs (``AIRFLOW__ICEWRIGHT__WATCHER_POLL_INTERVAL``), default
    :data:`DEFAULT_POLL_INTERVAL`: the poll interval of the table watchers, which every
    declaration of a table's asset shares (:mod:`icewright.providers.watchers`)."""
    from airflow.configuration import conf

    value = conf.get("icewright", "watcher_poll_interval", fallback=None)
    if value is None:
        return DEFAULT_POLL_INTERVAL
    try:
        return _poll_interval(float(value))
    except ValueError:
        raise ValidationError(
            f"[icewright] watcher_poll_interval must be a number of seconds, got {value!r}"
        ) from None


def _event(payload: dict[str, Any]) -> TriggerEvent:
    return TriggerEvent(payload)  # type: ignore[no-untyped-call]  # Airflow's is untyped


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


class IcebergSnapshotTrigger(BaseTrigger):
    """Fires once when ``table``'s ``branch`` has snapshots after ``after`` that pass the
    filters (the deferrable :class:`~icewright.sensors.IcebergSnapshotSensor`).

    ``after`` is a :class:`~icewright.actions.watch.Watermark` as JSON (None: every
    snapshot of the branch counts); ``min_timestamp_ms`` keeps only snapshots committed
    after that time; ``last_location`` is a metadata location already known to hold
    nothing new (the sensor's last poke), so the first poll reads only the pointer.

    The event payload: ``status`` (``success`` or ``error``), and for success ``table``,
    ``branch``, ``snapshots`` (:func:`~icewright.actions.watch.snapshot_record` each,
    oldest first), ``head`` (the branch head's watermark) and ``metadata_location``; for
    an error, ``message``.
    """

    def __init__(
        self,
        table: str,
        *,
        iceberg_conn_id: str | None = DEFAULT_CONN_ID,
        branch: str = "main",
        after: Mapping[str, int] | None = None,
        operations: Sequence[str] | None = DEFAULT_OPERATIONS,
        summary_filters: Mapping[str, str] | None = None,
        min_added_records: int | None = None,
        min_timestamp_ms: int | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        last_location: str | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Airflow's is untyped
        Identifier.parse(table)  # an empty or malformed name fails where it is written
        self.table = str(table)
        self.iceberg_conn_id = iceberg_conn_id
        self.branch = branch
        watermark = Watermark.from_json(after)
        self.after = None if watermark is None else watermark.to_json()
        self.operations = _operations(operations)
        self.summary_filters = _filters(summary_filters)
        built = SnapshotFilter.build(None, None, min_added_records, min_timestamp_ms)
        self.min_added_records = built.min_added_records
        self.min_timestamp_ms = built.min_timestamp_ms
        self.poll_interval = _poll_interval(poll_interval)
        self.last_location = last_location

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """The class path and the kwargs that rebuild this trigger."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table": self.table,
                "iceberg_conn_id": self.iceberg_conn_id,
                "branch": self.branch,
                "after": self.after,
                "operations": self.operations,
                "summary_filters": self.summary_filters,
                "min_added_records": self.min_added_records,
                "min_timestamp_ms": self.min_timestamp_ms,
                "poll_interval": self.poll_interval,
                "last_location": self.last_location,
            },
        )

    def _open(self) -> SnapshotWatch:
        return SnapshotWatch.open(
            catalog_for(self.iceberg_conn_id),
            self.table,
            branch=self.branch,
            after=Watermark.from_json(self.after),
            filter=SnapshotFilter.build(
                self.operations,
                self.summary_filters,
                self.min_added_records,
                self.min_timestamp_ms,
            ),
            last_location=self.last_location,
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Poll until snapshots arrive (one event), or an error (one ``error`` event)."""
        try:
            watch = await asyncio.to_thread(self._open)
            while True:
                result = await asyncio.to_thread(watch.poll)
                if result.found:
                    yield _event(_payload(self.table, self.branch, result))
                    return
                await asyncio.sleep(self.poll_interval)
        except Exception as exc:  # a trigger reports failure as an event the task raises
            self.log.error("watching %s failed: %s", self.table, _describe(exc))
            yield _event({"status": "error", "table": self.table, "message": _describe(exc)})


def _payload(
    table: str, branch: str, result: PollResult, snapshots: Sequence[Snapshot] | None = None
) -> dict[str, Any]:
    """The announcement (:func:`~icewright.actions.announce.announcement`) of ``result``'s
    snapshots (or of ``snapshots``, a part of them)."""
    chosen = result.snapshots if snapshots is None else snapshots
    return announcement(
        table,
        [snapshot_record(s) for s in chosen],
        branch=branch,
        head=result.head,
        metadata_location=result.metadata_location,
    )


# --- durable watermarks ----------------------------------------------------------------------


class WatermarkStore(Protocol):
    """Where an event trigger keeps what it last examined (a JSON-able dict)."""

    async def get(self) -> dict[str, Any] | None:
        """The stored state, None when there is none yet."""

    async def set(self, value: dict[str, Any]) -> None:
        """Store ``value`` (replacing the previous one)."""

    async def claimed(self, keys: Sequence[str]) -> str | None:
        """The first of ``keys`` (:func:`~icewright.actions.announce.claimed_by`) that a
        task claimed, to announce that snapshot itself; None when none is."""

    async def release(self, key: str) -> None:
        """Forget the claim ``key``."""


class AssetStateWatermarks:
    """The watermark in Airflow's asset state store, under ``key``, through the public
    accessors the triggerer hands the trigger. A watcher's trigger watches exactly one
    asset: every declaration of a table's asset carries the same watcher, and a variant's
    watcher is its own (:mod:`icewright.providers.watchers`), so the accessors' single-asset
    methods apply."""

    def __init__(self, accessors: Any, key: str) -> None:
        self._store = accessors
        self.key = key

    async def get(self) -> dict[str, Any] | None:
        """The stored value, None when there is none yet."""
        value = await self._store.aget(self.key)
        return value if isinstance(value, dict) else None

    async def set(self, value: dict[str, Any]) -> None:
        """Store ``value``."""
        await self._store.aset(self.key, value)

    async def claimed(self, keys: Sequence[str]) -> str | None:
        """The first of ``keys`` a task claimed on the watched asset (None: unclaimed)."""
        for key in keys:
            if await self._store.aget(key) is not None:
                return key
        return None

    async def release(self, key: str) -> None:
        """Delete the claim ``key`` (its snapshot has been passed by the watcher)."""
        await self._store.adelete(key)


class FileWatermarks:
    """The watermark in a JSON file, replaced atomically (write a temp file, rename)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any] | None:
        try:
            value = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        return value if isinstance(value, dict) else None

    def _write(self, value: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".watermark-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(value, out, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get(self) -> dict[str, Any] | None:
        """The stored value, None when the file does not exist."""
        return await asyncio.to_thread(self._read)

    async def set(self, value: dict[str, Any]) -> None:
        """Replace the file's value."""
        await asyncio.to_thread(self._write, value)

    async def claimed(self, keys: Sequence[str]) -> str | None:
        """None: outside a triggerer no task can claim a snapshot."""
        return None

    async def release(self, key: str) -> None:
        """Nothing to release (see :meth:`claimed`)."""


def file_watermark_path(key: str) -> Path:
    """Where :class:`FileWatermarks` keeps the watermark ``key``."""
    from icewright.catalog.loader import icewright_home

    return icewright_home() / "airflow" / "watermarks" / f"{key}.json"


class IcebergSnapshotEventTrigger(BaseEventTrigger):
    """Fires one event per batch of new snapshots on ``table``'s ``branch`` passing the
    filters, for event-driven scheduling (``AssetWatcher``).

    ``poll_interval``: seconds between polls; None (the table watcher's) reads
    :func:`configured_poll_interval` where the trigger runs. ``start_from``: with no
    stored watermark, ``latest`` (default) takes the branch head
    when the watcher first runs as already seen (only later commits fire); ``earliest``
    announces every snapshot already on the branch too. A missing table is waited for.

    The event payload (the asset event's ``extra["payload"]``) is an announcement
    (:func:`~icewright.actions.announce.announcement`, the shape of an operator's event
    too): ``table``, ``branch``, ``snapshots`` (:func:`~icewright.actions.watch.
    snapshot_record` each, oldest first), ``head`` and ``metadata_location``; ``status`` is
    ``success``. Snapshots claimed by the operator that committed them are left out (module
    docstring). The durable watermark: see the module docstring; its key is
    :attr:`watermark_key`.
    """

    def __init__(
        self,
        table: str,
        *,
        iceberg_conn_id: str | None = DEFAULT_CONN_ID,
        branch: str = "main",
        operations: Sequence[str] | None = DEFAULT_OPERATIONS,
        summary_filters: Mapping[str, str] | None = None,
        min_added_records: int | None = None,
        poll_interval: float | None = None,
        start_from: str = "latest",
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Airflow's is untyped
        Identifier.parse(table)  # an empty or malformed name fails where it is written
        self.table = str(table)
        self.iceberg_conn_id = iceberg_conn_id
        self.branch = branch
        self.operations = _operations(operations)
        self.summary_filters = _filters(summary_filters)
        self.min_added_records = SnapshotFilter.build(
            None, None, min_added_records
        ).min_added_records
        self.poll_interval = None if poll_interval is None else _poll_interval(poll_interval)
        if start_from not in START_FROM:
            raise ValidationError(f"start_from must be one of {START_FROM}, got {start_from!r}")
        self.start_from = start_from

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """The class path and the kwargs that rebuild this trigger."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table": self.table,
                "iceberg_conn_id": self.iceberg_conn_id,
                "branch": self.branch,
                "operations": self.operations,
                "summary_filters": self.summary_filters,
                "min_added_records": self.min_added_records,
                "poll_interval": self.poll_interval,
                "start_from": self.start_from,
            },
        )

    @property
    def watermark_key(self) -> str:
        """The state key: what is watched and how (not the poll interval), so two watchers
        with different filters on one asset keep separate watermarks."""
        identity = {
            "conn": self.iceberg_conn_id,
            "table": self.table,
            "branch": self.branch,
            "operations": self.operations,
            "summary_filters": self.summary_filters,
            "min_added_records": self.min_added_records,
        }
        return f"icewright.snapshot-watermark.{stable_digest(identity)}"

    def watermark_store(self) -> WatermarkStore:
        """The asset state store when the triggerer gave one, else a file."""
        accessors = getattr(self, "asset_state_store", None)
        if accessors is not None:
            return AssetStateWatermarks(accessors, self.watermark_key)
        return FileWatermarks(file_watermark_path(self.watermark_key))

    def _open(self) -> SnapshotWatch:
        return SnapshotWatch.open(
            catalog_for(self.iceberg_conn_id),
            self.table,
            branch=self.branch,
            filter=SnapshotFilter.build(
                self.operations, self.summary_filters, self.min_added_records
            ),
        )

    def _state(self, watermark: Watermark | None, location: str | None) -> dict[str, Any]:
        return {
            "table": self.table,
            "branch": self.branch,
            "watermark": None if watermark is None else watermark.to_json(),
            "metadata_location": location,
            "updated_at": datetime.now(UTC).isoformat(),
        }

    async def _start(self, watch: SnapshotWatch, store: WatermarkStore) -> None:
        """Restore the watermark, or set the first one (``start_from``)."""
        stored = await store.get()
        if stored is not None:
            watch.after = Watermark.from_json(stored.get("watermark"))
            return
        if self.start_from == "latest":
            try:
                watch.after = await asyncio.to_thread(watch.head)
            except NoSuchTable:
                watch.after = None  # every snapshot of a table created later is new
        await store.set(self._state(watch.after, None))

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Poll forever; one event per poll that finds new snapshots passing the filters."""
        store = self.watermark_store()
        watch = await asyncio.to_thread(self._open)
        await self._start(watch, store)
        missing_logged = False
        interval = self.poll_interval or configured_poll_interval()
        while True:
            try:
                result = await asyncio.to_thread(watch.poll)
            except NoSuchTable as exc:
                if not missing_logged:
                    self.log.info("waiting for %s to exist: %s", self.table, exc)
                    missing_logged = True
                result = None
            if result is not None and result.changed:
                fresh, released = await self._unclaimed(result, store)
                if fresh:
                    yield _event(_payload(self.table, self.branch, result, fresh))
                watch.advance(result)
                await store.set(self._state(watch.after, result.metadata_location))
                for key in released:
                    await store.release(key)
            await asyncio.sleep(interval)

    async def _unclaimed(
        self, result: PollResult, store: WatermarkStore
    ) -> tuple[list[Snapshot], list[str]]:
        """The snapshots of ``result`` no task claimed (module docstring), and the claims
        met among all its new snapshots (released once the watermark has passed them)."""
        fresh: list[Snapshot] = []
        released: list[str] = []
        counted = {s.snapshot_id for s in result.snapshots}
        for snapshot in (*result.snapshots, *result.passed_over):
            keys = claimed_by(snapshot.summary)
            found = await store.claimed(keys) if keys else None
            if found is not None:
                released.append(found)
            elif snapshot.snapshot_id in counted:
                fresh.append(snapshot)
        if released:
            self.log.info(
                "%d new snapshot(s) of %s are announced by the tasks that committed them",
                len(released),
                self.table,
            )
        return fresh, released
