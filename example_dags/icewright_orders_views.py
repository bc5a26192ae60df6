"""Publish views over ``sales.orders`` (embedded default catalog) whenever it changes.

Scheduled on the table's asset: every commit of the nightly pipeline
(``icewright_nightly_orders``) triggers a run, which gives the views a new version with
the schema Spark derives for their SQL now (a column added to the table shows up in
``sales.orders_enriched``). The first task creates the table when it does not exist yet,
so the DAG also runs on its own; publishing the same SQL again is harmless (an identical
version is reused, not added again).
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG
from orders_source import PARTITION_BY, SCHEMA, TABLE

from icewright.operators import (
    IcebergCreateTableOperator,
    IcebergPublishViewOperator,
    iceberg_asset,
)

ORDERS = iceberg_asset(TABLE)

DAILY_REVENUE_SQL = """\
SELECT CAST(ts AS DATE) AS day, region, COUNT(*) AS orders, SUM(amount) AS revenue
FROM sales.orders
GROUP BY CAST(ts AS DATE), region"""

CONFIRMED_SQL = """\
SELECT order_id, customer_id, ts, region, amount
FROM orders
WHERE status = 'confirmed'"""

with DAG(
    dag_id="icewright_orders_views",
    schedule=[ORDERS],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    tags=["icewright", "example"],
    doc_md=__doc__,
) as dag:
    ensure_table = IcebergCreateTableOperator(
        task_id="ensure_orders",
        table=TABLE,
        schema=SCHEMA,
        partition_by=PARTITION_BY,
        if_not_exists=True,
    )
    daily_revenue = IcebergPublishViewOperator(
        task_id="publish_daily_revenue",
        view="sales.daily_revenue",
        sql=DAILY_REVENUE_SQL,
        comment="Orders and revenue per day and region (published {{ ts }})",
        column_comments={"revenue": "sum of amount"},
        outlets=[iceberg_asset("sales.daily_revenue")],
    )
    confirmed = IcebergPublishViewOperator(
        task_id="publish_confirmed_orders",
        view="sales.confirmed_orders",
        # An unqualified name resolves in the view's namespace (sales).
        sql=CONFIRMED_SQL,
        outlets=[iceberg_asset("sales.confirmed_orders")],
    )
    ensure_table >> [daily_revenue, confirmed]
