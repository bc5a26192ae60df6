"""Sources of the example Dagster project (importable as ``orders_data:<function>``).

:data:`ORDERS_SOURCE` generates a day's order events in Spark SQL from the partition's
window (no input files, the same rows for the same day on every run), so it works
unchanged with local Spark and on a cluster. :func:`orders_by_day` aggregates
``sales.orders`` per day and region, reading it through icewright's Spark reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ORDERS = "sales.orders"
"""The table the Airflow example DAGs write too (the same embedded default catalog)."""
ORDERS_SCHEMA = (
    "order_id long not null, customer_id long not null, ts timestamptz not null, "
    "region string, amount decimal(12,2), status string"
)
ORDERS_PARTITIONING = "day(ts), bucket(16, customer_id)"
ROWS_PER_DAY = 20_000

# Ids never collide with the Airflow example's (day * 10,000,000 + i): Dagster's rows of a
# day start at day * 10,000,000 + 5,000,000.
ORDERS_SOURCE = (
    "sql:SELECT "
    "CAST(unix_seconds(TIMESTAMP '{start}') DIV 86400 * 10000000 + 5000000 + id AS BIGINT) "
    "AS order_id, "
    "CAST((id * 7919) % 5000 + 1 AS BIGINT) AS customer_id, "
    f"timestamp_seconds(unix_seconds(TIMESTAMP '{{start}}') + id * 86400 DIV {ROWS_PER_DAY}) "
    "AS ts, "
    "element_at(array('emea', 'amer', 'apac', 'latam', 'anz'), CAST(id % 5 + 1 AS INT)) "
    "AS region, "
    "CAST(((id * 37) % 100000) / 100 AS DECIMAL(12,2)) AS amount, "
    "'placed' AS status "
    f"FROM range({ROWS_PER_DAY} * datediff(DATE '{{end_date}}', DATE '{{start_date}}'))"
)
"""A day's (or a range's) generated order events; ``{start}`` and the dates are filled
per partition run."""

SCORES = "sales.customer_scores"
"""A score per customer, merged from a daily change feed (updates and deletes by key)."""
SCORES_SCHEMA = "customer_id long not null, score int, updated_on date"
# A partition day's feed: 600 changes of 500 customers (100 captured twice: the later
# seq wins), about ten of them deletes.
SCORES_FEED = (
    "sql:SELECT CAST(id % 500 AS BIGINT) AS customer_id, "
    "CAST((id * 31 + dayofyear(DATE '{start_date}')) % 100 AS INT) AS score, "
    "DATE '{start_date}' AS updated_on, "
    "IF(id % 50 = dayofyear(DATE '{start_date}') % 50, 'D', 'U') AS op, id AS seq "
    "FROM range(600)"
)

REVENUE = "sales.orders_by_day"
REVENUE_SCHEMA = "day date not null, region string, orders long not null, revenue decimal(22,2)"


def orders_by_day(spark: SparkSession) -> DataFrame:
    """Orders and revenue per day and region, over all of ``sales.orders``."""
    from pyspark.sql import functions as F  # noqa: N812 - the usual alias

    from icewright.catalog import default_catalog
    from icewright.spark.read import read_table

    orders = read_table(spark, default_catalog().load_table(ORDERS))
    return orders.groupBy(F.to_date("ts").alias("day"), "region").agg(
        F.count("*").alias("orders"), F.sum("amount").alias("revenue")
    )


REGION_DAY_SCHEMA = "day date not null, region string, orders long not null, revenue decimal(22,2)"


def orders_per_region(day: str) -> DataFrame:
    """Orders and revenue per region on ``day`` (``YYYY-MM-DD``, UTC): only that day of
    ``sales.orders`` is read."""
    import datetime as dt

    from pyspark.sql import functions as F  # noqa: N812 - the usual alias

    from icewright.catalog import default_catalog
    from icewright.spark.read import read_table
    from icewright.spark.session import local_session

    start = dt.date.fromisoformat(day)
    end = start + dt.timedelta(days=1)
    window = f"ts >= '{start}T00:00:00+00:00' AND ts < '{end}T00:00:00+00:00'"
    table = default_catalog().load_table(ORDERS)
    orders = read_table(local_session(), table, filter=window, columns=["ts", "region", "amount"])
    return orders.groupBy(F.to_date("ts").alias("day"), "region").agg(
        F.count("*").alias("orders"), F.sum("amount").alias("revenue")
    )


TOTALS = "sales.region_totals"
"""Orders and revenue per region, kept up to date incrementally by the snapshot sensor's
runs: each run merges in only what the new snapshots of ``sales.orders`` changed."""
TOTALS_SCHEMA = "region string, orders long not null, revenue decimal(22,2)"
# The run's snapshots as a changelog (appends, and the rows replaced days removed and
# added), folded into per-region deltas that the merge adds to the totals.
TOTALS_CHANGES = (
    "sql:SELECT region, sum(IF(_change_type = 'INSERT', 1, -1)) AS orders, "
    "CAST(sum(IF(_change_type = 'INSERT', amount, -amount)) AS DECIMAL(22,2)) AS revenue "
    "FROM `{snapshot_changelog}` GROUP BY region"
)

BIG_ORDERS = "sales.big_orders"
"""The orders of 900 or more, rebuilt from ``sales.orders`` by write-audit-publish."""
BIG_ORDERS_SCHEMA = "order_id long not null, region string, amount decimal(12,2)"
BIG_ORDERS_SOURCE = (
    "sql:SELECT order_id, region, amount FROM `iceberg:sales.orders` WHERE amount >= 900"
)
