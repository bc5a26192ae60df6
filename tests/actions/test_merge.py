"""merge: upsert by key with deletes, in both write modes; bad input; conflicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from icewright.actions import LocalRunner, append, create, merge, rewrite
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.manifest.data_file import FileContent
from icewright.scan import plan_files
from icewright.spark.row_changes import MergeSpec, RowChanges, WriteMode
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "region", StringType(), required=True),
    NestedField(3, "amount", DoubleType()),
)
DDL = "id long, region string, amount double"
CDC = "id long, region string, amount double, op string, seq int"
MODES: list[WriteMode] = ["copy-on-write", "merge-on-read"]


@pytest.fixture
def table(spark: SparkSession, catalog: SqlCatalog) -> str:
    """db.t by region: eu ids 1-3 in one file, us ids 4-5 in one file."""
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    data = [(1, "eu", 1.0), (2, "eu", 2.0), (3, "eu", 3.0), (4, "us", 4.0), (5, "us", 5.0)]
    append("db.t", spark.createDataFrame(data, DDL), catalog=catalog, runner=LocalRunner(spark))
    return "db.t"


def rows(pycat: Any, name: str) -> list[tuple[Any, ...]]:
    """The table's rows as pyiceberg reads them, sorted (NULL keys first)."""
    table = pycat.load_table(name).scan().to_arrow()
    return sorted(
        (tuple(r.values()) for r in table.to_pylist()), key=lambda r: (r[0] is not None, r)
    )


def snapshot_count(catalog: SqlCatalog, name: str) -> int:
    return len(catalog.load_table(name).metadata.snapshots)


@pytest.mark.parametrize("mode", MODES)
def test_merge_updates_inserts_and_deletes_in_one_snapshot(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str, mode: WriteMode
) -> None:
    feed = spark.createDataFrame(
        [
            (1, "eu", 10.0, "U", 1),
            (1, "eu", 11.0, "U", 2),  # the later change of id 1 wins
            (4, "us", None, "D", 1),
            (9, "us", 9.0, "I", 1),
            (8, "us", 8.0, "D", 1),  # a delete of a key the table lacks: dropped
            (None, "eu", 0.5, "I", 1),  # a NULL key matches nothing: inserted
        ],
        CDC,
    )
    before = snapshot_count(catalog, table)
    result = merge(
        table,
        feed,
        on="id",
        delete_when="op = 'D'",
        dedupe_by="seq",
        mode=mode,
        catalog=catalog,
        runner=LocalRunner(spark),
    )
    assert result.committed and result.mode == mode
    assert (result.rows_updated, result.rows_deleted, result.rows_inserted) == (1, 1, 2)
    assert snapshot_count(catalog, table) == before + 1
    assert rows(pyiceberg_catalog, table) == [
        (None, "eu", 0.5),
        (1, "eu", 11.0),
        (2, "eu", 2.0),
        (3, "eu", 3.0),
        (5, "us", 5.0),
        (9, "us", 9.0),
    ]
    live = plan_files(catalog.load_table(table))
    deletes = {d.file_path for t in live for d in t.delete_files}
    if mode == "merge-on-read":
        assert result.operation == "overwrite" and result.delete_files_added == 2
        assert len(deletes) == 2
        # one delete file per data file, naming it (as Java's default granularity)
        for t in live:
            for d in t.delete_files:
                assert d.content is FileContent.POSITION_DELETES
                assert d.referenced_data_file == t.file_path
        # a compaction applies them and drops them with the rewritten files
        rewritten = rewrite(table, catalog=catalog, min_input_files=1, runner=LocalRunner(spark))
        assert rewritten.summary["removed-position-delete-files"] == "2"
        after = plan_files(catalog.load_table(table))
        assert not [d for t in after for d in t.delete_files]
        assert len(rows(pyiceberg_catalog, table)) == 6
    else:
        assert result.delete_files_added == 0 and not deletes
        assert result.files_removed == 2  # both files held a changed row


@pytest.mark.parametrize("mode", MODES)
def test_repeated_source_keys_without_dedupe_fail_and_commit_nothing(
    spark: SparkSession, catalog: SqlCatalog, table: str, mode: WriteMode
) -> None:
    feed = spark.createDataFrame([(2, "eu", 1.0), (2, "eu", 2.0)], DDL)
    before = catalog.load_table(table).metadata_location
    with pytest.raises(ValidationError, match="2 source rows match the same target row"):
        merge(table, feed, on="id", mode=mode, catalog=catalog, runner=LocalRunner(spark))
    assert catalog.load_table(table).metadata_location == before


def test_repeated_keys_that_match_nothing_are_all_inserted(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    feed = spark.createDataFrame([(7, "eu", 1.0), (7, "eu", 2.0)], DDL)
    merge(table, feed, on="id", catalog=catalog, runner=LocalRunner(spark))
    assert [r for r in rows(pyiceberg_catalog, table) if r[0] == 7] == [
        (7, "eu", 1.0),
        (7, "eu", 2.0),
    ]


def test_only_insert_only_update_and_update_set(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    runner = LocalRunner(spark)
    feed = spark.createDataFrame([(1, "eu", 100.0), (6, "us", 6.0)], DDL)
    inserted = merge(table, feed, on="id", only_insert=True, catalog=catalog, runner=runner)
    assert (inserted.rows_inserted, inserted.rows_updated) == (1, 0)
    assert (1, "eu", 1.0) in rows(pyiceberg_catalog, table)
    feed = spark.createDataFrame([(2, "eu", 20.0), (7, "us", 7.0)], DDL)
    updated = merge(
        table,
        feed,
        on="id",
        only_update=True,
        update_set="amount = target.amount + amount",
        mode="merge-on-read",
        catalog=catalog,
        runner=runner,
    )
    assert (updated.rows_inserted, updated.rows_updated) == (0, 1)
    got = rows(pyiceberg_catalog, table)
    assert (2, "eu", 22.0) in got and not [r for r in got if r[0] == 7]


def test_a_source_without_an_optional_column_keeps_it_on_update(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str
) -> None:
    feed = spark.createDataFrame([(3, "us"), (10, "eu")], "id long, region string")
    merge(table, feed, on="id", catalog=catalog, runner=LocalRunner(spark))
    got = rows(pyiceberg_catalog, table)
    assert (3, "us", 3.0) in got and (10, "eu", None) in got


@pytest.mark.parametrize(
    ("kwargs", "source_ddl", "message"),
    [
        ({"on": "nope"}, DDL, "key column nope is not a column"),
        ({"on": ""}, DDL, "on must name at least one column"),
        ({"on": "id, id"}, DDL, "on names id more than once"),
        ({"on": "amount"}, "id long, region string", "the source has no key column amount"),
        ({"on": "id"}, "id long, amount double", "lacks required table column"),
        ({"on": "id", "delete_when": "op = = 'D'"}, CDC, "--delete-when .* is not a SQL"),
        ({"on": "id", "delete_when": "nope = 1"}, DDL, "--delete-when"),
        ({"on": "id", "update_set": "amount"}, DDL, "is not 'col = expr'"),
        (
            {"on": "id", "update_set": "nope = 1"},
            DDL,
            "assigns 'nope', which is not a table column",
        ),
        ({"on": "id", "only_insert": True, "only_update": True}, DDL, "not both"),
        ({"on": "id", "mode": "sideways"}, DDL, "mode must be copy-on-write or merge-on-read"),
        ({"on": "id"}, "id long, region string, amount string", "amount"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    spark: SparkSession,
    catalog: SqlCatalog,
    table: str,
    kwargs: dict[str, Any],
    source_ddl: str,
    message: str,
) -> None:
    before = catalog.load_table(table).metadata_location
    feed = spark.createDataFrame([], source_ddl)
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")) as caught:
        merge(table, feed, catalog=catalog, runner=LocalRunner(spark), **kwargs)
    assert "\n" not in str(caught.value)
    assert catalog.load_table(table).metadata_location == before


def test_merge_on_read_needs_format_version_2(spark: SparkSession, catalog: SqlCatalog) -> None:
    create("db.v1", catalog=catalog, schema=SCHEMA, format_version=1)
    with pytest.raises(ValidationError, match="format version 1 has no delete files"):
        merge(
            "db.v1",
            "sql:SELECT 1L AS id, 'eu' AS region",
            on="id",
            mode="merge-on-read",
            catalog=catalog,
        )


def test_the_table_property_chooses_the_mode(spark: SparkSession, catalog: SqlCatalog) -> None:
    properties = {"write.merge.mode": "merge-on-read"}
    create("db.m", catalog=catalog, schema=SCHEMA, properties=properties)
    runner = LocalRunner(spark)
    append(
        "db.m",
        spark.createDataFrame([(2, "eu", 1.0), (3, "eu", 1.0)], DDL),
        catalog=catalog,
        runner=runner,
    )
    feed = spark.createDataFrame([(2, "eu", 9.0)], DDL)
    result = merge("db.m", feed, on="id", catalog=catalog, runner=runner)
    assert result.mode == "merge-on-read" and result.delete_files_added == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_feed_of_only_deletes_writes_only_what_removes_rows(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str, mode: WriteMode
) -> None:
    feed = spark.createDataFrame([(2, "eu", None, "D", 1), (5, "us", None, "D", 1)], CDC)
    result = merge(
        table,
        feed,
        on="id",
        delete_when="op = 'D'",
        mode=mode,
        catalog=catalog,
        runner=LocalRunner(spark),
    )
    assert (result.rows_updated, result.rows_deleted, result.rows_inserted) == (0, 2, 0)
    assert [r[0] for r in rows(pyiceberg_catalog, table)] == [1, 3, 4]
    if mode == "merge-on-read":  # two position delete files, and no data file
        assert (result.delete_files_added, result.files_added) == (2, 0)
    else:  # both files rewritten without the deleted rows
        assert (result.files_removed, result.files_added) == (2, 2)


def test_only_files_in_the_key_range_are_read(
    spark: SparkSession, catalog: SqlCatalog, table: str
) -> None:
    feed = spark.createDataFrame([(5, "us", 50.0)], DDL)
    result = merge(table, feed, on="id", catalog=catalog, runner=LocalRunner(spark))
    assert result.files_read == 1  # the eu file's ids 1-3 cannot hold id 5


def test_a_commit_key_commits_once(spark: SparkSession, catalog: SqlCatalog, table: str) -> None:
    feed = spark.createDataFrame([(1, "eu", 7.0), (6, "us", 6.0)], DDL)
    first = merge(table, feed, on="id", commit_key="k1", catalog=catalog, runner=LocalRunner(spark))
    again = merge(table, feed, on="id", commit_key="k1", catalog=catalog, runner=LocalRunner(spark))
    assert first.committed and not again.committed
    assert again.snapshot_id == first.snapshot_id


# --- conflicts -----------------------------------------------------------------------------


class RacingRunner(LocalRunner):
    """Runs ``race`` after the merge job wrote its files and before the commit."""

    def __init__(self, spark: SparkSession, race: Any) -> None:
        super().__init__(spark)
        self.race = race

    def merge(self, *args: Any, **kwargs: Any) -> RowChanges:
        changes = super().merge(*args, **kwargs)
        self.race()
        return changes


def _append(spark: SparkSession, catalog: SqlCatalog, data: Sequence[tuple[Any, ...]]) -> None:
    frame: DataFrame = spark.createDataFrame(list(data), DDL)
    append("db.t", frame, catalog=catalog, runner=LocalRunner(spark))


@pytest.mark.parametrize("mode", MODES)
def test_a_concurrent_append_outside_the_key_range_does_not_fail_a_merge(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str, mode: WriteMode
) -> None:
    runner = RacingRunner(spark, lambda: _append(spark, catalog, [(50, "us", 0.0)]))
    feed = spark.createDataFrame([(2, "eu", 20.0)], DDL)
    result = merge(table, feed, on="id", mode=mode, catalog=catalog, runner=runner)
    assert result.committed
    got = rows(pyiceberg_catalog, table)
    assert (2, "eu", 20.0) in got and (50, "us", 0.0) in got


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_concurrent_write_of_the_same_keys_fails_a_serializable_merge(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str, mode: WriteMode
) -> None:
    def race() -> None:
        merge(
            table,
            spark.createDataFrame([(2, "eu", 99.0)], DDL),
            on="id",
            mode=mode,
            catalog=catalog,
        )

    runner = RacingRunner(spark, race)
    feed = spark.createDataFrame([(2, "eu", 20.0)], DDL)
    with pytest.raises(ValidationError):
        merge(table, feed, on="id", mode=mode, catalog=catalog, runner=runner)
    got = rows(pyiceberg_catalog, table)
    assert [r for r in got if r[0] == 2] == [(2, "eu", 99.0)]  # the winner's row, once
    # an orchestrator's retry merges into the new state
    retried = merge(table, feed, on="id", mode=mode, catalog=catalog, runner=LocalRunner(spark))
    assert retried.rows_updated == 1
    assert [r for r in rows(pyiceberg_catalog, table) if r[0] == 2] == [(2, "eu", 20.0)]


def test_merge_spec_round_trips_as_json() -> None:
    spec = MergeSpec(
        on=("id", "day"),
        delete_when="op = 'D'",
        update_set=(("amount", "amount + 1"),),
        when_matched="ignore",
        dedupe_by="seq",
        mode="merge-on-read",
    )
    assert MergeSpec.from_json(spec.to_json()) == spec
