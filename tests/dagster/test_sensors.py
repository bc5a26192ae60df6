"""The snapshot sensor, evaluated with a real instance: the first tick starts at the
current snapshot, new snapshots give one run request each (run keys per snapshot) and
runless materializations for commits made outside Dagster, an unmoved pointer costs
one pointer read, and the cursor survives expiry and restarts."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import dagster as dg
import pyarrow as pa
import pytest

from icewright.catalog import SqlCatalog
from icewright.commit import append, create_table, expire_snapshots
from icewright.dagster import IcebergResource, iceberg_snapshot_sensor
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField

TABLE = "sales.orders"


@dg.asset(key=["reports", "daily"])
def daily() -> None:
    """A downstream asset the sensor starts."""


JOB = dg.define_asset_job("downstream", selection=[daily])


def _table(catalog: SqlCatalog) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    create_table(catalog, TABLE, schema)


def _commit(catalog: SqlCatalog, rows: int, key: str | None = None) -> int:
    """An append made outside Dagster (as the command or an Airflow task would)."""
    from icewright.arrow import write_data_files

    table = catalog.load_table(TABLE)
    files = write_data_files(
        table.io, table.metadata, pa.table({"id": pa.array(range(rows), pa.int64())})
    )
    return append(table, files, commit_key=key).snapshot_id


def _tick(
    sensor: dg.SensorDefinition,
    lake: IcebergResource,
    instance: dg.DagsterInstance,
    cursor: str | None,
) -> Any:
    """One tick, evaluated as the daemon does."""
    defs = dg.Definitions(assets=[daily], jobs=[JOB], sensors=[sensor])
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"iceberg": lake}, definitions=defs
    ) as context:
        return sensor.evaluate_tick(context)


def test_sensor_announces_each_new_snapshot_once(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _table(catalog)
    first = _commit(catalog, 3)
    sensor = iceberg_snapshot_sensor([TABLE], target=JOB)

    start = _tick(sensor, lake, instance, None)
    assert start.run_requests == []  # history is not announced
    cursor = start.cursor
    assert json.loads(cursor)[TABLE]["watermark"]["snapshot_id"] == first

    a = _commit(catalog, 2)
    b = _commit(catalog, 5, key="dagster:from-an-asset")
    found = _tick(sensor, lake, instance, cursor)
    assert [r.run_key for r in found.run_requests] == [f"{TABLE}@{a}", f"{TABLE}@{b}"]
    assert found.run_requests[0].tags["icewright/snapshot_id"] == str(a)
    assert found.run_requests[1].tags["icewright/operation"] == "append"
    # only the commit made outside Dagster is reported as a materialization
    events = found.asset_events
    assert [e.asset_key for e in events] == [dg.AssetKey(["sales", "orders"])]
    assert events[0].metadata["icewright/snapshot_id"].value == str(a)
    assert events[0].metadata["dagster/row_count"].value == 10 - 5

    # nothing new: one pointer read, no metadata read
    with mock.patch.object(SqlCatalog, "load_table", side_effect=AssertionError("read")):
        idle = _tick(sensor, lake, instance, found.cursor)
    assert idle.run_requests == [] and idle.asset_events == []
    assert idle.cursor == found.cursor

    # the watermark's snapshot expires: only later snapshots count, from a restarted
    # sensor (a new evaluation from the stored cursor)
    expire_snapshots(catalog.load_table(TABLE), older_than_ms=2**62, retain_last=1)
    c = _commit(catalog, 1)
    after = _tick(iceberg_snapshot_sensor([TABLE], target=JOB), lake, instance, found.cursor)
    assert [r.run_key for r in after.run_requests] == [f"{TABLE}@{c}"]


def test_sensor_filters_and_missing_tables(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    sensor = iceberg_snapshot_sensor(
        {TABLE: dg.AssetKey("orders")}, target=JOB, min_added_records=10, report_external=False
    )
    missing = _tick(sensor, lake, instance, None)
    assert missing.run_requests == []
    _table(catalog)
    _commit(catalog, 3)
    big = _commit(catalog, 12)
    # watched before it existed: its first snapshots are new (the filter still applies)
    result = _tick(sensor, lake, instance, missing.cursor)
    assert [r.run_key for r in result.run_requests] == [f"{TABLE}@{big}"]
    assert result.asset_events == []
    bigger = _commit(catalog, 20)
    result = _tick(sensor, lake, instance, result.cursor)
    assert [r.run_key for r in result.run_requests] == [f"{TABLE}@{bigger}"]


def test_one_run_per_poll(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _table(catalog)
    sensor = iceberg_snapshot_sensor([TABLE], target=JOB, one_run_per_poll=True)
    cursor = _tick(sensor, lake, instance, None).cursor
    ids = [_commit(catalog, 1) for _ in range(3)]
    result = _tick(sensor, lake, instance, cursor)
    assert [r.run_key for r in result.run_requests] == [f"{TABLE}@{ids[-1]}"]
    assert result.run_requests[0].tags["icewright/snapshot_ids"] == ",".join(map(str, ids))
    assert len(result.asset_events) == 3


def test_sensor_rejects_unknown_operations() -> None:
    from icewright.errors import ValidationError

    with pytest.raises(ValidationError, match="operations"):
        iceberg_snapshot_sensor([TABLE], operations=["appnd"])


def test_outside_commits_drive_automation_conditions(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    """A table written outside Dagster, declared as an external asset: the sensor's
    runless materializations make an eager downstream asset due."""
    table = dg.AssetSpec(["sales", "orders"])

    @dg.asset(deps=[table], automation_condition=dg.AutomationCondition.eager())
    def report() -> None:
        """Rebuilt whenever sales.orders changes."""

    defs = dg.Definitions(assets=[table, report])
    _table(catalog)
    sensor = iceberg_snapshot_sensor([TABLE])  # no target: asset events only
    cursor = _tick(sensor, lake, instance, None).cursor
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert first.total_requested == 0

    _commit(catalog, 4)
    tick = _tick(sensor, lake, instance, cursor)
    assert tick.run_requests == [] and len(tick.asset_events) == 1
    for event in tick.asset_events:  # what the daemon does with a tick's asset events
        instance.report_runless_asset_event(event)
    second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert second.get_requested_partitions(dg.AssetKey("report")) == {None}
