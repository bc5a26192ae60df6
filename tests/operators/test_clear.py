"""Clear versus retry with a real Airflow metadata database: automatic retries of one
try sequence commit once (the retry finds the commit key), a cleared task instance
starts a new sequence and commits again with the data it reads now, for a mapped task
instance too (only the cleared index)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icewright.catalog import SqlCatalog
from tests.support.airflow import AirflowHome, dags_test, query_metadata_db, run_id_of

DAGS = Path(__file__).parent / "clear_dags"
DAG_ID = "icewright_retry_clear"

pytestmark = pytest.mark.slow


def _land(home: Path, name: str, batch: str, ids: range) -> None:
    folder = home / "landing" / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    table = pa.table({"id": pa.array(list(ids), pa.int64()), "batch": [batch] * len(ids)})
    pq.write_table(table, folder / "part-0.parquet")


def _probes(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [
        line.split("PROBE ", 1)[1]
        for line in (done.stdout + done.stderr).splitlines()
        if "PROBE " in line
    ]


def test_retry_commits_once_and_a_clear_commits_again(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    home = tmp_path / "iw"
    home.mkdir()
    env = airflow_home.environment(ICEWRIGHT_HOME=str(home))
    _land(home, "load", "first", range(3))
    _land(home, "each0", "each0-first", range(10, 12))
    _land(home, "each1", "each1-first", range(20, 22))

    done = dags_test(DAG_ID, DAGS, env=env, logical_date="2026-01-02")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the first try committed and died; the automatic retry found the commit key
    assert [p for p in _probes(done) if p.startswith("load ")] == [
        "load map=-1 try=1 max_tries=1 committed=True",
        "load map=-1 try=2 max_tries=1 committed=False",
    ]
    run_id = run_id_of(done)
    catalog = SqlCatalog("icewright", f"sqlite:///{home / 'catalog.db'}", str(home / "warehouse"))
    table = catalog.load_table("db.t")
    assert len(table.metadata.snapshots) == 3  # load once, each index once

    # new landing files, then a clear of load and of load_each[0] (as the UI does)
    _land(home, "load", "second", range(100, 105))
    _land(home, "each0", "each0-second", range(110, 111))
    run_env = {
        **env,
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "PYTHONPATH": f"{DAGS}:{Path(__file__).parents[2] / 'src'}",
    }
    cleared = _steps(run_env, run_id, "clear/load", "clear/load_each/0")
    assert cleared.returncode == 0, cleared.stdout[-2000:]
    rows = query_metadata_db(
        airflow_home,
        "SELECT task_id, map_index, max_tries FROM task_instance "
        "WHERE dag_id = :dag AND run_id = :run ORDER BY task_id, map_index",
        dag=DAG_ID,
        run=run_id,
    )
    assert ("load", -1, 3) in rows  # cleared after 2 tries with retries=1: 2 + 1

    # `airflow tasks test` of the three task instances, then of load again: the cleared
    # sequence's retry is still that sequence
    steps = ("test/load", "test/load_each/0", "test/load_each/1", "test/load")
    ran = _steps(run_env, run_id, *steps)
    output = ran.stdout
    assert ran.returncode == 0, output[-3000:]
    committed = [[p.rsplit(" ", 1)[-1] for p in step] for step in _probes_by_step(output, steps)]
    assert committed == [["committed=True"], [], [], ["committed=False"]], output[-3000:]
    states = query_metadata_db(
        airflow_home,
        "SELECT task_id, map_index, state FROM task_instance "
        "WHERE dag_id = :dag AND run_id = :run ORDER BY task_id, map_index",
        dag=DAG_ID,
        run=run_id,
    )
    assert {state for *_, state in states} == {"success"}, states

    table = table.refresh()
    batches = sorted({r["batch"] for r in _read(catalog)})
    # the cleared load and load_each[0] committed the new files; load_each[1] was not
    # cleared, so its run found its key and committed nothing; nor did load's second run
    assert len(table.metadata.snapshots) == 5
    assert batches == ["each0-first", "each0-second", "each1-first", "first", "second"]


def _steps(env: dict[str, str], run_id: str, *steps: str) -> subprocess.CompletedProcess[str]:
    """``clear_support.py``'s steps (clears, ``airflow tasks test`` runs) in one process,
    its output and errors in one stream (in order)."""
    return subprocess.run(
        [sys.executable, str(Path(__file__).with_name("clear_support.py")), DAG_ID, run_id, *steps],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
        check=False,
    )


def _probes_by_step(output: str, steps: tuple[str, ...]) -> list[list[str]]:
    """The probes of each step of a :func:`_steps` run, in order (each step's output
    follows its ``=== <step>`` line)."""
    parts = [p for p in output.split("=== ") if p.split("\n", 1)[0] in steps]
    assert [p.split("\n", 1)[0] for p in parts] == list(steps), output[-3000:]
    return [
        [line.split("PROBE ", 1)[1] for line in p.splitlines() if "PROBE " in line] for p in parts
    ]


def _read(catalog: SqlCatalog) -> list[dict[str, object]]:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    location = catalog.load_table("db.t").metadata_location
    db = Path(location.removeprefix("file://")).parents[4] / "catalog.db"
    py = PySqlCatalog("icewright", uri=f"sqlite:///{db}", warehouse=f"file://{db.parent}/warehouse")
    return py.load_table("db.t").scan().to_arrow().to_pylist()
