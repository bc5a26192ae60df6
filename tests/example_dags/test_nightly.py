"""Example DAG (a) ``icewright_nightly_orders`` run by ``airflow dags test`` on a fresh
home, its table read by pyiceberg, then run again for the same date: nothing changes."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

from tests.support.airflow import AirflowHome, dag_run_state, dags_test, explain

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "example_dags"
sys.path.insert(0, str(DAGS))
import orders_source  # noqa: E402

pytestmark = pytest.mark.slow


def _pyiceberg_table(home: Path):  # type: ignore[no-untyped-def]
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "icewright", uri=f"sqlite:///{home / 'catalog.db'}", warehouse=str(home / "warehouse")
    )
    return catalog.load_table("sales.orders")


def test_nightly_runs_and_pyiceberg_reads_it(airflow_home: AirflowHome, tmp_path: Path) -> None:
    iw_home = tmp_path / "iw"
    env = airflow_home.environment(ICEWRIGHT_HOME=str(iw_home))
    done = dags_test("icewright_nightly_orders", DAGS, env=env, logical_date="2026-01-02")
    assert dag_run_state(done) == "success", explain(done)

    table = _pyiceberg_table(iw_home)
    rows = table.scan().to_arrow()
    total = orders_source.FIRST_BATCH_ROWS + orders_source.SECOND_BATCH_ROWS
    assert rows.num_rows == total
    assert len(set(rows.column("order_id").to_pylist())) == total
    # The interval of logical date 2026-01-02 (@daily) is 2026-01-01: its rows were
    # replaced by the confirmed ones (a third of batch one, half of batch two).
    day = dt.date(2026, 1, 1)
    expected_day = orders_source.FIRST_BATCH_ROWS // 3 + orders_source.SECOND_BATCH_ROWS // 2
    statuses: dict[str, int] = {}
    for ts, status in zip(
        rows.column("ts").to_pylist(), rows.column("status").to_pylist(), strict=True
    ):
        if ts.astimezone(dt.UTC).date() == day:
            assert status == "confirmed"
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses == {"confirmed": expected_day, "placed": total - expected_day}

    operations = [s.summary.operation.value for s in table.snapshots()]
    assert operations == ["append", "append", "overwrite", "replace"]  # rewrite: replace
    assert str(table.spec()).count("bucket[16]") == 1
    first_snapshots = [s.snapshot_id for s in table.snapshots()]

    # Safe to run twice: the second run for that date finds every commit already made.
    again = dags_test("icewright_nightly_orders", DAGS, env=env, logical_date="2026-01-02")
    assert dag_run_state(again) == "success", explain(again)
    table = _pyiceberg_table(iw_home)
    assert [s.snapshot_id for s in table.snapshots()] == first_snapshots
    assert table.scan().to_arrow().num_rows == total
