"""One commit, one downstream run, under a real deployment (issue 26): api-server
(execution API), scheduler with the LocalExecutor, a dag-processor re-parsing every file
every 2 seconds, and a triggerer, all running while commits happen.

The DAGs folder holds the layouts DAG authors write, side by side: the README's (a
writer's outlet ``iceberg_asset(table)`` in one file, the downstream DAG on
``watched_iceberg_asset(table)`` in another), a writer whose outlet is the watched asset,
a writer with a pinned commit key, one whose first try is killed between its commit and
its success, and a file declaring the table's asset by hand (refused when parsed). For
every commit the tests assert that exactly one stored asset event names it and exactly
one run of the downstream DAG was started by it; and that the watcher's trigger is never
replaced while the dag-processor re-parses (the flip that dropped events).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sensors.support import REPO, TABLE, make_table, sql_catalog
from tests.support.airflow import AirflowHome, make_airflow_home
from tests.support.deployment import Deployment

pytestmark = pytest.mark.slow

ASSET_URI = "iceberg://icewright_default/sales/orders"
DOWNSTREAM = "downstream"

WRITERS = '''
import datetime as dt
import os
import signal

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, iceberg_asset, watched_iceberg_asset

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
SOURCE = "sql:SELECT CAST(id AS BIGINT) AS order_id, 'eu' AS region FROM range(3)"


class DiesAfterCommit(IcebergAppendOperator):
    """Its first try is killed right after the commit, before Airflow records success."""

    def run_action(self, context, key):
        result = super().run_action(context, key)
        if context["ti"].try_number == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return result


with DAG("writer_pinned", schedule=None, start_date=START):
    IcebergAppendOperator(
        task_id="append", table="sales.orders", source=SOURCE, commit_key="pinned/{{ run_id }}",
        outlets=[iceberg_asset("sales.orders")],
    )

with DAG("writer_dies", schedule=None, start_date=START):
    DiesAfterCommit(
        task_id="append", table="sales.orders", source=SOURCE, retries=1,
        retry_delay=dt.timedelta(seconds=1), outlets=[iceberg_asset("sales.orders")],
    )
'''

WATCHED_WRITER = """
import datetime as dt

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, watched_iceberg_asset

with DAG("writer_watched", schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)):
    IcebergAppendOperator(
        task_id="append", table="sales.orders",
        source="sql:SELECT CAST(id AS BIGINT) AS order_id, 'us' AS region FROM range(2)",
        outlets=[watched_iceberg_asset("sales.orders")],
    )
"""

DOWNSTREAM_DAG = """
import datetime as dt

from airflow.sdk import DAG, task

from icewright.operators import triggering_snapshots, watched_iceberg_asset

with DAG(
    "downstream", schedule=[watched_iceberg_asset("sales.orders")],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):

    @task
    def react(triggering_asset_events=None):
        return [s["snapshot_id"] for s in triggering_snapshots(triggering_asset_events)]

    react()
"""

HAND_MADE = """
import datetime as dt

from airflow.sdk import DAG, Asset

with DAG(
    "hand_made", schedule=[Asset("iceberg://icewright_default/sales/orders")],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
):
    pass
"""


class Lake:
    """The deployment, its catalog home, and what the tests read back."""

    def __init__(self, deployment: Deployment, iw: Path) -> None:
        self.deployment = deployment
        self.iw = iw
        self.trigger_ids = self.watcher_triggers()
        self.pinned: int | None = None

    def watcher_triggers(self) -> list[int]:
        rows = self.deployment.query(
            "select t.id from trigger t join asset_watcher w on w.trigger_id = t.id "
            "join asset a on a.id = w.asset_id where a.uri = ? and a.name = ?",
            ASSET_URI,
            ASSET_URI,
        )
        return sorted(r[0] for r in rows)

    def head(self) -> int:
        snapshot = sql_catalog(self.iw).load_table(TABLE).metadata.current_snapshot()
        assert snapshot is not None
        return snapshot.snapshot_id

    def events_naming(self, snapshot_id: int) -> list[int]:
        """Ids of the stored asset events whose payload names ``snapshot_id``."""
        rows = self.deployment.query(
            "select e.id, e.extra from asset_event e join asset a on a.id = e.asset_id "
            "where a.uri = ? order by e.id",
            ASSET_URI,
        )
        found = []
        for event_id, extra in rows:
            payload = json.loads(extra).get("payload") or {}
            if any(s.get("snapshot_id") == snapshot_id for s in payload.get("snapshots") or ()):
                found.append(event_id)
        return found

    def runs_started_by(self, snapshot_id: int) -> list[str]:
        """Downstream runs whose triggering events name ``snapshot_id``."""
        events = self.events_naming(snapshot_id)
        if not events:
            return []
        marks = ",".join("?" * len(events))
        rows = self.deployment.query(
            "select distinct r.run_id from dag_run r join dagrun_asset_event x "
            f"on x.dag_run_id = r.id where r.dag_id = ? and x.event_id in ({marks})",
            DOWNSTREAM,
            *events,
        )
        return [r[0] for r in rows]

    def watermark(self) -> int | None:
        """The snapshot id the table watcher's stored watermark names."""
        rows = self.watermark_rows()
        if not rows:
            return None
        return (json.loads(rows[0][0]).get("watermark") or {}).get("snapshot_id")

    def watermark_rows(self) -> list[tuple[str]]:
        return self.deployment.query(
            "select s.value from asset_state_store s join asset a on a.id = s.asset_id "
            "where a.uri = ? and a.name = ? and s.key like 'icewright.snapshot-watermark.%'",
            ASSET_URI,
            ASSET_URI,
        )

    def append_elsewhere(self, rows: int) -> int:
        """A commit from outside Airflow; its snapshot id."""
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.sensors.support",
                "append",
                f"sqlite:///{self.iw / 'catalog.db'}",
                TABLE,
                str(rows),
            ],
            cwd=str(REPO),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    def assert_announced_once(self, snapshot_id: int) -> None:
        """Exactly one event and one downstream run for ``snapshot_id``, after the watcher
        has passed it and the scheduler has had time to start more runs."""
        d = self.deployment
        d.wait_for(
            f"a downstream run for snapshot {snapshot_id}",
            lambda: self.runs_started_by(snapshot_id),
        )
        d.wait_for(
            "the watcher to pass it",
            lambda: self.passed(snapshot_id),
        )
        time.sleep(2)  # more polls of the watcher and loops of the scheduler
        assert len(self.events_naming(snapshot_id)) == 1, d.tails()
        assert len(self.runs_started_by(snapshot_id)) == 1
        assert self.watcher_triggers() == self.trigger_ids, "the watcher's trigger was replaced"

    def passed(self, snapshot_id: int) -> bool:
        table = sql_catalog(self.iw).load_table(TABLE).metadata
        mark = self.watermark()
        if mark is None:
            return False
        ours, theirs = table.snapshot_by_id(snapshot_id), table.snapshot_by_id(mark)
        assert ours is not None and theirs is not None
        return theirs.sequence_number >= ours.sequence_number


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    root = tmp_path_factory.mktemp("announcements")
    home: AirflowHome = make_airflow_home(root / "airflow")
    iw = root / "iw"
    make_table(sql_catalog(iw))
    dags = root / "dags"
    dags.mkdir()
    for name, text in (
        ("writers.py", WRITERS),
        ("watched_writer.py", WATCHED_WRITER),
        ("downstream.py", DOWNSTREAM_DAG),
        ("hand_made.py", HAND_MADE),
    ):
        (dags / name).write_text(text)
    deployment = Deployment(
        home,
        {
            "ICEWRIGHT_HOME": str(iw),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__ICEWRIGHT__WATCHER_POLL_INTERVAL": "1",
            "PYTHONPATH": f"{REPO / 'src'}:{REPO}",
        },
    )
    deployment.start()
    try:
        deployment.wait_parsed(
            {DOWNSTREAM, "writer_pinned", "writer_dies", "writer_watched"},
            failing={"hand_made.py": "does not carry the table's watcher"},
        )
        lake = Lake(deployment, iw)
        deployment.wait_for("the watcher's trigger", lake.watcher_triggers)
        lake.trigger_ids = lake.watcher_triggers()
        deployment.wait_for("the watcher's first watermark", lake.watermark_rows)
        yield lake
    finally:
        deployment.stop(kill=True)


def _run_writer(lake: Lake, dag_id: str, run_id: str) -> int:
    before = lake.head() if sql_catalog(lake.iw).load_table(TABLE).metadata.snapshots else None
    lake.deployment.trigger(dag_id, run_id)
    assert lake.deployment.wait_run(dag_id, run_id) == "success", lake.deployment.tails()
    head = lake.head()
    assert head != before
    return head


def _pinned_commit(lake: Lake) -> int:
    """The commit of ``writer_pinned``'s run (made once for the module)."""
    if lake.pinned is None:
        lake.pinned = _run_writer(lake, "writer_pinned", "pinned-1")
    return lake.pinned


def test_readme_layout_one_run_per_operator_commit(lake: Lake) -> None:
    # writer_pinned is the README's writer: outlet iceberg_asset(table), in its own file
    lake.assert_announced_once(_pinned_commit(lake))


def test_watched_everywhere_layout(lake: Lake) -> None:
    snapshot = _run_writer(lake, "writer_watched", "watched-1")
    lake.assert_announced_once(snapshot)


def test_outside_commits_in_a_row(lake: Lake) -> None:
    commits = [lake.append_elsewhere(n) for n in (1, 2, 3)]
    for snapshot in commits:
        lake.assert_announced_once(snapshot)


def test_commits_while_the_triggerer_is_down_are_announced_once(lake: Lake) -> None:
    lake.deployment.stop(["triggerer"], kill=True)  # a crash: nothing handed over
    commits = [lake.append_elsewhere(n) for n in (4, 5)]
    lake.deployment.start(["triggerer"])
    for snapshot in commits:
        lake.assert_announced_once(snapshot)


def test_a_cleared_task_with_a_pinned_key_starts_no_second_run(lake: Lake) -> None:
    snapshot = _pinned_commit(lake)
    lake.assert_announced_once(snapshot)
    d = lake.deployment
    before = len(sql_catalog(lake.iw).load_table(TABLE).metadata.snapshots)
    d.cli("tasks", "clear", "writer_pinned", "--yes")
    d.wait_for(
        "the cleared task's second try",
        lambda: d.query(
            "select 1 from task_instance where dag_id = 'writer_pinned' and try_number = 2 "
            "and state = 'success'"
        ),
    )
    # the pinned key found its commit: nothing new
    assert len(sql_catalog(lake.iw).load_table(TABLE).metadata.snapshots) == before
    lake.assert_announced_once(snapshot)


def test_a_retry_after_a_try_killed_between_commit_and_success_announces_once(
    lake: Lake,
) -> None:
    snapshot = _run_writer(lake, "writer_dies", "dies-1")
    tries = lake.deployment.query(
        "select try_number from task_instance where dag_id = 'writer_dies' and run_id = 'dies-1'"
    )
    assert tries == [(2,)]
    lake.assert_announced_once(snapshot)


def test_the_watcher_was_never_replaced(lake: Lake) -> None:
    assert lake.watcher_triggers() == lake.trigger_ids
    assert "cancelled by user action" not in lake.deployment.log("triggerer").lower()
