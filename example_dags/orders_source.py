"""Deterministic order events for the example DAGs, generated with Spark (no input files).

The callables are sources for the icewright operators (``"orders_source:first_batch"``):
each takes the SparkSession and returns a DataFrame of order events (``order_id``,
``customer_id``, ``ts``, ``region``, ``amount``, ``status``) for the running task's data
interval, read from the Airflow task context. The same interval always gives the same
rows, so a re-run writes exactly what the first run wrote.

* :func:`first_batch`: ``FIRST_BATCH_ROWS`` events spread evenly over the interval's day
  and the ``LATE_DAYS`` days before it (late-arriving events).
* :func:`second_batch`: ``SECOND_BATCH_ROWS`` more events over the interval's day and the
  day before (so that day's partitions get a second file, which the nightly compacts).
* :func:`corrected_day`: the interval day's events of both batches again, with status
  ``confirmed`` (what the nightly ``replace`` writes over that day).

The interval comes from Airflow's task context where the Spark driver runs in the task
(local Spark), else from the values the operator hands every Spark job
(:func:`icewright.runners.source_context.source_context`: a ``spark-submit`` job on a
cluster); outside a task (a test, a notebook) the day comes from ``$ORDERS_DAY``
(``YYYY-MM-DD``).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TABLE = "sales.orders"
"""The example table (embedded default catalog)."""
SCHEMA = (
    "order_id long not null, customer_id long not null, ts timestamptz not null, "
    "region string, amount decimal(12,2), status string"
)
"""Its columns, as a column list."""
PARTITION_BY = "day(ts), bucket(16, customer_id)"
"""Its partitioning."""

FIRST_BATCH_ROWS = 150_000
SECOND_BATCH_ROWS = 50_000
LATE_DAYS = 2
REGIONS = ("emea", "amer", "apac", "latam", "anz")
_DAY_US = 86_400_000_000


def interval_day() -> dt.date:
    """The day the running task loads: its data interval's start (UTC)."""
    from icewright.runners.source_context import source_context

    try:
        from airflow.sdk import get_current_context

        context = get_current_context()
    except Exception:  # not in the task's process: a spark-submit job, or no task at all
        handed = source_context()
        text = handed.get("data_interval_start") or handed.get("logical_date")
        if text:
            return dt.datetime.fromisoformat(text).astimezone(dt.UTC).date()
        text = os.environ.get("ORDERS_DAY")
        if not text:
            raise RuntimeError("not in an Airflow task and $ORDERS_DAY is not set") from None
        return dt.date.fromisoformat(text)
    start = context.get("data_interval_start") or context["logical_date"]
    return start.astimezone(dt.UTC).date()


def _epoch_us(day: dt.date) -> int:
    return (day - dt.date(1970, 1, 1)).days * _DAY_US


def _events(
    spark: SparkSession, rows: int, first_id: int, start_us: int, span_us: int
) -> DataFrame:
    """``rows`` events with ids ``first_id + i``, timestamps evenly over the span."""
    from pyspark.sql import functions as F  # noqa: N812 - the usual alias

    regions = F.array(*[F.lit(r) for r in REGIONS])
    step = span_us // rows
    return spark.range(rows).select(
        (F.col("id") + F.lit(first_id)).alias("order_id"),
        ((F.col("id") * 7919) % 5000 + 1).alias("customer_id"),
        F.timestamp_micros(F.lit(start_us) + F.col("id") * F.lit(step)).alias("ts"),
        F.element_at(regions, (F.col("id") % len(REGIONS) + 1).cast("int")).alias("region"),
        (((F.col("id") * 37) % 100_000) / 100).cast("decimal(12,2)").alias("amount"),
        F.lit("placed").alias("status"),
    )


def _base_id(day: dt.date) -> int:
    # Ids of different days never collide: 10 million per day.
    return (day - dt.date(1970, 1, 1)).days * 10_000_000


def first_batch(spark: SparkSession) -> DataFrame:
    """The interval day's first load, including late events of the days before."""
    day = interval_day()
    start = _epoch_us(day) - LATE_DAYS * _DAY_US
    return _events(spark, FIRST_BATCH_ROWS, _base_id(day), start, (LATE_DAYS + 1) * _DAY_US)


def second_batch(spark: SparkSession) -> DataFrame:
    """A second load: the interval day and the day before."""
    day = interval_day()
    first_id = _base_id(day) + FIRST_BATCH_ROWS
    return _events(spark, SECOND_BATCH_ROWS, first_id, _epoch_us(day) - _DAY_US, 2 * _DAY_US)


def corrected_day(spark: SparkSession) -> DataFrame:
    """Every event of the interval day from both batches, now ``confirmed``."""
    from pyspark.sql import functions as F  # noqa: N812 - the usual alias

    day = interval_day()
    start = F.timestamp_micros(F.lit(_epoch_us(day)))
    end = F.timestamp_micros(F.lit(_epoch_us(day) + _DAY_US))
    both = first_batch(spark).unionByName(second_batch(spark))
    return both.where((F.col("ts") >= start) & (F.col("ts") < end)).withColumn(
        "status", F.lit("confirmed")
    )
