"""The example Dagster project through the real ``dagster`` command and a real
``dagster-daemon``, on a fresh embedded default: validate, materialize everything for a
day, a single-run backfill of a range, then a commit made outside Dagster that the
daemon's sensor tick turns into a run; the tables read the same in pyiceberg, DuckDB and
Iceberg Java afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest

REPO = Path(__file__).resolve().parents[2]
DEFINITIONS = REPO / "example_dagster" / "definitions.py"
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.slow, pytest.mark.interop]


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A fresh icewright home and Dagster home, as the environment of the commands."""
    root = tmp_path_factory.mktemp("example_dagster")
    (root / "dagster").mkdir()
    # The daemon's run queue (Dagster's default QueuedRunCoordinator) looks for queued runs
    # every second instead of every five: the sensor's run starts sooner, nothing else
    # changes.
    (root / "dagster" / "dagster.yaml").write_text(
        "telemetry:\n  enabled: false\nrun_queue:\n  dequeue_interval_seconds: 1\n"
    )
    env = {
        **os.environ,
        "ICEWRIGHT_HOME": str(root),
        "DAGSTER_HOME": str(root / "dagster"),
        "PYSPARK_PYTHON": sys.executable,
        "TZ": "UTC",
    }
    yield env


def dagster(env: dict[str, str], *args: str, timeout: float = 600) -> str:
    """Run ``dagster <args>``; its output, asserting it succeeded."""
    done = subprocess.run(
        [str(BIN / "dagster"), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    return output


def catalog(env: dict[str, str]) -> Any:
    from icewright.catalog import SqlCatalog

    home = Path(env["ICEWRIGHT_HOME"])
    return SqlCatalog("icewright", f"sqlite:///{home / 'catalog.db'}", str(home / "warehouse"))


def test_example_with_the_dagster_command_and_daemon(
    homes: dict[str, str], duckdb_iceberg: Any, iceberg_java: Any
) -> None:
    env = homes
    assert "All code locations passed validation" in dagster(
        env, "definitions", "validate", "-f", str(DEFINITIONS)
    )

    # one day: the sales group (the partitioned orders, the aggregate, the view, the
    # audited big orders) and checks; sales/region_totals runs from the sensor only
    out = dagster(
        env,
        "asset",
        "materialize",
        "-f",
        str(DEFINITIONS),
        "--select",
        "group:sales",
        "--partition",
        "2026-11-21",
    )
    assert "RUN_SUCCESS" in out
    big = catalog(env).load_table("sales.big_orders")
    assert set(big.metadata.refs) == {"main"} and big.metadata.current_snapshot() is not None
    orders = catalog(env).load_table("sales.orders")
    assert orders.metadata.current_snapshot().summary["total-records"] == "20000"
    assert catalog(env).load_view("sales.revenue_by_region").metadata.current_version_id == 1
    # the I/O manager's asset: the day's Spark DataFrame, one row per region
    region_day = catalog(env).load_table("sales.region_day").metadata.current_snapshot()
    assert region_day.summary["total-records"] == "5"
    assert "top_region" in out

    # a single-run backfill of two days: one commit
    before = len(orders.metadata.snapshots)
    out = dagster(
        env,
        "asset",
        "materialize",
        "-f",
        str(DEFINITIONS),
        "--select",
        "sales/orders",
        "--partition-range",
        "2026-11-19...2026-11-20",
    )
    assert "RUN_SUCCESS" in out
    orders = orders.refresh()
    assert len(orders.metadata.snapshots) == before + 1
    assert orders.metadata.current_snapshot().summary["added-records"] == "40000"

    # the daemon's sensor: a commit made outside Dagster starts refresh_revenue
    dagster(env, "sensor", "start", "orders_sensor", "-f", str(DEFINITIONS))
    log = Path(env["ICEWRIGHT_HOME"]) / "daemon.log"
    with log.open("w") as out_file:
        daemon = subprocess.Popen(
            [str(BIN / "dagster-daemon"), "run", "-f", str(DEFINITIONS)],
            cwd=REPO,
            env=env,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        instance = _instance(env)
        # a tick that finished well: its cursor holds the table's head from before the outside
        # commit (a tick only started may read the table after it, and see nothing new)
        _wait(lambda: _good_sensor_ticks(instance) >= 1, log, "the sensor's first tick")
        snapshot_id = _commit_outside_dagster(env)
        run = _wait(lambda: _finished_run(instance), log, "the sensor's run", timeout=300)
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
    assert run.status == dg.DagsterRunStatus.SUCCESS, log.read_text()[-3000:]
    assert run.tags["dagster/run_key"] == f"sales.orders@{snapshot_id}"
    assert run.tags["icewright/snapshot_id"] == str(snapshot_id)
    revenue = catalog(env).load_table("sales.orders_by_day").metadata.current_snapshot()
    assert revenue.summary["operation"] == "overwrite"
    # the running totals merged the sensor's range: exactly the one outside order
    totals = catalog(env).load_table("sales.region_totals").metadata.current_snapshot()
    assert run.tags["icewright/source"].endswith(f"..{snapshot_id}")
    assert totals is not None and totals.summary["total-records"] == "1"
    events = instance.fetch_materializations(dg.AssetKey(["sales", "orders"]), limit=50)
    external = [e for e in events.records if e.run_id == ""]
    assert len(external) == 1  # the outside commit, reported by the sensor

    # the maintenance job, as its schedule would run it
    out = dagster(env, "job", "execute", "-f", str(DEFINITIONS), "-j", "iceberg_maintenance")
    assert "RUN_SUCCESS" in out
    assert "maintain_sales_orders" in out and "maintain_sales_orders_by_day" in out

    # every reader sees the same rows
    orders = catalog(env).load_table("sales.orders")
    from icewright.scan import plan_files

    expected = sum(task.data_file.record_count for task in plan_files(orders))
    assert expected == 60_001
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    home = Path(env["ICEWRIGHT_HOME"])
    py = PySqlCatalog(
        "icewright",
        uri=f"sqlite:///{home / 'catalog.db'}",
        warehouse=f"file://{home / 'warehouse'}",
    )
    arrow = py.load_table("sales.orders").scan().to_arrow()
    total = sum(arrow.column("amount").to_pylist())
    ids = arrow.column("order_id").to_pylist()
    assert len(ids) == expected and len(set(ids)) == expected
    path = orders.metadata_location.removeprefix("file://")
    summary = "SELECT count(*), sum(amount), count(DISTINCT order_id), max(ts) FROM "
    duck = duckdb_iceberg.execute(summary + f"iceberg_scan('{path}')").fetchone()
    java = iceberg_java.query(summary + "orders", {"orders": path}).rows[0]
    assert duck[:3] == (expected, total, expected)
    assert tuple(java[:3]) == (expected, total, expected)
    assert duck[3] == java[3] == max(arrow.column("ts").to_pylist())


def _instance(env: dict[str, str]) -> dg.DagsterInstance:
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]
    return dg.DagsterInstance.get()


def _good_sensor_ticks(instance: dg.DagsterInstance) -> int:
    states = instance.all_instigator_state()
    sensors = [s for s in states if s.instigator_name == "orders_sensor"]
    if not sensors:
        return 0
    state = sensors[0]
    ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id)
    return sum(1 for tick in ticks if tick.is_completed and not tick.is_failure)


def _finished_run(instance: dg.DagsterInstance) -> dg.DagsterRun | None:
    runs = instance.get_runs(filters=dg.RunsFilter(job_name="refresh_revenue"))
    done = [r for r in runs if r.is_finished]
    return done[0] if done else None


def _wait(check: Any, log: Path, what: str, timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")


def _commit_outside_dagster(env: dict[str, str]) -> int:
    """One order appended by icewright's own commit (as the command or Airflow would)."""
    import datetime as dt
    from decimal import Decimal

    from icewright.arrow import rows_to_arrow, write_data_files
    from icewright.commit import fast_append

    table = catalog(env).load_table("sales.orders")
    row = {
        "order_id": 1,
        "customer_id": 7,
        "ts": dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC),
        "region": "emea",
        "amount": Decimal("9.99"),
        "status": "placed",
    }
    data: pa.Table = rows_to_arrow(table.metadata.schema(), [row])
    files = write_data_files(table.io, table.metadata, data)
    return fast_append(table, files, commit_key="outside:1").snapshot_id
