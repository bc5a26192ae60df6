"""Airflow as a deployment runs it, on one machine: ``airflow api-server --apps
execution``, ``scheduler`` (LocalExecutor), ``dag-processor`` and ``triggerer``, each its
own process (group), on a migrated :class:`~tests.support.airflow.AirflowHome`.

This is what the promises about scheduling are tested on: the dag-processor re-parses
every file every few seconds and rewrites asset watchers as it goes, the scheduler
creates runs from stored asset events, tasks run in worker processes that talk to the
execution API. ``airflow dags test`` and single scheduler loops show none of that.

Usage (one deployment serves a whole test module; it is started once)::

    deployment = Deployment(home, env={...})
    deployment.start()
    deployment.wait_parsed({"writer", "downstream"})
    deployment.trigger("writer")
    deployment.restart("triggerer")
    deployment.stop()
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from tests.support.airflow import AIRFLOW_BIN, AirflowHome, airflow, explain

__all__ = ["COMPONENTS", "Deployment", "free_port"]

COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
T = TypeVar("T")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Deployment:
    """The four Airflow processes on ``home`` (its metadata database, its DAGs folder as
    ``env`` names it), logging to ``<home>/logs/<component>-<n>.log``."""

    def __init__(
        self, home: AirflowHome, env: Mapping[str, str], *, apps: str = "execution"
    ) -> None:
        """``apps``: the api-server's apps; ``"all"`` adds the public REST API (every
        request an admin's: :meth:`api`), for tests that act as a user in the UI would."""
        self.home = home
        self.apps = apps
        self.port = free_port()
        self.env = {
            **home.env,
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": (f"http://127.0.0.1:{self.port}/execution/"),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(16),
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            # parse every file every 2 s: the watcher rewrites of issue 26 showed at once
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "2",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.5",
            "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            **env,
        }
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self._count: dict[str, int] = {}

    @property
    def db(self) -> Path:
        return self.home.path / "airflow.db"

    def _args(self, component: str) -> list[str]:
        if component == "api-server":
            return ["api-server", "--apps", self.apps, "--host", "127.0.0.1",
                    "--port", str(self.port), "--workers", "1"]  # fmt: skip
        if component == "triggerer":
            return ["triggerer", "--skip-serve-logs"]
        if component == "scheduler":
            return ["scheduler", "--skip-serve-logs"]
        return [component]

    def start(self, components: Iterable[str] = COMPONENTS) -> None:
        """Start ``components`` (all four by default)."""
        for component in components:
            n = self._count[component] = self._count.get(component, 0) + 1
            log = self.home.path / "logs" / f"{component}-{n}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            self.logs[component] = log
            with log.open("wb") as out:
                self.procs[component] = subprocess.Popen(
                    [str(AIRFLOW_BIN), *self._args(component)],
                    env=self.env,
                    cwd=str(self.home.path),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )

    def stop(self, components: Iterable[str] = COMPONENTS, *, kill: bool = False) -> None:
        """Stop ``components`` (SIGTERM, then SIGKILL after 60 s; ``kill``: SIGKILL at
        once, as a crash or the end of a test does), each with its children."""
        for component in components:
            proc = self.procs.pop(component, None)
            if proc is None or proc.poll() is not None:
                continue
            if kill:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                continue
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def restart(self, component: str) -> None:
        self.stop([component])
        self.start([component])

    def log(self, component: str) -> str:
        path = self.logs.get(component)
        return "" if path is None else path.read_text(errors="replace")

    def tails(self) -> str:
        return "\n".join(
            f"--- {c}\n" + "\n".join(self.log(c).splitlines()[-40:]) for c in self.logs
        )

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db, timeout=60) as conn:
            return conn.execute(sql, args).fetchall()

    def wait_for(self, what: str, check: Callable[[], T], timeout: float = 240) -> T:
        """``check()``'s first truthy value, polled every 0.5 s; fails with the processes'
        log tails after ``timeout`` seconds or when a process died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            dead = [c for c, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise AssertionError(f"{', '.join(dead)} exited waiting for {what}\n{self.tails()}")
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}\n{self.tails()}")

    def wait_parsed(self, dag_ids: set[str], failing: Mapping[str, str] | None = None) -> None:
        """Wait until the dag-processor stored ``dag_ids`` and the import errors of the
        files in ``failing`` (file name: a text its error holds); any other import error
        fails at once."""
        failing = dict(failing or {})

        def parsed() -> bool:
            errors = {
                Path(name).name: str(trace)
                for name, trace in self.query("select filename, stacktrace from import_error")
            }
            unexpected = {n: t for n, t in errors.items() if n not in failing}
            wrong = {n: errors[n] for n, text in failing.items() if text not in errors.get(n, text)}
            if unexpected or wrong:
                raise AssertionError(
                    f"DAG files failed otherwise than expected: {unexpected or wrong}"
                )
            rows = self.query("select dag_id from dag where is_stale = 0")
            return dag_ids <= {r[0] for r in rows} and set(failing) <= set(errors)

        self.wait_for(f"the DAGs {sorted(dag_ids)} to be parsed", parsed)

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``airflow <args>`` against this deployment's database (must succeed)."""
        done = airflow(*args, env=self.env, timeout=timeout)
        assert done.returncode == 0, explain(done, args)
        return done

    def api(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """A request to the public REST API (``/api/v2/<path>``; needs ``apps="all"``), its
        JSON answer."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/v2/{path.lstrip('/')}",
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{method} {path}: {e.code} {e.read()[:2000]!r}") from None

    def trigger(self, dag_id: str, run_id: str) -> None:
        """Start a run of ``dag_id`` named ``run_id`` (the scheduler runs it)."""
        self.cli("dags", "trigger", dag_id, "--run-id", run_id)

    def run_state(self, dag_id: str, run_id: str) -> str | None:
        rows = self.query(
            "select state from dag_run where dag_id = ? and run_id = ?", dag_id, run_id
        )
        return rows[0][0] if rows else None

    def wait_run(self, dag_id: str, run_id: str, timeout: float = 300) -> str:
        """The final state of a run (success or failed)."""
        return self.wait_for(
            f"run {run_id} of {dag_id} to finish",
            lambda: (s := self.run_state(dag_id, run_id)) in ("success", "failed") and s,
            timeout,
        )
