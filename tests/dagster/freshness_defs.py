"""Assets with Dagster's freshness policies, for test_freshness.py: loaded as a code
location (the freshness daemon reads the policies from the workspace's asset graph).
The lake comes from ``ICEWRIGHT_TEST_LAKE``."""

from __future__ import annotations

import datetime as dt
import os

import dagster as dg

from icewright.dagster import IcebergResource, iceberg_append_asset, iceberg_table_asset

LAKE = os.environ.get("ICEWRIGHT_TEST_LAKE", "/nonexistent")

pages = iceberg_table_asset(
    "sales.pages",
    "page string not null, title string",
    freshness_policy=dg.FreshnessPolicy.time_window(
        fail_window=dt.timedelta(hours=2), warn_window=dt.timedelta(hours=1)
    ),
)
clicks = iceberg_append_asset(
    "sales.clicks",
    "sql:SELECT 'home' AS page",
    schema="page string",
    freshness_policy=dg.FreshnessPolicy.cron(
        deadline_cron="0 9 * * *", lower_bound_delta=dt.timedelta(hours=6)
    ),
)

defs = dg.Definitions(
    assets=[pages, clicks],
    resources={
        "iceberg": IcebergResource(
            catalog_uri=f"sqlite:///{LAKE}/catalog.db", warehouse=f"{LAKE}/warehouse"
        )
    },
)
