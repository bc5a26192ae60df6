"""The README's first command, run exactly as written (the second, the test command, is
what CI runs): the main job on a fresh embedded default, then again (nothing new).

The embedded default lives in ``$ICEWRIGHT_HOME`` (the README's documented setting), here a
temporary directory; pyiceberg then reads the table the job left.

The main job runs the example DAGs (a) ``icewright_nightly_orders`` and (d)
``icewright_orders_views`` with ``airflow dags test`` on that fresh home, twice, so this
test also holds what the nightly DAG must leave (read by pyiceberg at the nightly's last
snapshot, before Dagster's day) and what the views DAG's second run must reuse; a
separate run of each DAG would only repeat these runs.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "example_dags"))
import orders_source  # noqa: E402

pytestmark = pytest.mark.slow


def readme_commands() -> list[str]:
    """The commands of the README's first code block, without their comments."""
    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README starts with a bash code block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_starts_with_the_main_job_and_the_tests() -> None:
    assert readme_commands() == ["bash scripts/main", "bash scripts/test"]
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash scripts/test" in ci


def run_main(home: Path) -> str:
    env = {**os.environ, "ICEWRIGHT_HOME": str(home)}
    env.pop("AIRFLOW_HOME", None)
    done = subprocess.run(
        readme_commands()[0],
        shell=True,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_main_job_runs_and_is_safe_to_run_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = run_main(home)
    assert "rows 220,000" in first  # Airflow's 200,000 and Dagster's day of 20,000
    assert "views: sales.confirmed_orders, sales.daily_revenue, sales.revenue_by_region" in first
    fired = re.findall(r"fired for (\d+) new snapshot", first)
    assert fired and sum(int(n) for n in fired) == 4  # two appends, the replace, Dagster's
    assert ".venv/bin/icewright snapshots sales.orders" in first

    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "icewright", uri=f"sqlite:///{home / 'catalog.db'}", warehouse=str(home / "warehouse")
    )
    table = catalog.load_table("sales.orders")
    snapshots = [s.snapshot_id for s in table.snapshots()]
    assert table.scan().to_arrow().num_rows == 220_000
    by = [
        (s.summary.operation.value, s.summary.get("icewright.commit-key", "")[:8])
        for s in table.snapshots()
    ]
    assert [op for op, _ in by] == ["append", "append", "overwrite", "replace", "append"]
    assert [key == "dagster:" for _, key in by] == [False] * 4 + [True]
    # the sensor saw Airflow's three data commits and Dagster's, and started one run
    assert first.count("sensor run of refresh_revenue for sales.orders@") == 1
    assert f"sales.orders@{snapshots[-1]}: success" in first
    assert (
        "sensor reported commits made outside Dagster: " + ", ".join(str(s) for s in snapshots[:3])
        in first
    )
    assert catalog.load_table("sales.orders_by_day").scan().to_arrow().num_rows > 0
    # write-audit-publish: the day's orders reached main through an audited branch
    audited = catalog.load_table("sales.orders_audited")
    assert audited.scan().to_arrow().num_rows == 288 and set(audited.metadata.refs) == {"main"}
    audited_snapshots = [s.snapshot_id for s in audited.snapshots()]
    assert_incremental_and_audited(catalog, table)
    logical_date = re.search(r"logical date (\d{4}-\d{2}-\d{2})", first)
    assert logical_date is not None
    assert_nightly_result(table, snapshots[3], dt.date.fromisoformat(logical_date.group(1)))
    views = view_metadata(home)

    second = run_main(home)
    table = catalog.load_table("sales.orders")
    after = [s.snapshot_id for s in table.snapshots()]
    assert after[:-1] == snapshots  # Airflow committed nothing; Dagster replaced its day
    fired = re.findall(r"fired for (\d+) new snapshot\(s\): (\d+)", second)
    assert fired == [("1", str(after[-1]))]
    assert table.snapshots()[-1].summary["deleted-records"] == "20000"
    assert table.scan().to_arrow().num_rows == 220_000
    assert f"sales.orders@{after[-1]}: success" in second
    audited = catalog.load_table("sales.orders_audited")
    assert [s.snapshot_id for s in audited.snapshots()] == audited_snapshots
    assert_incremental_and_audited(catalog, table)
    assert audited.scan().to_arrow().num_rows == 288
    # the views DAG's second run: the same SQL and comment give an identical version,
    # which the commit reuses (view spec: no duplicate versions) instead of adding one
    again = view_metadata(home)
    for name, metadata in views.items():
        assert again[name].current_version_id == metadata.current_version_id, name
        assert len(again[name].versions) == 1, name
        assert again[name].schema() == metadata.schema(), name


def assert_incremental_and_audited(catalog: Any, orders: Any) -> None:
    """Dagster's incremental totals equal a full aggregate of ``sales.orders`` (every run
    merged only the changes of the snapshots it was started for), and the audited
    ``sales.big_orders`` holds exactly the big orders, published to main."""
    rows = orders.scan(selected_fields=("region", "amount")).to_arrow().to_pylist()
    expected: dict[str, list[Any]] = {}
    for r in rows:
        got = expected.setdefault(r["region"], [0, 0])
        got[0] += 1
        got[1] += r["amount"]
    totals = catalog.load_table("sales.region_totals").scan().to_arrow().to_pylist()
    assert {t["region"]: [t["orders"], t["revenue"]] for t in totals} == expected
    big = catalog.load_table("sales.big_orders")
    assert set(big.metadata.refs) == {"main"}
    assert big.scan().to_arrow().num_rows == sum(r["amount"] >= 900 for r in rows) > 0


def assert_nightly_result(table: Any, snapshot_id: int, logical_date: dt.date) -> None:
    """The nightly DAG's table as its last commit (the replace) left it, read by pyiceberg:
    both batches once, the interval day replaced by its confirmed rows, the partitioning."""
    rows = table.scan(snapshot_id=snapshot_id).to_arrow()
    total = orders_source.FIRST_BATCH_ROWS + orders_source.SECOND_BATCH_ROWS
    assert rows.num_rows == total
    assert len(set(rows.column("order_id").to_pylist())) == total
    # The interval of the logical date (@daily) is the day before: its rows were replaced
    # by the confirmed ones (a third of batch one, half of batch two).
    day = logical_date - dt.timedelta(days=1)
    expected_day = orders_source.FIRST_BATCH_ROWS // 3 + orders_source.SECOND_BATCH_ROWS // 2
    statuses: dict[str, int] = {}
    for ts, status in zip(
        rows.column("ts").to_pylist(), rows.column("status").to_pylist(), strict=True
    ):
        if ts.astimezone(dt.UTC).date() == day:
            assert status == "confirmed"
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses == {"confirmed": expected_day, "placed": total - expected_day}
    assert str(table.spec()).count("bucket[16]") == 1


def view_metadata(home: Path) -> dict[str, Any]:
    """The views DAG's two views, read by icewright's catalog."""
    from icewright.catalog import load_catalog

    catalog = load_catalog(
        {"type": "sql", "uri": f"sqlite:///{home / 'catalog.db'}", "warehouse": "/unused"}
    )
    names = ("sales.daily_revenue", "sales.confirmed_orders")
    return {name: catalog.load_view(name).metadata for name in names}
