"""Example DAG (d) ``icewright_orders_views`` run by ``airflow dags test`` on a fresh home:
the table it ensures is read by pyiceberg, the views it publishes by icewright's catalog.

That a second run for the same date reuses each view's version (adds none) is asserted
by ``tests/test_readme.py``, whose main job runs this DAG twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.catalog import load_catalog
from tests.support.airflow import AirflowHome, dag_run_state, dags_test, explain

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "example_dags"
pytestmark = pytest.mark.slow


def test_views_dag_publishes_views(airflow_home: AirflowHome, tmp_path: Path) -> None:
    iw_home = tmp_path / "iw"
    env = airflow_home.environment(ICEWRIGHT_HOME=str(iw_home))
    done = dags_test("icewright_orders_views", DAGS, env=env, logical_date="2026-01-02")
    assert dag_run_state(done) == "success", explain(done)

    from pyiceberg.catalog.sql import SqlCatalog

    py = SqlCatalog(
        "icewright", uri=f"sqlite:///{iw_home / 'catalog.db'}", warehouse=str(iw_home / "warehouse")
    )
    assert py.load_table("sales.orders").scan().to_arrow().num_rows == 0

    catalog = load_catalog(
        {"type": "sql", "uri": f"sqlite:///{iw_home / 'catalog.db'}", "warehouse": "/unused"}
    )
    revenue = catalog.load_view("sales.daily_revenue").metadata
    columns = [f.name for f in revenue.schema().fields]
    assert columns == ["day", "region", "orders", "revenue"]
    assert revenue.schema().find_field("revenue").doc == "sum of amount"
    assert revenue.properties["comment"].startswith("Orders and revenue per day and region")
    confirmed = catalog.load_view("sales.confirmed_orders").metadata
    assert [f.name for f in confirmed.schema().fields] == [
        "order_id",
        "customer_id",
        "ts",
        "region",
        "amount",
    ]
    assert len(revenue.versions) == 1
