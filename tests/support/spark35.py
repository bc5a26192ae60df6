"""One pyspark 3.5 driver process for the tests that run a job on pyspark 3.5.

Tests ask for the ``spark35`` fixture (``tests.support.spark``) and hand it a script as
they would run it with ``.venv-java``'s ``python -c SOURCE ARGV...``::

    done = spark35.run(SOURCE, [arg, ...], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

Starting pyspark 3.5 is a JVM and its first job's class loading: about 4-5 s on the
2-core machine, while a second SparkSession in the same JVM starts in under 0.1 s. So
one ``.venv-java`` Python process serves every script of the run: each script runs as
``__main__`` (its own namespace, ``sys.argv`` and working directory, its output
captured) and builds its own SparkSession with its own settings; after it the runner
stops that session, so the next script starts from none. What scripts share is the
process: its environment (``.venv-java``'s Python and pyspark, ``PYTHONPATH`` on this
checkout's ``src``, ``TZ=UTC``, no Spark 4 variables of the main environment), the
imported modules and the JVM with the launch options of the first session.

A script that kills its interpreter (or runs past the timeout) costs a new process
for the next one; its result says what happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tests.support.class_archive import without_class_archive
from tests.support.java import REPO, ensure_java_env, java_venv

__all__ = ["Spark35", "Spark35Result"]

# Runs in .venv-java's Python: one JSON request a line on stdin, one JSON answer a line
# on the file descriptor given as argv[1] (fds 1 and 2 belong to the JVM and the log).
_RUNNER = r"""
import contextlib, io, json, os, sys, traceback

answers = os.fdopen(int(sys.argv[1]), "w", buffering=1)


def stop_spark():
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if session is not None:
        session.stop()
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()


for line in sys.stdin:
    job = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        os.chdir(job["cwd"])
        sys.argv = [job["name"], *job["argv"]]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(job["source"], job["name"], "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            err.write(f"{e.code}\n")
    except BaseException:
        code = 1
        err.write(traceback.format_exc())
    finally:
        try:
            stop_spark()
        except Exception:
            err.write(traceback.format_exc())
        sys.stdout.flush()
        sys.stderr.flush()
    answer = {"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
    answers.write(json.dumps(answer) + "\n")
"""

_DROPPED_ENV = {"SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "PYTHONHOME", "VIRTUAL_ENV"}


@dataclass(frozen=True)
class Spark35Result:
    """What a script did, as :class:`subprocess.CompletedProcess` tells it: ``stderr``
    holds the script's own error output, then the process's log (the JVM's) written
    while it ran."""

    returncode: int
    stdout: str
    stderr: str


class Spark35:
    """The shared ``.venv-java`` process (started on the first :meth:`run`)."""

    def __init__(self, timeout: float = 600.0) -> None:
        self.timeout = timeout
        self.starts = 0
        self._dir = tempfile.TemporaryDirectory(prefix="icewright-spark35-")
        self._log_path = Path(self._dir.name) / "log.txt"
        self._process: subprocess.Popen[str] | None = None
        self._answers: IO[str] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def python() -> Path:
        return java_venv() / "bin" / "python"

    def _env(self) -> dict[str, str]:
        python = str(self.python())
        outer = without_class_archive(dict(os.environ))
        env = {k: v for k, v in outer.items() if k not in _DROPPED_ENV}
        env.update(
            # .venv-java has icewright's runtime dependencies (java_env/requirements.txt)
            PYTHONPATH=str(REPO / "src"),
            PYSPARK_PYTHON=python,
            PYSPARK_DRIVER_PYTHON=python,
            TZ="UTC",
        )
        return env

    def _start(self) -> None:
        ensure_java_env()  # (re)builds .venv-java when its requirements changed
        read_fd, write_fd = os.pipe()
        log = self._log_path.open("a", encoding="utf-8")
        try:
            self._process = subprocess.Popen(
                [str(self.python()), "-c", _RUNNER, str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                env=self._env(),
                cwd=self._dir.name,
                text=True,
                pass_fds=(write_fd,),
            )
        finally:
            os.close(write_fd)
            log.close()
        self._answers = os.fdopen(read_fd, "r", encoding="utf-8")
        self.starts += 1

    def _stop(self) -> None:
        process, self._process = self._process, None
        answers, self._answers = self._answers, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if answers is not None:
            answers.close()

    def _read_answer(self) -> str:
        """The next answer line ('' if the process ended first); the process is killed
        after ``timeout`` seconds without one."""
        assert self._answers is not None and self._process is not None
        process = self._process
        timer = threading.Timer(self.timeout, process.kill)
        timer.start()
        try:
            return self._answers.readline()
        finally:
            timer.cancel()

    def run(self, source: str, argv: list[str], *, cwd: Path, name: str = "<job>") -> Spark35Result:
        """Run ``source`` as ``python -c source *argv`` would, in directory ``cwd``."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._stop()
                self._start()
            assert self._process is not None and self._process.stdin is not None
            offset = self._log_path.stat().st_size
            request = {"source": source, "argv": argv, "cwd": str(cwd), "name": name}
            try:
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
                line = self._read_answer()
            except OSError:
                line = ""
            with self._log_path.open(encoding="utf-8", errors="replace") as f:
                f.seek(offset)
                log = f.read()
            if not line:
                code = self._process.poll()
                self._stop()
                return Spark35Result(
                    -9 if code is None else code,
                    "",
                    f"the pyspark 3.5 process ended (exit {code}) or gave no answer within "
                    f"{self.timeout} s; its log:\n{log}",
                )
            answer: dict[str, Any] = json.loads(line)
            return Spark35Result(answer["returncode"], answer["stdout"], answer["stderr"] + log)

    def close(self) -> None:
        with self._lock:
            self._stop()
        self._dir.cleanup()
