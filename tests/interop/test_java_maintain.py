"""Iceberg Java reads a table after ``maintain`` (slow: local Spark for the compaction,
then the shared JVM): a neglected table of one-file appends, position deletes and an
orphan is compacted, its manifests rewritten, its snapshots expired and the orphan
removed; Java parses the metadata, lists the manifests and reads the rows icewright
expects, as do pyiceberg and DuckDB."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pyiceberg.table import StaticTable
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, maintain
from icewright.catalog import load_catalog
from icewright.commit.append import FastAppend
from icewright.commit.row_delta import RowDelta
from icewright.commit.update import commit_updates
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import SCHEMA, duckdb_rows, one_file, position_delete_file, rows
from tests.support.java import IcebergJava

pytestmark = [pytest.mark.slow, pytest.mark.interop]


def test_java_reads_the_table_after_maintain(
    iceberg_java: IcebergJava, spark: SparkSession, tmp_path: Path
) -> None:
    catalog = load_catalog(
        {"type": "filesystem", "warehouse": str(tmp_path / "warehouse"), "name": "hadoop"}
    )
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.kept",
        SCHEMA,
        build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")]),
        properties={
            "history.expire.max-snapshot-age-ms": "1000",
            "commit.manifest-merge.enabled": "false",
        },
    )
    files = [
        one_file(table, rows(3, day=1 + n % 3, region=("eu", "us")[n % 2], start=3 * n))
        for n in range(24)
    ]
    table = commit_updates(table, [FastAppend(table, [f]) for f in files]).table
    delta = RowDelta(table)
    for f in files[:4]:
        delta.add_deletes(position_delete_file(table, f, [0]))
    table = delta.commit().table
    orphan = Path(table.location) / "data" / "orphan.parquet"
    orphan.write_bytes(b"x")
    old = time.time() - 4 * 86_400
    os.utime(orphan, (old, old))
    expected = sorted(set(range(72)) - {0, 3, 6, 9})
    time.sleep(1.1)  # past the table's one-second retention

    done = maintain(table, runner=LocalRunner(spark))

    assert not done.failed, done.to_document()
    assert [s.name for s in done.steps if s.changed] == [
        "compaction",
        "rewrite_manifests",
        "expire",
        "remove_orphans",
    ]
    assert not orphan.exists()
    location = catalog.load_table("db.kept").metadata_location
    with iceberg_java.batch() as batch:
        parsed = batch.parse_table_metadata(location)
        manifests = batch.table_manifests(location)
        scan = batch.scan(location)
    # the compaction's and the manifest rewrite's snapshots are younger than the retention
    kept = catalog.load_table("db.kept").metadata.snapshots
    assert len(parsed.value["snapshots"]) == len(kept) <= 2
    live = [
        e for m in manifests.value["manifests"] for e in m["entries"] if e["status"] != "deleted"
    ]
    assert {e["content"] for e in live} == {"data"}  # the position deletes went
    result = scan.value
    assert sorted(r[result.columns.index("id")] for r in result.rows) == expected
    py = StaticTable.from_metadata(location).scan().to_arrow()["id"].to_pylist()
    assert sorted(py) == expected
    assert [r[0] for r in duckdb_rows(location)] == expected
    # again: at most the expiry of what has aged past the one-second retention since
    again = maintain("db.kept", catalog=catalog, runner=LocalRunner(spark))
    assert [s.name for s in again.steps if s.changed] in ([], ["expire"])
