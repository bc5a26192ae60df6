"""A warm ``airflow dags test``: one process that runs the command again and again.

Most of an ``airflow dags test`` of a small DAG is starting things: importing Airflow,
building its in-process execution API, starting the tasks' local Spark session and
warming its JVM (measured on the 2-core machine: 26.7 s for the first run of
``tests/operators/dags/icewright_operator_checks.py``, about 1 s for each further run
in the same process). Airflow's CLI runs the command in-process (``dag.test()``, the
tasks in the same process), so a process that calls the CLI's own entry point for
each run does what a new ``airflow dags test`` process does, without the start.

Client side: :class:`tests.support.airflow.WarmDagsTest` (used by
:func:`tests.support.airflow.dags_test`) starts ``python -P tests/support/dags_server.py
<log file>`` with an environment, sends it one JSON request per run on its standard
input and reads one JSON answer per run from its standard output.

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
variables a run may change (``tests.support.airflow.PER_RUN``), and starts a new one
otherwise.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

# the main job's Airflow stage runs its DAGs in one process the same way
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from airflow_runs import airflow_command, output_to, reports_on_stdout


def serve(requests: TextIO, answers: TextIO) -> None:
    """Answer each request line of ``requests`` with a line on ``answers``."""
    for line in requests:
        request: dict[str, Any] = json.loads(line)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        with output_to(request["stdout"], request["stderr"]):
            code = airflow_command(request["argv"])
        answers.write(json.dumps({"returncode": code}) + "\n")
        answers.flush()


def main() -> None:
    """Serve on standard input and output; between runs, what threads print goes to
    the log file named by the first argument (a run's output goes to its own files)."""
    serve(sys.stdin, reports_on_stdout(sys.argv[1]))


if __name__ == "__main__":
    main()
