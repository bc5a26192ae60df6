"""``iceberg:`` sources: a table, a snapshot or ref of it, or the rows a range of its
snapshots appended, written into another table; checked before any job; the changelog
of a range; the same through spark-submit."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import (
    LocalRunner,
    SparkSubmitRunner,
    SparkSubmitSettings,
    append,
    create,
    delete,
    replace,
    tag,
)
from icewright.catalog import SqlCatalog
from icewright.errors import NoSuchTable, ValidationError
from icewright.spark.read import CHANGE_ORDINAL, CHANGE_TYPE, COMMIT_SNAPSHOT_ID, read_changes
from icewright.spark.sources import TableSource, parse_source
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType())
)


@pytest.fixture
def src(spark: SparkSession, catalog: SqlCatalog) -> list[int]:
    """db.src with three appends (ids 0-1, 10-11, 20-21) and an empty db.dst."""
    create("db.src", catalog=catalog, schema=SCHEMA)
    create("db.dst", catalog=catalog, schema=SCHEMA)
    out = []
    for n in (0, 10, 20):
        sql = f"sql:SELECT CAST(id AS BIGINT) AS id, 'eu' AS region FROM range({n}, {n + 2})"
        out.append(append("db.src", sql, catalog=catalog).snapshot_id)
    return out


class NoJobs(LocalRunner):
    """A runner that fails any Spark job: bad input must be refused before one."""

    def write(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a Spark job ran")


def ids(pycat: Any, name: str = "db.dst") -> list[int]:
    return sorted(pycat.load_table(name).scan().to_arrow().column("id").to_pylist())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("iceberg:db.src", TableSource("db.src")),
        ("iceberg:db.src@v1", TableSource("db.src", snapshot="v1")),
        ("iceberg:db.src@1..2", TableSource("db.src", start="1", end="2", is_range=True)),
        ("iceberg:db.src@1..", TableSource("db.src", start="1", is_range=True)),
        ("iceberg:db.src@..2", TableSource("db.src", end="2", is_range=True)),
        (
            "iceberg-changelog:db.src@1..2",
            TableSource("db.src", start="1", end="2", is_range=True, changelog=True),
        ),
    ],
)
def test_text_forms(text: str, expected: TableSource) -> None:
    assert parse_source(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("iceberg:", "names no table"),
        ("iceberg:db.src@", "needs a snapshot after '@'"),
        ("iceberg-changelog:db.src", "needs a range"),
    ],
)
def test_bad_text_forms(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_source(text)


def test_append_the_rows_a_range_appended(
    catalog: SqlCatalog, pyiceberg_catalog: Any, src: list[int]
) -> None:
    done = append("db.dst", f"iceberg:db.src@{src[0]}..{src[2]}", catalog=catalog)
    assert done.records_added == 4 and ids(pyiceberg_catalog) == [10, 11, 20, 21]
    tag("db.src", "seen", snapshot_id=src[1], catalog=catalog)
    replace("db.dst", "iceberg:db.src@seen..", catalog=catalog)  # a tag, open end
    assert ids(pyiceberg_catalog) == [20, 21]
    replace("db.dst", f"iceberg:db.src@{src[1]}", catalog=catalog)  # a whole snapshot
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("iceberg:db.src@{2}..{0}", "is not an ancestor of"),
        ("iceberg:db.src@nope..", "neither a snapshot id nor a branch or tag"),
        ("iceberg:db.src@nope", "neither a snapshot id nor a branch or tag"),
        ("iceberg:db.src@{0}..", "snapshot {3} in the range is an overwrite"),
        ("iceberg:db.none", "the source iceberg:db.none cannot be read: table 'db.none' does"),
    ],
)
def test_bad_sources_fail_before_any_job(
    spark: SparkSession, catalog: SqlCatalog, src: list[int], source: str, message: str
) -> None:
    over = replace("db.src", "sql:SELECT 5L AS id, 'us' AS region", catalog=catalog)
    snaps = [*src, over.snapshot_id]
    before = catalog.load_table("db.dst").metadata_location
    with pytest.raises((ValidationError, NoSuchTable), match=message.format(*snaps)):
        append("db.dst", source.format(*snaps), catalog=catalog, runner=NoJobs(spark))
    assert catalog.load_table("db.dst").metadata_location == before


def test_the_changelog_of_copy_on_write_changes(
    spark: SparkSession, catalog: SqlCatalog, src: list[int]
) -> None:
    gone = delete("db.src", "id = 10", catalog=catalog, mode="copy-on-write")
    added = append("db.src", "sql:SELECT 30L AS id, 'us' AS region", catalog=catalog)
    table = catalog.load_table("db.src")
    frame = read_changes(spark, table, start=src[0], changelog=True)
    changes: dict[tuple[int, int, str], Counter[int]] = {}
    for r in frame.collect():
        key = (r[CHANGE_ORDINAL], r[COMMIT_SNAPSHOT_ID], r[CHANGE_TYPE])
        changes.setdefault(key, Counter())[r["id"]] += 1
    assert changes[(0, src[1], "INSERT")] == Counter([10, 11])
    assert changes[(1, src[2], "INSERT")] == Counter([20, 21])
    # the delete removed the file of id 10 (and re-wrote id 11 if they shared one)
    removed = changes[(2, gone.snapshot_id, "DELETE")]
    rewritten = changes.get((2, gone.snapshot_id, "INSERT"), Counter())
    assert removed - rewritten == Counter([10]) and not rewritten - removed
    assert changes[(3, added.snapshot_id, "INSERT")] == Counter([30])
    assert {k[0] for k in changes} == {0, 1, 2, 3}
    with pytest.raises(ValidationError, match=f"snapshot {gone.snapshot_id} in the range"):
        read_changes(spark, table, start=src[0])


def test_a_merge_on_read_delete_is_refused_in_a_changelog(
    spark: SparkSession, catalog: SqlCatalog, src: list[int]
) -> None:
    one_file = "sql:SELECT /*+ COALESCE(1) */ CAST(id AS BIGINT) id, 'eu' region FROM range(40, 43)"
    append("db.src", one_file, catalog=catalog)
    gone = delete("db.src", "id = 41", catalog=catalog, mode="merge-on-read")
    assert gone.delete_files_added == 1
    with pytest.raises(ValidationError, match=f"snapshot {gone.snapshot_id} .* delete files"):
        read_changes(spark, catalog.load_table("db.src"), start=src[0], changelog=True)


def test_a_sql_query_reads_a_range_named_as_a_quoted_identifier(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, src: list[int]
) -> None:
    query = (
        "sql:SELECT max(id) AS id, 'new' AS region FROM `iceberg:db.src@{0}..{2}` "
        "UNION ALL SELECT count(*), 'count' FROM `iceberg:db.src@{0}..{2}` "
        "UNION ALL SELECT count(*), 'all' FROM `iceberg:db.src`"
    ).format(*src)
    append("db.dst", query, catalog=catalog)
    rows = pyiceberg_catalog.load_table("db.dst").scan().to_arrow().to_pylist()
    assert sorted((r["region"], r["id"]) for r in rows) == [("all", 6), ("count", 4), ("new", 21)]
    # the temporary views of the references are gone from the shared session
    assert not [t.name for t in spark.catalog.listTables() if t.name.startswith("__iw")]
    with pytest.raises(ValidationError, match="is not an ancestor of"):
        append("db.dst", f"sql:SELECT * FROM `iceberg:db.src@{src[2]}..{src[0]}`", catalog=catalog)


@pytest.mark.slow
def test_a_range_source_through_spark_submit(
    catalog: SqlCatalog, pyiceberg_catalog: Any, src: list[int]
) -> None:
    settings = SparkSubmitSettings(master="local[1]", conf={"spark.driver.memory": "512m"})
    runner = SparkSubmitRunner(settings)
    done = append("db.dst", f"iceberg:db.src@{src[1]}..", catalog=catalog, runner=runner)
    assert done.committed and ids(pyiceberg_catalog) == [20, 21]
    query = f"sql:SELECT id + 100 AS id, region FROM `iceberg:db.src@..{src[0]}`"
    append("db.dst", query, catalog=catalog, runner=runner)
    assert ids(pyiceberg_catalog) == [20, 21, 100, 101]
