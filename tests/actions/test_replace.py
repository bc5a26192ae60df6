"""replace: whole table, copy-on-write by predicate, dynamic partitions."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, replace
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.scan import plan_files
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.test_append import rows

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
)
DDL = "id long, region string"


@pytest.fixture
def table(spark: SparkSession, catalog: SqlCatalog) -> str:
    """db.t partitioned by region: eu holds ids 1-4 (one file), us ids 5-6 (one file)."""
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    data = [(1, "eu"), (2, "eu"), (3, "eu"), (4, "eu"), (5, "us"), (6, "us")]
    append("db.t", spark.createDataFrame(data, DDL), catalog=catalog, runner=LocalRunner(spark))
    return "db.t"


def live_files(catalog: SqlCatalog, name: str) -> dict[str, tuple[Any, int]]:
    """Live data file path -> (partition, record count)."""
    return {
        t.file_path: (t.partition, t.record_count) for t in plan_files(catalog.load_table(name))
    }


def test_replace_where_drops_full_and_rewrites_partial_files(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    before = live_files(catalog, table)
    new = spark.createDataFrame([(10, "eu")], DDL)
    result = replace(
        table, new, catalog=catalog, where="id <= 2 or region = 'us'", runner=LocalRunner(spark)
    )
    assert result.committed and result.operation == "overwrite"
    assert result.files_removed == 2  # us fully matched (partition), eu partly matched
    assert result.records_removed == 6
    assert result.files_added == 2 and result.records_added == 3
    after = live_files(catalog, table)
    assert not set(before) & set(after)  # the partly-matched eu file was rewritten too
    assert sorted(after.values()) == [(("eu",), 1), (("eu",), 2)]
    assert rows(pyiceberg_catalog, table) == [(3, "eu"), (4, "eu"), (10, "eu")]
    snap = pyiceberg_catalog.load_table(table).current_snapshot()
    assert snap.summary.operation.value == "overwrite"
    assert snap.summary["deleted-records"] == "6"


def test_replace_where_fully_matched_by_metrics_only(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    before = live_files(catalog, table)
    new = spark.createDataFrame([(7, "us")], DDL)
    result = replace(table, new, catalog=catalog, where="id >= 5", runner=LocalRunner(spark))
    assert result.files_removed == 1 and result.records_removed == 2
    assert result.files_added == 1 and result.records_added == 1
    eu = [p for p, (part, _) in before.items() if part == ("eu",)]
    assert set(eu) <= set(live_files(catalog, table))  # untouched
    assert rows(pyiceberg_catalog, table) == [(1, "eu"), (2, "eu"), (3, "eu"), (4, "eu"), (7, "us")]


def test_replace_whole_table(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    new = spark.createDataFrame([(9, "cn")], DDL)
    result = replace(table, new, catalog=catalog, runner=LocalRunner(spark))
    assert result.operation == "overwrite" and result.records_removed == 6
    assert rows(pyiceberg_catalog, table) == [(9, "cn")]


def test_replace_dynamic_partitions(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    new = spark.createDataFrame([(8, "us"), (9, "cn")], DDL)
    runner = LocalRunner(spark)
    result = replace(table, new, catalog=catalog, dynamic_partitions=True, runner=runner)
    assert result.operation == "overwrite" and result.records_removed == 2
    assert result.summary.get("replace-partitions") == "true"
    expected = [(1, "eu"), (2, "eu"), (3, "eu"), (4, "eu"), (8, "us"), (9, "cn")]
    assert rows(pyiceberg_catalog, table) == expected


def test_replace_where_unknown_column_changes_nothing(
    spark: SparkSession, catalog: SqlCatalog, table: str
) -> None:
    before = catalog.load_table(table).metadata_location
    new = spark.createDataFrame([(10, "eu")], DDL)
    with pytest.raises(ValidationError, match="nope"):
        replace(table, new, catalog=catalog, where="nope = 1", runner=LocalRunner(spark))
    assert catalog.load_table(table).metadata_location == before
