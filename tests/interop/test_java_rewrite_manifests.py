"""Manifest rewriting against Iceberg Java's ``rewrite_manifests`` procedure.

Two tables, each copied before the rewrite so that both engines start from the same
snapshots: one icewright wrote (appends over two partitions, a position delete, a
deleted file), one Iceberg Java wrote (inserts and a merge-on-read DELETE). icewright
rewrites one copy, Java's procedure the other; Iceberg Java then reads both tables'
manifests, and their live entries must be the same set (same files, snapshot ids, data
and file sequence numbers). Iceberg Java, pyiceberg and DuckDB read the same rows from
icewright's result.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import StaticTable

from icewright.actions import rewrite_manifests
from icewright.catalog import Catalog, Table, load_catalog
from icewright.commit.append import fast_append
from icewright.commit.delete import delete_files
from icewright.commit.row_delta import RowDelta
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import SCHEMA, duckdb_rows, one_file, position_delete_file, rows
from tests.support.java import IcebergJava, step_insert, step_sql

pytestmark = [pytest.mark.slow, pytest.mark.interop]

Entry = tuple[str, str, int, int, int | None]


def _catalog(warehouse: Path) -> Catalog:
    return load_catalog({"type": "filesystem", "warehouse": str(warehouse), "name": "hadoop"})


def _live(manifests: dict[str, Any]) -> set[Entry]:
    """(path, content, snapshot id, data and file sequence numbers) of every live entry
    of a ``table_manifests`` answer."""
    return {
        (
            e["file_path"].removeprefix("file:"),
            e["content"],
            e["snapshot_id"],
            e["data_sequence_number"],
            e["file_sequence_number"],
        )
        for m in manifests["manifests"]
        for e in m["entries"]
        if e["status"] != "deleted"
    }


def _data_manifests(manifests: dict[str, Any]) -> int:
    return sum(1 for m in manifests["manifests"] if m["content"] == "data")


def _next_version(table: Table) -> Path:
    """Where a Hadoop table's next metadata file goes (``v<N+1>.metadata.json``)."""
    current = Path(table.metadata_location.removeprefix("file:"))
    n = int(current.name.split(".")[0].removeprefix("v"))
    return current.with_name(f"v{n + 1}.metadata.json")


def _java_rewrites(
    iceberg_java: IcebergJava, warehouse: Path, name: str, ours: Table
) -> tuple[dict[str, Any], dict[str, Any], list[int], list[Any]]:
    """Java's procedure on ``db.<name>``; then Java reads both tables' manifests and scans
    icewright's. Returns (Java's manifests, icewright's manifests, ids Java read from
    icewright's table, the procedure's result row)."""
    theirs = _next_version(_catalog(warehouse).load_table(f"db.{name}"))
    call = f"CALL {{catalog}}.system.rewrite_manifests(table => 'db.{name}')"
    with iceberg_java.batch() as batch:
        peer = batch.write_table(warehouse, f"db.peer_{name}", "id bigint", steps=[step_sql(call)])
        java = batch.table_manifests(theirs)
        mine = batch.table_manifests(ours.metadata_location)
        scan = batch.scan(ours.metadata_location)
    result = scan.value
    ids = sorted(r[result.columns.index("id")] for r in result.rows)
    return java.value, mine.value, ids, peer.value["step_results"][0]["rows"][0]


def test_icewright_written_table(iceberg_java: IcebergJava, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    catalog = _catalog(warehouse)
    catalog.create_namespace("db")
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
    table = catalog.create_table(
        "db.ice", SCHEMA, spec, properties={"commit.manifest.target-size-bytes": "6000"}
    )
    files = []
    for n in range(6):
        f = one_file(table, rows(3, 1 + n % 3, ("eu", "us")[n % 2], 10 * n))
        files.append(f)
        table = fast_append(table, [f]).table
    table = RowDelta(table).add_deletes(position_delete_file(table, files[0], [1])).commit().table
    table = delete_files(table, paths=[files[3].file_path]).table
    table = fast_append(table, [one_file(table, rows(2, 2, "eu", 500))]).table
    shutil.copytree(warehouse / "db" / "ice", warehouse / "db" / "java")
    expected = sorted(
        {10 * n + i for n in range(6) for i in range(3)} - {1, 30, 31, 32} | {500, 501}
    )

    done = rewrite_manifests(table, distributed=False)

    assert done.committed and done.manifests_replaced == 7 and done.manifests_created > 1
    ours = table.refresh()
    java, mine, java_ids, row = _java_rewrites(iceberg_java, warehouse, "java", ours)
    assert _live(mine) == _live(java)
    assert len(_live(mine)) == 7  # six data files less one deleted, one more, a delete file
    assert int(row[0]) == 7  # Java rewrote the seven data manifests too
    assert _data_manifests(mine) == done.manifests_created
    assert java_ids == expected
    assert (
        sorted(
            StaticTable.from_metadata(ours.metadata_location).scan().to_arrow()["id"].to_pylist()
        )
        == expected
    )
    assert [r[0] for r in duckdb_rows(ours.metadata_location)] == expected


def test_java_written_table(iceberg_java: IcebergJava, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    props = {"format-version": "2", "write.delete.mode": "merge-on-read"}
    steps = [
        step_insert([[10 * k + i, ("eu", "us", "ap")[i % 3]] for i in range(6)]) for k in range(5)
    ]
    steps.append(step_sql("DELETE FROM {table} WHERE id IN (1, 12)"))
    written = iceberg_java.write_table(
        warehouse,
        "db.jw",
        "id bigint, region string",
        partitioned_by=["region"],
        properties=props,
        steps=steps,
    )
    assert written["metadata_location"]
    shutil.copytree(warehouse / "db" / "jw", warehouse / "db" / "jw_java")
    table = _catalog(warehouse).load_table("db.jw")
    expected = sorted({10 * k + i for k in range(5) for i in range(6)} - {1, 12})

    done = rewrite_manifests(table, distributed=False)

    assert done.committed and done.manifests_replaced == 5
    ours = table.refresh()
    java, mine, java_ids, _ = _java_rewrites(iceberg_java, warehouse, "jw_java", ours)
    assert _live(mine) == _live(java)
    assert sum(1 for e in _live(mine) if e[1] == "position_deletes") >= 1
    assert _data_manifests(mine) == 1
    assert java_ids == expected
    ids = StaticTable.from_metadata(ours.metadata_location).scan().to_arrow()["id"].to_pylist()
    assert sorted(ids) == expected
