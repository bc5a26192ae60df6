"""The merge and delete asset factories through ``dg.materialize`` on a real Dagster
instance: a partitioned change feed merged per day, exactly-once across step retries,
a delete asset, bad arguments refused when the definitions load."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest

from icewright.actions import append, create
from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergResource, iceberg_delete_asset, iceberg_merge_asset
from icewright.errors import ValidationError
from icewright.text.declaration import parse_schema

TABLE = "crm.customers"
DAILY = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-10")
# the change feed of a day: customer d*10 + 0..3 changes; 2 is deleted; d*10 + 9 is new;
# customer 1 appears twice (seq 1 and 2: the later wins)
FEED = (
    "sql:SELECT CAST(day(DATE '{start_date}') * 10 + c AS BIGINT) AS id, "
    "concat('{partition_key}#', CAST(seq AS STRING)) AS name, "
    "IF(c = 2, 'D', 'U') AS op, seq "
    "FROM VALUES (0, 1), (1, 1), (1, 2), (2, 1), (3, 1), (9, 1) AS f(c, seq)"
)


@pytest.fixture
def customers(catalog: SqlCatalog) -> str:
    """crm.customers: ids 10..13 and 20..23, named 'old'; merge-on-read merges."""
    catalog.create_namespace("crm")
    create(
        TABLE,
        catalog=catalog,
        schema=parse_schema("id long not null, name string"),
        properties={"write.merge.mode": "merge-on-read"},
    )
    append(
        TABLE,
        "sql:SELECT CAST(d * 10 + c AS BIGINT) AS id, 'old' AS name "
        "FROM range(1, 3) AS a(d) CROSS JOIN range(0, 4) AS b(c)",
        catalog=catalog,
    )
    return TABLE


def _names(catalog: SqlCatalog) -> dict[int, str]:
    from icewright.spark.read import read_table
    from icewright.spark.session import local_session

    rows = read_table(local_session(), catalog.load_table(TABLE)).collect()
    return {r["id"]: r["name"] for r in rows}


@pytest.mark.slow
def test_a_partition_run_merges_its_days_feed_once(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance, customers: str
) -> None:
    seen: list[tuple[int, bool]] = []

    def fail_first_try(context: dg.AssetExecutionContext, result: Any) -> None:
        seen.append((context.retry_number, result.committed))
        if context.retry_number == 0 and len(seen) == 1:
            raise RuntimeError("the worker died after the commit")

    asset = iceberg_merge_asset(
        TABLE,
        FEED,
        on="id",
        delete_when="op = 'D'",
        dedupe_by="seq",
        partitions_def=DAILY,
        retry_policy=dg.RetryPolicy(max_retries=1),
        on_result=fail_first_try,
    )
    before = len(catalog.load_table(TABLE).metadata.snapshots)
    result = dg.materialize(
        [asset], resources={"iceberg": lake}, instance=instance, partition_key="2026-01-01"
    )
    assert result.success
    assert seen == [(0, True), (1, False)]  # the retry found the commit key
    assert len(catalog.load_table(TABLE).metadata.snapshots) == before + 1
    names = _names(catalog)
    assert names[10] == "2026-01-01#1" and names[11] == "2026-01-01#2"
    assert 12 not in names and names[19] == "2026-01-01#1"
    assert names[20] == "old"  # another day's customers untouched
    # the retry found the commit: its job did not run, so it counts no rows
    meta = result.asset_materializations_for_node("crm__customers")[0].metadata
    assert meta["icewright/rows_updated"].value == 0

    result = dg.materialize(
        [asset], resources={"iceberg": lake}, instance=instance, partition_key="2026-01-02"
    )
    assert result.success and seen[-1] == (0, True)
    assert _names(catalog)[21] == "2026-01-02#2"
    meta = result.asset_materializations_for_node("crm__customers")[0].metadata
    assert meta["icewright/rows_updated"].value == 3
    assert meta["icewright/rows_deleted"].value == 1
    assert meta["icewright/rows_inserted"].value == 1
    assert meta["icewright/mode"].value == "merge-on-read"
    assert meta["icewright/delete_files_added"].value >= 1  # one per data file touched


def test_a_delete_asset(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance, customers: str
) -> None:
    asset = iceberg_delete_asset(TABLE, "id >= 20", mode="copy-on-write")
    assert asset.key == dg.AssetKey(["crm", "customers", "delete"])
    result = dg.materialize([asset], resources={"iceberg": lake}, instance=instance)
    assert result.success
    assert sorted(_names(catalog)) == [10, 11, 12, 13]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"on": ""}, "on must name at least one column"),
        ({"on": "id", "mode": "both"}, "mode must be copy-on-write or merge-on-read"),
        ({"on": "id", "update_set": "name"}, "is not 'col = expr'"),
    ],
)
def test_bad_merge_arguments_fail_when_the_definitions_load(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        iceberg_merge_asset(TABLE, FEED, **kwargs)
