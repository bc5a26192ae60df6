"""rewrite --deletes-only (position delete compaction) and dangling delete files, also
after a data compaction; conflicts with a concurrent data compaction."""

from __future__ import annotations

import io as _io
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, rewrite, rewrite_position_delete_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit import RowDelta, delete_files
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileContent, FileFormat
from icewright.scan import plan_files
from icewright.scan.delete_files import LiveDeleteFile, live_delete_files
from icewright.spark.row_changes import RowChanges
from tests.actions.test_append import rows
from tests.actions.test_rewrite import SCHEMA
from tests.commit.support import POS_PATH_ID, POS_POS_ID, equality_delete_file

DDL = "id long, region string"


def deletes_of(table: Table) -> list[LiveDeleteFile]:
    return live_delete_files(table.io, table.metadata.current_snapshot())


def partition_deletes(table: Table, targets: list[tuple[DataFile, int]]) -> DataFile:
    """A position delete file without ``file_path`` bounds (as older Iceberg Java writers
    wrote them: one per partition), naming rows of several data files."""
    schema = pa.schema(
        [
            pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(POS_PATH_ID)}),
            pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(POS_POS_ID)}),
        ]
    )
    ordered = sorted((f.file_path, pos) for f, pos in targets)
    data = pa.table(
        {"file_path": [p for p, _ in ordered], "pos": [pos for _, pos in ordered]}, schema=schema
    )
    buf = _io.BytesIO()
    pq.write_table(data, buf)
    path = f"{table.location}/data/partition-deletes-{uuid.uuid4()}.parquet"
    table.io.create(path, buf.getvalue())
    first = targets[0][0]
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.POSITION_DELETES,
        record_count=len(ordered),
        file_size_in_bytes=len(buf.getvalue()),
        partition=first.partition,
        spec_id=first.spec_id,
    )


@pytest.fixture
def merged_on_read(spark: SparkSession, catalog: SqlCatalog) -> Table:
    """db.t by region: three eu files of 5 rows (ids 0-14), one us file (ids 100-101),
    then six partition-scoped position delete files in eu, one commit each, each deleting
    one row of two files: 4 rows of each eu file are deleted."""
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    runner = LocalRunner(spark)
    for i in range(3):
        data = [(i * 5 + k, "eu") for k in range(5)]
        append("db.t", spark.createDataFrame(data, DDL).coalesce(1), catalog=catalog, runner=runner)
    append("db.t", spark.createDataFrame([(100, "us"), (101, "us")], DDL), catalog=catalog)
    files = sorted(
        (t.data_file for t in plan_files(catalog.load_table("db.t")) if t.partition == ("eu",)),
        key=lambda f: f.file_path,
    )
    for k in range(6):
        table = catalog.load_table("db.t")
        pair = [(files[k % 3], k // 3), (files[(k + 1) % 3], 2 + k // 3)]
        RowDelta(table).add_deletes(partition_deletes(table, pair)).commit()
    return catalog.load_table("db.t")


class NoJobs(LocalRunner):
    """Fails any delete rewrite job: what it is given must be metadata-only."""

    def rewrite_position_deletes(self, *args: Any, **kwargs: Any) -> RowChanges:
        raise AssertionError("a Spark job ran")


def test_deletes_only_compacts_position_deletes(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    before = rows(pyiceberg_catalog, "db.t")
    old = deletes_of(merged_on_read)
    assert len(before) == 5 and len(old) == 6
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark), deletes_only=True)
    assert result.committed and result.operation == "replace" and result.groups_rewritten == 1
    assert result.summary["removed-position-delete-files"] == "6"
    assert result.summary["added-position-delete-files"] == "3"
    table = catalog.load_table("db.t")
    assert rows(pyiceberg_catalog, "db.t") == before
    new = deletes_of(table)
    # one file per data file, scoped to it, with the largest sequence number that applied
    by_target = {d.delete_file.referenced_data_file: d for d in new}
    assert len(new) == 3 and None not in by_target
    old_seqs = sorted(d.data_sequence_number for d in old)
    for task in plan_files(table):
        if task.partition == ("eu",):
            assert [d.file_path for d in task.delete_files] == [by_target[task.file_path].file_path]
    assert max(d.data_sequence_number for d in new) == old_seqs[-1]
    assert all(d.delete_file.record_count == 4 for d in new)
    # a second run finds nothing to do
    again = rewrite("db.t", catalog=catalog, runner=NoJobs(spark), deletes_only=True)
    assert not again.committed


def test_dangling_entries_and_files_go(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    table = merged_on_read
    eu = sorted((t for t in plan_files(table) if t.partition == ("eu",)), key=lambda t: t.file_path)
    us = next(t for t in plan_files(table) if t.partition == ("us",))
    # an equality delete in us, then the us file and one eu file go: the equality delete
    # and the delete entries naming the eu file dangle
    gone_ids = set(pq.read_table(eu[0].file_path).column("id").to_pylist()) | {100, 101}
    before = [r for r in rows(pyiceberg_catalog, "db.t") if r[0] not in gone_ids]
    RowDelta(table).add_deletes(equality_delete_file(table, us.data_file, [100])).commit()
    delete_files(catalog.load_table("db.t"), paths=[eu[0].data_file, us.data_file])
    # without a group to compact (min_input_files), only the dangling file goes, no job
    # (pyiceberg reads no equality deletes: the rows are read once it is gone)
    only = rewrite_position_delete_files(
        "db.t", catalog=catalog, runner=NoJobs(spark), min_input_files=50
    )
    assert only.committed and only.summary["removed-equality-delete-files"] == "1"
    assert only.summary.get("removed-position-delete-files") is None
    assert rows(pyiceberg_catalog, "db.t") == before
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark), deletes_only=True)
    assert result.committed
    table = catalog.load_table("db.t")
    live = {t.file_path for t in plan_files(table)}
    new = deletes_of(table)
    assert sorted(d.delete_file.referenced_data_file or "" for d in new) == sorted(
        t.file_path for t in eu[1:]
    )
    assert all(d.delete_file.referenced_data_file in live for d in new)
    assert rows(pyiceberg_catalog, "db.t") == before


def test_full_compaction_leaves_no_delete_file(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    before = rows(pyiceberg_catalog, "db.t")
    result = rewrite("db.t", catalog=catalog, runner=LocalRunner(spark), min_input_files=1)
    assert result.committed
    assert result.summary["removed-position-delete-files"] == "6"
    assert deletes_of(catalog.load_table("db.t")) == []
    assert rows(pyiceberg_catalog, "db.t") == before


def test_a_partial_compaction_keeps_deletes_of_other_files(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    before = rows(pyiceberg_catalog, "db.t")
    # the us partition alone: the eu deletes still apply to eu files, and stay
    rewrite(
        "db.t", catalog=catalog, runner=LocalRunner(spark), where="region = 'us'", min_input_files=1
    )
    assert len(deletes_of(catalog.load_table("db.t"))) == 6
    assert rows(pyiceberg_catalog, "db.t") == before


class CompactingFirst(LocalRunner):
    """Compacts the data files (another writer) after the delete rewrite job wrote."""

    def __init__(self, spark: SparkSession, catalog: SqlCatalog) -> None:
        super().__init__(spark)
        self.catalog = catalog

    def rewrite_position_deletes(self, *args: Any, **kwargs: Any) -> RowChanges:
        changes = super().rewrite_position_deletes(*args, **kwargs)
        rewrite("db.t", catalog=self.catalog, runner=LocalRunner(self.spark), min_input_files=1)
        return changes


def test_concurrent_data_compaction_wins(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    before = rows(pyiceberg_catalog, "db.t")
    runner = CompactingFirst(spark, catalog)
    with pytest.raises(ValidationError, match="delete"):
        rewrite("db.t", catalog=catalog, runner=runner, deletes_only=True)
    table = catalog.load_table("db.t")
    assert deletes_of(table) == []  # the compaction's; nothing of the delete rewrite
    assert table.metadata.current_snapshot().summary.get("added-position-delete-files") is None
    assert rows(pyiceberg_catalog, "db.t") == before


def test_deletes_only_refuses_data_options(catalog: SqlCatalog, merged_on_read: Table) -> None:
    with pytest.raises(ValidationError, match="sort"):
        rewrite("db.t", catalog=catalog, deletes_only=True, sort=True)
    with pytest.raises(ValidationError, match="min_input_files"):
        rewrite("db.t", catalog=catalog, deletes_only=True, min_input_files=0)


@pytest.mark.slow
def test_deletes_only_through_spark_submit(
    catalog: SqlCatalog, pyiceberg_catalog: Any, merged_on_read: Table
) -> None:
    """The job kind ``rewrite-position-deletes`` in a spark-submit process; a retry with
    the same commit key finds the commit and runs nothing."""
    from icewright.runners.settings import SparkSubmitSettings
    from icewright.runners.submit import SparkSubmitRunner

    conf = {"spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "2"}
    submit = SparkSubmitRunner(SparkSubmitSettings(master="local[1]", conf=conf))
    before = rows(pyiceberg_catalog, "db.t")
    result = rewrite("db.t", catalog=catalog, runner=submit, deletes_only=True, commit_key="k")
    assert result.committed and result.summary["added-position-delete-files"] == "3"
    assert rows(pyiceberg_catalog, "db.t") == before
    again = rewrite("db.t", catalog=catalog, runner=submit, deletes_only=True, commit_key="k")
    assert not again.committed and again.snapshot_id == result.snapshot_id
