"""A real Airflow 3 for tests: a temporary ``AIRFLOW_HOME`` with a SQLite metadata database.

The root ``tests/conftest.py`` registers this module as a plugin, so any test asks for
``airflow_home`` by name (never import the fixture)::

    from tests.support.airflow import add_connection, dags_test

    def test_x(airflow_home, tmp_path):
        env = {**airflow_home.env, "ICEWRIGHT_HOME": str(tmp_path / "iw")}
        add_connection(airflow_home, "lake", "icewright", extra={"catalog_type": "sql"})
        done = dags_test("my_dag", DAGS, env=env, logical_date="2026-01-02")
        assert done.returncode == 0, done.stdout + done.stderr
        assert dag_run_state(done) == "success"

What the session fixture :func:`airflow_home` sets up (once per pytest session, because
``airflow db migrate`` takes a while): a temporary directory holding ``airflow.cfg``-free
configuration through ``AIRFLOW__*`` environment variables (SQLite database
``airflow.db``, ``load_examples`` off, no DAG-file pickling of examples, the dags folder
given per call), an ``ICEWRIGHT_HOME`` of its own (``<home>/icewright``: the embedded
default catalog of the DAGs' tasks), and the migrated database. It yields an
:class:`AirflowHome`; its ``env`` is the complete environment for Airflow subprocesses.
The pytest process's own environment is not changed.

:func:`dags_test` runs ``airflow dags test <dag_id> [<logical_date>]`` in a subprocess
with ``AIRFLOW__CORE__DAGS_FOLDER`` pointing at the given folder, that folder on
``PYTHONPATH`` (so a DAG file's helper modules, e.g. a callable source
``orders_source:generate``, import in the task), and the working directory in the home
(Spark's scratch files stay out of the repository). :func:`add_connection` stores a
connection in the metadata database with ``airflow connections add`` (replacing one of
the same id); :func:`connection_env` gives the ``AIRFLOW_CONN_<ID>`` variable instead,
for a single subprocess. :func:`airflow` runs any other ``airflow`` CLI command.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "AirflowHome",
    "add_connection",
    "airflow",
    "airflow_home",
    "connection_env",
    "dag_run_state",
    "dags_test",
    "make_airflow_home",
    "query_metadata_db",
    "run_id_of",
]

REPO = Path(__file__).resolve().parents[2]
AIRFLOW_BIN = Path(sys.executable).with_name("airflow")


@dataclass(frozen=True)
class AirflowHome:
    """A migrated Airflow home: ``path`` (AIRFLOW_HOME), ``env`` (the whole environment for
    Airflow subprocesses, ICEWRIGHT_HOME included) and ``icewright_home``."""

    path: Path
    env: Mapping[str, str]
    icewright_home: Path

    def environment(self, **overrides: str) -> dict[str, str]:
        """``env`` with ``overrides`` (e.g. ``ICEWRIGHT_HOME=...``)."""
        return {**self.env, **overrides}

    def dags_test(
        self,
        dag_id: str,
        dags_folder: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        logical_date: str | None = None,
        timeout: float = 900,
        conf: Mapping[str, Any] | None = None,
        fresh: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """:func:`dags_test` with this home's environment (``env`` adds to it)."""
        return dags_test(
            dag_id,
            dags_folder,
            env={**self.env, **(env or {})},
            logical_date=logical_date,
            timeout=timeout,
            conf=conf,
            fresh=fresh,
        )


def _base_env(home: Path, icewright_home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        # Nothing of an outer Airflow or icewright configuration leaks in.
        if not k.startswith(("AIRFLOW__", "AIRFLOW_CONN_", "AIRFLOW_VAR_"))
        and k not in ("AIRFLOW_HOME", "ICEWRIGHT_HOME", "AIRFLOW_CONFIG")
    }
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW_CONFIG": str(home / "airflow.cfg"),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            "ICEWRIGHT_HOME": str(icewright_home),
            # Spark in the tasks: local, in UTC, quiet.
            "TZ": "UTC",
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def airflow(
    *args: str,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 600,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``airflow <args>`` with ``env`` (an :class:`AirflowHome`'s ``env``, maybe extended)."""
    if "AIRFLOW_HOME" not in env:
        raise ValueError("env must be an AirflowHome's env (it has no AIRFLOW_HOME)")
    done = subprocess.run(
        [str(AIRFLOW_BIN), *args],
        env=dict(env),
        cwd=str(cwd or env["AIRFLOW_HOME"]),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"airflow {' '.join(args)} exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
    return done


SCHEDULER_LOOP_DONE = "Exiting scheduler loop as requested number of runs"


def scheduler_loop(
    env: Mapping[str, str], timeout: float = 600, grace: float = 5
) -> subprocess.CompletedProcess[str]:
    """One scheduler loop, ``airflow scheduler -n 1 -s``, with ``env``.

    After its loop, Airflow 3.3's LocalExecutor shuts down its workers, waiting for the
    task instances the loop queued (10 to 25 s for the one small task of the downstream
    tests, on 2 cores), and sometimes waits forever for one idle worker process (seen in
    this suite: 31 workers gone, one idle, the scheduler in ``wait``). The loop's work
    (what the tests read from the metadata database: runs, asset events) is done by then,
    so once the scheduler has logged that the loop ended it gets ``grace`` seconds to exit
    and is then stopped with its workers; the result then reads as a success, with the
    loop's output."""
    args = [str(AIRFLOW_BIN), "scheduler", "-n", "1", "-s"]
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            args,
            env=dict(env),
            cwd=env["AIRFLOW_HOME"],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        done_at: float | None = None
        code: int | None = None
        while (code := proc.poll()) is None and time.monotonic() < deadline:
            time.sleep(0.5)
            if done_at is None:
                out.seek(0)
                if SCHEDULER_LOOP_DONE in out.read():
                    done_at = time.monotonic()
            elif time.monotonic() - done_at > grace:
                break
        if code is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = 0 if done_at is not None else -signal.SIGKILL
        out.seek(0)
        return subprocess.CompletedProcess(args, code, out.read(), "")


def make_airflow_home(path: Path) -> AirflowHome:
    """Create and migrate an Airflow home in ``path`` (a new or empty directory)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "dags").mkdir(exist_ok=True)
    icewright_home = path / "icewright"
    icewright_home.mkdir(exist_ok=True)
    env = _base_env(path, icewright_home)
    airflow("db", "migrate", env=env, timeout=900, check=True)
    return AirflowHome(path=path, env=env, icewright_home=icewright_home)


@pytest.fixture(scope="session")
def airflow_home() -> Iterator[AirflowHome]:
    """A migrated temporary Airflow home for the whole session (removed at the end)."""
    root = Path(tempfile.mkdtemp(prefix="icewright-airflow-"))
    try:
        yield make_airflow_home(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def dags_test(
    dag_id: str,
    dags_folder: str | os.PathLike[str],
    *,
    env: Mapping[str, str],
    logical_date: str | None = None,
    timeout: float = 900,
    conf: Mapping[str, Any] | None = None,
    fresh: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``airflow dags test <dag_id> [<logical_date>]`` on the DAG files in ``dags_folder``
    (``conf``: the run's conf, as ``--conf`` takes it).

    ``env`` is an :class:`AirflowHome`'s ``env`` (extended as the test needs: another
    ``ICEWRIGHT_HOME``, ``AIRFLOW_CONN_*`` from :func:`connection_env`). The return code
    is non-zero when the command fails; a finished run's state is in the output
    (:func:`dag_run_state`). ``elapsed`` seconds are added to the result as an attribute.

    The command runs in this process's warm ``airflow dags test``
    (:mod:`tests.support.dags_server`) when the last one served the same environment
    (apart from the connections, variables and ``ICEWRIGHT_HOME``), else in a new one.
    ``fresh`` runs it in a process of its own instead, for a run that needs a Spark
    session of its own (a listener or another static setting given at its start).
    """
    folder = Path(dags_folder).resolve()
    run_env = dict(env)
    run_env["AIRFLOW__CORE__DAGS_FOLDER"] = str(folder)
    paths = [str(folder), str(REPO / "src")]
    if run_env.get("PYTHONPATH"):
        paths.append(run_env["PYTHONPATH"])
    run_env["PYTHONPATH"] = os.pathsep.join(paths)
    args = ["dags", "test", dag_id]
    if logical_date is not None:
        args.append(logical_date)
    if conf is not None:
        args += ["--conf", json.dumps(dict(conf))]
    start = time.monotonic()
    if fresh or os.environ.get("ICEWRIGHT_TEST_WARM_AIRFLOW") == "0":
        done = airflow(*args, env=run_env, timeout=timeout)
    else:
        done = warm_dags_test(run_env).run(args, run_env, timeout=timeout)
    done.elapsed = time.monotonic() - start  # type: ignore[attr-defined]
    return done


class WarmDagsTest:
    """A running :mod:`tests.support.dags_server` (its own process group), started with
    ``env``; :meth:`run` runs one ``airflow`` command in it."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.key = _server_key(env)
        self._dir = Path(tempfile.mkdtemp(prefix="icewright-dags-test-"))
        # -P: the server's folder (which has an airflow.py) is not put on sys.path
        server = [sys.executable, "-P", str(Path(__file__).with_name("dags_server.py"))]
        self.proc = subprocess.Popen(
            [*server, str(self._dir / "server.log")],
            env=dict(env),
            cwd=env["AIRFLOW_HOME"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._runs = 0

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a run with ``env`` may use this server: it is running, and ``env``
        differs from the one it started with only in :data:`PER_RUN` variables."""
        return self.proc.poll() is None and _server_key(env) == self.key

    def run(
        self, args: Sequence[str], env: Mapping[str, str], *, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """``airflow <args>`` with ``env``, as :func:`subprocess.run` would report it;
        the server is stopped and :class:`subprocess.TimeoutExpired` raised after
        ``timeout`` seconds."""
        import select

        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._runs += 1
        out, err = (self._dir / f"{self._runs}.{name}" for name in ("out", "err"))
        request = {
            "argv": list(args),
            "env": dict(env),
            "cwd": env["AIRFLOW_HOME"],
            "stdout": str(out),
            "stderr": str(err),
        }
        command = [str(AIRFLOW_BIN), *args]
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        answer = self.proc.stdout.readline() if ready else ""
        if not answer:
            log = _read(err) + _read(self._dir / "server.log")
            self.close()
            if not ready:
                raise subprocess.TimeoutExpired(command, timeout)
            raise RuntimeError(
                f"the warm airflow dags test exited during {' '.join(args)}:\n{_last_lines(log)}"
            )
        code = int(json.loads(answer)["returncode"])
        done = subprocess.CompletedProcess(command, code, _read(out), _read(err))
        out.unlink(missing_ok=True)
        err.unlink(missing_ok=True)
        return done

    def close(self) -> None:
        """Stop the server and everything it started (its Spark JVM, its workers)."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


class _Slot:
    server: WarmDagsTest | None = None


_WARM = _Slot()
"""This process's warm server (``_WARM.server``), while one runs."""


def warm_dags_test(env: Mapping[str, str]) -> WarmDagsTest:
    """This process's warm ``airflow dags test`` for ``env``: the running one when it
    serves the same environment, else a new one (the old one is stopped: one at a time)."""
    if _WARM.server is not None and _WARM.server.serves(env):
        return _WARM.server
    stop_warm_dags_test()
    _WARM.server = WarmDagsTest(env)
    return _WARM.server


@atexit.register
def stop_warm_dags_test() -> None:
    """Stop this process's warm ``airflow dags test``, if one runs."""
    server, _WARM.server = _WARM.server, None
    if server is not None:
        server.close()


PER_RUN = ("ICEWRIGHT_HOME",)
PER_RUN_PREFIXES = ("AIRFLOW_CONN_", "AIRFLOW_VAR_")
"""Variables a warm ``airflow dags test`` run may set differently from the first run
of its process (read when they are used, not when the process starts)."""


def _server_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    kept = (k for k in env if k not in PER_RUN and not k.startswith(PER_RUN_PREFIXES))
    return tuple(sorted((k, env[k]) for k in kept))


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def dag_run_state(done: subprocess.CompletedProcess[str]) -> str | None:
    """The final DAG run state ``airflow dags test`` reported (``success``, ``failed``), or None."""
    state = None
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        # "Dag run ... state=success" / "DagRun Finished: ... state=failed": last one wins.
        for marker in ("state=", "state: "):
            at = line.rfind(marker)
            if at >= 0 and ("dag run" in line.lower() or "dagrun" in line.lower()):
                word = line[at + len(marker) :].split(",")[0].split()[0].strip("'\"")
                state = word or state
    return state


def connection_env(
    conn_id: str,
    conn_type: str,
    *,
    host: str | None = None,
    login: str | None = None,
    password: str | None = None,
    schema: str | None = None,
    port: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The ``AIRFLOW_CONN_<CONN_ID>`` variable (JSON form) defining a connection."""
    return {f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps(_conn_json(**locals()))}


def _conn_json(
    conn_id: str,
    conn_type: str,
    host: str | None,
    login: str | None,
    password: str | None,
    schema: str | None,
    port: int | None,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"conn_type": conn_type}
    for key, value in (
        ("host", host),
        ("login", login),
        ("password", password),
        ("schema", schema),
        ("port", port),
    ):
        if value is not None:
            body[key] = value
    if extra:
        body["extra"] = dict(extra)
    return body


def add_connection(
    home: AirflowHome,
    conn_id: str,
    conn_type: str,
    *,
    host: str | None = None,
    login: str | None = None,
    password: str | None = None,
    schema: str | None = None,
    port: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Store a connection in ``home``'s metadata database (replacing one with that id)."""
    body = _conn_json(conn_id, conn_type, host, login, password, schema, port, extra)
    airflow("connections", "delete", conn_id, env=home.env)  # absent: fine
    airflow(
        "connections", "add", conn_id, "--conn-json", json.dumps(body), env=home.env, check=True
    )


def _last_lines(text: str, n: int = 60) -> str:
    return "\n".join(text.splitlines()[-n:])


def explain(done: subprocess.CompletedProcess[str], lines: Sequence[str] = ()) -> str:
    """A failure message: the command's return code and the tails of its output."""
    return (
        f"exit {done.returncode}; {' '.join(lines)}\n--- stdout\n{_last_lines(done.stdout)}\n"
        f"--- stderr\n{_last_lines(done.stderr)}"
    )


def query_metadata_db(home: AirflowHome, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """Rows of a SQL query on ``home``'s metadata database (XComs, asset events, runs)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"sqlite:///{home.path / 'airflow.db'}")
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sqlalchemy.text(sql), params)]
    finally:
        engine.dispose()


def run_id_of(done: subprocess.CompletedProcess[str]) -> str:
    """The run id ``airflow dags test`` created (from its output)."""
    import re

    found = re.findall(r"run_id=(\S+?)[,\s]", done.stdout + "\n" + done.stderr)
    if not found:
        raise AssertionError("no run_id in the output of airflow dags test")
    return found[-1]
