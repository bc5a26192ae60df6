"""The main job: icewright's example pipeline end to end, through Airflow, on the embedded
default (a SQLite catalog and a local warehouse under ``$ICEWRIGHT_HOME``, default
``~/.icewright``; local Spark).

1. An Airflow home under ``$ICEWRIGHT_HOME/airflow`` (SQLite metadata database, the DAGs
   of ``example_dags/``), migrated on the first run.
2. The downstream event trigger (``IcebergSnapshotEventTrigger``, as the triggerer runs
   it) starts watching ``sales.orders``.
3. ``airflow dags test icewright_nightly_orders <date>``: create the table, append two
   batches of generated order events (200,000 rows over several days), replace one day
   with corrected rows, compact, expire. Every commit is icewright's own.
4. ``airflow dags test icewright_orders_views <date>``: publish two views over it;
   ``airflow dags test icewright_customers_cdc <date>``: merge a day's customer change
   feed (updates, inserts, deletes) into ``sales.customers`` merge-on-read, then delete
   the closed customers; ``airflow dags test icewright_orders_wap <date>``: write a day of
   orders to a branch of ``sales.orders_audited``, audit it there and publish it to
   ``main`` (write-audit-publish). The four runs go through Airflow's ``dags test``
   command one after another in one Airflow process (``examples/airflow_runs.py``), so
   Airflow and the tasks' Spark session start once, not four times.
5. The Dagster example project (``example_dagster/``, :mod:`main_dagster`) on the same
   tables: ``dagster asset materialize --select group:sales --partition <date + 1>`` writes the
   next day's orders (a replace of exactly that day), the daily revenue aggregate, a view
   and the checks; the project's snapshot sensor, evaluated before and after both
   pipelines, requests a ``refresh_revenue`` run for the new snapshots (Airflow's and
   Dagster's), which runs, and reports Airflow's commits as asset materializations.
6. The trigger's events (it watched both pipelines): one per batch of new data-changing
   snapshots.
7. A summary of the table (snapshots and who committed each, files, rows, timings) and
   the ``icewright`` commands to look further.

Running it again for the same date is safe: every Airflow commit key is already on the
table, so Airflow commits nothing twice; Dagster's second launch replaces its day again
with the same rows (a new launch commits again; the rows do not change), and that one
snapshot is all the trigger (its watermark kept under ``$ICEWRIGHT_HOME``) and the sensor
announce.
``--date YYYY-MM-DD`` loads another day.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DAGS = REPO / "example_dags"
TABLE = "sales.orders"
DEFAULT_DATE = "2026-11-20"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--date", default=DEFAULT_DATE, help="logical date (YYYY-MM-DD)")
    args = parser.parse_args()
    dt.date.fromisoformat(args.date)

    from icewright.catalog import icewright_home

    home = icewright_home()
    airflow_home = home / "airflow"
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = airflow_env(home, airflow_home)
    os.environ.update({k: v for k, v in env.items() if k.startswith("AIRFLOW")})
    os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "WARNING"  # the trigger, in this process
    started = time.monotonic()
    print(f"icewright main job: embedded default in {home}, logical date {args.date}")

    steps: list[tuple[str, float]] = []
    if not (airflow_home / "airflow.db").exists():
        steps.append(("airflow db migrate", run_airflow(["db", "migrate"], env, logs)))

    # The sensor's runs execute in this process at the end, on its local Spark session: its
    # JVM starts now, beside the pipelines, instead of in that last step.
    spark = SparkStart()
    spark.start()

    from main_dagster import DagsterStage

    dagster = DagsterStage(home)
    dagster.tick()  # the sensor remembers where sales.orders stands
    next_day = (dt.date.fromisoformat(args.date) + dt.timedelta(days=1)).isoformat()
    watcher = Watcher()
    watcher.start()
    try:
        steps += run_dags(
            (
                "icewright_nightly_orders",
                "icewright_orders_views",
                "icewright_customers_cdc",
                "icewright_orders_wap",
            ),
            args.date,
            env,
            logs,
        )
        steps.append(("dagster materialize", dagster.materialize(next_day, logs / "dagster.log")))
        events = watcher.settle(head_of(TABLE), quiet_seconds=8.0)
    finally:
        watcher.stop()

    start = time.monotonic()
    tick = dagster.tick()
    spark.join()
    runs = dagster.launch(tick)
    steps.append(("dagster sensor runs", time.monotonic() - start))

    summarize(home, airflow_home, args.date, steps, events, total=time.monotonic() - started)
    print_dagster(next_day, tick, runs)
    return 0


def head_of(table: str) -> int | None:
    """The current snapshot id of ``table`` in the embedded default (None: no snapshot)."""
    from icewright.catalog import default_catalog

    current = default_catalog().load_table(table).metadata.current_snapshot()
    return None if current is None else current.snapshot_id


def airflow_env(home: Path, airflow_home: Path) -> dict[str, str]:
    """The environment of the ``airflow`` commands: this home, these DAGs, local Spark."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AIRFLOW__", "AIRFLOW_CONN_")) and k != "AIRFLOW_CONFIG"
    }
    paths = [str(DAGS), str(REPO / "src"), *filter(None, [env.get("PYTHONPATH")])]
    env.update(
        {
            "AIRFLOW_HOME": str(airflow_home),
            "AIRFLOW_CONFIG": str(airflow_home / "airflow.cfg"),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{airflow_home / 'airflow.db'}",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(airflow_home / "logs"),
            "ICEWRIGHT_HOME": str(home),
            "PYTHONPATH": os.pathsep.join(paths),
            "PYSPARK_PYTHON": sys.executable,
            "TZ": "UTC",
        }
    )
    return env


def run_airflow(args: list[str], env: dict[str, str], logs: Path) -> float:
    """Run ``airflow <args>``, its output to a log file; fail loudly with its tail."""
    log = logs / f"{'-'.join(a for a in args if not a.startswith('-'))}.log"
    print(f"  airflow {' '.join(args)}  (log: {log})", flush=True)
    start = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            [str(Path(sys.executable).with_name("airflow")), *args],
            env=env,
            cwd=env["AIRFLOW_HOME"] if Path(env["AIRFLOW_HOME"]).exists() else None,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    if done.returncode != 0:
        tail = "\n".join(text.splitlines()[-40:])
        raise SystemExit(f"airflow {' '.join(args)} failed after {seconds:.0f}s:\n{tail}")
    print(f"    done in {seconds:.1f}s", flush=True)
    return seconds


def run_dags(
    dag_ids: tuple[str, ...], date: str, env: dict[str, str], logs: Path
) -> list[tuple[str, float]]:
    """``airflow dags test <dag_id> <date>`` for each DAG in turn, in one Airflow process
    (``airflow_runs.py``: Airflow and the tasks' Spark session start once), each DAG's
    output in its log file; the seconds of each, or SystemExit with the failed one's tail."""
    command = [sys.executable, str(Path(__file__).with_name("airflow_runs.py")), date, str(logs)]
    seconds: list[tuple[str, float]] = []
    with subprocess.Popen(
        [*command, *dag_ids], env=env, cwd=env["AIRFLOW_HOME"], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            event = json.loads(line)
            if "log" in event:
                print(
                    f"  airflow dags test {event['dag_id']} {date}  (log: {event['log']})",
                    flush=True,
                )
                log = Path(event["log"])
                continue
            text = log.read_text(errors="replace")
            if event["returncode"] != 0 or "state=failed" in text:
                tail = "\n".join(text.splitlines()[-40:])
                raise SystemExit(
                    f"airflow dags test {event['dag_id']} {date} failed after "
                    f"{event['seconds']:.0f}s:\n{tail}"
                )
            print(f"    done in {event['seconds']:.1f}s", flush=True)
            seconds.append((event["dag_id"], event["seconds"]))
    if len(seconds) < len(dag_ids):
        raise SystemExit(
            f"the Airflow process stopped after {len(seconds)} DAG run(s): see "
            f"{logs / 'airflow-runs.log'}"
        )
    return seconds


class SparkStart:
    """This process's local Spark session, started in a thread and warmed by one tiny job
    (the JVM's start and first job keep one core busy, and the pipelines beside them
    mostly one); :meth:`join` waits for it. A failed start is left to the first real job,
    which starts the session again and raises there."""

    def __init__(self) -> None:
        self._thread = threading.Thread(target=self._run, name="spark-start", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @staticmethod
    def _run() -> None:
        from icewright.spark.session import local_session

        with contextlib.suppress(Exception):
            local_session().range(1).collect()

    def join(self) -> None:
        self._thread.join()


class Watcher:
    """The downstream event trigger, run in a thread as Airflow's triggerer runs it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="event-trigger", daemon=True)
        self._task: asyncio.Task[None] | None = None
        self._last_event = time.monotonic()

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._task = self._loop.create_task(self._watch())
        with contextlib.suppress(asyncio.CancelledError):
            self._loop.run_until_complete(self._task)

    async def _watch(self) -> None:
        from icewright.providers.triggers import IcebergSnapshotEventTrigger

        trigger = IcebergSnapshotEventTrigger(TABLE, poll_interval=1.0)
        async for event in trigger.run():
            self.events.append(dict(event.payload))
            self._last_event = time.monotonic()

    def settle(self, head: int | None, quiet_seconds: float) -> list[dict[str, Any]]:
        """The events so far, once one announced ``head`` (the table's current snapshot:
        every commit before it is announced by then), or, for a head that is no data change
        (never announced), once none came for ``quiet_seconds`` after this call."""
        since = time.monotonic()
        while not self._announced(head):
            if time.monotonic() - max(since, self._last_event) >= quiet_seconds:
                break
            time.sleep(0.2)
        return list(self.events)

    def _announced(self, snapshot_id: int | None) -> bool:
        return any(
            s.get("snapshot_id") == snapshot_id
            for event in list(self.events)
            for s in event.get("snapshots") or []
        )

    def stop(self) -> None:
        if self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout=10)


def summarize(
    home: Path,
    airflow_home: Path,
    date: str,
    steps: list[tuple[str, float]],
    events: list[dict[str, Any]],
    *,
    total: float,
) -> None:
    """Print what the table holds, what the trigger announced, the timings, and how to
    look further."""
    from icewright.catalog import default_catalog
    from icewright.scan import plan_files

    catalog = default_catalog()
    table = catalog.load_table(TABLE)
    metadata = table.metadata
    current = metadata.current_snapshot()
    files = plan_files(table)
    rows = sum(f.data_file.record_count for f in files)
    print()
    print(f"{TABLE} now ({table.metadata_location}):")
    print(f"  rows {rows:,} in {len(files)} data files, {len(metadata.snapshots)} snapshots kept")
    for snapshot in metadata.snapshots:
        summary = dict(snapshot.summary or {})
        added, deleted, total_records = (
            int(summary.get(key, 0))
            for key in ("added-records", "deleted-records", "total-records")
        )
        mark = "*" if current is not None and snapshot.snapshot_id == current.snapshot_id else " "
        key = summary.get("icewright.commit-key", "")
        by = "dagster" if key.startswith("dagster:") else "airflow" if key else "-"
        print(
            f"  {mark} {snapshot.snapshot_id:>20}  {summary.get('operation', '?'):<9} "
            f"+{added:>7,} -{deleted:>7,}  total {total_records:>8,}  by {by}"
        )
    views = catalog.list_views("sales")
    print(f"  views: {', '.join(str(v) for v in views) or 'none'}")
    customers = plan_files(catalog.load_table("sales.customers"))
    deletes = {d.file_path for t in customers for d in t.delete_files}
    print(
        f"sales.customers (change feed merged, merge-on-read): "
        f"{sum(t.data_file.record_count for t in customers):,} rows written in "
        f"{len(customers)} data files, {len(deletes)} position delete files"
    )
    print()
    print("Downstream event trigger:")
    if not events:
        print("  no new snapshots announced: this date was already loaded, nothing was committed")
    for event in events:
        snaps = event.get("snapshots") or []
        described = ", ".join(f"{s['snapshot_id']} ({s['operation']})" for s in snaps)
        print(f"  fired for {len(snaps)} new snapshot(s): {described}")
    print()
    print("Timings:")
    for name, seconds in steps:
        print(f"  {name:<28} {seconds:7.1f}s")
    for task, seconds in task_durations(airflow_home, date):
        print(f"    {task:<26} {seconds:7.1f}s")
    print(f"  {'total':<28} {total:7.1f}s")
    print()
    print("Look further (from the repository root):")
    for command in (
        f"snapshots {TABLE}",
        f"files {TABLE}",
        f"read {TABLE} --where \"region = 'emea'\" --limit 5",
        "describe sales.daily_revenue",
        f"wait {TABLE} --after current --timeout 60",
    ):
        print(f"  ICEWRIGHT_HOME={home} .venv/bin/icewright {command}")


def print_dagster(day: str, tick: Any, runs: list[tuple[str, str]]) -> None:
    """What the Dagster half did: the partition it wrote, the sensor's runs."""
    print()
    print("Dagster (example_dagster/definitions.py):")
    print(f"  materialized sales/orders partition {day}, sales/orders_by_day, the view, checks")
    if tick.external:
        print(f"  sensor reported commits made outside Dagster: {', '.join(tick.external)}")
    if not runs:
        print("  sensor: no new snapshots of sales.orders")
    for run_key, status in runs:
        print(f"  sensor run of refresh_revenue for {run_key}: {status}")


def task_durations(airflow_home: Path, date: str) -> list[tuple[str, float]]:
    """Seconds per task of the nightly run for ``date``, from Airflow's metadata database."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"sqlite:///{airflow_home / 'airflow.db'}")
    query = sqlalchemy.text(
        "SELECT ti.task_id, ti.duration FROM task_instance ti JOIN dag_run r "
        "ON r.dag_id = ti.dag_id AND r.run_id = ti.run_id "
        "WHERE ti.dag_id = 'icewright_nightly_orders' AND r.logical_date LIKE :day "
        "AND r.id = (SELECT MAX(id) FROM dag_run WHERE dag_id = 'icewright_nightly_orders' "
        "AND logical_date LIKE :day) ORDER BY ti.start_date"
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(query, {"day": f"{date}%"}).all()
    except sqlalchemy.exc.SQLAlchemyError:
        return []
    finally:
        engine.dispose()
    return [(str(task), float(duration or 0.0)) for task, duration in rows]


if __name__ == "__main__":
    sys.exit(main())
