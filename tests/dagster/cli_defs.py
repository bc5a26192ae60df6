"""Every asset factory in one project, for the ``dagster`` command (test_cli.py).

The lake comes from the environment (``ICEWRIGHT_TEST_LAKE``, set by the test): the
command imports this module by name in processes of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from icewright.dagster import (
    IcebergResource,
    iceberg_append_asset,
    iceberg_expire_asset,
    iceberg_remove_orphans_asset,
    iceberg_replace_asset,
    iceberg_rewrite_asset,
    iceberg_table_asset,
    iceberg_view_asset,
)

TABLE = "sales.events"
SCHEMA = "id long not null, tag string"

table = iceberg_table_asset(TABLE, SCHEMA, key="sales/events_table")
load = iceberg_append_asset(
    TABLE, "sql:SELECT CAST(id AS BIGINT) AS id, 'x' AS tag FROM range(10)", deps=[table]
)
fix = iceberg_replace_asset(
    TABLE,
    "sql:SELECT CAST(100 + id AS BIGINT) AS id, 'y' AS tag FROM range(2)",
    where="id < 5",
    key="sales/events_fix",
    deps=[load],
)
rewrite = iceberg_rewrite_asset(TABLE, min_input_files=2, deps=[fix])
expire = iceberg_expire_asset(TABLE, older_than="0s", retain_last=1, deps=[rewrite])
orphans = iceberg_remove_orphans_asset(TABLE, older_than="0s", deps=[expire])
view = iceberg_view_asset("sales.recent", "SELECT id, tag FROM events WHERE id > 1", deps=[fix])

_lake = Path(os.environ.get("ICEWRIGHT_TEST_LAKE", "/nonexistent"))
defs = dg.Definitions(
    assets=[table, load, fix, rewrite, expire, orphans, view],
    resources={
        "iceberg": IcebergResource(
            catalog_uri=f"sqlite:///{_lake}/catalog.db", warehouse=str(_lake / "warehouse")
        )
    },
)
