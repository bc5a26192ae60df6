"""IcebergSnapshotSensor against the embedded default catalog (a temporary ICEWRIGHT_HOME):
conditions, filters, previous-run memory, reschedule state and deferral."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from airflow.sdk import PokeReturnValue
from airflow.sdk.exceptions import AirflowFailException, TaskDeferred

from icewright.catalog import Catalog
from icewright.errors import IcewrightError, ValidationError
from icewright.providers.triggers import IcebergSnapshotTrigger
from icewright.sensors import IcebergSnapshotSensor
from icewright.sensors import snapshot as sensor_module
from icewright.sensors.snapshot import LAST_LOCATION_KEY, WATERMARK_XCOM_KEY
from tests.sensors.support import TABLE, TaskInstanceXComs, TaskStateStore, append, compact

UTC = dt.UTC


def sensor(**kwargs: Any) -> IcebergSnapshotSensor:
    kwargs.setdefault("task_id", "wait")
    kwargs.setdefault("iceberg_conn_id", None)
    kwargs.setdefault("poll_interval", 0.05)
    kwargs.setdefault("timeout", 30)
    return IcebergSnapshotSensor(table=TABLE, **kwargs)


def context(ti: TaskInstanceXComs | None = None, **extra: Any) -> dict[str, Any]:
    return {"ti": ti or TaskInstanceXComs("wait"), **extra}


def ids(value: Any) -> list[int]:
    records = value.xcom_value if isinstance(value, PokeReturnValue) else value
    return [r["snapshot_id"] for r in records]


def test_waits_for_a_snapshot_after_the_given_id(catalog: Catalog) -> None:
    first = append(catalog, 3)
    s = sensor(after_snapshot_id=first.snapshot_id)
    ctx = context()
    assert s.poke(ctx) is False
    second = append(catalog, 4, props={"batch": "2"})
    done = s.poke(ctx)
    assert isinstance(done, PokeReturnValue) and done.is_done
    (record,) = done.xcom_value
    assert record["snapshot_id"] == second.snapshot_id
    assert record["sequence_number"] == second.sequence_number
    assert record["operation"] == "append" and record["added_records"] == 4
    assert record["summary"]["batch"] == "2"
    # The head it saw is remembered for since_previous_run.
    assert ctx["ti"].store[("wait", WATERMARK_XCOM_KEY)]["snapshot_id"] == second.snapshot_id


def test_templated_id_as_text(catalog: Catalog) -> None:
    first = append(catalog, 1)
    second = append(catalog, 1)
    assert ids(sensor(after_snapshot_id=str(first.snapshot_id)).poke(context())) == [
        second.snapshot_id
    ]
    # A template that rendered to nothing means "no id": every snapshot counts.
    assert ids(sensor(after_snapshot_id="None").poke(context())) == [
        first.snapshot_id,
        second.snapshot_id,
    ]


def test_execute_in_poke_mode_returns_the_new_snapshots(catalog: Catalog) -> None:
    first = append(catalog, 1)
    s = sensor(after_snapshot_id=first.snapshot_id, timeout=0.3)
    with pytest.raises(Exception, match="timed out"):
        s.execute(context())
    second = append(catalog, 2)
    assert ids(sensor(after_snapshot_id=first.snapshot_id).execute(context())) == [
        second.snapshot_id
    ]


def test_filters_default_operations_summary_and_records(catalog: Catalog) -> None:
    base = append(catalog, 5)
    compact(catalog)
    s = sensor(after_snapshot_id=base.snapshot_id)
    assert s.poke(context()) is False  # compaction wakes no one
    assert (
        len(ids(sensor(after_snapshot_id=base.snapshot_id, operations=None).poke(context()))) == 1
    )
    small = append(catalog, 2, props={"source": "crm"})
    big = append(catalog, 20, props={"source": "crm"})
    picky = sensor(
        after_snapshot_id=base.snapshot_id, summary_filters={"source": "crm"}, min_added_records=10
    )
    assert ids(picky.poke(context())) == [big.snapshot_id]
    assert ids(s.poke(context())) == [small.snapshot_id, big.snapshot_id]


def test_after_data_interval_end(catalog: Catalog) -> None:
    old = append(catalog, 1)
    ts = catalog.load_table(TABLE).metadata.snapshot_by_id(old.snapshot_id).timestamp_ms
    end = dt.datetime.fromtimestamp(ts / 1000, UTC)
    s = sensor(after_data_interval_end=True)
    assert s.poke(context(data_interval_end=end)) is False
    new = append(catalog, 1)
    new_ts = catalog.load_table(TABLE).metadata.snapshot_by_id(new.snapshot_id).timestamp_ms
    assert new_ts > ts  # the commit engine keeps snapshot times increasing
    assert ids(s.poke(context(data_interval_end=end))) == [new.snapshot_id]
    # Bad input fails the task without a retry.
    with pytest.raises(AirflowFailException, match="data interval"):
        sensor(after_data_interval_end=True).poke(context(data_interval_end=None))


def test_since_previous_run_remembers_the_head_it_saw(catalog: Catalog) -> None:
    xcoms: dict[tuple[str, str], Any] = {}
    one = append(catalog, 1)
    two = append(catalog, 1)
    run1 = sensor(since_previous_run=True).poke(context(TaskInstanceXComs("wait", xcoms)))
    assert ids(run1) == [one.snapshot_id, two.snapshot_id]  # no earlier run: all count
    run2 = sensor(since_previous_run=True)
    ctx2 = context(TaskInstanceXComs("wait", xcoms))
    assert run2.poke(ctx2) is False
    three = append(catalog, 1)
    assert ids(run2.poke(ctx2)) == [three.snapshot_id]
    assert xcoms[("wait", WATERMARK_XCOM_KEY)]["snapshot_id"] == three.snapshot_id
    # A compaction after the success moves the head; the next run skips it, not re-reports.
    compact(catalog)
    run3 = sensor(since_previous_run=True)
    ctx3 = context(TaskInstanceXComs("wait", xcoms))
    assert run3.poke(ctx3) is False
    four = append(catalog, 1)
    assert ids(run3.poke(ctx3)) == [four.snapshot_id]


def test_reschedule_mode_keeps_the_examined_location(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = append(catalog, 1)
    loads: list[str] = []
    real = catalog.load_table

    def counting_load(identifier: Any) -> Any:
        loads.append(str(identifier))
        return real(identifier)

    catalog.load_table = counting_load  # type: ignore[method-assign]
    monkeypatch.setattr(sensor_module, "catalog_for", lambda _conn: catalog)
    state = TaskStateStore()

    def fresh() -> IcebergSnapshotSensor:  # each reschedule runs a new operator object
        return sensor(after_snapshot_id=first.snapshot_id, mode="reschedule")

    assert fresh().poke(context(task_state_store=state)) is False
    assert state.values[LAST_LOCATION_KEY]["location"] == catalog.table_metadata_location(TABLE)
    before = len(loads)
    assert fresh().poke(context(task_state_store=state)) is False
    # Resolving the given id reads metadata once; the poll itself read only the pointer.
    assert len(loads) == before + 1
    second = append(catalog, 1)
    assert ids(fresh().poke(context(task_state_store=state))) == [second.snapshot_id]


def test_deferrable_defers_with_a_serializable_trigger_and_resumes(catalog: Catalog) -> None:
    first = append(catalog, 1)
    s = sensor(after_snapshot_id=first.snapshot_id, deferrable=True, min_added_records=2)
    ctx = context()
    with pytest.raises(TaskDeferred) as deferred:
        s.execute(ctx)
    trigger = deferred.value.trigger
    assert isinstance(trigger, IcebergSnapshotTrigger)
    assert deferred.value.method_name == "execute_complete"
    _path, kwargs = trigger.serialize()
    assert kwargs["after"]["snapshot_id"] == first.snapshot_id
    assert kwargs["min_added_records"] == 2
    assert kwargs["last_location"] == catalog.table_metadata_location(TABLE)
    rebuilt = IcebergSnapshotTrigger(**kwargs)

    async def fire() -> dict[str, Any]:
        gen = rebuilt.run()
        task = asyncio.ensure_future(gen.__anext__())
        await asyncio.sleep(0.3)
        assert not task.done()
        await asyncio.to_thread(append, catalog, 1)  # filtered out: too few records
        await asyncio.sleep(0.3)
        assert not task.done()
        wanted = await asyncio.to_thread(append, catalog, 3)
        event = await asyncio.wait_for(task, 30)
        assert ids(event.payload["snapshots"]) == [wanted.snapshot_id]
        return event.payload

    payload = asyncio.run(fire())
    assert ids(s.execute_complete(ctx, payload)) == ids(payload["snapshots"])
    assert ctx["ti"].store[("wait", WATERMARK_XCOM_KEY)] == payload["head"]


def test_deferrable_returns_at_once_when_snapshots_exist(catalog: Catalog) -> None:
    first = append(catalog, 1)
    second = append(catalog, 1)
    s = sensor(after_snapshot_id=first.snapshot_id, deferrable=True)
    assert ids(s.execute(context())) == [second.snapshot_id]


def test_a_trigger_error_fails_the_task(catalog: Catalog) -> None:
    s = sensor(deferrable=True)
    with pytest.raises(IcewrightError, match="no such table"):
        s.execute_complete(context(), {"status": "error", "message": "NoSuchTable: no such table"})


def test_bad_input(catalog: Catalog) -> None:
    with pytest.raises(ValidationError, match="operations"):
        sensor(operations=["apend"])
    with pytest.raises(ValidationError, match="not both"):
        sensor(after_snapshot_id=1, since_previous_run=True)
    with pytest.raises(ValidationError, match="poll_interval"):
        sensor(poll_interval=0)
    with pytest.raises(AirflowFailException, match="snapshot id"):
        sensor(after_snapshot_id="latest").poke(context())
    with pytest.raises(AirflowFailException, match="not in the history"):
        sensor(after_snapshot_id=123).poke(context())
    with pytest.raises(AirflowFailException, match="no branch 'audit'"):
        sensor(branch="audit").poke(context())
    with pytest.raises(AirflowFailException, match="NoSuchTable"):
        IcebergSnapshotSensor(
            table="sales.missing", task_id="w", iceberg_conn_id=None, poll_interval=1
        ).poke(context())
