"""Two appends whose source records its Spark job's OpenLineage settings: one on the
in-process session, one through ``spark-submit`` (local master)."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, IcebergCreateTableOperator

with DAG(
    dag_id="icewright_lineage_parent",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
) as dag:
    create = IcebergCreateTableOperator(
        task_id="create", table="ns.events", schema="id bigint, name string"
    )
    local = IcebergAppendOperator(
        task_id="append_local", table="ns.events", source="lineage_source:recorded"
    )
    submitted = IcebergAppendOperator(
        task_id="append_submitted",
        table="ns.events",
        source="lineage_source:recorded",
        spark_settings={"master": "local[1]"},
    )
    create >> local >> submitted
