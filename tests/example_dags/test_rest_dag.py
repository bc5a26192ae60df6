"""Example DAG ``icewright_orders_views`` under ``airflow dags test`` with its default
connection pointing at a REST catalog (Iceberg Java's server handlers,
``tests/support/rest.py``) through OAuth2, on a fresh warehouse: the table it ensures is
created (empty) and the views it publishes land on the server, with their columns, docs
and comment.

That a second run for the same date reuses each view's version (adds none) is asserted
by ``tests/test_readme.py``, whose main job runs this DAG twice (on the embedded default,
after the nightly DAG, where pyiceberg reads the table)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.support.airflow import AirflowHome, connection_env, dag_run_state, dags_test, explain
from tests.support.rest import OAUTH_CREDENTIAL, RestServer

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "example_dags"
pytestmark = pytest.mark.slow


def test_views_dag_over_rest(
    airflow_home: AirflowHome,
    rest_server: RestServer,
    tmp_path: Path,
) -> None:
    warehouse = f"dag{uuid.uuid4().hex[:10]}"
    client_id, secret = OAUTH_CREDENTIAL.split(":")
    conn = connection_env(
        "icewright_default",
        "icewright",
        login=client_id,
        password=secret,
        extra={"catalog_type": "rest", "uri": rest_server.oauth_uri, "warehouse": warehouse},
    )
    env = airflow_home.environment(ICEWRIGHT_HOME=str(tmp_path / "iw"), **conn)
    done = dags_test("icewright_orders_views", DAGS, env=env, logical_date="2026-01-02")
    assert dag_run_state(done) == "success", explain(done)

    catalog = rest_server.catalog(warehouse=warehouse)
    orders = catalog.load_table("sales.orders").metadata
    assert orders.schema().find_field("amount")
    assert orders.current_snapshot() is None  # ensured (created empty), no rows yet
    revenue = catalog.load_view("sales.daily_revenue").metadata
    assert [f.name for f in revenue.schema().fields] == ["day", "region", "orders", "revenue"]
    assert revenue.schema().find_field("revenue").doc == "sum of amount"
    assert revenue.properties["comment"].startswith("Orders and revenue per day and region")
    assert len(revenue.versions) == 1
    confirmed = catalog.load_view("sales.confirmed_orders").metadata
    assert confirmed.current_version_id == 1
    assert [f.name for f in confirmed.schema().fields] == [
        "order_id",
        "customer_id",
        "ts",
        "region",
        "amount",
    ]
