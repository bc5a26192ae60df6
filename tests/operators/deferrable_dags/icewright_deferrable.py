"""Test DAGs for the deferrable operators (not examples): spark-submit in local[1], tiny
data. ``icewright_deferrable_rewrite``: ``ns.compact`` compacts fully, ``ns.broken`` has
a group whose job fails (the test removes one of its files). ``icewright_deferrable_merge``:
a merge-on-read merge whose job runs detached while the task defers."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG

from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergMergeOperator,
    IcebergRewriteDataFilesOperator,
)
from icewright.providers.assets import iceberg_asset

TABLE = "ns.deferred"
DEFERRED = iceberg_asset(TABLE, "lake")
SPARK = {
    "master": "local[1]",
    "conf": {
        "spark.driver.memory": "512m",
        "spark.sql.shuffle.partitions": "1",
        "spark.ui.enabled": "false",
    },
}

with DAG(
    dag_id="icewright_deferrable",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
) as deferrable:
    create = IcebergCreateTableOperator(
        task_id="create",
        iceberg_conn_id="lake",
        table=TABLE,
        schema="id long, name string",
        if_not_exists=True,
    )
    append = IcebergAppendOperator(
        task_id="append",
        iceberg_conn_id="lake",
        table=TABLE,
        source="sql:SELECT id, CAST(id * 10 AS STRING) AS name FROM range(7)",
        deferrable=True,
        poll_interval=2,
        # a history server: the task's link to its Spark application points there
        spark_settings={**SPARK, "history_url": "http://spark-history.example:18080"},
        outlets=[DEFERRED],
    )
    create >> append
    from_source = IcebergCreateTableOperator(
        task_id="create_from_source",
        iceberg_conn_id="lake",
        table="ns.created",
        source="sql:SELECT id, 'eu' AS region FROM range(4)",
        deferrable=True,
        poll_interval=2,
        spark_settings=SPARK,
    )
    append >> from_source

with DAG(
    dag_id="icewright_deferrable_rewrite",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):
    for table in ("ns.compact", "ns.broken"):
        IcebergRewriteDataFilesOperator(
            task_id=table.replace("ns.", "rewrite_"),
            iceberg_conn_id="lake",
            table=table,
            min_input_files=3,
            partial_progress_max_commits=3,
            deferrable=True,
            poll_interval=1,
            spark_settings=SPARK,
            retries=0,
        )

with DAG(
    dag_id="icewright_deferrable_merge",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):
    # ns.merged holds ids 0-5 (written by the test); the feed updates 1, deletes 2, adds 9
    IcebergMergeOperator(
        task_id="merge",
        iceberg_conn_id="lake",
        table="ns.merged",
        source=(
            "sql:SELECT * FROM VALUES (1L, 'one', 'U'), (2L, NULL, 'D'), (9L, 'nine', 'I') "
            "AS f(id, name, op)"
        ),
        on="id",
        delete_when="op = 'D'",
        write_mode="merge-on-read",
        deferrable=True,
        poll_interval=1,
        spark_settings=SPARK,
        retries=0,
    )
