"""The snapshot triggers driven by asyncio as the triggerer drives them, on a real SQLite
catalog (the embedded default in a temporary ICEWRIGHT_HOME), with commits made by another
process."""

# The fixtures come from tests/sensors/conftest.py (imported below), so test parameters
# "redefine" them:
from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from airflow.serialization.decoders import smart_decode_trigger_kwargs
from airflow.serialization.encoders import encode_trigger
from airflow.triggers.base import TriggerEvent

from icewright.catalog import Catalog
from icewright.errors import ValidationError
from icewright.providers.assets import watched_iceberg_asset
from icewright.providers.triggers import (
    FileWatermarks,
    IcebergSnapshotEventTrigger,
    IcebergSnapshotTrigger,
    file_watermark_path,
)
from tests.sensors.support import REPO, TABLE, append, compact, make_table

POLL = 0.1


async def append_in_subprocess(home: Path, rows: int, **props: str) -> int:
    """Append from another process (as a Spark job's commit or another writer would);
    return its snapshot id."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.sensors.support",
        "append",
        f"sqlite:///{home / 'catalog.db'}",
        TABLE,
        str(rows),
        *(f"{k}={v}" for k, v in props.items()),
        cwd=str(REPO),
        env={**os.environ, "ICEWRIGHT_HOME": str(home)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return int(out.decode().split()[-1])


def through_airflow(trigger: Any) -> tuple[str, dict[str, Any]]:
    """Encode the trigger as Airflow stores it, decode its kwargs as the triggerer does."""
    path, kwargs = trigger.serialize()
    encoded = encode_trigger({"classpath": path, "kwargs": kwargs})
    json.dumps(encoded)  # what goes to the metadata database is JSON
    return encoded["classpath"], {
        k: smart_decode_trigger_kwargs(v) for k, v in encoded["kwargs"].items()
    }


def snapshot_ids(event: TriggerEvent) -> list[int]:
    return [s["snapshot_id"] for s in event.payload["snapshots"]]


# --- serialization -------------------------------------------------------------------------


def test_snapshot_trigger_serialize_round_trips() -> None:
    trigger = IcebergSnapshotTrigger(
        "sales.orders",
        iceberg_conn_id="lake",
        branch="audit",
        after={"snapshot_id": 12, "sequence_number": 3, "timestamp_ms": 1700000000000},
        operations=("append",),
        summary_filters={"source": "crm"},
        min_added_records=5,
        min_timestamp_ms=1700000000001,
        poll_interval=15,
        last_location="file:///wh/sales/orders/metadata/00003.metadata.json",
    )
    path, kwargs = trigger.serialize()
    assert path == "icewright.providers.triggers.IcebergSnapshotTrigger"
    assert IcebergSnapshotTrigger(**kwargs).serialize() == (path, kwargs)
    assert through_airflow(trigger) == (path, kwargs)
    assert kwargs["operations"] == ["append"] and kwargs["poll_interval"] == 15.0


def test_event_trigger_serialize_round_trips_and_hash_is_stable() -> None:
    trigger = IcebergSnapshotEventTrigger(
        "sales.orders", summary_filters={"region": "eu"}, min_added_records=1, poll_interval=30
    )
    path, kwargs = trigger.serialize()
    rebuilt = IcebergSnapshotEventTrigger(**kwargs)
    assert rebuilt.serialize() == (path, kwargs)
    assert through_airflow(trigger) == (path, kwargs)
    # The triggerer matches watchers to stored triggers by this hash across DAG parses.
    assert IcebergSnapshotEventTrigger.hash(path, kwargs) == IcebergSnapshotEventTrigger.hash(
        *rebuilt.serialize()
    )
    assert rebuilt.watermark_key == trigger.watermark_key
    other = IcebergSnapshotEventTrigger("sales.orders", min_added_records=1, poll_interval=30)
    assert other.watermark_key != trigger.watermark_key
    slower = IcebergSnapshotEventTrigger(
        "sales.orders", summary_filters={"region": "eu"}, min_added_records=1, poll_interval=90
    )
    assert slower.watermark_key == trigger.watermark_key  # how often is not what


@pytest.mark.parametrize(
    "kwargs",
    [
        {"operations": ["merge"]},
        {"poll_interval": 0},
        {"min_added_records": -2},
        {"start_from": "yesterday"},
    ],
)
def test_event_trigger_bad_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        IcebergSnapshotEventTrigger("sales.orders", **kwargs)


def test_watched_asset_carries_the_event_trigger() -> None:
    asset = watched_iceberg_asset("sales.orders", min_added_records=1, poll_interval=5)
    assert asset.uri == "iceberg://icewright_default/sales/orders"
    (watcher,) = asset.watchers
    assert isinstance(watcher.trigger, IcebergSnapshotEventTrigger)
    assert watcher.trigger.serialize()[1]["min_added_records"] == 1
    assert watcher.name == "icewright-snapshots-sales-orders-main"


# --- the deferrable sensor's trigger -----------------------------------------------------------


def test_snapshot_trigger_fires_on_a_commit_by_another_process(
    catalog: Catalog, home: Path
) -> None:
    first = append(catalog, 1)
    trigger = IcebergSnapshotTrigger(
        TABLE, iceberg_conn_id=None, after={"snapshot_id": first.snapshot_id}, poll_interval=POLL
    )

    async def scenario() -> None:
        gen = trigger.run()
        pending = asyncio.ensure_future(gen.__anext__())
        await asyncio.sleep(5 * POLL)
        assert not pending.done()
        new_id = await append_in_subprocess(home, 3)
        event = await asyncio.wait_for(pending, 60)
        assert event.payload["status"] == "success"
        assert snapshot_ids(event) == [new_id]
        assert event.payload["head"]["snapshot_id"] == new_id
        with pytest.raises(StopAsyncIteration):  # a deferral trigger fires once
            await gen.__anext__()

    asyncio.run(scenario())


def test_snapshot_trigger_reports_a_missing_table_as_an_error_event(home: Path) -> None:
    trigger = IcebergSnapshotTrigger("sales.nothing", iceberg_conn_id=None, poll_interval=POLL)

    async def first() -> TriggerEvent:
        return await asyncio.wait_for(trigger.run().__anext__(), 30)

    event = asyncio.run(first())
    assert event.payload["status"] == "error"
    assert (
        "NoSuchNamespace" in event.payload["message"] or "NoSuchTable" in event.payload["message"]
    )


# --- the event trigger --------------------------------------------------------------------------


async def start(trigger: IcebergSnapshotEventTrigger) -> tuple[AsyncIterator[TriggerEvent], Any]:
    """Start ``run()`` as the triggerer does and wait until its watermark is stored."""
    store = trigger.watermark_store()
    assert isinstance(store, FileWatermarks)
    gen = trigger.run()
    pending = asyncio.ensure_future(gen.__anext__())
    for _ in range(300):
        if await store.get() is not None:
            return gen, pending
        await asyncio.sleep(0.05)
    raise AssertionError("the trigger stored no watermark")


async def stop(gen: AsyncIterator[TriggerEvent], pending: Any) -> None:
    """What a triggerer shutdown does to a running trigger: cancel it."""
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await gen.aclose()  # type: ignore[attr-defined]


def event_trigger(**kwargs: Any) -> IcebergSnapshotEventTrigger:
    kwargs.setdefault("iceberg_conn_id", None)
    kwargs.setdefault("poll_interval", POLL)
    return IcebergSnapshotEventTrigger(TABLE, **kwargs)


def test_event_trigger_fires_once_per_batch_and_not_again_after_a_restart(
    catalog: Catalog, home: Path
) -> None:
    existing = append(catalog, 2)

    async def scenario() -> None:
        # First triggerer: existing snapshots are the starting point (start_from=latest).
        gen, pending = await start(event_trigger())
        state = await event_trigger().watermark_store().get()
        assert state is not None and state["watermark"]["snapshot_id"] == existing.snapshot_id
        await asyncio.sleep(5 * POLL)
        assert not pending.done()
        a = await append_in_subprocess(home, 3, batch="a")
        event = await asyncio.wait_for(pending, 60)
        assert snapshot_ids(event) == [a]
        assert event.payload["snapshots"][0]["summary"]["batch"] == "a"
        pending = asyncio.ensure_future(gen.__anext__())
        await asyncio.sleep(5 * POLL)
        assert not pending.done()  # one event per batch: nothing more for `a`
        await stop(gen, pending)

        # While no triggerer runs: two commits and a compaction.
        b = await append_in_subprocess(home, 1, batch="b")
        await asyncio.to_thread(compact, catalog)
        c = await append_in_subprocess(home, 1, batch="c")

        # The restarted triggerer: one event for the batch it missed, not `a` again.
        gen, pending = await start(event_trigger())
        event = await asyncio.wait_for(pending, 60)
        assert snapshot_ids(event) == [b, c]
        pending = asyncio.ensure_future(gen.__anext__())
        await asyncio.sleep(5 * POLL)
        assert not pending.done()
        await stop(gen, pending)

        # A third start with nothing new fires nothing.
        gen, pending = await start(event_trigger())
        await asyncio.sleep(8 * POLL)
        assert not pending.done()
        await stop(gen, pending)

    asyncio.run(scenario())
    path = file_watermark_path(event_trigger().watermark_key)
    assert path.is_relative_to(home)
    assert json.loads(path.read_text())["watermark"]["snapshot_id"] == (
        catalog.load_table(TABLE).metadata.current_snapshot().snapshot_id
    )


def test_event_trigger_filters_and_earliest_start(catalog: Catalog, home: Path) -> None:
    small = append(catalog, 1)
    big = append(catalog, 10)

    async def scenario() -> None:
        gen, pending = await start(event_trigger(start_from="earliest", min_added_records=5))
        event = await asyncio.wait_for(pending, 60)
        assert snapshot_ids(event) == [big.snapshot_id]
        assert small.snapshot_id not in snapshot_ids(event)
        pending = asyncio.ensure_future(gen.__anext__())
        await asyncio.to_thread(append, catalog, 2)  # filtered out
        await asyncio.sleep(5 * POLL)
        assert not pending.done()
        bigger = await asyncio.to_thread(append, catalog, 20)
        event = await asyncio.wait_for(pending, 60)
        assert snapshot_ids(event) == [bigger.snapshot_id]
        await stop(gen, asyncio.ensure_future(gen.__anext__()))

    asyncio.run(scenario())


def test_event_trigger_waits_for_the_table_to_exist(home: Path) -> None:
    from icewright.catalog import default_catalog

    async def scenario() -> None:
        gen, pending = await start(event_trigger())
        await asyncio.sleep(5 * POLL)
        assert not pending.done()
        cat = default_catalog()
        await asyncio.to_thread(make_table, cat)
        first = await asyncio.to_thread(append, cat, 4)
        event = await asyncio.wait_for(pending, 60)
        assert snapshot_ids(event) == [first.snapshot_id]
        await stop(gen, asyncio.ensure_future(gen.__anext__()))

    asyncio.run(scenario())
