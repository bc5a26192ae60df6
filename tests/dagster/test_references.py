"""Write-audit-publish and incremental runs in Dagster, through ``dg.materialize`` and a
sensor evaluation on a real instance: a branch written, audited by blocking checks and
published; a failed audit leaves main unchanged and the branch kept; a run the snapshot
sensor started merges the changes of exactly its snapshots (``{snapshot_changelog}``)."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest

from icewright.actions import append, create, replace
from icewright.catalog import SqlCatalog
from icewright.dagster import (
    IcebergResource,
    iceberg_append_asset,
    iceberg_branch_checks,
    iceberg_merge_asset,
    iceberg_publish_asset,
    iceberg_refs_job,
    iceberg_snapshot_sensor,
)
from icewright.dagster.assets import SOURCE_TAG
from icewright.errors import ValidationError
from icewright.text.declaration import parse_schema

TABLE = "sales.checked"
SCHEMA = "id long not null, amount double"


def _wap(source: str) -> tuple[list[Any], list[Any]]:
    staged = iceberg_append_asset(
        TABLE, source, branch="audit", reset_branch=True, schema=SCHEMA, key="sales/staged"
    )
    checks = iceberg_branch_checks(
        TABLE,
        "audit",
        asset=staged,
        min_rows=3,
        no_rows_where={"positive_amounts": "amount IS NULL OR amount <= 0"},
    )
    published = iceberg_publish_asset(TABLE, branch="audit", deps=[staged])
    return [staged, published], checks


def _amounts(catalog: SqlCatalog, ref: str = "main") -> list[float]:
    from icewright.spark.read import read_table
    from icewright.spark.session import local_session

    frame = read_table(local_session(), catalog.load_table(TABLE), ref=ref)
    return sorted(r["amount"] for r in frame.collect())


def test_write_audit_publish(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    good = "sql:SELECT CAST(id AS BIGINT) AS id, CAST(id + 1 AS DOUBLE) AS amount FROM range(3)"
    assets, checks = _wap(good)
    done = dg.materialize([*assets, *checks], resources={"iceberg": lake}, instance=instance)
    assert done.success
    evaluations = done.get_asset_check_evaluations()
    assert sorted((e.check_name, e.passed) for e in evaluations) == [
        ("branch_row_count", True),
        ("positive_amounts", True),
    ]
    table = catalog.load_table(TABLE)
    assert set(table.metadata.refs) == {"main"}  # published, then dropped
    assert _amounts(catalog) == [1.0, 2.0, 3.0]
    head = table.metadata.current_snapshot_id

    bad = "sql:SELECT CAST(10 + id AS BIGINT) AS id, CAST(id - 1 AS DOUBLE) AS amount FROM range(3)"
    assets, checks = _wap(bad)
    failed = dg.materialize(
        [*assets, *checks],
        resources={"iceberg": lake},
        instance=instance,
        raise_on_error=False,
    )
    assert not failed.success
    table = catalog.load_table(TABLE)
    assert table.metadata.current_snapshot_id == head  # main unchanged
    assert "audit" in table.metadata.refs  # kept for inspection
    assert _amounts(catalog, "audit") == [-1.0, 0.0, 1.0, 1.0, 2.0, 3.0]
    published = [
        e
        for e in failed.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey(["sales", "checked"])
    ]
    assert published == []

    # the next good run starts the branch again from main (reset_branch)
    assets, checks = _wap(good.replace("range(3)", "range(5, 8)"))
    again = dg.materialize([*assets, *checks], resources={"iceberg": lake}, instance=instance)
    assert again.success
    assert _amounts(catalog) == [1.0, 2.0, 3.0, 6.0, 7.0, 8.0]


def test_publish_and_checks_refuse_bad_definitions() -> None:
    with pytest.raises(ValidationError, match="other than main"):
        iceberg_publish_asset(TABLE, branch="main")
    with pytest.raises(ValidationError, match="min_rows or no_rows_where"):
        iceberg_branch_checks(TABLE, "audit", asset=dg.AssetKey("x"))
    with pytest.raises(ValidationError):
        iceberg_branch_checks(TABLE, "audit", asset=dg.AssetKey("x"), no_rows_where={"c": "a <"})
    with pytest.raises(ValidationError, match="reset_branch"):
        iceberg_append_asset(TABLE, "sql:SELECT 1", reset_branch=True)


def test_a_sensor_run_merges_the_changes_of_its_snapshots(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    create("sales.orders", catalog=catalog, schema=parse_schema("id long, region string"))
    totals = iceberg_merge_asset(
        "sales.totals",
        "sql:SELECT region, sum(IF(_change_type = 'INSERT', 1, -1)) AS orders "
        "FROM `{snapshot_changelog}` GROUP BY region",
        on="region",
        update_set="orders = target.orders + orders",
        schema="region string, orders long",
    )
    job = dg.define_asset_job("refresh", selection=[totals])
    sensor = iceberg_snapshot_sensor(["sales.orders"], target=job, one_run_per_poll=True)
    defs = dg.Definitions(
        assets=[totals], jobs=[job], sensors=[sensor], resources={"iceberg": lake}
    )
    cursor: str | None = None

    def evaluate() -> Any:
        nonlocal cursor
        with dg.build_sensor_context(
            instance=instance, cursor=cursor, resources={"iceberg": lake}, definitions=defs
        ) as context:
            result = sensor.evaluate_tick(context)
        cursor = result.cursor
        return result

    def tick_and_run() -> dg.RunRequest:
        (request,) = evaluate().run_requests
        run = defs.resolve_job_def("refresh").execute_in_process(
            instance=instance, tags=request.tags, resources={"iceberg": lake}
        )
        assert run.success
        return request

    def sql(ids: str, region: str) -> str:
        return f"sql:SELECT CAST(id AS BIGINT) AS id, '{region}' AS region FROM range({ids})"

    evaluate()  # the sensor starts at the table's current state
    append("sales.orders", sql("0, 5", "eu"), catalog=catalog)
    first = append("sales.orders", sql("5, 8", "us"), catalog=catalog)
    request = tick_and_run()
    assert request.tags[SOURCE_TAG].endswith(f"..{first.snapshot_id}")
    assert _totals(catalog) == {"eu": 5, "us": 3}
    # a replace removes rows too: the changelog carries them as deletes
    replace("sales.orders", sql("0, 2", "us"), where="region = 'eu'", catalog=catalog)
    tick_and_run()
    assert _totals(catalog) == {"eu": 0, "us": 5}

    # a run without a sensor's tags has no snapshots to read: refused by name
    manual = dg.materialize(
        [totals], resources={"iceberg": lake}, instance=instance, raise_on_error=False
    )
    assert not manual.success


def _totals(catalog: SqlCatalog) -> dict[str, int]:
    from icewright.spark.read import read_table
    from icewright.spark.session import local_session

    rows = read_table(local_session(), catalog.load_table("sales.totals")).collect()
    return {r["region"]: r["orders"] for r in rows}


def test_the_refs_job_rolls_back_tags_and_refuses_bad_config(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    create("sales.orders", catalog=catalog, schema=parse_schema("id long, region string"))
    first = append("sales.orders", "sql:SELECT 1L AS id, 'eu' AS region", catalog=catalog)
    append("sales.orders", "sql:SELECT 2L AS id, 'us' AS region", catalog=catalog)
    job = iceberg_refs_job("sales.orders")

    def run(**config: Any) -> dg.ExecuteInProcessResult:
        return job.execute_in_process(
            run_config={"ops": {"sales_orders_refs": {"config": config}}},
            instance=instance,
            resources={"iceberg": lake},
            raise_on_error=False,
        )

    assert run(verb="tag", name="good", snapshot_id=first.snapshot_id).success
    assert run(verb="rollback", snapshot_id=first.snapshot_id).success
    table = catalog.load_table("sales.orders")
    assert table.metadata.current_snapshot_id == first.snapshot_id
    assert table.metadata.refs["good"].snapshot_id == first.snapshot_id
    before = table.metadata_location
    for bad in ({"verb": "rollback", "snapshot_id": 42}, {"verb": "explode"}, {"verb": "untag"}):
        assert not run(**bad).success
    assert catalog.load_table("sales.orders").metadata_location == before
