"""The downstream example DAGs under real Airflow 3 (temporary AIRFLOW_HOME, SQLite).

* (c) ``icewright_orders_downstream_sensor`` under ``airflow dags test``, twice: the second
  run reports only the snapshot committed after the first (previous-run memory through
  real XComs);
* the sensor in reschedule and deferrable mode under ``airflow dags test``: each waits
  until the test commits the snapshot it filters for;
* (b) ``icewright_orders_downstream_event``: a real ``airflow triggerer`` runs the asset
  watcher's event trigger; it fires on a commit made by another process, the event lands
  in the metadata database as an asset event, a restarted triggerer does not fire again
  for it (the watermark is in the asset state store) and fires for the next commit.

Snapshots are committed with the commit engine (no Spark), so these tests need no data
pipeline: ``tests.sensors.support``.
"""

# The session fixture airflow_home is imported below, so test parameters "redefine" it:
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sensors.support import REPO, TABLE, append, compact, make_table, sql_catalog
from tests.support.airflow import (
    AIRFLOW_BIN,
    AirflowHome,
    airflow,
    dag_run_state,
    dags_test,
    explain,
    make_airflow_home,
    scheduler_loop,
)

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "example_dags"
SENSOR_DAGS = Path(__file__).parent / "sensor_dags"
ASSET_URI = "iceberg://icewright_default/sales/orders"


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute(sql, args).fetchall()


def xcom_values(
    home: AirflowHome, dag_id: str, task_id: str, key: str = "return_value"
) -> list[Any]:
    """The XComs of ``task_id`` over the DAG's runs, oldest run first."""
    rows = query(
        home.path / "airflow.db",
        "select x.value from xcom x join dag_run r on r.id = x.dag_run_id "
        "where x.dag_id = ? and x.task_id = ? and x.key = ? order by r.logical_date",
        dag_id,
        task_id,
        key,
    )
    return [json.loads(v) if isinstance(v, str | bytes) else v for (v,) in rows]


# --- (c) the sensor-based downstream DAG ------------------------------------------------------


def test_sensor_dag_reports_new_snapshots_since_its_previous_run(
    airflow_home: AirflowHome,
    tmp_path: Path,
) -> None:
    iw = tmp_path / "iw"
    catalog = sql_catalog(iw)
    make_table(catalog)
    first = append(catalog, 5, props={"batch": "1"})
    compact(catalog)
    second = append(catalog, 7, props={"batch": "2"})
    env = {"ICEWRIGHT_HOME": str(iw)}

    done = dags_test(
        "icewright_orders_downstream_sensor",
        EXAMPLES,
        env=airflow_home.environment(**env),
        logical_date="2026-01-02",
    )
    assert done.returncode == 0 and dag_run_state(done) == "success", explain(done)
    third = append(catalog, 11, props={"batch": "3"})
    again = dags_test(
        "icewright_orders_downstream_sensor",
        EXAMPLES,
        env=airflow_home.environment(**env),
        logical_date="2026-01-03",
    )
    assert again.returncode == 0 and dag_run_state(again) == "success", explain(again)

    reports = xcom_values(
        airflow_home, "icewright_orders_downstream_sensor", "summarize_new_orders"
    )
    assert len(reports) == 2
    # First run: no earlier run, every data-changing snapshot (the compaction is skipped).
    assert reports[0]["snapshot_ids"] == [first.snapshot_id, second.snapshot_id]
    assert reports[0]["operations"] == {"append": 2}
    assert reports[0]["added_records"] == 12
    # Second run: only what came after the head the first run saw.
    assert reports[1]["snapshot_ids"] == [third.snapshot_id]
    assert reports[1]["added_records"] == 11
    print(f"dags test wall times: {done.elapsed:.1f}s, {again.elapsed:.1f}s")  # type: ignore[attr-defined]


# --- the sensor's reschedule and deferrable modes ---------------------------------------------


def test_reschedule_and_deferrable_modes_wait_for_the_commit(
    airflow_home: AirflowHome,
    tmp_path: Path,
) -> None:
    iw = tmp_path / "iw"
    catalog = sql_catalog(iw)
    make_table(catalog)
    base = append(catalog, 1)
    env = airflow_home.environment(
        ICEWRIGHT_HOME=str(iw),
        AIRFLOW__CORE__DAGS_FOLDER=str(SENSOR_DAGS),
        PYTHONPATH=os.pathsep.join([str(SENSOR_DAGS), str(REPO / "src")]),
    )
    proc = subprocess.Popen(
        [
            str(AIRFLOW_BIN),
            "dags",
            "test",
            "icewright_test_sensor_modes",
            "-c",
            json.dumps({"after": str(base.snapshot_id)}),
        ],
        env=env,
        cwd=str(airflow_home.path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    committed: dict[str, int] = {}
    db = airflow_home.path / "airflow.db"

    def rescheduled() -> bool:
        rows = query(
            db,
            "select count(*) from task_reschedule r join task_instance t on t.id = r.ti_id "
            "where t.dag_id = 'icewright_test_sensor_modes' and t.task_id = 'rescheduled'",
        )
        return bool(rows and rows[0][0])

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "running trigger in line" in line and "2" not in committed:
                time.sleep(1.5)  # the trigger polls; nothing yet
                committed["2"] = append(catalog, 2, props={"batch": "2"}).snapshot_id

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    deadline = time.monotonic() + 600
    while "1" not in committed and time.monotonic() < deadline and proc.poll() is None:
        if rescheduled():
            committed["1"] = append(catalog, 3, props={"batch": "1"}).snapshot_id
        time.sleep(0.5)
    proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    thread.join(timeout=30)
    output = "".join(lines)
    tail = output[-6000:]
    assert proc.returncode == 0, tail
    assert "1" in committed and "2" in committed, tail
    assert "running trigger in line" in output  # it really deferred
    (first,) = xcom_values(airflow_home, "icewright_test_sensor_modes", "rescheduled")
    (second,) = xcom_values(airflow_home, "icewright_test_sensor_modes", "deferred")
    assert [s["snapshot_id"] for s in first] == [committed["1"]]
    assert [s["snapshot_id"] for s in second] == [committed["2"]]


# --- (b) the event-driven downstream DAG, with a real triggerer --------------------------------


class Triggerer:
    """``airflow triggerer`` in its own process group, logging to a file."""

    def __init__(self, env: dict[str, str], cwd: Path, log: Path) -> None:
        self.log = log
        self._out = log.open("w")
        self.proc = subprocess.Popen(
            [str(AIRFLOW_BIN), "triggerer", "--skip-serve-logs"],
            env=env,
            cwd=str(cwd),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self._out.close()


def wait_for(what: str, check: Any, timeout: float, triggerer: Triggerer | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if triggerer is not None and triggerer.proc.poll() is not None:
            break
        time.sleep(0.5)
    log = "" if triggerer is None else triggerer.text()[-5000:]
    raise AssertionError(f"timed out waiting for {what}\n{log}")


def append_elsewhere(iw: Path, rows: int, **props: str) -> int:
    """Commit from another process; its snapshot id."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.sensors.support",
            "append",
            f"sqlite:///{iw / 'catalog.db'}",
            TABLE,
            str(rows),
            *(f"{k}={v}" for k, v in props.items()),
        ],
        cwd=str(REPO),
        env={**os.environ, "ICEWRIGHT_HOME": str(iw)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


PRODUCER = """
import datetime as dt

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, iceberg_asset

with DAG(
    dag_id="icewright_test_producer",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):
    IcebergAppendOperator(
        task_id="append",
        table="sales.orders",
        source="sql:SELECT id AS order_id, 'eu' AS region FROM range(3)",
        outlets=[iceberg_asset("sales.orders")],
    )
"""


@pytest.fixture(scope="module")
def event_home_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[AirflowHome, dict[str, str], Path]]:
    """An Airflow home of its own (its triggerer runs every trigger in the database) with
    the event DAG registered, unpaused, and its asset watcher's trigger stored; set up once
    for the module, its metadata database kept as ``airflow.db.set-up`` for
    :func:`event_home`."""
    root = tmp_path_factory.mktemp("event_home")
    home = make_airflow_home(root / "airflow")
    iw = root / "iw"
    dags = root / "dags"
    dags.mkdir()
    # The example as shipped; its watcher polls every second (the deployment's setting).
    shutil.copyfile(
        EXAMPLES / "icewright_orders_downstream_event.py",
        dags / "icewright_orders_downstream_event.py",
    )
    # A producer: an icewright operator with the table's (plain) asset as outlet.
    (dags / "icewright_test_producer.py").write_text(PRODUCER)
    env = home.environment(
        ICEWRIGHT_HOME=str(iw),
        AIRFLOW__CORE__DAGS_FOLDER=str(dags),
        AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION="False",
        AIRFLOW__ICEWRIGHT__WATCHER_POLL_INTERVAL="1",
        PYTHONPATH=str(REPO / "src"),
    )
    # Parse the DAG; one scheduler loop marks its assets active; parsing again stores the
    # watcher's trigger (Airflow stores watchers only for active assets of unpaused DAGs).
    for step in ("reserialize", "schedule", "reserialize"):
        if step == "schedule":
            done = scheduler_loop(env)
        else:
            done = airflow("dags", "reserialize", env=env, timeout=600)
        assert done.returncode == 0, explain(done)
    shutil.copyfile(home.path / "airflow.db", home.path / "airflow.db.set-up")
    yield home, env, iw
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def event_home(
    event_home_once: tuple[AirflowHome, dict[str, str], Path],
) -> tuple[AirflowHome, dict[str, str], Path]:
    """:func:`event_home_once` as it was set up: its metadata database restored (no runs,
    asset events or watermarks of an earlier test) and an empty ICEWRIGHT_HOME."""
    home, env, iw = event_home_once
    for stale in home.path.glob("airflow.db*"):
        if stale.name != "airflow.db.set-up":
            stale.unlink()
    shutil.copyfile(home.path / "airflow.db.set-up", home.path / "airflow.db")
    shutil.rmtree(iw, ignore_errors=True)
    return home, env, iw


def test_event_dag_watcher_fires_once_per_commit_across_a_triggerer_restart(
    event_home: tuple[AirflowHome, dict[str, str], Path],
) -> None:
    home, env, iw = event_home
    db = home.path / "airflow.db"
    catalog = sql_catalog(iw)
    make_table(catalog)
    existing = append(catalog, 2)
    (trigger_row,) = query(db, "select classpath from trigger")
    assert trigger_row[0] == "icewright.providers.triggers.IcebergSnapshotEventTrigger"

    def watermark() -> dict[str, Any] | None:
        rows = query(
            db,
            "select s.value from asset_state_store s join asset a on a.id = s.asset_id "
            "where a.uri = ? and s.key like 'icewright.snapshot-watermark.%'",
            ASSET_URI,
        )
        return json.loads(rows[0][0]) if rows else None

    def watcher_events() -> list[dict[str, Any]]:
        rows = query(
            db,
            "select e.extra from asset_event e join asset a on a.id = e.asset_id "
            "where a.uri = ? order by e.id",
            ASSET_URI,
        )
        extras = [json.loads(extra) for (extra,) in rows]
        return [e for e in extras if e.get("from_trigger")]

    def ids(event: dict[str, Any]) -> list[int]:
        return [s["snapshot_id"] for s in event["payload"]["snapshots"]]

    first = Triggerer(env, home.path, home.path / "triggerer-1.log")
    try:
        state = wait_for("the watcher's first watermark", watermark, 300, first)
        assert state["watermark"]["snapshot_id"] == existing.snapshot_id  # start_from=latest
        a = append_elsewhere(iw, 3, batch="a")
        events = wait_for("an asset event", watcher_events, 120, first)
        assert [ids(e) for e in events] == [[a]]
        assert events[0]["payload"]["snapshots"][0]["summary"]["batch"] == "a"
        wait_for(
            "the watermark at a",
            lambda: (watermark() or {}).get("watermark", {}).get("snapshot_id") == a,
            60,
            first,
        )
        time.sleep(4)  # several more polls
        assert len(watcher_events()) == 1
    finally:
        first.stop()
    # The asset event queued the downstream DAG for the scheduler.
    queued = query(
        db,
        "select target_dag_id from asset_dag_run_queue",
    )
    assert ("icewright_orders_downstream_event",) in queued

    second = Triggerer(env, home.path, home.path / "triggerer-2.log")
    try:
        wait_for(
            "the restarted triggerer to run the watcher",
            lambda: "trigger ID" in second.text() and "starting" in second.text(),
            300,
            second,
        )
        time.sleep(6)  # several polls of the restarted watcher
        assert len(watcher_events()) == 1, "the restarted triggerer announced `a` again"
        b = append_elsewhere(iw, 4, batch="b")
        events = wait_for(
            "the next asset event",
            lambda: len(watcher_events()) == 2 and watcher_events(),
            120,
            second,
        )
        assert [ids(e) for e in events] == [[a], [b]]
    finally:
        second.stop()


def test_one_commit_one_downstream_run_from_an_operator_and_from_the_cli(
    event_home: tuple[AirflowHome, dict[str, str], Path],
) -> None:
    """Issue 17 item 3: the producer's append (outlet on the watched asset) and a commit by
    the ``icewright`` command each make exactly one asset event, so exactly one run of the
    downstream DAG; no dedupe in the DAG."""
    home, env, iw = event_home
    db = home.path / "airflow.db"
    catalog = sql_catalog(iw)
    make_table(catalog)
    append(catalog, 2)
    downstream = "icewright_orders_downstream_event"

    def events() -> list[tuple[str | None, dict[str, Any]]]:
        rows = query(
            db,
            "select e.source_task_id, e.extra from asset_event e join asset a "
            "on a.id = e.asset_id where a.uri = ? order by e.id",
            ASSET_URI,
        )
        return [(task, json.loads(extra)) for task, extra in rows]

    def ids(extra: dict[str, Any]) -> list[int]:
        return [s["snapshot_id"] for s in extra["payload"]["snapshots"]]

    def watermark_at(snapshot_id: int) -> bool:
        rows = query(
            db,
            "select s.value from asset_state_store s join asset a on a.id = s.asset_id "
            "where a.uri = ? and s.key like 'icewright.snapshot-watermark.%'",
            ASSET_URI,
        )
        return bool(rows) and json.loads(rows[0][0])["watermark"]["snapshot_id"] == snapshot_id

    def claims() -> list[str]:
        rows = query(
            db,
            "select s.key from asset_state_store s join asset a on a.id = s.asset_id "
            "where a.uri = ? and s.key like 'icewright.announced.%'",
            ASSET_URI,
        )
        return [k for (k,) in rows]

    def schedule_and_count_runs() -> list[tuple[str, int]]:
        done = scheduler_loop(env)
        assert done.returncode == 0, explain(done)
        return query(
            db,
            "select r.run_id, count(x.event_id) from dag_run r left join "
            "dagrun_asset_event x on x.dag_run_id = r.id where r.dag_id = ? "
            "group by r.id order by r.id",
            downstream,
        )

    # 1. An operator's commit: its outlet event only; the watcher passes it by.
    triggerer = Triggerer(env, home.path, home.path / "triggerer-op.log")
    try:
        wait_for(
            "the watcher's first watermark",
            lambda: (
                claims() == []
                and query(
                    db, "select 1 from asset_state_store where key like 'icewright.snapshot-%'"
                )
            ),
            300,
            triggerer,
        )
        produced = airflow("dags", "test", "icewright_test_producer", env=env, timeout=900)
        assert produced.returncode == 0 and dag_run_state(produced) == "success", explain(produced)
        head = catalog.load_table(TABLE).metadata.current_snapshot()
        assert head is not None
        op_snapshot = head.snapshot_id
        wait_for(
            "the watcher to pass the operator's commit",
            lambda: watermark_at(op_snapshot),
            120,
            triggerer,
        )
        time.sleep(3)  # more polls
        assert [(task, ids(extra)) for task, extra in events()] == [("append", [op_snapshot])]
        assert "announced by the tasks that committed them" in triggerer.text()
        # The watcher releases the claim it passed (right after storing its watermark;
        # on a loaded machine the triggerer's state-store calls can lag behind).
        wait_for("the claim's release", lambda: claims() == [], 120, triggerer)
    finally:
        triggerer.stop()
    runs = schedule_and_count_runs()
    assert [count for _, count in runs] == [1], runs

    # 2. A commit by the icewright command: the watcher's event only.
    triggerer = Triggerer(env, home.path, home.path / "triggerer-cli.log")
    try:
        time.sleep(3)
        cli = subprocess.run(
            [
                str(Path(sys.executable).parent / "icewright"),
                "append",
                TABLE,
                "--source",
                "sql:SELECT id + 100 AS order_id, 'us' AS region FROM range(4)",
                "--json",
            ],
            env={**os.environ, "ICEWRIGHT_HOME": str(iw)},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert cli.returncode == 0, cli.stderr[-3000:]
        cli_snapshot = json.loads(cli.stdout)["snapshot_id"]
        wait_for("the watcher's event", lambda: len(events()) == 2, 120, triggerer)
        time.sleep(3)
        (_, from_watcher) = events()[1]
        assert from_watcher["from_trigger"] and ids(from_watcher) == [cli_snapshot]
        assert len(events()) == 2
    finally:
        triggerer.stop()
    runs = schedule_and_count_runs()
    assert [count for _, count in runs] == [1, 1], runs
