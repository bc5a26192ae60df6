"""Write benchmark: icewright's Spark write job against a plain Spark Parquet write.

The same DataFrame of a few million rows (built in Spark from ``spark.range``: an id,
a timestamp spread over 30 days, an amount, a name and a quantity) is written

* through icewright: :func:`icewright.spark.write.write_files` into a table partitioned
  by ``day(ts)`` and ``bucket(16, id)`` (exact Iceberg transforms, hash distribution
  by the partition values, sort within tasks, Parquet with field ids, metrics), then
  committed with ``fast_append`` to a table of a SQLite SQL catalog;
* through plain Spark: the same two partition columns computed with Spark's built-in
  functions (``to_date(ts)`` and ``pmod(hash(id), 16)``) and
  ``df.write.partitionBy(<day>, <bucket>).parquet(path)``, with the same codec (zstd).

Both run once on a small warm-up frame first, then once timed, in one session.

    uv run python bench/write.py [--rows 3000000]

The last line reads ``write: icewright/plain-spark=<ratio>`` (icewright's time over
plain Spark's; the target is at most 1.10).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.spark.session import local_session
from icewright.spark.write import write_files
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "amount", DoubleType()),
    NestedField(4, "name", StringType()),
    NestedField(5, "qty", IntegerType()),
)
START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
SPAN_US = 30 * 86_400_000_000  # the timestamps cover 30 days


def frame(spark: SparkSession, rows: int) -> DataFrame:
    """The benchmark DataFrame, generated in Spark."""
    step = max(SPAN_US // max(rows, 1), 1)
    return spark.range(rows).select(
        F.col("id"),
        F.timestamp_micros(F.lit(START_US) + F.col("id") * F.lit(step)).alias("ts"),
        (F.col("id") * F.lit(0.25)).alias("amount"),
        F.concat(F.lit("customer-"), (F.col("id") % 5000).cast("string")).alias("name"),
        (F.col("id") % 100).cast("int").alias("qty"),
    )


def icewright_write(spark: SparkSession, df: DataFrame, table: Table) -> int:
    """write_files + fast_append; returns the number of data files committed."""
    metadata = table.metadata
    result = write_files(
        spark,
        df,
        schema=metadata.schema(),
        spec=metadata.spec(),
        sort_order=metadata.sort_order(),
        properties=metadata.properties,
        location=metadata.location,
        io=table.io,
    )
    fast_append(table, result.data_files)
    return len(result.data_files)


def plain_write(df: DataFrame, path: str) -> None:
    """What a plain Spark job does for the same layout."""
    (
        df.withColumn("ts_day", F.to_date("ts"))
        .withColumn("id_bucket", F.pmod(F.hash("id"), F.lit(16)))
        .write.option("compression", "zstd")
        .partitionBy("ts_day", "id_bucket")
        .parquet(path)
    )


def count_parquet(path: Path) -> int:
    return sum(1 for _ in path.rglob("*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=3_000_000, help="rows to write")
    parser.add_argument("--warmup-rows", type=int, default=200_000)
    args = parser.parse_args()

    spark = local_session(**{"spark.driver.memory": "2g"})
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="icewright-bench-write-"))
    try:
        catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{work}/catalog.db", warehouse=str(work / "warehouse")
        )
        catalog.create_namespace("bench")
        spec = build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "id", 16)])

        def run(name: str, rows: int) -> tuple[float, float, int, int]:
            table = catalog.create_table(f"bench.{name}", SCHEMA, spec)
            df = frame(spark, rows)
            start = time.perf_counter()
            files = icewright_write(spark, df, table)
            ice = time.perf_counter() - start
            plain_dir = work / f"plain-{name}"
            start = time.perf_counter()
            plain_write(df, str(plain_dir))
            plain = time.perf_counter() - start
            return ice, plain, files, count_parquet(plain_dir)

        run("warmup", args.warmup_rows)
        ice, plain, ice_files, plain_files = run("timed", args.rows)
        print(f"rows: {args.rows:,} partitioned by day(ts), bucket(16, id); codec zstd")
        print(f"icewright write_files + fast_append: {ice:8.2f} s  ({ice_files} data files)")
        print(f"plain Spark partitionBy().parquet(): {plain:8.2f} s  ({plain_files} files)")
        print(f"write: icewright/plain-spark={ice / plain:.2f}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
