"""From trigger to incremental job under a real deployment (issue 29): api-server,
scheduler (LocalExecutor), dag-processor and triggerer run the example
``icewright_orders_downstream_event``; each commit made outside Airflow starts one run,
and that run reads exactly the rows of the new snapshot (its ``triggering_source``
range), which it adds per region to ``sales.orders_per_region``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sensors.support import REPO, TABLE, append, make_table, sql_catalog
from tests.support.airflow import AirflowHome, make_airflow_home
from tests.support.deployment import Deployment

pytestmark = pytest.mark.slow

DAG_ID = "icewright_orders_downstream_event"
ASSET_URI = "iceberg://icewright_default/sales/orders"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Deployment, Path]]:
    root = tmp_path_factory.mktemp("incremental")
    home: AirflowHome = make_airflow_home(root / "airflow")
    iw = root / "iw"
    make_table(sql_catalog(iw))
    append(sql_catalog(iw), 4)  # rows before the watcher: never read by a run
    dags = root / "dags"
    dags.mkdir()
    shutil.copyfile(REPO / "example_dags" / f"{DAG_ID}.py", dags / f"{DAG_ID}.py")
    d = Deployment(
        home,
        {
            "ICEWRIGHT_HOME": str(iw),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__ICEWRIGHT__WATCHER_POLL_INTERVAL": "1",
            "PYTHONPATH": f"{REPO / 'src'}:{REPO}",
        },
    )
    d.start()
    try:
        d.wait_parsed({DAG_ID})
        d.wait_for("the watcher's first watermark", lambda: _watermark(d) is not None)
        yield d, iw
    finally:
        d.stop(kill=True)


def _watermark(d: Deployment) -> int | None:
    rows = d.query(
        "select s.value from asset_state_store s join asset a on a.id = s.asset_id "
        "where a.uri = ? and s.key like 'icewright.snapshot-watermark.%'",
        ASSET_URI,
    )
    if not rows:
        return None
    return (json.loads(rows[0][0]).get("watermark") or {}).get("snapshot_id")


def _finished_runs(d: Deployment) -> list[tuple[str, str]]:
    return d.query(
        "select run_id, state from dag_run where dag_id = ? and state in ('success', 'failed') "
        "order by id",
        DAG_ID,
    )


def _pyiceberg(iw: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    return PySqlCatalog(
        "icewright", uri=f"sqlite:///{iw}/catalog.db", warehouse=f"file://{iw}/warehouse"
    )


def _by_region(regions: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for region in regions:
        counts[region] = counts.get(region, 0) + 1
    return counts


def test_each_outside_commit_starts_one_run_that_reads_only_its_rows(
    deployment: tuple[Deployment, Path],
) -> None:
    d, iw = deployment
    expected: dict[str, int] = {}
    for n, (rows, start) in enumerate(((3, 100), (5, 200)), start=1):
        commit = append(sql_catalog(iw), rows, start=start)
        added = _pyiceberg(iw).load_table(TABLE).scan(snapshot_id=commit.snapshot_id)
        new = [r for r in added.to_arrow().to_pylist() if r["order_id"] >= start]
        for region, count in _by_region([r["region"] for r in new]).items():
            expected[region] = expected.get(region, 0) + count
        runs = d.wait_for(
            f"run {n} to finish", lambda n=n: len(_finished_runs(d)) >= n and _finished_runs(d)
        )
        assert [state for _, state in runs] == ["success"] * n, d.tails()
        # the task returns a dict: TaskFlow pushes each of its keys as an XCom
        (stored,) = d.query(
            "select value from xcom where dag_id = ? and task_id = 'count_new_orders' "
            "and run_id = ? and key = 'source'",
            DAG_ID,
            runs[-1][0],
        )
        source = json.loads(stored[0]) if isinstance(stored[0], str | bytes) else stored[0]
        metadata = sql_catalog(iw).load_table(TABLE).metadata
        snapshot = metadata.snapshot_by_id(commit.snapshot_id or 0)
        assert snapshot is not None
        parent = snapshot.parent_snapshot_id
        assert source == f"iceberg:{TABLE}@{parent}..{commit.snapshot_id}"
        per_region = _pyiceberg(iw).load_table("sales.orders_per_region")
        totals = per_region.scan().to_arrow().to_pylist()
        assert {t["region"]: t["orders"] for t in totals} == expected, d.tails()
