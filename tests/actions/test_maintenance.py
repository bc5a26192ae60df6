"""expire, remove_orphan_files, publish_view and wait_for_snapshot end to end."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import (
    LocalRunner,
    append,
    create,
    expire,
    publish_view,
    remove_orphan_files,
    wait_for_snapshot,
)
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.test_append import rows

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
)
DDL = "id long, region string"


@pytest.fixture
def two_appends(spark: SparkSession, catalog: SqlCatalog) -> list[int]:
    """db.t with two append snapshots; their ids."""
    create("db.t", catalog=catalog, schema=SCHEMA)
    ids = []
    for data in ([(1, "eu"), (2, "us")], [(3, "eu")]):
        df = spark.createDataFrame(data, DDL)
        result = append("db.t", df, catalog=catalog, runner=LocalRunner(spark))
        assert result.snapshot_id is not None
        ids.append(result.snapshot_id)
    return ids


def test_expire_keeps_the_last(
    catalog: SqlCatalog, pyiceberg_catalog: Any, two_appends: list[int]
) -> None:
    now = int(time.time() * 1000) + 1000
    dry = expire("db.t", catalog=catalog, older_than=now, retain_last=1, dry_run=True)
    assert dry.expired_snapshot_ids == (two_appends[0],)
    assert len(catalog.load_table("db.t").metadata.snapshots) == 2
    done = expire("db.t", catalog=catalog, older_than=now, retain_last=1)
    assert done.expired_snapshot_ids == (two_appends[0],)
    table = pyiceberg_catalog.load_table("db.t")
    assert [s.snapshot_id for s in table.metadata.snapshots] == [two_appends[1]]
    assert rows(pyiceberg_catalog, "db.t") == [(1, "eu"), (2, "us"), (3, "eu")]


def test_remove_orphan_files(catalog: SqlCatalog, two_appends: list[int]) -> None:
    location = catalog.load_table("db.t").location
    stray = os.path.join(location, "data", "stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"not referenced")
    old = time.time() - 3600
    os.utime(stray, (old, old))
    cutoff = int(time.time() * 1000) - 60_000
    dry = remove_orphan_files("db.t", catalog=catalog, older_than=cutoff, dry_run=True)
    assert [p.rsplit("/", 1)[-1] for p in dry.orphan_paths] == ["stray.parquet"]
    assert os.path.exists(stray)
    done = remove_orphan_files("db.t", catalog=catalog, older_than=cutoff)
    assert done.deleted == 1 and not os.path.exists(stray)
    with pytest.raises(ValidationError, match="older_than"):
        remove_orphan_files("db.t", catalog=catalog, older_than="yesterday")  # type: ignore[arg-type]


def test_publish_view_derives_schema(
    spark: SparkSession,
    catalog: SqlCatalog,
    two_appends: list[int],
    capfd: pytest.CaptureFixture[str],
) -> None:
    from pyspark.logger import PySparkLogger

    sql = "SELECT region, count(*) AS n FROM t GROUP BY region"
    capfd.readouterr()
    result = publish_view(
        "db.v",
        sql,
        catalog=catalog,
        comment="per region",
        column_aliases=["region_name", "rows"],
        column_comments={"rows": "row count"},
        runner=LocalRunner(spark),
    )
    assert result.referenced_tables == ("t",)
    # finding `t` took an analysis error that PySpark would log as a page of ERROR text
    assert "TABLE_OR_VIEW_NOT_FOUND" not in capfd.readouterr().err
    assert not PySparkLogger.getLogger("SQLQueryContextLogger").disabled
    view = catalog.load_view("db.v")
    with open(view.metadata_location) as f:
        document = json.load(f)
    version = next(v for v in document["versions"] if v["version-id"] == result.version_id)
    assert version["representations"] == [{"type": "sql", "sql": sql, "dialect": "spark"}]
    assert version["default-catalog"] == "test" and version["default-namespace"] == ["db"]
    schema = next(s for s in document["schemas"] if s["schema-id"] == version["schema-id"])
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        ("region_name", "string"),
        ("rows", "long"),
    ]
    assert schema["fields"][1]["doc"] == "row count"
    assert document["properties"]["comment"] == "per region"
    assert not any(t.name.startswith("__iw") for t in spark.catalog.listTables())
    again = publish_view("db.v", "SELECT id FROM db.t", catalog=catalog, runner=LocalRunner(spark))
    assert again.version_id != result.version_id and again.referenced_tables == ("db.t",)
    with pytest.raises(ValidationError):
        publish_view("db.v", "SELECT * FROM nowhere", catalog=catalog, runner=LocalRunner(spark))


def test_wait_for_snapshot(
    spark: SparkSession, catalog: SqlCatalog, two_appends: list[int]
) -> None:
    first, second = two_appends
    found = wait_for_snapshot("db.t", catalog=catalog, after_snapshot_id=first, timeout=0)
    assert not found.timed_out and [s.snapshot_id for s in found.snapshots] == [second]
    none = wait_for_snapshot("db.t", catalog=catalog, after_snapshot_id=second, timeout=0)
    assert none.timed_out and none.snapshots == () and none.latest_snapshot_id == second
    big = wait_for_snapshot(
        "db.t", catalog=catalog, after_snapshot_id=None, min_added_records=2, timeout=0
    )
    assert [s.snapshot_id for s in big.snapshots] == [first]
    deletes = wait_for_snapshot("db.t", catalog=catalog, operations=("delete",), timeout=0)
    assert deletes.timed_out
    df = spark.createDataFrame([(4, "cn")], DDL)
    append("db.t", df, catalog=catalog, runner=LocalRunner(spark))
    later = wait_for_snapshot(
        "db.t", catalog=catalog, after_snapshot_id=second, timeout=5, poll_interval=0.1
    )
    summary = later.snapshots[0].summary
    assert len(later.snapshots) == 1 and summary is not None
    assert summary["added-records"] == "1"


class CountingCatalog(SqlCatalog):
    """Counts the metadata loads."""

    loads = 0

    def load_table(self, identifier: Any) -> Any:
        CountingCatalog.loads += 1
        return super().load_table(identifier)


def test_wait_reads_metadata_only_when_the_pointer_moved(
    catalog: SqlCatalog, two_appends: list[int], tmp_path: Any
) -> None:
    counting = CountingCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    CountingCatalog.loads = 0
    result = wait_for_snapshot(
        "db.t", catalog=counting, after_snapshot_id=two_appends[1], timeout=0.5, poll_interval=0.1
    )
    assert result.timed_out and result.polls >= 3
    assert CountingCatalog.loads == 1


def test_publish_view_reads_no_file_of_the_tables(
    spark: SparkSession, catalog: SqlCatalog, two_appends: list[int]
) -> None:
    """The analysis registers the table's columns only: with its manifest list gone (no
    scan could be planned) the view still publishes, with the columns a read gives."""
    from icewright.spark.read import read_columns, read_table

    table = catalog.load_table("db.t")
    assert read_columns(spark, table).schema == read_table(spark, table).schema
    snapshot = table.metadata.current_snapshot()
    assert snapshot is not None
    os.remove(snapshot.manifest_list.removeprefix("file://"))
    result = publish_view(
        "db.v", "SELECT region, id FROM t", catalog=catalog, runner=LocalRunner(spark)
    )
    assert [(f.name, str(f.field_type)) for f in result.schema.fields] == [
        ("region", "string"),
        ("id", "long"),
    ]
