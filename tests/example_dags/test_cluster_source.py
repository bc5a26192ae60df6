"""An example DAG source on the standalone cluster (issue 17 item 5a): the unchanged
``example_dags/orders_source.py`` (it reads the task's data interval) runs in a
``spark-submit`` driver, not in the task, and still loads the interval's day: the
operator hands the interval to the job (:mod:`icewright.runners.source_context`) and
sends the source's module with it (``--py-files``)."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import pytest

from tests.actions.submit_support import Cluster
from tests.support.airflow import (
    AirflowHome,
    connection_env,
    dag_run_state,
    dags_test,
    explain,
)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "example_dags"))
import orders_source  # noqa: E402

pytestmark = pytest.mark.slow


def test_example_source_runs_on_the_cluster(
    airflow_home: AirflowHome, spark_cluster: Cluster, tmp_path: Path
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    dags = tmp_path / "dags"
    dags.mkdir()
    shutil.copy(REPO / "example_dags" / "orders_source.py", dags)  # as shipped
    shutil.copy(Path(__file__).parent / "cluster_dags" / "icewright_cluster_source.py", dags)
    host, port = spark_cluster.master_url.rsplit(":", 1)
    iw = tmp_path / "iw"
    env = airflow_home.environment(
        ICEWRIGHT_HOME=str(iw),
        **connection_env("spark", "spark", host=host, port=int(port)),
    )
    before = spark_cluster.app_ids()
    done = dags_test("icewright_cluster_source", dags, env=env, logical_date="2026-01-02")
    assert dag_run_state(done) == "success", explain(done)
    assert len(spark_cluster.app_ids() - before) == 1  # the append ran on the cluster

    catalog = SqlCatalog(
        "icewright", uri=f"sqlite:///{iw / 'catalog.db'}", warehouse=str(iw / "warehouse")
    )
    rows = catalog.load_table("sales.orders").scan().to_arrow()
    assert rows.num_rows == orders_source.FIRST_BATCH_ROWS
    # The interval of logical date 2026-01-02 (@daily) starts 2026-01-01: its events and
    # the late ones of the two days before.
    days = {ts.astimezone(dt.UTC).date() for ts in rows.column("ts").to_pylist()}
    assert days == {dt.date(2025, 12, 30), dt.date(2025, 12, 31), dt.date(2026, 1, 1)}
    ids = rows.column("order_id").to_pylist()
    assert min(ids) == (dt.date(2026, 1, 1) - dt.date(1970, 1, 1)).days * 10_000_000
