"""delete: metadata-only drops, partial files in both modes, dangling deletes, health."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, delete, merge, table_health
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.scan import plan_files
from icewright.spark.row_changes import WriteMode
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "amount", DoubleType()),
)
DDL = "id long, region string, amount double"


@pytest.fixture
def table(spark: SparkSession, catalog: SqlCatalog) -> str:
    """db.t by region: eu ids 1-3, us ids 4-5, NULL region id 6 (one file each)."""
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    data: list[tuple[Any, ...]] = [(1, "eu", 1.0), (2, "eu", 2.0), (3, "eu", None)]
    data += [(4, "us", 4.0), (5, "us", 5.0), (6, None, 6.0)]
    append("db.t", spark.createDataFrame(data, DDL), catalog=catalog, runner=LocalRunner(spark))
    return "db.t"


def ids(pycat: Any, name: str) -> list[int]:
    return sorted(pycat.load_table(name).scan().to_arrow().column("id").to_pylist())


class NoJobs(LocalRunner):
    """A runner that fails any Spark job: what it is given must be metadata-only."""

    def delete_rows(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a Spark job ran")


def test_whole_files_are_dropped_without_a_job(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    result = delete(table, "region = 'us'", catalog=catalog, runner=NoJobs(spark))
    assert result.committed and result.operation == "delete"
    assert (result.rows_deleted, result.files_removed) == (2, 1)
    assert ids(pyiceberg_catalog, table) == [1, 2, 3, 6]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_partial_files_by_mode_with_sql_nulls(
    spark: SparkSession,
    catalog: SqlCatalog,
    pyiceberg_catalog: Any,
    table: str,
    mode: WriteMode,
) -> None:
    # amount > 1.5 is NULL for id 3: the row stays, as in Spark SQL's DELETE
    result = delete(table, "amount > 1.5 AND region != 'us'", mode=mode, catalog=catalog)
    assert result.committed and result.rows_deleted == 1  # id 2 (id 6 has a NULL region)
    assert ids(pyiceberg_catalog, table) == [1, 3, 4, 5, 6]
    deletes = [d for t in plan_files(catalog.load_table(table)) for d in t.delete_files]
    if mode == "merge-on-read":
        assert result.operation == "delete" and result.delete_files_added == 1
        assert len(deletes) == 1 and result.files_removed == 0
    else:
        assert result.operation == "overwrite" and not deletes and result.files_removed == 1


def test_nothing_matching_commits_nothing(
    spark: SparkSession, catalog: SqlCatalog, table: str
) -> None:
    before = catalog.load_table(table).metadata_location
    result = delete(table, "id > 100", catalog=catalog, runner=NoJobs(spark))
    assert not result.committed and result.rows_deleted == 0
    assert catalog.load_table(table).metadata_location == before


def test_dropping_a_file_drops_its_position_deletes(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    merge(
        table,
        spark.createDataFrame([(4, "us", 40.0)], DDL),
        on="id",
        mode="merge-on-read",
        catalog=catalog,
    )
    health = table_health(table, catalog=catalog)
    assert (health.delete_files, health.data_files) == (1, 4)
    assert health.delete_file_ratio == pytest.approx(0.25)
    result = delete(table, "region = 'us'", catalog=catalog)
    assert result.summary["removed-position-delete-files"] == "1"
    assert table_health(table, catalog=catalog).delete_files == 0
    assert ids(pyiceberg_catalog, table) == [1, 2, 3, 6]


def test_bad_predicates_change_nothing(
    spark: SparkSession, catalog: SqlCatalog, table: str
) -> None:
    # (the command prints them as one line: tests/cli/test_row_verbs.py)
    before = catalog.load_table(table).metadata_location
    for where, message in (("nope = 1", "nope"), ("id >", "cannot parse")):
        with pytest.raises(ValidationError, match=message):
            delete(table, where, catalog=catalog)
    assert catalog.load_table(table).metadata_location == before
    with pytest.raises(ValidationError, match="merge-on-read"):
        create("db.v1", catalog=catalog, schema=SCHEMA, format_version=1)
        delete("db.v1", "id = 1", mode="merge-on-read", catalog=catalog)


def test_a_replace_drops_the_position_deletes_of_the_files_it_rewrites(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    from icewright.actions import replace

    feed = spark.createDataFrame([(1, "eu", 10.0), (4, "us", 40.0)], DDL)
    merge(table, feed, on="id", mode="merge-on-read", catalog=catalog)
    assert table_health(table, catalog=catalog).delete_files == 2
    new = spark.createDataFrame([(7, "eu", 7.0)], DDL)
    result = replace(table, new, where="id <= 2", catalog=catalog, runner=LocalRunner(spark))
    assert result.summary["removed-position-delete-files"] == "1"  # the eu file's, not us'
    assert table_health(table, catalog=catalog).delete_files == 1
    assert ids(pyiceberg_catalog, table) == [3, 4, 5, 6, 7]  # id 1 (updated) had id <= 2 too
