"""The asset factories through ``dg.materialize`` on a real Dagster instance: partitions
and single-run backfills, exactly-once across step retries, new launches, bad input,
maintenance and views; what they commit read back by pyiceberg."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from icewright.catalog import SqlCatalog
from icewright.dagster import (
    IcebergResource,
    iceberg_append_asset,
    iceberg_expire_asset,
    iceberg_remove_orphans_asset,
    iceberg_replace_asset,
    iceberg_rewrite_asset,
    iceberg_table_asset,
    iceberg_view_asset,
)

TABLE = "sales.events"
SCHEMA = "id long not null, ts timestamptz not null, tag string"
DAILY = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-10")
# 24 rows per day, one an hour, ids unique per day; {tag} differs per test.
DAY_SOURCE = (
    "sql:SELECT CAST(unix_seconds(TIMESTAMP '{start}') / 3600 + id AS BIGINT) AS id, "
    "timestamp_seconds(unix_seconds(TIMESTAMP '{start}') + id * 3600) AS ts, "
    "'%s' AS tag FROM range(24 * datediff(DATE '{end_date}', DATE '{start_date}'))"
)
ROWS_SOURCE = (
    "sql:SELECT CAST(id AS BIGINT) AS id, TIMESTAMP '2026-01-01 00:00:00' AS ts, 'x' AS tag "
    "FROM range(%d)"
)


def _events(**kwargs: Any) -> dg.AssetsDefinition:
    return iceberg_append_asset(
        TABLE,
        DAY_SOURCE % kwargs.pop("tag", "v1"),
        partitions_def=DAILY,
        partition_column="ts",
        schema=SCHEMA,
        partition_by="day(ts)",
        **kwargs,
    )


def _rows(
    catalog: SqlCatalog, where: str | None = None, table_name: str = TABLE
) -> list[dict[str, Any]]:
    """The table's rows, read by pyiceberg through the same SQLite catalog."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    location = catalog.load_table(table_name).metadata_location
    db = Path(location.removeprefix("file://")).parents[4] / "catalog.db"
    props = {"uri": f"sqlite:///{db}", "warehouse": f"file://{db.parent / 'warehouse'}"}
    table = PySqlCatalog("icewright", **props).load_table(table_name)
    scan = table.scan(row_filter=where) if where else table.scan()
    return scan.to_arrow().sort_by("id").to_pylist()


def _snapshots(catalog: SqlCatalog) -> list[Any]:
    return list(catalog.load_table(TABLE).metadata.snapshots)


def _materialize(
    assets: list[Any], lake: IcebergResource, instance: dg.DagsterInstance, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    return dg.materialize(assets, resources={"iceberg": lake}, instance=instance, **kwargs)


def test_partition_materialization_replaces_exactly_its_day(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    first = _events(tag="v1")
    assert _materialize([first], lake, instance, partition_key="2026-01-02").success
    assert _materialize([first], lake, instance, partition_key="2026-01-03").success
    assert len(_rows(catalog)) == 48

    # a later launch of the same day (corrected rows): that day replaced, the other kept
    again = _events(tag="v2")
    result = _materialize([again], lake, instance, partition_key="2026-01-02")
    assert result.success
    rows = _rows(catalog)
    assert len(rows) == 48
    by_day = {(r["ts"].date().isoformat(), r["tag"]) for r in rows}
    assert by_day == {("2026-01-02", "v2"), ("2026-01-03", "v1")}
    snapshot = _snapshots(catalog)[-1]
    assert snapshot.summary["deleted-records"] == "24"  # whole files of that day removed
    assert snapshot.summary["added-records"] == "24"

    meta = result.asset_materializations_for_node("sales__events")[0].metadata
    assert meta["dagster/partition_row_count"].value == 24
    assert meta["dagster/row_count"].value == 48
    assert meta["icewright/snapshot_id"].value == str(snapshot.snapshot_id)
    assert meta["icewright/operation"].value == "overwrite"
    columns = meta["dagster/column_schema"].value.columns
    assert [(c.name, c.type, c.constraints.nullable) for c in columns] == [
        ("id", "long", False),
        ("ts", "timestamptz", False),
        ("tag", "string", True),
    ]
    assert meta["dagster/table_name"].value == TABLE
    assert meta["dagster/storage_kind"].value == "iceberg"
    assert meta["icewright/metadata_location"].value.endswith(".metadata.json")


def test_single_run_backfill_is_one_commit(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    events = _events()
    assert events.backfill_policy == dg.BackfillPolicy.single_run()
    tags = {
        "dagster/asset_partition_range_start": "2026-01-04",
        "dagster/asset_partition_range_end": "2026-01-06",
    }
    assert _materialize([events], lake, instance, tags=tags).success
    snapshots = _snapshots(catalog)
    assert len(snapshots) == 1
    assert snapshots[0].summary["added-records"] == str(3 * 24)
    days = {r["ts"].date().isoformat() for r in _rows(catalog)}
    assert days == {"2026-01-04", "2026-01-05", "2026-01-06"}


def test_rows_outside_the_partition_fail_without_commit(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    # the source ignores the partition: it writes 2026-01-01 whatever day is asked
    wrong = iceberg_append_asset(
        TABLE,
        ROWS_SOURCE % 5,
        partitions_def=DAILY,
        partition_column="ts",
        schema=SCHEMA,
        partition_by="day(ts)",
        retry_policy=dg.RetryPolicy(max_retries=2),
    )
    result = _materialize([wrong], lake, instance, partition_key="2026-01-05", raise_on_error=False)
    assert not result.success
    failure = result.get_step_failure_events()[0]
    assert "rows outside" in failure.step_failure_data.error.message
    assert not any(e.event_type_value == "STEP_RESTARTED" for e in result.all_events)
    assert _snapshots(catalog) == []  # the table was ensured, nothing committed
    data = Path(catalog.load_table(TABLE).metadata.location.removeprefix("file://")) / "data"
    assert not any(p.is_file() for p in data.rglob("*.parquet"))


def test_step_retry_after_the_commit_commits_once(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    seen: list[tuple[int, bool]] = []

    def fail_first_try(context: dg.AssetExecutionContext, result: Any) -> None:
        seen.append((context.retry_number, result.committed))
        if context.retry_number == 0:
            raise RuntimeError("the worker died after the commit")

    asset = iceberg_append_asset(
        TABLE,
        ROWS_SOURCE % 7,
        schema=SCHEMA,
        retry_policy=dg.RetryPolicy(max_retries=1),
        on_result=fail_first_try,
    )
    result = _materialize([asset], lake, instance)
    assert result.success
    assert seen == [(0, True), (1, False)]  # the retry found the commit key
    assert len(_snapshots(catalog)) == 1
    assert len(_rows(catalog)) == 7

    # a new launch is a new root run: it appends again
    assert _materialize([asset], lake, instance).success
    assert len(_snapshots(catalog)) == 2
    assert len(_rows(catalog)) == 14


def test_bad_input_fails_at_once_with_one_line(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    asset = iceberg_append_asset(
        TABLE,
        f"parquet:{tmp_path}/missing/",
        schema=SCHEMA,
        retry_policy=dg.RetryPolicy(max_retries=3),
    )
    result = _materialize([asset], lake, instance, raise_on_error=False)
    assert not result.success
    message = result.get_step_failure_events()[0].step_failure_data.error.message
    assert "ValidationError: the source path" in message
    assert "does not exist" in message
    assert not any(e.event_type_value == "STEP_RESTARTED" for e in result.all_events)
    assert _snapshots(catalog) == []


def test_table_asset_evolves_to_the_declaration(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    v1 = iceberg_table_asset(TABLE, "id long not null, ts timestamptz")
    r1 = _materialize([v1], lake, instance)
    assert r1.success
    v2 = iceberg_table_asset(
        TABLE,
        "id long not null, ts timestamptz, region string",
        partition_by="day(ts)",
        sort_by="id",
        properties={"write.target-file-size-bytes": "1048576"},
    )
    assert _materialize([v2], lake, instance).success
    metadata = catalog.load_table(TABLE).metadata
    assert [f.name for f in metadata.schema().fields] == ["id", "ts", "region"]
    assert [str(f.transform) for f in metadata.spec().fields] == ["day"]
    assert len(metadata.sort_order().fields) == 1
    assert metadata.properties["write.target-file-size-bytes"] == "1048576"
    location = metadata.location
    # unchanged declaration: nothing committed
    r3 = _materialize([v2], lake, instance)
    meta = r3.asset_materializations_for_node("sales__events")[0].metadata
    assert meta["icewright/committed"].value is False
    assert catalog.load_table(TABLE).metadata.location == location


def test_replace_where_and_maintenance_assets(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    load = iceberg_append_asset(TABLE, ROWS_SOURCE % 10, schema=SCHEMA, key="load")
    for _ in range(3):
        assert _materialize([load], lake, instance).success
    assert len(_rows(catalog)) == 30
    fix = iceberg_replace_asset(
        TABLE,
        "sql:SELECT CAST(100 + id AS BIGINT) AS id, TIMESTAMP '2026-01-01' AS ts, 'y' AS tag "
        "FROM range(2)",
        where="id < 5",
        key="fix",
    )
    assert _materialize([fix], lake, instance).success
    rows = _rows(catalog)
    assert len(rows) == 3 * 5 + 2
    assert all(r["id"] >= 5 for r in rows if r["tag"] == "x")

    rewrite = iceberg_rewrite_asset(TABLE, min_input_files=2)
    expire = iceberg_expire_asset(TABLE, older_than="0s", retain_last=1)
    orphans = iceberg_remove_orphans_asset(TABLE, older_than="0s")
    assert [a.key.to_user_string() for a in (rewrite, expire, orphans)] == [
        "sales/events/rewrite",
        "sales/events/expire",
        "sales/events/remove_orphans",
    ]
    # operations on the table, not tables: the lineage graph shows only sales/events as one
    for asset in (rewrite, expire, orphans):
        spec = next(iter(asset.specs))
        assert spec.kinds == {"maintenance"}
        assert "dagster/table_name" not in spec.metadata
        assert (spec.description or "").startswith(f"Maintenance of {TABLE}, not a table")
    result = _materialize([rewrite], lake, instance)
    assert result.success
    assert _snapshots(catalog)[-1].operation.value == "replace"
    result = _materialize([expire, orphans], lake, instance)
    assert result.success
    assert len(_snapshots(catalog)) == 1
    expired = result.asset_materializations_for_node("sales__events__expire")[0].metadata
    assert expired["icewright/table"].value == TABLE and "dagster/table_name" not in expired
    assert sorted(r["id"] for r in _rows(catalog)) == sorted(r["id"] for r in rows)


def test_view_asset_publishes_a_version(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    load = iceberg_append_asset(TABLE, ROWS_SOURCE % 4, schema=SCHEMA)
    view = iceberg_view_asset(
        "sales.recent", "SELECT id, tag FROM events WHERE id > 1", deps=[TABLE]
    )
    assert view.asset_deps[view.key] == {dg.AssetKey(["sales", "events"])}
    result = _materialize([load, view], lake, instance)
    assert result.success
    meta = result.asset_materializations_for_node("sales__recent")[0].metadata
    assert meta["icewright/version_id"].value == 1
    assert meta["icewright/referenced_tables"].value == "events"
    assert catalog.load_view("sales.recent").metadata.current_version_id == 1


def test_a_partitioned_asset_needs_its_column() -> None:
    from icewright.errors import ValidationError

    with pytest.raises(ValidationError, match="partition_column"):
        iceberg_append_asset(TABLE, ROWS_SOURCE % 1, partitions_def=DAILY)
    with pytest.raises(ValidationError, match="give schema"):
        iceberg_append_asset(TABLE, ROWS_SOURCE % 1, partition_by="day(ts)")


def test_static_partitions_replace_their_keys(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    regions = dg.StaticPartitionsDefinition(["emea", "amer", "o'hare"])
    asset = iceberg_replace_asset(
        "sales.by_region",
        "sql:SELECT CAST(id AS BIGINT) AS id, '{partition_key}' AS region, '%s' AS tag "
        "FROM range(3)",
        partitions_def=regions,
        partition_column="region",
        schema="id long not null, region string, tag string",
        partition_by="region",
    )
    for key in ("emea", "amer"):
        assert _materialize([asset], lake, instance, partition_key=key).success
    table = catalog.load_table("sales.by_region")
    assert table.metadata.current_snapshot().summary["total-records"] == "6"
    assert _materialize([asset], lake, instance, partition_key="emea").success
    snapshot = table.refresh().metadata.current_snapshot()
    assert (snapshot.summary["deleted-records"], snapshot.summary["total-records"]) == ("3", "6")


def test_multi_partitions_replace_only_their_own_cell(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    # the silent loss this guards against: a date|region run replaced the whole day
    regions = dg.StaticPartitionsDefinition(["emea", "us"])
    multi = dg.MultiPartitionsDefinition({"date": DAILY, "region": regions})

    def asset(tag: str) -> dg.AssetsDefinition:
        return iceberg_append_asset(
            "sales.regional",
            "sql:SELECT CAST(id AS BIGINT) AS id, timestamp_seconds(unix_seconds(TIMESTAMP "
            "'{start}') + id * 3600) AS ts, '{region}' AS region, "
            + f"'{tag}' AS tag FROM range(3)",
            partitions_def=multi,
            partition_columns={"date": "ts", "region": "region"},
            schema="id long not null, ts timestamptz not null, region string, tag string",
            partition_by="day(ts), region",
        )

    def cells() -> set[tuple[str, str, str, int]]:
        rows = _rows(catalog, table_name="sales.regional")
        counts: dict[tuple[str, str, str], int] = {}
        for r in rows:
            cell = (r["ts"].date().isoformat(), r["region"], r["tag"])
            counts[cell] = counts.get(cell, 0) + 1
        return {(*cell, n) for cell, n in counts.items()}

    for key in ("2026-01-02|emea", "2026-01-02|us", "2026-01-03|emea"):
        assert _materialize([asset("v1")], lake, instance, partition_key=key).success
    assert cells() == {
        ("2026-01-02", "emea", "v1", 3),
        ("2026-01-02", "us", "v1", 3),
        ("2026-01-03", "emea", "v1", 3),
    }
    result = _materialize([asset("v2")], lake, instance, partition_key="2026-01-02|emea")
    assert result.success
    assert cells() == {
        ("2026-01-02", "emea", "v2", 3),
        ("2026-01-02", "us", "v1", 3),
        ("2026-01-03", "emea", "v1", 3),
    }
    snapshot = catalog.load_table("sales.regional").metadata.current_snapshot()
    assert (snapshot.summary["deleted-records"], snapshot.summary["added-records"]) == ("3", "3")
    meta = result.asset_materializations_for_node("sales__regional")[0].metadata
    assert meta["dagster/partition_row_count"].value == 3


def test_secrets_stay_out_of_run_config_and_events(
    tmp_path: Path, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-Key-1234567890"
    monkeypatch.setenv("ICEWRIGHT_TEST_SECRET", secret)
    lake = IcebergResource(
        catalog_uri=f"sqlite:///{tmp_path}/catalog.db",
        warehouse=str(tmp_path / "warehouse"),
        s3_secret_access_key=dg.EnvVar("ICEWRIGHT_TEST_SECRET"),
    )
    asset = iceberg_append_asset(TABLE, ROWS_SOURCE % 2, schema=SCHEMA)
    result = _materialize([asset], lake, instance)
    assert result.success
    assert secret not in repr(lake)
    run = instance.get_run_by_id(result.run_id)
    assert run is not None and secret not in str(run.run_config)
    logs = instance.all_logs(result.run_id)
    assert logs and not any(secret in str(record) for record in logs)


@pytest.mark.slow  # a spark-submit job: 13 s on a quiet 2-core machine
def test_spark_submit_runs_the_job_outside_the_step(
    tmp_path: Path, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    """``SparkConfig(master=...)``: the write job goes through ``spark-submit``."""
    from icewright.dagster import SparkConfig

    lake = IcebergResource(
        catalog_uri=f"sqlite:///{tmp_path}/catalog.db",
        warehouse=str(tmp_path / "warehouse"),
        spark=SparkConfig(master="local[1]"),
    )
    load = iceberg_append_asset(TABLE, ROWS_SOURCE % 7, schema=SCHEMA)
    result = _materialize([load], lake, instance)
    assert result.success
    assert len(_rows(catalog)) == 7
    # the job ran in a spark-submit process, its output in the step's compute log
    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    assert "spark-submit finished with exit code 0" in logs
    assert any(m.startswith("icewright job: result (ok) written to") for m in logs)
