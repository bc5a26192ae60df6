"""Killing a deferred task under a real deployment stops its Spark job (issue 33 item 3).

api-server, scheduler (LocalExecutor), dag-processor and triggerer run ``icewright_kill``:
a deferrable append whose first ``spark-submit`` job sleeps. While the task is deferred
on that job, a user marks it failed (the REST call of the UI's button); the triggerer
cancels the trigger as a user action and its ``on_kill`` stops the job. Cleared, the
task runs again, its new job finishes, and the table gets exactly one append.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from icewright.catalog import load_catalog
from tests.support.airflow import connection_env, make_airflow_home
from tests.support.deployment import Deployment

pytestmark = pytest.mark.slow

DAGS = Path(__file__).parent / "kill_dags"
REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too: it waits only for its parent to reap it
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _ti_state(d: Deployment, run_id: str, task_id: str) -> str | None:
    rows = d.query(
        "select state from task_instance where dag_id = 'icewright_kill' and run_id = ? "
        "and task_id = ?",
        run_id,
        task_id,
    )
    return rows[0][0] if rows else None


def test_clearing_a_deferred_task_stops_its_job(tmp_path: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    for name in ("icewright_kill.py", "kill_source.py"):
        shutil.copyfile(DAGS / name, dags / name)
    marks = tmp_path / "marks"
    marks.mkdir()
    uri, warehouse = f"sqlite:///{tmp_path}/lake.db", str(tmp_path / "wh")
    load_catalog({"type": "sql", "uri": uri, "warehouse": warehouse}).create_namespace("ns")
    extra = {"catalog_type": "sql", "uri": uri, "warehouse": warehouse}
    d = Deployment(
        make_airflow_home(tmp_path / "airflow"),
        {
            **connection_env("lake", "icewright", extra=extra),
            "ICEWRIGHT_KILL_DIR": str(marks),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "PYTHONPATH": f"{REPO / 'src'}:{REPO}:{dags}",
        },
        apps="all",
    )
    d.start()
    try:
        d.wait_parsed({"icewright_kill"})
        d.trigger("icewright_kill", "kill-1")
        pid_file = marks / "first.pid"
        d.wait_for(
            "the append to defer on its running job",
            lambda: _ti_state(d, "kill-1", "append") == "deferred" and pid_file.exists(),
            timeout=180,
        )
        job = int(pid_file.read_text())
        assert _alive(job)

        # what the UI's "Mark as failed" does
        d.api(
            "PATCH",
            "dags/icewright_kill/dagRuns/kill-1/taskInstances/append",
            {"new_state": "failed"},
        )
        # it would sleep ten minutes: only the trigger's on_kill ends it this soon
        d.wait_for("the killed try's job to stop", lambda: not _alive(job), timeout=90)
        assert d.wait_run("icewright_kill", "kill-1", timeout=60) == "failed", d.tails()
        # what the UI's "Clear" does: a new try, whose job runs and commits; the killed
        # one's result is never committed
        d.api(
            "POST",
            "dags/icewright_kill/clearTaskInstances",
            {"dry_run": False, "task_ids": ["append"], "dag_run_id": "kill-1"},
        )
        assert d.wait_run("icewright_kill", "kill-1", timeout=240) == "success", d.tails()
    finally:
        d.stop(kill=True)

    table = load_catalog({"type": "sql", "uri": uri, "warehouse": warehouse}).load_table(
        "ns.killed"
    )
    assert [str(s.operation) for s in table.metadata.snapshots] == ["append"]
    (snapshot,) = table.metadata.snapshots
    assert snapshot.summary is not None and snapshot.summary["added-records"] == "3"
    assert not list(Path(warehouse).rglob("*.pending.json"))  # no job left to collect
