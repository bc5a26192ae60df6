"""Iceberg Java's side of the benchmarks; runs INSIDE ``.venv-java`` (pyspark + the runtime jar).

    python bench/_java_peer.py REQUEST.json

``REQUEST.json``: ``{"jar": ..., "workdir": ..., "requests": [{"op": ..., ...}]}``. The
session is the one the tests' Java peer starts (tests/support/java_env/iceberg_java.py);
one JSON document ``{"startup_seconds": s, "results": [...]}`` goes to the real stdout.

Operations:

- ``plan`` {metadata_location, filters: {name: [[op, column, value], ...]}, repeat}: the
  seconds of each ``table.newScan().filter(f).planFiles()`` run to the end (counted in the
  JVM, so no task crosses py4j), the CPU seconds the JVM used meanwhile (every thread:
  Java plans with a worker pool), and the task count. The table is loaded by its metadata
  location (``StaticTableOperations``); loading is not timed.
- ``incremental`` {metadata_location, from_exclusive, to, repeat}: the seconds of each
  ``table.newIncrementalAppendScan().fromSnapshotExclusive(a).toSnapshot(b).planFiles()``
  run to the end (counted in the JVM), the JVM's CPU seconds meanwhile, and the task count.
  The table is loaded again (not timed) before each plan: a loaded snapshot keeps the
  manifest list it read, and a job that plans a range runs in a fresh process.
- ``procedure`` {sql}: the seconds a Spark SQL statement (an Iceberg procedure) takes,
  and its result rows as strings.
- ``memory`` {}: the JVM's peak resident memory so far (Linux ``VmHWM``), ``jvm_mb``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support" / "java_env"))

import iceberg_java


def _expression(jvm: Any, terms: list[list[Any]]) -> Any:
    exprs = jvm.org.apache.iceberg.expressions.Expressions
    builders = {
        ">=": exprs.greaterThanOrEqual,
        ">": exprs.greaterThan,
        "<": exprs.lessThan,
        "<=": exprs.lessThanOrEqual,
    }
    out = exprs.alwaysTrue()
    for op, column, value in terms:
        out = getattr(exprs, "and")(out, builders[op](column, jvm.java.lang.Long(value)))
    return out


def plan(spark: Any, req: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    j = jvm.org.apache.iceberg
    io = j.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
    table = j.BaseTable(j.StaticTableOperations(req["metadata_location"], io), "bench")
    size = jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size
    jvm_pid = jvm.java.lang.ProcessHandle.current().pid()
    out: dict[str, Any] = {}
    for name, terms in req["filters"].items():
        expr = _expression(jvm, terms)
        seconds = []
        cpu = []
        tasks = 0
        for _ in range(req["repeat"]):
            start, start_cpu = time.perf_counter(), _cpu_seconds(jvm_pid)
            tasks = size(table.newScan().filter(expr).planFiles())
            seconds.append(time.perf_counter() - start)
            cpu.append(_cpu_seconds(jvm_pid) - start_cpu)
        out[name] = {"seconds": seconds, "cpu_seconds": cpu, "tasks": tasks}
    return out


def incremental(spark: Any, req: dict[str, Any]) -> dict[str, Any]:
    jvm = spark._jvm
    j = jvm.org.apache.iceberg
    io = j.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
    size = jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size
    jvm_pid = jvm.java.lang.ProcessHandle.current().pid()
    seconds, cpu, tasks = [], [], 0
    for _ in range(req["repeat"]):
        table = j.BaseTable(j.StaticTableOperations(req["metadata_location"], io), "bench")
        start, start_cpu = time.perf_counter(), _cpu_seconds(jvm_pid)
        scan = (
            table.newIncrementalAppendScan()
            .fromSnapshotExclusive(req["from_exclusive"])
            .toSnapshot(req["to"])
        )
        tasks = size(scan.planFiles())
        seconds.append(time.perf_counter() - start)
        cpu.append(_cpu_seconds(jvm_pid) - start_cpu)
    return {"seconds": seconds, "cpu_seconds": cpu, "tasks": tasks}


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far, every thread (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def procedure(spark: Any, req: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    rows = spark.sql(req["sql"]).collect()
    return {"seconds": time.perf_counter() - start, "rows": [[str(v) for v in r] for r in rows]}


def memory(spark: Any, req: dict[str, Any]) -> dict[str, Any]:
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return {"jvm_mb": int(line.split()[1]) / 1024}
    return {"jvm_mb": None}


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        batch = json.load(handle)
    workdir = batch.get("workdir") or tempfile.mkdtemp(prefix="bench-java-")
    os.makedirs(workdir, exist_ok=True)
    started = time.perf_counter()
    spark = iceberg_java.start_session(batch["jar"], workdir)
    startup = time.perf_counter() - started
    ops = {"plan": plan, "incremental": incremental, "procedure": procedure, "memory": memory}
    results = [ops[req["op"]](spark, req) for req in batch["requests"]]
    json.dump({"startup_seconds": startup, "results": results}, iceberg_java._RESULT_OUT)
    iceberg_java._RESULT_OUT.flush()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
