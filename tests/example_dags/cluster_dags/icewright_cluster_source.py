"""A test DAG (not an example): the example source ``orders_source:first_batch`` appended
through the ``spark`` connection, which the test points at a standalone cluster."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG
from airflow.timetables.interval import CronDataIntervalTimetable
from orders_source import PARTITION_BY, SCHEMA, TABLE

from icewright.operators import IcebergAppendOperator, IcebergCreateTableOperator

CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.memory": "512m",
    "spark.executor.memory": "512m",
    "spark.sql.shuffle.partitions": "2",
    # the executor of a small job spends its time starting (tests/actions/submit_support.py)
    "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}

with DAG(
    dag_id="icewright_cluster_source",
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
):
    create = IcebergCreateTableOperator(
        task_id="create_orders",
        table=TABLE,
        schema=SCHEMA,
        partition_by=PARTITION_BY,
        if_not_exists=True,
    )
    first = IcebergAppendOperator(
        task_id="append_first_batch",
        table=TABLE,
        source="orders_source:first_batch",
        spark_conn_id="spark",
        spark_settings={"conf": CONF},
    )
    create >> first
