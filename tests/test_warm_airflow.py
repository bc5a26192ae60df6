"""The warm ``airflow dags test`` (``tests/support/dags_server.py``) runs each command as
a new ``airflow dags test`` process would: with that run's environment, its own output
and its own exit code, and a new process when the environment differs otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import airflow as support
from tests.support.airflow import AirflowHome, dag_run_state, dags_test, explain

pytestmark = pytest.mark.slow

DAG = """
import os
import pendulum
from airflow.sdk import DAG, task

with DAG("icewright_warm_check", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):

    @task
    def show(**context):
        print("home is", os.environ["ICEWRIGHT_HOME"], "mode is", os.environ.get("WARM_MODE"))
        if (context["dag_run"].conf or {}).get("fail"):
            raise RuntimeError("asked to fail")

    show()
"""


def test_runs_share_a_process_but_not_their_environment_or_output(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "icewright_warm_check.py").write_text(DAG)
    env = airflow_home.environment(WARM_MODE="a")

    first = dags_test("icewright_warm_check", dags, env={**env, "ICEWRIGHT_HOME": "/one"})
    assert dag_run_state(first) == "success", explain(first)
    server = _server_pid()
    failed = dags_test(
        "icewright_warm_check", dags, env={**env, "ICEWRIGHT_HOME": "/two"}, conf={"fail": True}
    )
    assert _server_pid() == server  # the same process served both
    assert failed.returncode != 0 and dag_run_state(failed) == "failed", explain(failed)
    assert "asked to fail" in failed.stdout + failed.stderr
    assert "home is /two mode is a" in failed.stdout + failed.stderr
    assert "/one" not in failed.stdout + failed.stderr  # each run has its own output
    assert "home is /one mode is a" in first.stdout + first.stderr

    # another setting read when the process starts: a new process
    other = dags_test("icewright_warm_check", dags, env={**env, "WARM_MODE": "b"})
    assert dag_run_state(other) == "success", explain(other)
    assert _server_pid() != server
    assert "mode is b" in other.stdout + other.stderr


def _server_pid() -> int:
    """The process id of this process's warm server (one must be running)."""
    server = support._WARM.server
    assert server is not None
    return server.proc.pid
