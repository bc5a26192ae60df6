"""``airflow dags test <dag_id> <date>`` for several DAGs, one after another, in this one
process (the main job's Airflow stage).

``airflow dags test`` runs its DAG run in its own process, tasks included. Started anew
for each DAG, that process imports Airflow, builds the in-process execution API and
starts the tasks' Spark session every time; here they are started once, and each DAG
run goes through Airflow's own command, with its output in its own log file.

    python examples/airflow_runs.py <date> <log folder> <dag_id>...

The environment is Airflow's (``AIRFLOW_HOME``, the DAGs folder, ...). Standard output
gets one JSON line as each DAG starts (``{"dag_id", "log"}``) and one as it ends
(``{"dag_id", "seconds", "returncode"}``); the runs stop at the first that fails.
What the process prints outside the runs goes to ``<log folder>/airflow-runs.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO


@contextlib.contextmanager
def output_to(stdout: str | os.PathLike[str], stderr: str | os.PathLike[str]) -> Iterator[None]:
    """File descriptors 1 and 2 (and so ``sys.stdout``, ``sys.stderr`` and whatever a
    task's C code prints) write to ``stdout`` and ``stderr`` (may be the same file) for
    the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(stdout, "ab") as out, open(stderr, "ab") as err:
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


def reports_on_stdout(log: str | os.PathLike[str]) -> TextIO:
    """A stream on what standard output is now, for the process's reports; file
    descriptors 1 and 2 then write to ``log`` (appended), so that what the process prints
    outside its runs (threads, the Spark session's end) stays out of the reports."""
    reports = os.fdopen(os.dup(1), "w")
    with open(log, "ab") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    return reports


def airflow_command(argv: Sequence[str]) -> int:
    """Run ``airflow <argv>`` in this process; its exit code (1 for an exception, whose
    traceback is printed)."""
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


def main() -> int:
    date, logs, *dag_ids = sys.argv[1:]
    report = reports_on_stdout(Path(logs) / "airflow-runs.log")
    for dag_id in dag_ids:
        log = Path(logs) / f"dags-test-{dag_id}-{date}.log"
        log.unlink(missing_ok=True)
        report.write(json.dumps({"dag_id": dag_id, "log": str(log)}) + "\n")
        report.flush()
        start = time.monotonic()
        with output_to(log, log):
            code = airflow_command(["dags", "test", dag_id, date])
        seconds = time.monotonic() - start
        report.write(json.dumps({"dag_id": dag_id, "seconds": seconds, "returncode": code}) + "\n")
        report.flush()
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
