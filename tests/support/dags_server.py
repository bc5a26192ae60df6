"""A warm ``airflow dags test``: one process that runs the command again and again.

Most of an ``airflow dags test`` of a small DAG is starting things: importing Airflow,
building its in-process execution API, starting the tasks' local Spark session and
warming its JVM (measured on the 2-core machine: 26.7 s for the first run of
``tests/operators/dags/icewright_operator_checks.py``, about 1 s for each further run
in the same process). Airflow's CLI runs the command in-process (``dag.test()``, the
tasks in the same process), so a process that calls the CLI's own entry point for
each run does what a new ``airflow dags test`` process does, without the start.

Client side: :class:`WarmDagsTest` (used by :func:`tests.support.airflow.dags_test`)
starts ``python -m tests.support.dags_server`` with an environment, sends it one JSON
request per run on its standard input and reads one JSON answer per run from it.

A request is ``{"argv": [...], "env": {...}, "cwd": ..., "stdout": path, "stderr":
path}``: the server sets ``os.environ`` to ``env`` and the working directory, points
its file descriptors 1 and 2 at the two files for the run (what the command and its
tasks print, Python and C alike), runs ``airflow <argv>`` and answers
``{"returncode": n}`` (a ``SystemExit``'s code, 1 for any other exception, whose
traceback goes to the run's standard error).

What stays from run to run is what the process started: Airflow's settings read at
import (the metadata database, the DAGs folder), the Spark session and its JVM, and
the Python workers that JVM started with the first run's environment. The client
therefore keeps a server only for runs whose environment is the same apart from the
variables a run may change (:data:`PER_RUN`), and starts a new one otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any, TextIO

PER_RUN_PREFIXES = ("AIRFLOW_CONN_", "AIRFLOW_VAR_")
PER_RUN = ("ICEWRIGHT_HOME",)
"""Variables a run may set differently from the server's first run (read when used)."""


@contextlib.contextmanager
def _output_to(stdout: str, stderr: str) -> Iterator[None]:
    """File descriptors 1 and 2 (and so ``sys.stdout`` and ``sys.stderr``) write to
    ``stdout`` and ``stderr`` for the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _run(argv: list[str]) -> int:
    from airflow.__main__ import main

    sys.argv = ["airflow", *argv]
    try:
        main()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def serve(requests: TextIO, answers: TextIO) -> None:
    """Answer each request line of ``requests`` with a line on ``answers``."""
    for line in requests:
        request: dict[str, Any] = json.loads(line)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        with _output_to(request["stdout"], request["stderr"]):
            code = _run(request["argv"])
        answers.write(json.dumps({"returncode": code}) + "\n")
        answers.flush()


def main() -> None:
    """Serve on standard input and output; between runs, what threads print goes to
    the log file named by the first argument (a run's output goes to its own files)."""
    answers = os.fdopen(os.dup(1), "w")
    with open(sys.argv[1], "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    serve(sys.stdin, answers)


if __name__ == "__main__":
    main()
