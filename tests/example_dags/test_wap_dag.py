"""Example DAG ``icewright_orders_wap`` under ``airflow dags test``: a day written to a
branch, audited and published; a day whose audit fails leaves ``main`` as it was and the
branch kept; a reader polling ``main`` through each run never sees a snapshot the audit
did not pass; a run again for a published day commits nothing."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import SqlCatalog
from icewright.errors import NoSuchTable
from tests.support.airflow import AirflowHome, dag_run_state, explain

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "example_dags"
TABLE = "sales.orders_audited"
pytestmark = pytest.mark.slow


class MainReader:
    """Polls the table's ``main`` head while a run goes on (another reader's view)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.seen: list[int | None] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    @property
    def catalog(self) -> SqlCatalog:
        home = self.home
        return SqlCatalog("icewright", f"sqlite:///{home}/catalog.db", str(home / "warehouse"))

    def _poll(self) -> None:
        catalog = None
        while not self._stop.is_set():
            head = None
            if (self.home / "catalog.db").exists():  # the run's first task creates it
                catalog = catalog or self.catalog
                with contextlib.suppress(NoSuchTable):
                    head = catalog.load_table(TABLE).metadata.current_snapshot_id
            if not self.seen or self.seen[-1] != head:
                self.seen.append(head)
            self._stop.wait(0.05)

    def __enter__(self) -> MainReader:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _py(home: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    return PySqlCatalog(
        "icewright", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/warehouse"
    )


def _amounts(home: Path, ref: str = "main") -> list[float]:
    table = _py(home).load_table(TABLE)
    sid = table.metadata.refs[ref].snapshot_id
    return [float(a) for a in table.scan(snapshot_id=sid).to_arrow().column("amount").to_pylist()]


def test_write_audit_publish(airflow_home: AirflowHome, tmp_path: Path) -> None:
    home = tmp_path / "iw"
    env = {"ICEWRIGHT_HOME": str(home)}

    with MainReader(home) as reader:
        done = airflow_home.dags_test(
            "icewright_orders_wap", DAGS, env=env, logical_date="2026-01-02"
        )
    assert dag_run_state(done) == "success", explain(done)
    assert (
        "icewright-audit audit-20260102: 288 row(s) for 2026-01-02, 0 bad"
        in done.stdout + done.stderr
    )
    catalog = reader.catalog
    table = catalog.load_table(TABLE)
    published = table.metadata.current_snapshot_id
    assert set(table.metadata.refs) == {"main"}  # the branch was dropped once published
    assert len(_amounts(home)) == 288 and min(_amounts(home)) > 0
    # main went from nothing straight to the audited snapshot
    assert [h for h in reader.seen if h is not None] == [published]

    with MainReader(home) as reader:
        bad = airflow_home.dags_test(
            "icewright_orders_wap", DAGS, env=env, logical_date="2026-01-03", conf={"bad_rows": 5}
        )
    assert dag_run_state(bad) == "failed", explain(bad)
    assert (
        "audit of sales.orders_audited@audit-20260103 failed: 288 row(s)" in bad.stdout + bad.stderr
    )
    table = catalog.load_table(TABLE)
    assert table.metadata.current_snapshot_id == published  # main unchanged
    assert reader.seen == [published]  # and never anything else while the run went on
    kept = _amounts(home, "audit-20260103")  # the branch is kept for inspection
    assert len(kept) == 576 and sum(a <= 0 for a in kept) == 5

    # The fixed day runs again: the branch starts again from main, the rejected
    # snapshot (same commit key) is on no branch, so the day is written and published.
    fixed = airflow_home.dags_test("icewright_orders_wap", DAGS, env=env, logical_date="2026-01-03")
    assert dag_run_state(fixed) == "success", explain(fixed)
    assert len(_amounts(home)) == 576 and min(_amounts(home)) > 0
    head = catalog.load_table(TABLE).metadata.current_snapshot_id

    again = airflow_home.dags_test("icewright_orders_wap", DAGS, env=env, logical_date="2026-01-03")
    assert dag_run_state(again) == "success", explain(again)
    assert catalog.load_table(TABLE).metadata.current_snapshot_id == head
