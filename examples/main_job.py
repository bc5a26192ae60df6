"""The main job, on the embedded default: a catalog on SQLite and a local warehouse.

It generates a few days of order events, creates ``sales.orders`` (partitioned by
day and bucketed by customer), appends each day as its own snapshot, and prints what
the table holds. pyiceberg, opened on the same catalog database, reads the table back
as an independent check. Running it again appends again: each run is one more load.

Until the Spark and Airflow parts land, the data files are written in-process
(``icewright.arrow``); the commit is the same one every operator will make.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from decimal import Decimal

import pyarrow as pa

from icewright.arrow import write_data_files
from icewright.catalog import default_catalog, icewright_home
from icewright.commit.append import fast_append
from icewright.errors import TableAlreadyExists
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DecimalType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "customer_id", LongType(), required=True),
    NestedField(3, "ts", TimestamptzType(), required=True),
    NestedField(4, "region", StringType()),
    NestedField(5, "status", StringType()),
    NestedField(6, "quantity", IntegerType()),
    NestedField(7, "amount", DecimalType(12, 2)),
)
REGIONS = ["eu-west", "eu-north", "us-east", "us-west", "ap-south"]
STATUSES = ["placed", "paid", "shipped", "delivered", "returned"]


def order_events(day: dt.date, rows: int, first_id: int, seed: int) -> pa.Table:
    """A day of realistic-looking order events."""
    rng = random.Random(seed)
    start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    return pa.table(
        {
            "order_id": pa.array(range(first_id, first_id + rows), pa.int64()),
            "customer_id": pa.array([rng.randrange(1, 50_000) for _ in range(rows)], pa.int64()),
            "ts": pa.array(
                [start + dt.timedelta(seconds=rng.randrange(86_400)) for _ in range(rows)],
                pa.timestamp("us", tz="UTC"),
            ),
            "region": [rng.choice(REGIONS) for _ in range(rows)],
            "status": [rng.choice(STATUSES) for _ in range(rows)],
            "quantity": pa.array([rng.randrange(1, 10) for _ in range(rows)], pa.int32()),
            "amount": pa.array(
                [Decimal(rng.randrange(100, 100_000)).scaleb(-2) for _ in range(rows)],
                pa.decimal128(12, 2),
            ),
        }
    )


def main() -> None:
    started = time.perf_counter()
    catalog = default_catalog()
    print(f"catalog: embedded default at {icewright_home()}")
    if not catalog.namespace_exists("sales"):
        catalog.create_namespace("sales")
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "customer_id", 16)])
    try:
        table = catalog.create_table("sales.orders", SCHEMA, spec)
        print("created sales.orders (partitioned by day(ts), bucket(16, customer_id))")
    except TableAlreadyExists:
        table = catalog.load_table("sales.orders")
        print("sales.orders exists: appending another load")

    run = len(table.metadata.snapshots)
    first_day = dt.date(2026, 11, 1) + dt.timedelta(days=3 * (run // 3))
    rows_per_day = 100_000
    for offset in range(3):
        day = first_day + dt.timedelta(days=offset)
        t0 = time.perf_counter()
        data = order_events(
            day, rows_per_day, first_id=(run + offset) * rows_per_day, seed=run + offset
        )
        files = write_data_files(table.io, table.metadata, data)
        t1 = time.perf_counter()
        result = fast_append(table, files, commit_key=f"main-job/{day.isoformat()}/{run}")
        t2 = time.perf_counter()
        table = result.table
        print(
            f"appended {day}: {len(files)} files, {rows_per_day} rows, snapshot "
            f"{result.snapshot_id} (write {t1 - t0:.2f}s, commit {t2 - t1:.3f}s)"
        )

    snapshot = table.metadata.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    summary = snapshot.summary
    print()
    print(
        f"sales.orders now: {len(table.metadata.snapshots)} snapshots, "
        f"{summary['total-data-files']} data files, {summary['total-records']} rows"
    )
    print(f"metadata: {table.metadata_location}")

    from pyiceberg.catalog.sql import SqlCatalog

    peer = SqlCatalog(
        catalog.name,
        uri=f"sqlite:///{icewright_home() / 'catalog.db'}",
        warehouse=str(icewright_home() / "warehouse"),
    )
    counted = peer.load_table("sales.orders").scan().to_arrow().num_rows
    print(f"pyiceberg reads {counted} rows through the same catalog")
    if counted != int(summary["total-records"]):
        raise SystemExit("pyiceberg disagrees with the snapshot summary")
    print(f"done in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
