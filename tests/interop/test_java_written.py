"""The harness on a table Iceberg Java wrote: DuckDB and pyiceberg must read the same rows.

ONE Iceberg Java batch creates a partitioned Hadoop-catalog table with Spark SQL,
inserts twice (once from Python rows, once with SQL), expires every snapshot but
the last, and reads the table back by name. DuckDB (``iceberg_scan``) and
pyiceberg (``StaticTable.from_metadata``) then read the final metadata file.
"""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import StaticTable

from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import (
    IcebergJava,
    Pending,
    ScanResult,
    sorted_rows,
    step_expire_snapshots,
    step_insert,
    step_sql,
)

pytestmark = [pytest.mark.slow, pytest.mark.interop]

UTC = dt.UTC
COLUMNS = ("id", "category", "ts", "amount", "payload")
Row = tuple[int, str | None, dt.datetime | None, Decimal | None, bytes | None]
FIRST: list[Row] = [
    (1, "books", dt.datetime(2024, 5, 1, 8, 30, tzinfo=UTC), Decimal("10.50"), b"\x00\x01"),
    (2, "games", dt.datetime(2024, 5, 2, 23, 59, 59, 999999, tzinfo=UTC), Decimal("0.01"), None),
    (3, None, None, None, b""),
]
# The second insert is Spark SQL, so these rows are what that statement means.
SECOND_SQL = (
    "INSERT INTO {table} VALUES "
    "(4, 'books', TIMESTAMP '2024-05-01 12:00:00', 99.99, X'FF'), "
    "(5, 'toys', TIMESTAMP '2024-05-03 00:00:00', -1.25, NULL)"
)
SECOND: list[Row] = [
    (4, "books", dt.datetime(2024, 5, 1, 12, 0, tzinfo=UTC), Decimal("99.99"), b"\xff"),
    (5, "toys", dt.datetime(2024, 5, 3, 0, 0, tzinfo=UTC), Decimal("-1.25"), None),
]
EXPECTED = sorted_rows(FIRST + SECOND)


@pytest.fixture(scope="module")
def written(
    iceberg_java: IcebergJava, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Pending[Any]]:
    """The Java batch: write the table, then scan it through the catalog."""
    warehouse = tmp_path_factory.mktemp("java-warehouse")
    with iceberg_java.batch() as batch:
        answers: dict[str, Pending[Any]] = {
            "write": batch.write_table(
                warehouse,
                "db.events",
                "id bigint, category string, ts timestamp, amount decimal(10,2), payload binary",
                partitioned_by=["category", "days(ts)"],
                properties={"format-version": "2"},
                steps=[step_insert(FIRST), step_sql(SECOND_SQL), step_expire_snapshots(1)],
            ),
            "scan": batch.scan(warehouse=warehouse, table="db.events"),
        }
    return answers


def test_java_wrote_the_table(written: dict[str, Pending[Any]]) -> None:
    result = written["write"].value
    states = result["states"]
    # create, insert, insert, expire: the expire makes metadata but no snapshot.
    assert len(states) == 4
    assert states[0]["snapshot_id"] is None
    assert states[1]["snapshot_id"] != states[2]["snapshot_id"]
    assert states[3]["snapshot_id"] == states[2]["snapshot_id"]
    assert result["metadata_location"] == states[3]["metadata_location"]
    assert os.path.isfile(result["metadata_location"].removeprefix("file:"))
    assert result["step_results"][0] == {"inserted": len(FIRST)}
    # expire_snapshots reports what it deleted: the first snapshot's manifest list.
    expire = dict(
        zip(result["step_results"][2]["columns"], result["step_results"][2]["rows"][0], strict=True)
    )
    assert expire["deleted_manifest_lists_count"] == 1
    scan: ScanResult = written["scan"].value
    assert scan.columns == COLUMNS
    assert scan.rows == EXPECTED


def test_duckdb_reads_java_table(written: dict[str, Pending[Any]], duckdb_iceberg: Any) -> None:
    columns, rows = duckdb_scan_columns(
        written["write"].value["metadata_location"], connection=duckdb_iceberg
    )
    assert columns == COLUMNS
    assert rows == EXPECTED


def test_pyiceberg_reads_java_table(written: dict[str, Pending[Any]]) -> None:
    result = written["write"].value
    table = StaticTable.from_metadata(result["metadata_location"])
    arrow = table.scan().to_arrow()
    assert tuple(arrow.column_names) == COLUMNS
    assert sorted_rows([tuple(r[c] for c in COLUMNS) for r in arrow.to_pylist()]) == EXPECTED
    # Only the last snapshot survived expiry, and the table's spec is what Spark created.
    assert [s.snapshot_id for s in table.metadata.snapshots] == [result["states"][2]["snapshot_id"]]
    assert table.metadata.current_snapshot_id == result["states"][2]["snapshot_id"]
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [
        ("category", "identity"),
        ("ts_day", "day"),
    ]
    assert table.metadata.format_version == 2
    expired_list = Path(result["location"].removeprefix("file:")) / "metadata"
    assert len(list(expired_list.glob("snap-*.avro"))) == 1
