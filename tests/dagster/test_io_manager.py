"""``IcebergIOManager`` through ``dg.materialize`` on a real Dagster instance: each output
type committed and read back by pyiceberg, partitioned assets replacing only their
partitions, downstream assets loading only their partition and columns (as Arrow and as
Spark), retries committing once, and types the manager refuses.

Dagster reads a ``context`` parameter's annotation as written (text, in this module), so
plain ``dg.asset`` functions here leave it out; ``iceberg_io_asset`` resolves it."""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergIOManager, IcebergResource, iceberg_io_asset
from icewright.errors import ValidationError

DAILY = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-10")
REGIONS = dg.StaticPartitionsDefinition(["emea", "us"])
DAY_REGION = dg.MultiPartitionsDefinition({"date": DAILY, "region": REGIONS})


def _rows(catalog: SqlCatalog, table_name: str) -> list[dict[str, Any]]:
    """The table's rows, read by pyiceberg through the same SQLite catalog."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    location = catalog.load_table(table_name).metadata_location
    db = Path(location.removeprefix("file://")).parents[4] / "catalog.db"
    props = {"uri": f"sqlite:///{db}", "warehouse": f"file://{db.parent / 'warehouse'}"}
    table = PySqlCatalog("icewright", **props).load_table(table_name)
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda r: (r["id"], str(r)))


def _day_rows(day: str, tag: str, region: str | None = None) -> pa.Table:
    """Three rows in ``day`` (UTC), ids by hour."""
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    rows: dict[str, list[Any]] = {
        "id": [start.day * 100 + h for h in (1, 2, 3)],
        "ts": [start + dt.timedelta(hours=h) for h in (1, 2, 3)],
        "tag": [tag] * 3,
    }
    if region is not None:
        rows["region"] = [region] * 3
    return pa.table(rows)


def _materialize(
    assets: list[Any], lake: IcebergResource, instance: dg.DagsterInstance, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    resources = {"iceberg": lake, "io_manager": IcebergIOManager(iceberg=lake)}
    return dg.materialize(assets, resources=resources, instance=instance, **kwargs)


def _meta(result: dg.ExecuteInProcessResult, node: str) -> dict[str, Any]:
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


@pytest.fixture
def lake_spark(spark: SparkSession, lake: IcebergResource) -> Iterator[IcebergResource]:
    """The lake, with the shared SparkSession running (Spark outputs and loads)."""
    yield lake


def test_arrow_output_is_appended_without_spark(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    @dg.asset(key_prefix="sales")
    def orders() -> pa.Table:
        return _day_rows("2026-01-02", "a")

    first = _materialize([orders], lake, instance)
    assert first.success
    assert _materialize([orders], lake, instance).success
    rows = _rows(catalog, "sales.orders")
    assert len(rows) == 6 and {r["tag"] for r in rows} == {"a"}
    table = catalog.load_table("sales.orders")
    assert [s.operation.value for s in table.metadata.snapshots] == ["append", "append"]
    assert [f.name for f in table.metadata.schema().fields] == ["id", "ts", "tag"]
    assert str(table.metadata.schema().find_field("ts").field_type) == "timestamptz"

    meta = _meta(first, "sales__orders")
    snapshot = table.metadata.snapshots[0]
    assert meta["icewright/snapshot_id"] == str(snapshot.snapshot_id)
    assert meta["dagster/table_name"] == "sales.orders"
    assert meta["dagster/row_count"] == 3
    assert meta["icewright/committed"] is True
    assert [c.name for c in meta["dagster/column_schema"].columns] == ["id", "ts", "tag"]


def test_replace_write_and_declared_table(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    tags = iter(["a", "b"])

    @iceberg_io_asset(
        table="sales.latest",
        schema="id long not null, ts timestamptz, tag string",
        write="replace",
    )
    def latest() -> pa.Table:
        return _day_rows("2026-01-02", next(tags))

    assert latest.specs_by_key[dg.AssetKey("latest")].metadata["dagster/table_name"] == (
        "sales.latest"
    )
    assert _materialize([latest], lake, instance).success
    assert _materialize([latest], lake, instance).success
    rows = _rows(catalog, "sales.latest")
    assert len(rows) == 3 and {r["tag"] for r in rows} == {"b"}
    schema = catalog.load_table("sales.latest").metadata.schema()
    assert schema.find_field("id").required  # the declared schema, not the output's


def test_spark_dataframe_output(
    lake_spark: IcebergResource,
    spark: SparkSession,
    catalog: SqlCatalog,
    instance: dg.DagsterInstance,
) -> None:
    @dg.asset(key_prefix="sales")
    def clicks() -> DataFrame:
        return spark.sql("SELECT CAST(id AS BIGINT) AS id, 'x' AS tag FROM range(5)")

    result = _materialize([clicks], lake_spark, instance)
    assert result.success
    assert [r["id"] for r in _rows(catalog, "sales.clicks")] == [0, 1, 2, 3, 4]
    assert _meta(result, "sales__clicks")["icewright/added_records"] == 5


@pytest.mark.parametrize("module", ["pandas", "polars"])
def test_pandas_and_polars_outputs(
    module: str, lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    frames_module = importlib.import_module(module)  # test dependencies, not icewright's

    @dg.asset(key_prefix="sales")
    def frames() -> Any:
        return frames_module.DataFrame({"id": [1, 2], "tag": ["a", "b"]})

    assert _materialize([frames], lake, instance).success
    assert [r["tag"] for r in _rows(catalog, "sales.frames")] == ["a", "b"]


def test_daily_asset_replaces_only_its_day(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    def events_asset(tag: str) -> dg.AssetsDefinition:
        @iceberg_io_asset(
            key_prefix="sales",
            partitions_def=DAILY,
            partition_column="ts",
            schema="id long, ts timestamptz, tag string",
            partition_by="day(ts)",
        )
        def events(context: dg.AssetExecutionContext) -> pa.Table:
            return _day_rows(context.partition_key, tag)

        return events

    v1 = events_asset("v1")
    for day in ("2026-01-02", "2026-01-03"):
        assert _materialize([v1], lake, instance, partition_key=day).success
    result = _materialize([events_asset("v2")], lake, instance, partition_key="2026-01-02")
    assert result.success
    by_day = {(r["ts"].date().isoformat(), r["tag"]) for r in _rows(catalog, "sales.events")}
    assert by_day == {("2026-01-02", "v2"), ("2026-01-03", "v1")}
    assert len(_rows(catalog, "sales.events")) == 6
    snapshot = catalog.load_table("sales.events").metadata.snapshots[-1]
    assert snapshot.summary["deleted-records"] == "3"
    assert _meta(result, "sales__events")["dagster/partition_row_count"] == 3

    # rows outside the run's day: the step fails at once and commits nothing
    @iceberg_io_asset(key=["sales", "events"], partitions_def=DAILY, partition_column="ts")
    def wrong(context: dg.AssetExecutionContext) -> pa.Table:
        return _day_rows("2026-01-05", "bad")

    failed = _materialize([wrong], lake, instance, partition_key="2026-01-04", raise_on_error=False)
    assert not failed.success
    assert "rows outside" in failed.get_step_failure_events()[0].step_failure_data.error.message
    assert len(catalog.load_table("sales.events").metadata.snapshots) == 3


def test_multi_partition_asset_replaces_only_its_cell(
    lake_spark: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    # no partition_by: the table is not partitioned, so the replace rewrites the day's
    # file keeping the other region's rows (by Spark)
    def sales_asset(tag: str) -> dg.AssetsDefinition:
        @dg.asset(
            key_prefix="sales",
            partitions_def=DAY_REGION,
            metadata={"icewright/partition_columns": {"date": "ts", "region": "region"}},
        )
        def by_region(context) -> pa.Table:
            key = context.partition_key
            assert isinstance(key, dg.MultiPartitionKey)
            date, region = key.keys_by_dimension["date"], key.keys_by_dimension["region"]
            return _day_rows(date, tag, region)

        return by_region

    v1 = sales_asset("v1")
    for key in ("2026-01-02|emea", "2026-01-02|us"):
        assert _materialize([v1], lake_spark, instance, partition_key=key).success
    assert len(_rows(catalog, "sales.by_region")) == 6
    again = _materialize([sales_asset("v2")], lake_spark, instance, partition_key="2026-01-02|us")
    assert again.success
    seen = {(r["region"], r["tag"]) for r in _rows(catalog, "sales.by_region")}
    assert seen == {("emea", "v1"), ("us", "v2")}
    assert len(_rows(catalog, "sales.by_region")) == 6


def _daily_events() -> dg.AssetsDefinition:
    @iceberg_io_asset(
        key_prefix="sales",
        partitions_def=DAILY,
        partition_column="ts",
        partition_by="day(ts)",
    )
    def events(context: dg.AssetExecutionContext) -> pa.Table:
        return _day_rows(context.partition_key, "v1")

    return events


def test_downstream_loads_its_partition_and_columns(
    lake_spark: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    events = _daily_events()
    seen: dict[str, Any] = {}

    @dg.asset(
        partitions_def=DAILY,
        ins={"events": dg.AssetIn(key_prefix="sales", metadata={"columns": ["id", "ts"]})},
    )
    def as_arrow(events: pa.Table) -> None:
        seen["arrow"] = events

    @dg.asset(
        partitions_def=DAILY,
        ins={"events": dg.AssetIn(key_prefix="sales", metadata={"columns": ["tag"]})},
    )
    def as_spark(events: DataFrame) -> None:
        seen["spark"] = events.collect()

    for day in ("2026-01-02", "2026-01-03"):
        assert _materialize([events], lake_spark, instance, partition_key=day).success
    result = _materialize(
        [events.to_source_asset(), as_arrow, as_spark],
        lake_spark,
        instance,
        partition_key="2026-01-03",
    )
    assert result.success
    arrow = seen["arrow"]
    assert isinstance(arrow, pa.Table)
    assert arrow.column_names == ["id", "ts"]
    assert sorted(arrow.column("id").to_pylist()) == [301, 302, 303]
    assert [tuple(r) for r in seen["spark"]] == [("v1",)] * 3


def test_unpartitioned_downstream_loads_every_partition(
    lake_spark: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    events = _daily_events()
    counted: list[int] = []

    @dg.asset(ins={"events": dg.AssetIn(key_prefix="sales")})
    def total(events: DataFrame) -> None:
        counted.append(events.count())

    for day in ("2026-01-02", "2026-01-03"):
        assert _materialize([events], lake_spark, instance, partition_key=day).success
    assert _materialize([events.to_source_asset(), total], lake_spark, instance).success
    assert counted == [6]


def test_step_retry_after_the_commit_commits_once(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    @dg.multi_asset(
        outs={
            "stored": dg.AssetOut(key=["sales", "stored"]),
            "after": dg.AssetOut(key=["sales", "after"]),
        },
        retry_policy=dg.RetryPolicy(max_retries=1),
    )
    def two(context) -> Iterator[dg.Output[pa.Table]]:
        yield dg.Output(_day_rows("2026-01-02", "a"), output_name="stored")
        if context.retry_number == 0:
            raise RuntimeError("the worker died after the first table's commit")
        yield dg.Output(_day_rows("2026-01-03", "b"), output_name="after")

    result = _materialize([two], lake, instance)
    assert result.success
    assert any(e.event_type_value == "STEP_RESTARTED" for e in result.all_events)
    stored = catalog.load_table("sales.stored").metadata.snapshots
    assert len(stored) == 1  # the retry found the commit key
    assert len(_rows(catalog, "sales.stored")) == 3
    assert len(_rows(catalog, "sales.after")) == 3
    metas = [m.metadata for m in result.asset_materializations_for_node("two")]
    committed = [m["icewright/committed"].value for m in metas if "icewright/committed" in m]
    assert False in committed  # the retry's stored output: found already committed

    # a new launch is a new root run: it appends again
    assert _materialize([two], lake, instance).success
    assert len(_rows(catalog, "sales.stored")) == 6


def test_unsupported_output_fails_with_one_line(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    @dg.asset(key_prefix="sales", retry_policy=dg.RetryPolicy(max_retries=2))
    def odd() -> Any:
        return {"id": [1]}

    result = _materialize([odd], lake, instance, raise_on_error=False)
    assert not result.success
    message = result.get_step_failure_events()[0].step_failure_data.error.message
    assert "returned a builtins.dict, which IcebergIOManager cannot commit" in message
    assert not any(e.event_type_value == "STEP_RESTARTED" for e in result.all_events)
    assert not catalog.table_exists("sales.odd")


def test_unsupported_annotations_are_refused_at_definition() -> None:
    with pytest.raises(ValidationError, match=r"annotated to return builtins\.dict"):

        @iceberg_io_asset(key_prefix="sales")
        def odd() -> dict[str, list[int]]:
            return {}

    @iceberg_io_asset(key_prefix="sales")
    def generated() -> Iterator[dg.Output[pa.Table]]:  # accepted: yields a table
        yield dg.Output(pa.table({}))

    @iceberg_io_asset(key_prefix="sales")
    def optional() -> pa.Table | None:  # accepted: a union of tables and None
        return None

    with pytest.raises(ValidationError, match=r"annotated to return builtins\.NoneType"):

        @iceberg_io_asset(key_prefix="sales")
        def nothing() -> None:
            return None

    with pytest.raises(ValidationError, match="partition_column"):

        @iceberg_io_asset(key_prefix="sales", partitions_def=DAILY)
        def unmapped() -> pa.Table:
            return pa.table({})

    with pytest.raises(ValidationError, match="icewright/tabel"):

        @iceberg_io_asset(key_prefix="sales", metadata={"icewright/tabel": "x.y"})
        def typo() -> pa.Table:
            return pa.table({})


def test_unsupported_input_annotation_fails(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    @dg.asset(key_prefix="sales")
    def small() -> pa.Table:
        return _day_rows("2026-01-02", "a")

    @dg.asset(ins={"small": dg.AssetIn(key_prefix="sales")})
    def reader(small: dict[str, Any]) -> None:
        raise AssertionError("not loaded")

    result = _materialize([small, reader], lake, instance, raise_on_error=False)
    assert not result.success
    message = result.get_step_failure_events()[0].step_failure_data.error.message
    assert "IcebergIOManager loads a pyarrow.Table or a pyspark DataFrame" in message


def test_op_outputs_are_not_stored(lake: IcebergResource, instance: dg.DagsterInstance) -> None:
    # the maintenance jobs' ops report a dict: a project whose io_manager is this manager
    # still runs them
    @dg.op
    def report() -> dict[str, int]:
        return {"files": 3}

    @dg.job(resource_defs={"io_manager": IcebergIOManager(iceberg=lake)})
    def reports() -> None:
        report()

    result = reports.execute_in_process(instance=instance)
    assert result.success
    assert result.output_for_node("report") == {"files": 3}


def test_a_factory_asset_is_an_input_too(
    lake_spark: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    from icewright.dagster import iceberg_append_asset

    # its table is its dagster/table_name (definition metadata), here not its key's
    written = iceberg_append_asset(
        "sales.written",
        "sql:SELECT CAST(id AS BIGINT) AS id, 'w' AS tag FROM range(4)",
        schema="id long not null, tag string",
        key=["sales", "by_factory"],
    )
    seen: list[Any] = []

    @dg.asset(ins={"by_factory": dg.AssetIn(key=["sales", "by_factory"])})
    def reads(by_factory: pa.Table) -> None:
        seen.append(by_factory)

    assert _materialize([written, reads], lake_spark, instance).success
    assert sorted(seen[0].column("id").to_pylist()) == [0, 1, 2, 3]
