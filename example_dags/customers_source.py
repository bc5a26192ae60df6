"""A deterministic change feed of customers for the CDC example DAG, generated with Spark.

:func:`customer_changes` is a source for :class:`~icewright.operators.IcebergMergeOperator`
(``"customers_source:customer_changes"``): the changes captured on the running task's
interval day ``d`` (days since 2026-01-01), one row per change with the columns of
``sales.customers`` plus the feed's ``op`` (``I``, ``U``, ``D``) and ``seq`` (its order):

* ``NEW_PER_DAY`` new customers, ids ``d * 10_000 + i``;
* updates of ``UPDATED_PER_DAY`` customers of the day before, each captured twice (seq 1
  then seq 2, the second sets the tier ``gold``): the merge keeps the later one;
* ``DELETED_PER_DAY`` customers of the day before deleted (``op = 'D'``);
* ``CLOSED_PER_DAY`` customers of the day before moved to the tier ``closed``, which the
  DAG's delete task then removes.

The same day always gives the same rows, so a re-run merges exactly what the first did.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from orders_source import interval_day

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TABLE = "sales.customers"
"""The example table (embedded default catalog)."""
SCHEMA = (
    "customer_id long not null, name string, region string, tier string, updated_at timestamptz"
)
"""Its columns, as a column list."""

NEW_PER_DAY = 2_000
UPDATED_PER_DAY = 300
DELETED_PER_DAY = 50
CLOSED_PER_DAY = 10
_EPOCH = dt.date(2026, 1, 1)


def customer_changes(spark: SparkSession) -> DataFrame:
    """The change feed of the interval day (see the module docstring)."""
    from pyspark.sql import functions as F  # noqa: N812 - the usual alias

    day = interval_day()
    d = max((day - _EPOCH).days, 1)
    at = dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
    base, before = d * 10_000, (d - 1) * 10_000
    n_upd, n_del, n_closed = UPDATED_PER_DAY, DELETED_PER_DAY, CLOSED_PER_DAY
    ids = F.col("id")
    new = spark.range(NEW_PER_DAY).select(
        (ids + base).alias("customer_id"), F.lit("I").alias("op"), F.lit(1).alias("seq")
    )
    updated = spark.range(2 * n_upd).select(
        (ids % n_upd + before).alias("customer_id"),
        F.lit("U").alias("op"),
        (ids / n_upd + 1).cast("int").alias("seq"),
    )
    deleted = spark.range(n_del).select(
        (ids + before + n_upd).alias("customer_id"), F.lit("D").alias("op"), F.lit(1).alias("seq")
    )
    closed = spark.range(n_closed).select(
        (ids + before + n_upd + n_del).alias("customer_id"),
        F.lit("C").alias("op"),
        F.lit(1).alias("seq"),
    )
    feed = new.unionByName(updated).unionByName(deleted).unionByName(closed)
    regions = F.array(*[F.lit(r) for r in ("emea", "amer", "apac")])
    return feed.select(
        "customer_id",
        F.concat(F.lit("customer "), F.col("customer_id").cast("string")).alias("name"),
        F.element_at(regions, (F.col("customer_id") % 3 + 1).cast("int")).alias("region"),
        F.when(F.col("op") == "C", "closed")
        .when((F.col("op") == "U") & (F.col("seq") == 2), "gold")
        .otherwise("standard")
        .alias("tier"),
        F.lit(at).cast("timestamp").alias("updated_at"),
        F.when(F.col("op") == "C", "U").otherwise(F.col("op")).alias("op"),
        F.col("seq").cast("long").alias("seq"),
    )
