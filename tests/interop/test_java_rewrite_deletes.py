"""``rewrite --deletes-only`` on a table Iceberg Java wrote merge-on-read, beside Iceberg
Java's own ``rewrite_position_delete_files`` on an identical copy (slow: the shared JVM,
then local Spark).

Iceberg Java (Spark 3.5 + Iceberg 1.10) writes two identical tables partitioned by
region: two inserts (several data files per partition), then six ``DELETE``s with
``write.delete.granularity=partition`` (what Java wrote before 1.8: one position delete
file per partition and commit, naming rows of every file of the partition), then a
``DELETE`` of a whole partition's rows. icewright compacts the first table's delete files; Java
runs its procedure on the second. Iceberg Java, pyiceberg and DuckDB read the same rows
from icewright's table before and after, and the same as from Java's; fewer delete files
are live, none dangling, each scoped to a live data file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import StaticTable
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, rewrite
from icewright.actions.rewrite_deletes import table_delete_use
from icewright.catalog import load_catalog
from icewright.catalog.metadata_files import read_table_metadata
from icewright.io import load_file_io
from icewright.scan import plan_files
from icewright.scan.delete_files import live_delete_files
from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import IcebergJava, sorted_rows, step_insert, step_procedure, step_sql

pytestmark = [pytest.mark.slow, pytest.mark.interop]

COLUMNS = "id bigint, region string, amount double"
ROWS = [(i, "abc"[i % 3], float(i)) for i in range(120)]


def _steps() -> list[dict[str, Any]]:
    steps = [step_insert(ROWS[:60]), step_insert(ROWS[60:])]
    steps += [step_sql(f"DELETE FROM {{table}} WHERE id % 10 = {k}") for k in range(6)]
    steps.append(step_sql("DELETE FROM {table} WHERE region = 'c' AND id >= 0"))
    return steps


def _live_deletes(location: str) -> int:
    io = load_file_io(location)
    metadata = read_table_metadata(io, location)
    return len(live_delete_files(io, metadata.current_snapshot()))


def _readers(location: str, duck: Any) -> tuple[list[Any], list[Any]]:
    py = StaticTable.from_metadata(location).scan().to_arrow().to_pylist()
    _, duck_rows = duckdb_scan_columns(location, connection=duck)
    return sorted_rows([tuple(r.values()) for r in py]), duck_rows


def test_deletes_only_matches_java_rewrite_position_delete_files(
    spark: SparkSession, iceberg_java: IcebergJava, duckdb_iceberg: Any, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    properties = {
        "format-version": "2",
        "write.delete.mode": "merge-on-read",
        "write.delete.granularity": "partition",
    }
    with iceberg_java.batch() as java:
        ours = java.write_table(
            warehouse, "db.ice", COLUMNS, partitioned_by=["region"],
            properties=properties, steps=_steps(),
        )  # fmt: skip
        theirs = java.write_table(
            warehouse, "db.java", COLUMNS, partitioned_by=["region"], properties=properties,
            steps=[*_steps(), step_procedure("rewrite_position_delete_files")],
        )  # fmt: skip
    assert ours.ok, ours.error
    assert theirs.ok, theirs.error
    fs = load_catalog({"type": "filesystem", "warehouse": str(warehouse), "name": "hadoop"})
    table = fs.load_table("db.ice")
    before_location = table.metadata_location
    before_deletes = _live_deletes(before_location)
    before_dangling = len(table_delete_use(table).dangling())
    assert before_deletes >= 12

    result = rewrite("db.ice", catalog=fs, runner=LocalRunner(spark), deletes_only=True)

    assert result.committed and result.operation == "replace" and result.groups_rewritten >= 2
    table = fs.load_table("db.ice")
    after_location = table.metadata_location
    java_location = theirs.value["metadata_location"]
    with iceberg_java.batch() as java:
        java_before = java.scan(before_location)
        java_after = java.scan(after_location)
        java_theirs = java.scan(java_location)
    want = java_before.value.rows
    expected = [(i, r, a) for i, r, a in ROWS if i % 10 > 5 and r != "c"]
    assert want == sorted_rows(expected)
    assert java_after.value.rows == want
    assert java_theirs.value.rows == want
    for location in (before_location, after_location):
        py, duck = _readers(location, duckdb_iceberg)
        assert py == want and duck == want
    # fewer delete files, none dangling, each scoped to one live data file
    live = {t.file_path for t in plan_files(table)}
    new = live_delete_files(table.io, table.metadata.current_snapshot())
    assert table_delete_use(table).dangling() == []
    assert all(d.delete_file.referenced_data_file in live for d in new)
    with_deletes = {t.file_path for t in plan_files(table) if t.delete_files}
    assert len(new) == len(with_deletes) < before_deletes
    # Java writes one file per partition with deletes (a and b): at most ours
    java_deletes = _live_deletes(java_location)
    print(
        f"\nlive delete files: before {before_deletes} ({before_dangling} dangling), "
        f"icewright {len(new)}, Java {java_deletes}"
    )
    assert java_deletes <= len(new)
