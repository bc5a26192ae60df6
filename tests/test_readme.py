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
    assert "rows 200,000" in first
    assert "views: sales.confirmed_orders, sales.daily_revenue" in first
    fired = re.findall(r"fired for (\d+) new snapshot", first)
    assert fired and sum(int(n) for n in fired) == 3  # two appends and the replace
    assert ".venv/bin/icewright snapshots sales.orders" in first

    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "icewright", uri=f"sqlite:///{home / 'catalog.db'}", warehouse=str(home / "warehouse")
    )
    table = catalog.load_table("sales.orders")
    snapshots = [s.snapshot_id for s in table.snapshots()]
    assert table.scan().to_arrow().num_rows == 200_000
    assert [s.summary.operation.value for s in table.snapshots()] == [
        "append",
        "append",
        "overwrite",
        "replace",
    ]

    second = run_main(home)
    assert "no new snapshots announced" in second
    table = catalog.load_table("sales.orders")
    assert [s.snapshot_id for s in table.snapshots()] == snapshots
