"""The README's first command, run exactly as written (the second, the test command, is
what CI runs): the main job on a fresh embedded default, then again (nothing new).

The embedded default lives in ``$ICEWRIGHT_HOME`` (the README's documented setting), here a
temporary directory; pyiceberg then reads the table the job left.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

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

    second = run_main(home)
    table = catalog.load_table("sales.orders")
    after = [s.snapshot_id for s in table.snapshots()]
    assert after[:-1] == snapshots  # Airflow committed nothing; Dagster replaced its day
    fired = re.findall(r"fired for (\d+) new snapshot\(s\): (\d+)", second)
    assert fired == [("1", str(after[-1]))]
    assert table.snapshots()[-1].summary["deleted-records"] == "20000"
    assert table.scan().to_arrow().num_rows == 220_000
    assert f"sales.orders@{after[-1]}: success" in second
