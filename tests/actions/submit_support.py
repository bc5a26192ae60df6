"""Helpers of the spark-submit tests: a Spark standalone cluster on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_class() -> str:
    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


@dataclass
class Cluster:
    """A running standalone master and worker."""

    master_url: str
    ui_port: int
    logs: Path

    def state(self) -> dict[str, Any]:
        """The master's JSON status (workers, active and completed applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=10) as r:
            doc: dict[str, Any] = json.loads(r.read())
        return doc

    def app_ids(self) -> set[str]:
        s = self.state()
        return {a["id"] for a in [*s.get("activeapps", []), *s.get("completedapps", [])]}


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    out = log.open("wb")
    return subprocess.Popen(
        [spark_class(), *args],
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=20)
            return
        except subprocess.TimeoutExpired:
            continue


CLUSTER_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.memory": "512m",
    "spark.executor.memory": "512m",
    "spark.sql.shuffle.partitions": "2",
    # an executor of a small job spends its time starting: C1 only and the serial
    # collector (as SPARK_SUBMIT_OPTS gives the suite's drivers, tests/conftest.py)
    "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}
"""Spark settings of a small job on :func:`standalone_cluster`."""


@contextmanager
def standalone_cluster(folder: Path, *, cores: int = 1, memory: str = "1g") -> Iterator[Cluster]:
    """Start a master and one worker (``cores`` cores, ``memory`` for its executors) on
    127.0.0.1; stop both at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master = _start(
        [
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1",
            "--port", str(port),
            "--webui-port", str(ui),
        ],
        folder / "master.log",
        env,
    )  # fmt: skip
    processes = [master]
    try:
        url = f"spark://127.0.0.1:{port}"
        worker = _start(
            [
                "org.apache.spark.deploy.worker.Worker", url,
                "--host", "127.0.0.1",
                "--cores", str(cores),
                "--memory", memory,
                "--webui-port", str(worker_ui),
                "--work-dir", str(folder / "work"),
            ],
            folder / "worker.log",
            env,
        )  # fmt: skip
        processes.append(worker)
        cluster = Cluster(url, ui, folder)
        deadline = time.monotonic() + 180
        while True:
            try:
                workers = cluster.state().get("workers", [])
                if any(w.get("state") == "ALIVE" for w in workers):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                raise RuntimeError(
                    "the standalone cluster did not come up:\n"
                    + (folder / "master.log").read_text()[-3000:]
                    + (folder / "worker.log").read_text()[-3000:]
                )
            time.sleep(1)
        yield cluster
    finally:
        for p in reversed(processes):
            _stop(p)


SLOW_SOURCE = '''
import time


def slow(spark):
    """A DataFrame whose one row takes minutes to compute, in an executor."""

    def sleepy(x):
        time.sleep(300)
        return (x, "eu")

    rdd = spark.sparkContext.parallelize(range(1), 1).map(sleepy)
    return spark.createDataFrame(rdd, "id long, region string")
'''


def slow_source_module(folder: Path) -> Path:
    """A module file (shipped with --py-files) with the slow source ``iw_slow:slow``."""
    path = folder / "iw_slow.py"
    path.write_text(SLOW_SOURCE)
    return path
