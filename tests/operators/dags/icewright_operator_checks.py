"""Test DAGs for the operators (not examples): a named ``lake`` connection, small data."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG

from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergReplaceOperator,
)
from icewright.providers.assets import iceberg_asset

TABLE = "ns.events"
EVENTS = iceberg_asset(TABLE, "lake")
SOURCE = "sql:SELECT id, CAST(id * 10 AS STRING) AS name FROM range({{ params.rows }})"

with DAG(
    dag_id="icewright_operator_checks",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    params={"rows": 25},
) as checks:
    create = IcebergCreateTableOperator(
        task_id="create",
        iceberg_conn_id="lake",
        table=TABLE,
        schema="id long, name string",
        properties={"loaded.for": "{{ ds }}", "dag": "{{ dag.dag_id }}"},
        if_not_exists=True,
        outlets=[EVENTS],
    )
    append = IcebergAppendOperator(
        task_id="append",
        iceberg_conn_id="lake",
        table=TABLE,
        source=SOURCE,
        outlets=[EVENTS],
    )
    create >> append

with DAG(
    dag_id="icewright_bad_input",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
) as bad:
    setup = IcebergCreateTableOperator(
        task_id="setup",
        iceberg_conn_id="lake",
        table="ns.good",
        source="sql:SELECT id FROM range(5)",
        if_not_exists=True,
    )
    missing_connection = IcebergAppendOperator(
        task_id="missing_connection",
        iceberg_conn_id="no_such_conn",
        table="ns.good",
        source="sql:SELECT 1L AS id",
    )
    unknown_table = IcebergAppendOperator(
        task_id="unknown_table",
        iceberg_conn_id="lake",
        table="ns.no_such_table",
        source="sql:SELECT 1L AS id",
    )
    malformed_predicate = IcebergReplaceOperator(
        task_id="malformed_predicate",
        iceberg_conn_id="lake",
        table="ns.good",
        source="sql:SELECT 1L AS id",
        where="id >>> 3",
    )
    malformed_schema = IcebergCreateTableOperator(
        task_id="malformed_schema",
        iceberg_conn_id="lake",
        table="ns.bad_schema",
        schema="id lng, name",
    )
    outlet_of_another_table = IcebergAppendOperator(
        task_id="outlet_of_another_table",
        iceberg_conn_id="lake",
        table="ns.good",
        source="sql:SELECT 1L AS id",
        outlets=[iceberg_asset("ns.other", "lake")],
    )
    setup >> [
        missing_connection,
        unknown_table,
        malformed_predicate,
        malformed_schema,
        outlet_of_another_table,
    ]
