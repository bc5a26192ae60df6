"""rewrite: compaction of small files, no-op without candidates, partial progress."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, rewrite
from icewright.catalog import SqlCatalog
from icewright.commit import delete_files
from icewright.errors import ValidationError
from icewright.expressions import Expression
from icewright.io.base import FileIO
from icewright.scan import plan_files
from icewright.scan.tasks import FileScanTask
from icewright.spark.write import WriteResult
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.test_append import rows

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
)
DDL = "id long, region string"


def small_files(spark: SparkSession, catalog: SqlCatalog, regions: Sequence[str], n: int) -> None:
    """db.t partitioned by region, with ``n`` one-row files per region."""
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    runner = LocalRunner(spark)
    for i in range(n):
        data = [(i * 10 + k, r) for k, r in enumerate(regions)]
        append("db.t", spark.createDataFrame(data, DDL).coalesce(1), catalog=catalog, runner=runner)


def test_rewrite_compacts_small_files(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    small_files(spark, catalog, ["eu"], 5)
    before = rows(pyiceberg_catalog, "db.t")
    assert len(plan_files(catalog.load_table("db.t"))) == 5
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark))
    assert result.committed and result.operation == "replace" and result.groups_rewritten == 1
    assert result.files_removed == 5 and result.files_added == 1
    assert result.records_added == result.records_removed == 5
    assert len(plan_files(catalog.load_table("db.t"))) == 1
    assert rows(pyiceberg_catalog, "db.t") == before
    snap = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert snap.summary.operation.value == "replace"


def test_rewrite_without_candidates_is_a_noop(spark: SparkSession, catalog: SqlCatalog) -> None:
    small_files(spark, catalog, ["eu"], 4)  # fewer files than min_input_files
    table = catalog.load_table("db.t")
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark))
    assert not result.committed and result.groups_rewritten == 0
    assert result.snapshot_id == table.metadata.current_snapshot_id
    assert catalog.load_table("db.t").metadata_location == table.metadata_location
    with pytest.raises(ValidationError, match="min_input_files"):
        rewrite("db.t", catalog=catalog, min_input_files=0)


class ConflictingRunner(LocalRunner):
    """Deletes a file of the second group it rewrites, as a concurrent writer would."""

    def __init__(self, spark: SparkSession, catalog: SqlCatalog) -> None:
        super().__init__(spark)
        self.calls = 0
        self.catalog = catalog

    def rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        keep: Expression | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> WriteResult:
        self.calls += 1
        if self.calls == 2:
            delete_files(self.catalog.load_table("db.t"), paths=[tasks[0].data_file])
        return super().rewrite(metadata, io, tasks, keep=keep, properties=properties)


def test_partial_progress_reports_conflicting_group(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    small_files(spark, catalog, ["eu", "us"], 5)
    runner = ConflictingRunner(spark, catalog)
    result = rewrite("db.t", catalog=catalog, runner=runner, partial_progress_max_commits=2)
    assert result.groups_rewritten == 1 and len(result.failed_groups) == 1
    assert len(result.commits) == 1 and result.commits[0].operation == "replace"
    failed = result.failed_groups[0].partition
    live = plan_files(catalog.load_table("db.t"))
    counts: dict[tuple[object, ...], int] = {
        p: sum(1 for t in live if t.partition == p) for p in [("eu",), ("us",)]
    }
    assert counts[failed] == 4  # one deleted concurrently, the rest untouched
    assert sum(counts.values()) == 5  # the other partition compacted into one file
    assert len(rows(pyiceberg_catalog, "db.t")) == 9


def test_rewrite_applies_deletes(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    from icewright.commit import RowDelta
    from tests.commit.support import position_delete_file

    small_files(spark, catalog, ["eu"], 5)
    table = catalog.load_table("db.t")
    victim = plan_files(table)[0].data_file
    RowDelta(table).add_deletes(position_delete_file(table, victim, [0])).commit()
    expected = rows(pyiceberg_catalog, "db.t")
    assert len(expected) == 4
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark))
    assert result.operation == "replace"
    assert result.records_removed == 5 and result.records_added == 4
    assert rows(pyiceberg_catalog, "db.t") == expected


def test_rewrite_moves_files_of_an_older_spec(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    from icewright.commit import UpdatePartitionSpec

    small_files(spark, catalog, ["eu"], 1)
    UpdatePartitionSpec(catalog.load_table("db.t")).add_field("id", "bucket[4]").commit()
    table = catalog.load_table("db.t")
    (old,) = plan_files(table)
    assert old.spec_id != table.metadata.default_spec_id
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark))
    assert result.committed and result.groups_rewritten == 1
    (new,) = plan_files(catalog.load_table("db.t"))
    assert new.spec_id == table.metadata.default_spec_id
    assert rows(pyiceberg_catalog, "db.t") == [(0, "eu")]
