"""A deferrable append whose first job runs long (``kill_source.rows``), for the test that
kills the deferred task under a deployment (tests/operators/test_kill_deployment.py)."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, IcebergCreateTableOperator

with DAG(
    dag_id="icewright_kill",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):
    create = IcebergCreateTableOperator(
        task_id="create",
        iceberg_conn_id="lake",
        table="ns.killed",
        schema="id long, note string",
        if_not_exists=True,
    )
    append = IcebergAppendOperator(
        task_id="append",
        iceberg_conn_id="lake",
        table="ns.killed",
        source="kill_source:rows",
        deferrable=True,
        poll_interval=1,
        spark_settings={
            "master": "local[1]",
            "conf": {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"},
        },
    )
    create >> append
