"""create and append end to end, read back by pyiceberg."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType


def rows(pycat: Any, name: str) -> list[tuple[Any, ...]]:
    """The table's rows as pyiceberg reads them, sorted."""
    table = pycat.load_table(name).scan().to_arrow()
    return sorted(tuple(r.values()) for r in table.to_pylist())


SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
)


def test_create_from_schema_then_append(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    runner = LocalRunner(spark)
    made = create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    assert made.committed and made.snapshot_id is None
    df = spark.createDataFrame([(1, "eu"), (2, "us"), (3, "eu")], "id long, region string")
    result = append("db.t", df, catalog=catalog, runner=runner)
    assert result.committed and result.operation == "append"
    assert result.records_added == 3 and result.files_added == 2
    assert rows(pyiceberg_catalog, "db.t") == [(1, "eu"), (2, "us"), (3, "eu")]
    snap = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert snap.snapshot_id == result.snapshot_id
    assert snap.summary.operation.value == "append"


def test_create_from_source(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    result = create(
        "db.s",
        catalog=catalog,
        source="sql:SELECT CAST(id AS BIGINT) AS id, 'x' AS tag FROM range(4)",
        runner=LocalRunner(spark),
    )
    assert result.committed and result.operation == "append" and result.records_added == 4
    table = pyiceberg_catalog.load_table("db.s")
    assert [(f.name, f.required) for f in table.schema().fields] == [("id", False), ("tag", False)]
    assert rows(pyiceberg_catalog, "db.s") == [(i, "x") for i in range(4)]
    again = create("db.s", catalog=catalog, schema=SCHEMA, if_not_exists=True)
    assert not again.committed and again.snapshot_id == result.snapshot_id


def test_append_with_schema_evolution_in_one_commit(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    create("db.t", catalog=catalog, schema=SCHEMA)
    df = spark.createDataFrame([(1, "eu", 7)], "id long, region string, qty int")
    with pytest.raises(ValidationError, match="qty"):
        append("db.t", df, catalog=catalog, runner=LocalRunner(spark))
    assert catalog.load_table("db.t").metadata.current_snapshot() is None
    result = append(
        "db.t", df, catalog=catalog, runner=LocalRunner(spark), allow_schema_evolution=True
    )
    table = pyiceberg_catalog.load_table("db.t")
    assert [f.name for f in table.schema().fields] == ["id", "region", "qty"]
    assert len(table.metadata.snapshots) == 1 and result.committed
    assert rows(pyiceberg_catalog, "db.t") == [(1, "eu", 7)]


def test_commit_key_commits_once(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    create("db.t", catalog=catalog, schema=SCHEMA)
    df = spark.createDataFrame([(1, "eu")], "id long, region string")
    first = append("db.t", df, catalog=catalog, runner=LocalRunner(spark), commit_key="k1")
    second = append("db.t", df, catalog=catalog, runner=LocalRunner(spark), commit_key="k1")
    assert first.committed and not second.committed
    assert second.snapshot_id == first.snapshot_id
    assert len(pyiceberg_catalog.load_table("db.t").metadata.snapshots) == 1
    assert rows(pyiceberg_catalog, "db.t") == [(1, "eu")]


def test_bad_input_changes_nothing(spark: SparkSession, catalog: SqlCatalog, tmp_path: Any) -> None:
    create("db.t", catalog=catalog, schema=SCHEMA)
    before = catalog.load_table("db.t").metadata_location
    runner = LocalRunner(spark)
    wrong = spark.createDataFrame([("a", "eu")], "id string, region string")
    with pytest.raises(ValidationError, match="id"):
        append("db.t", wrong, catalog=catalog, runner=runner)
    with pytest.raises(ValidationError):
        append("db.t", f"parquet:{tmp_path}/missing", catalog=catalog, runner=runner)
    assert catalog.load_table("db.t").metadata_location == before


def test_create_or_replace_and_failed_create_from_source(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, tmp_path: Any
) -> None:
    runner = LocalRunner(spark)
    with pytest.raises(ValidationError):
        create("db.r", catalog=catalog, source=f"parquet:{tmp_path}/missing", runner=runner)
    assert not catalog.table_exists("db.r")
    first = create("db.r", catalog=catalog, source="sql:SELECT 1 AS a", runner=runner)
    with pytest.raises(Exception, match="or_replace"):
        create("db.r", catalog=catalog, schema=SCHEMA)
    second = create(
        "db.r", catalog=catalog, source="sql:SELECT 'x' AS b", or_replace=True, runner=runner
    )
    assert second.committed and second.snapshot_id != first.snapshot_id
    table = pyiceberg_catalog.load_table("db.r")
    assert [f.name for f in table.schema().fields] == ["b"]
    assert rows(pyiceberg_catalog, "db.r") == [("x",)]
    assert len(table.metadata.snapshots) == 2  # the history is kept
