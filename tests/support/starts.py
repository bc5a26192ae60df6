"""How many expensive processes a test run started, printed at its end.

The suite's time goes mostly to starting things: Spark drivers, JVMs (Iceberg Java, the
REST catalog server, the standalone cluster), Airflow and Dagster commands. Every
process a test process starts goes through ``subprocess.Popen`` (``subprocess.run`` and
PySpark's gateway launcher included), so this plugin counts them there, by what the
command line runs, and the terminal summary prints the totals of every worker. Processes
those processes start in turn (the Spark job of an Airflow task) are not counted: they
belong to the start that launched them.
"""

from __future__ import annotations

import collections
import os
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

import pytest

KINDS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("Iceberg Java peers (.venv-java)", lambda cmd: ".venv-java" in cmd),
    ("Spark sessions (this process)", lambda cmd: "pyspark-shell" in cmd),
    ("spark-submit jobs", lambda cmd: "spark-submit" in cmd),
    ("Spark cluster daemons", lambda cmd: "spark-class" in cmd),
    (
        "other java processes (REST catalog server, ...)",
        lambda cmd: os.path.basename(cmd.split(" ")[0]) == "java",
    ),
    ("warm airflow dags test processes", lambda cmd: "dags_server.py" in cmd),
    ("Airflow commands", lambda cmd: "airflow" in cmd.split(" ")[0] or " -m airflow" in cmd),
    ("Dagster commands", lambda cmd: "dagster" in os.path.basename(cmd.split(" ")[0])),
)
"""What is counted, by a test of the command line (the first kind that matches)."""

STARTS: collections.Counter[str] = collections.Counter()


def _kind(args: Any) -> str | None:
    if isinstance(args, (str, bytes, os.PathLike)):
        cmd = os.fsdecode(args)
    elif isinstance(args, Sequence):
        cmd = " ".join(os.fsdecode(a) for a in args)
    else:
        return None
    return next((name for name, test in KINDS if test(cmd)), None)


_popen_init = subprocess.Popen.__init__


def _counting_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
    kind = _kind(args)
    if kind is not None:
        STARTS[kind] += 1
    _popen_init(self, args, *rest, **kw)


def pytest_configure(config: pytest.Config) -> None:
    """Count from the first test on (the collection starts nothing)."""
    subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]
    config.stash[_TOTALS] = collections.Counter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its counts to the controller (pytest-xdist's ``workeroutput``)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["icewright_starts"] = dict(STARTS)
    else:
        session.config.stash[_TOTALS].update(STARTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller adds up a finished worker's counts."""
    counts = getattr(node, "workeroutput", {}).get("icewright_starts", {})
    node.config.stash[_TOTALS].update(counts)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The totals, one line per kind (nothing when nothing was started)."""
    totals = config.stash[_TOTALS]
    if not totals:
        return
    terminalreporter.section("processes started by the tests")
    for name, _ in KINDS:
        terminalreporter.write_line(f"{totals[name]:6d}  {name}")


_TOTALS = pytest.StashKey[collections.Counter[str]]()
