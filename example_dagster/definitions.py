"""The example Dagster project: ``sales.orders`` written by Spark, a daily aggregate, a
view, checks, maintenance and a snapshot sensor, on the embedded default catalog
(``$ICEWRIGHT_HOME``, the same tables the Airflow example DAGs write).

* ``sales/orders``: daily partitions from 2026-11-01; a partition's run writes that day's
  generated events and replaces exactly that day in the table (re-materializing a day,
  e.g. a late correction, replaces it again; a backfill of a range is one commit).
* ``sales/orders_by_day``: orders and revenue per day and region (replaced as a whole).
* ``sales/revenue_by_region``: an Iceberg view over it.
* ``sales/region_day`` and ``sales/top_region``: the I/O manager. ``sales/region_day``
  returns a day's orders per region as a Spark DataFrame, which
  :class:`~icewright.dagster.IcebergIOManager` commits (replacing that day of
  ``sales.region_day``); ``sales/top_region`` takes it as an input and gets that day's
  ``region`` and ``revenue`` columns only, as an Arrow table.
* ``sales/customer_scores``: a day's change feed of customer scores merged by key
  (merge-on-read; repeated keys deduplicated by their sequence, deletes applied).
* ``sales/region_totals``: orders and revenue per region, updated incrementally: the
  sensor's run merges in the changelog of exactly the snapshots it announced
  (``{snapshot_changelog}`` in the source), never a scan of the whole table.
* ``sales/big_orders``: write-audit-publish. ``sales/big_orders_staged`` writes the
  orders of 900 or more to the branch ``audit`` of ``sales.big_orders``; blocking checks
  read the branch (rows present, no amount under 900); only then does
  ``sales/big_orders`` publish the branch to ``main``.
* a freshness policy on ``sales/orders``, and checks: small files, snapshot count, schema,
  row change.
* ``iceberg_maintenance``: rewrite, expire and orphan removal of both tables, daily.
* ``orders_sensor``: each new snapshot of ``sales.orders``, whoever committed it (this
  project, the Airflow DAGs, the ``icewright`` command), start one ``refresh_revenue``
  run per tick (its tags name the snapshots' range for ``sales/region_totals``).

Try it::

    dagster definitions validate -f example_dagster/definitions.py
    dagster asset materialize -f example_dagster/definitions.py \\
        --select 'sales/orders' --partition 2026-11-21
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import dagster as dg
import pyarrow as pa
from pyspark.sql import DataFrame

# The sources module next to this file (``orders_data:orders_by_day`` is imported by the
# Spark job by name), however Dagster was started (-f, -m, a workspace).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from orders_data import (
    BIG_ORDERS,
    BIG_ORDERS_SCHEMA,
    BIG_ORDERS_SOURCE,
    ORDERS,
    ORDERS_PARTITIONING,
    ORDERS_SCHEMA,
    ORDERS_SOURCE,
    REGION_DAY_SCHEMA,
    REVENUE,
    REVENUE_SCHEMA,
    SCORES,
    SCORES_FEED,
    SCORES_SCHEMA,
    TOTALS,
    TOTALS_CHANGES,
    TOTALS_SCHEMA,
    orders_per_region,
)

from icewright.dagster import (
    IcebergIOManager,
    IcebergResource,
    iceberg_append_asset,
    iceberg_branch_checks,
    iceberg_io_asset,
    iceberg_maintenance_job,
    iceberg_maintenance_schedule,
    iceberg_merge_asset,
    iceberg_publish_asset,
    iceberg_replace_asset,
    iceberg_snapshot_sensor,
    iceberg_table_checks,
    iceberg_view_asset,
)

iceberg = IcebergResource()
DAYS = dg.DailyPartitionsDefinition(start_date="2026-11-01", timezone="UTC")

orders = iceberg_append_asset(
    ORDERS,
    ORDERS_SOURCE,
    partitions_def=DAYS,
    partition_column="ts",
    schema=ORDERS_SCHEMA,
    partition_by=ORDERS_PARTITIONING,
    properties={"write.target-file-size-bytes": str(64 * 1024 * 1024)},
    group_name="sales",
    retry_policy=dg.RetryPolicy(max_retries=2, delay=5),
    # Dagster's daemon shows the asset's freshness failing 36 h after its last materialization
    freshness_policy=dg.FreshnessPolicy.time_window(fail_window=dt.timedelta(hours=36)),
)

orders_by_day = iceberg_replace_asset(
    REVENUE,
    "orders_data:orders_by_day",
    schema=REVENUE_SCHEMA,
    partition_by="month(day)",
    deps=[orders],
    group_name="sales",
)

revenue_by_region = iceberg_view_asset(
    "sales.revenue_by_region",
    "SELECT region, sum(orders) AS orders, sum(revenue) AS revenue "
    "FROM orders_by_day GROUP BY region",
    deps=[orders_by_day],
    comment="Revenue per region over all days",
    group_name="sales",
)


@iceberg_io_asset(
    key_prefix="sales",
    schema=REGION_DAY_SCHEMA,
    partitions_def=DAYS,
    partition_column="day",
    deps=[orders],
    group_name="sales",
)
def region_day(context: dg.AssetExecutionContext) -> DataFrame:
    """A day's orders and revenue per region, committed by the I/O manager (a run
    replaces its day of ``sales.region_day``)."""
    return orders_per_region(context.partition_key)


@dg.asset(
    key_prefix="sales",
    partitions_def=DAYS,
    ins={"region_day": dg.AssetIn(key_prefix="sales", metadata={"columns": ["region", "revenue"]})},
    group_name="sales",
)
def top_region(context, region_day: pa.Table) -> dg.MaterializeResult:
    """The day's region with the most revenue (its input: that day's rows of
    ``sales.region_day``, two columns, loaded as Arrow by the I/O manager)."""
    best = max(region_day.to_pylist(), key=lambda row: row["revenue"])
    context.log.info(f"{context.partition_key}: {best['region']} ({best['revenue']})")
    return dg.MaterializeResult(
        metadata={"region": best["region"], "revenue": float(best["revenue"])}
    )


customer_scores = iceberg_merge_asset(
    SCORES,
    SCORES_FEED,
    on="customer_id",
    delete_when="op = 'D'",
    dedupe_by="seq",
    partitions_def=DAYS,
    schema=SCORES_SCHEMA,
    properties={"write.merge.mode": "merge-on-read"},
    group_name="sales",
)

region_totals = iceberg_merge_asset(
    TOTALS,
    TOTALS_CHANGES,
    on="region",
    update_set="orders = target.orders + orders, revenue = target.revenue + revenue",
    schema=TOTALS_SCHEMA,
    deps=[orders],
    group_name="incremental",
)

big_orders_staged = iceberg_replace_asset(
    BIG_ORDERS,
    BIG_ORDERS_SOURCE,
    branch="audit",
    reset_branch=True,
    schema=BIG_ORDERS_SCHEMA,
    key="sales/big_orders_staged",
    deps=[orders],
    group_name="sales",
)
big_orders_audit = iceberg_branch_checks(
    BIG_ORDERS,
    "audit",
    asset=big_orders_staged,
    min_rows=1,
    no_rows_where={"amounts_at_least_900": "amount IS NULL OR amount < 900"},
)
big_orders = iceberg_publish_asset(
    BIG_ORDERS, branch="audit", deps=[big_orders_staged], group_name="sales"
)

orders_checks = iceberg_table_checks(
    ORDERS,
    max_small_file_share=0.8,
    max_snapshots=200,
    schema=ORDERS_SCHEMA,
    max_row_change=10.0,
)

maintenance = iceberg_maintenance_job([ORDERS, REVENUE])
maintenance_schedule = iceberg_maintenance_schedule(maintenance, cron_schedule="0 3 * * *")

refresh_revenue = dg.define_asset_job(
    "refresh_revenue", selection=[orders_by_day, revenue_by_region, region_totals]
)
orders_sensor = iceberg_snapshot_sensor(
    [ORDERS],
    name="orders_sensor",
    target=refresh_revenue,
    one_run_per_poll=True,  # the aggregate refreshes from the whole table: one run a tick
    # A tick at each of the daemon's sensor checks (every 5 s): at 5 a check comes a hair
    # under 5 s after the last tick's start and is skipped, so it ticked every 10 s.
    minimum_interval_seconds=4,
)

defs = dg.Definitions(
    assets=[
        orders,
        orders_by_day,
        revenue_by_region,
        region_day,
        top_region,
        customer_scores,
        region_totals,
        big_orders_staged,
        big_orders,
    ],
    # The steps of a run share one process and so one local Spark session: Spark already
    # spreads each job over the cores, and a process per step would start a JVM for each
    # (the day's run took 68 s that way, 27 s so). With the resource's Spark on a
    # cluster (master=...), drop this line to run steps side by side.
    executor=dg.in_process_executor,
    asset_checks=[*orders_checks, *big_orders_audit],
    jobs=[refresh_revenue, maintenance],
    schedules=[maintenance_schedule],
    sensors=[orders_sensor],
    resources={"iceberg": iceberg, "io_manager": IcebergIOManager(iceberg=iceberg)},
)
