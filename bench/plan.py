"""Scan planning benchmark: icewright against pyiceberg 0.12 and Iceberg Java, in one run.

Builds a table of ``--files`` data files (default 100,000) in ``--manifests`` manifests
(default 100; the files of bench/_common.py, 30 days spread over every manifest) in a
SQLite catalog, then plans three scans of it with each engine:

- one day of ``ts`` (a partition filter: manifests pruned by partition summaries are
  none, entries pruned by partition value are 29 in 30);
- an ``id`` range (a metrics filter: two files of each manifest hold such ids);
- the whole table (no filter).

icewright plans each twice: with every column metric in the tasks (its default, and what
pyiceberg gives, so compared with pyiceberg) and with ``column_stats=False`` (only the
metrics the filter reads: what Java's ``planFiles()`` gives without
``includeColumnStats()``, so compared with Java). Each engine plans in its own process
(icewright and pyiceberg: a child Python process that loads the table from the catalog;
Iceberg Java: ``table.newScan().filter(f).planFiles()`` through the py4j gateway of a
local Spark session in ``.venv-java``, the table loaded by metadata location). Loading
is not timed; each figure is the median of ``--repeat`` plans. The peak resident memory
of each Python child is reported. Java's ``planFiles()`` is lazy and its side counts the
tasks without holding them, so the whole table is also streamed through icewright
(``TableScan.iter_tasks``, a manifest at a time) and that figure printed beside Java's.

    flock /tmp/icewright-heavy.lock .venv/bin/python bench/plan.py [--files 100000]
        [--manifests 100] [--repeat 3] [--keep DIR] [--no-java] [--no-pyiceberg]
        [--only icewright]

The incremental case builds a second table of the same ``--files`` in
``--snapshots`` (default 1,000) fast appends, one manifest each, and plans the files the
last ``--range`` (default 10) snapshots appended: icewright's
``plan_appends(snapshot_range(A, B))``, pyiceberg's
``incremental_append_scan(A, B).plan_files()`` and Iceberg Java's
``newIncrementalAppendScan().fromSnapshotExclusive(A).toSnapshot(B).planFiles()``. Each
plan starts cold, as a job that reads a range runs in a fresh process: icewright keeps
no manifest list between plans, pyiceberg's manifest cache is cleared and Java's table
loaded again before each (not timed). icewright's tasks carry every column metric,
pyiceberg's too, Java's none.

``--keep DIR`` builds the tables in DIR once and reuses them on later runs; ``--case``
runs only the filter plans (``scan``) or only the incremental one. The last lines read
``plan: icewright/pyiceberg=<worst ratio> icewright/java=<worst ratio>`` and
``incremental: icewright/pyiceberg=<r> icewright/java=<r>``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import DAY_US, FIRST_DAY, SCHEMA, peak_rss_mb, prepared_files, run_java

TABLE = "b.plan"
INCREMENTAL = "b.incremental"
DAY = FIRST_DAY + 7
FILTERS: dict[str, list[tuple[str, str, int]]] = {
    "one day (ts range)": [(">=", "ts", DAY * DAY_US), ("<", "ts", (DAY + 1) * DAY_US)],
    "id range (metrics)": [(">=", "id", 5_000_000), ("<=", "id", 5_010_000)],
    "whole table": [],
}


def catalog_uri(root: Path) -> str:
    return f"sqlite:///{root}/catalog.db"


def build(root: Path, files: int, appends: int, name: str = TABLE) -> str:
    """Table ``name``'s metadata location: ``files`` in ``appends`` fast appends (a
    snapshot and a manifest each); built in ``root`` unless it is there already."""
    from icewright.catalog import SqlCatalog
    from icewright.commit.append import FastAppend
    from icewright.commit.update import commit_updates
    from icewright.spec.partitioning import build_partition_spec

    root.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=catalog_uri(root), warehouse=str(root / "wh"))
    if catalog.table_exists(name):
        table = catalog.load_table(name)
        print(f"reusing {table.metadata_location}")
        return table.metadata_location
    if not catalog.namespace_exists("b"):
        catalog.create_namespace("b")
    table = catalog.create_table(name, SCHEMA, build_partition_spec(SCHEMA, [("day", "ts")]))
    per_append = files // appends
    start = time.perf_counter()
    batch = 10  # appends per commit: bounds the DataFiles held at once
    for first in range(0, appends, batch):
        updates = [
            FastAppend(table, prepared_files(table.location, per_append, f"m{n:05d}"))
            for n in range(first, min(first + batch, appends))
        ]
        table = commit_updates(table, updates).table
    print(
        f"built {per_append * appends} files in {appends} appends of one manifest "
        f"in {time.perf_counter() - start:.1f}s"
    )
    return table.metadata_location


def incremental_range(metadata: Any, length: int) -> tuple[int, int]:
    """(A, B): the snapshot before the last ``length`` of main, and main's head."""
    line: list[int] = []
    snapshot = metadata.current_snapshot()
    while snapshot is not None and len(line) <= length:
        line.append(snapshot.snapshot_id)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)
    return line[length], line[0]


# --- children ------------------------------------------------------------------------------


def icewright_child(root: Path, repeat: int) -> dict[str, Any]:
    from icewright.catalog import SqlCatalog
    from icewright.expressions import (
        ALWAYS_TRUE,
        Expression,
        and_,
        greater_than,
        greater_than_or_equal,
        less_than,
        less_than_or_equal,
    )
    from icewright.scan import plan_files

    builders = {
        ">=": greater_than_or_equal,
        ">": greater_than,
        "<": less_than,
        "<=": less_than_or_equal,
    }
    table = SqlCatalog("bench", uri=catalog_uri(root), warehouse=str(root / "wh")).load_table(TABLE)
    before = peak_rss_mb()
    out: dict[str, Any] = {}
    for name, terms in FILTERS.items():
        expr: Expression = ALWAYS_TRUE
        for op, column, value in terms:
            expr = and_(expr, builders[op](column, value))
        for stats in (True, False):
            seconds = []
            tasks = 0
            cpu = []
            for _ in range(repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                planned = plan_files(table, filter=expr, column_stats=stats)
                seconds.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
                tasks = len(planned)
                del planned  # freed outside the clock, as Java's collector frees its plan later
            out[name if stats else f"{name} (no stats)"] = {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "tasks": tasks,
            }
    return {"filters": out, "rss_before_mb": before, "peak_rss_mb": peak_rss_mb()}


def stream_child(root: Path, repeat: int) -> dict[str, Any]:
    """The whole table planned a manifest at a time (TableScan.iter_tasks): time, memory."""
    from icewright.catalog import SqlCatalog
    from icewright.scan import TableScan

    table = SqlCatalog("bench", uri=catalog_uri(root), warehouse=str(root / "wh")).load_table(TABLE)
    before = peak_rss_mb()
    start = time.perf_counter()
    tasks = sum(1 for _ in TableScan.of(table).iter_tasks())
    seconds = time.perf_counter() - start
    peak = peak_rss_mb()
    # what Java's side does: planFiles() counted to the end, without column metrics
    lean = []
    for _ in range(repeat):
        start = time.perf_counter()
        sum(1 for _ in TableScan.of(table).with_column_stats(False).iter_tasks())
        lean.append(time.perf_counter() - start)
    return {
        "tasks": tasks,
        "seconds": seconds,
        "no_stats_seconds": lean,
        "rss_before_mb": before,
        "peak_rss_mb": peak,
    }


def pyiceberg_child(root: Path, repeat: int) -> dict[str, Any]:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import (
        AlwaysTrue,
        And,
        BooleanExpression,
        GreaterThan,
        GreaterThanOrEqual,
        LessThan,
        LessThanOrEqual,
    )

    builders: dict[str, Any] = {
        ">=": GreaterThanOrEqual,
        ">": GreaterThan,
        "<": LessThan,
        "<=": LessThanOrEqual,
    }
    table = SqlCatalog("bench", uri=catalog_uri(root)).load_table(TABLE)
    before = peak_rss_mb()
    out: dict[str, Any] = {}
    for name, terms in FILTERS.items():
        expr: BooleanExpression = AlwaysTrue()
        for op, column, value in terms:
            expr = And(expr, builders[op](column, value))
        seconds = []
        tasks = 0
        for _ in range(repeat):
            start = time.perf_counter()
            planned = list(table.scan(row_filter=expr).plan_files())
            seconds.append(time.perf_counter() - start)
            tasks = len(planned)
            del planned
        out[name] = {"seconds": seconds, "tasks": tasks}
    return {"filters": out, "rss_before_mb": before, "peak_rss_mb": peak_rss_mb()}


def expire_child(root: Path, repeat: int) -> dict[str, Any]:
    """A dry-run expire of every snapshot but the newest, file cleanup included (it reads
    every manifest for the paths the kept snapshot still reaches): time, memory. A dry run
    deletes nothing, so a kept table stays reusable."""
    from icewright.catalog import SqlCatalog
    from icewright.commit.expire import expire_snapshots

    table = SqlCatalog("bench", uri=catalog_uri(root), warehouse=str(root / "wh")).load_table(TABLE)
    before = peak_rss_mb()
    start = time.perf_counter()
    result = expire_snapshots(
        table, older_than_ms=int(time.time() * 1000), retain_last=1, dry_run=True
    )
    seconds = time.perf_counter() - start
    return {
        "snapshots": len(result.expired_snapshot_ids),
        "seconds": seconds,
        "rss_before_mb": before,
        "peak_rss_mb": peak_rss_mb(),
    }


def incremental_child(root: Path, repeat: int, length: int) -> dict[str, Any]:
    """icewright's plan of the last ``length`` snapshots' appends."""
    from icewright.catalog import SqlCatalog
    from icewright.scan.incremental import plan_appends, snapshot_range

    catalog = SqlCatalog("bench", uri=catalog_uri(root), warehouse=str(root / "wh"))
    table = catalog.load_table(INCREMENTAL)
    a, b = incremental_range(table.metadata, length)
    seconds, cpu, tasks = [], [], 0
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        plan = plan_appends(table.metadata, table.io, snapshot_range(table.metadata, a, b))
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        tasks = len(plan.tasks)
        del plan
    return {"seconds": seconds, "cpu_seconds": cpu, "tasks": tasks, "range": [a, b]}


def incremental_pyiceberg_child(root: Path, repeat: int, length: int) -> dict[str, Any]:
    """pyiceberg's incremental append scan of the same range, its manifest cache cleared
    before each plan."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.manifest import clear_manifest_cache

    table = SqlCatalog("bench", uri=catalog_uri(root)).load_table(INCREMENTAL)
    a, b = incremental_range(table.metadata, length)
    seconds, tasks = [], 0
    for _ in range(repeat):
        clear_manifest_cache()
        start = time.perf_counter()
        scan = table.incremental_append_scan(
            from_snapshot_id_exclusive=a, to_snapshot_id_inclusive=b
        )
        planned = list(scan.plan_files())
        seconds.append(time.perf_counter() - start)
        tasks = len(planned)
        del planned
    return {"seconds": seconds, "tasks": tasks, "range": [a, b]}


def run_child(kind: str, root: Path, repeat: int, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            *(sys.executable, __file__, "--child", kind, "--keep", str(root)),
            *("--repeat", str(repeat), *extra),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def java_plan(root: Path, metadata_location: str, repeat: int) -> dict[str, Any]:
    answer = run_java(
        [
            {
                "op": "plan",
                "metadata_location": metadata_location,
                "filters": {name: [list(t) for t in terms] for name, terms in FILTERS.items()},
                "repeat": repeat,
            }
        ],
        str(root / "java"),
    )
    return {"filters": answer["results"][0]}


# --- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--manifests", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the table here once and reuse it")
    parser.add_argument("--no-java", action="store_true", help="skip Iceberg Java")
    parser.add_argument(
        "--no-pyiceberg", action="store_true", help="skip pyiceberg (100 s a plan at 1M files)"
    )
    parser.add_argument("--only", choices=["icewright"], help="time icewright alone")
    parser.add_argument(
        "--case", choices=["all", "scan", "incremental"], default="all", help="what to plan"
    )
    parser.add_argument(
        "--snapshots", type=int, default=1_000, help="snapshots of the incremental table"
    )
    parser.add_argument(
        "--range", type=int, default=10, help="the last N snapshots the incremental plan reads"
    )
    parser.add_argument(
        "--child",
        choices=["icewright", "stream", "expire", "pyiceberg", "incremental", "incremental-py"],
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()

    if args.child in ("incremental", "incremental-py"):
        ranged = incremental_child if args.child == "incremental" else incremental_pyiceberg_child
        print(json.dumps(ranged(args.keep, args.repeat, args.range)))
        return
    if args.child:
        child = {"icewright": icewright_child, "stream": stream_child, "expire": expire_child}.get(
            args.child, pyiceberg_child
        )
        print(json.dumps(child(args.keep, args.repeat)))
        return

    root = args.keep or Path(tempfile.mkdtemp(prefix="icewright-bench-plan-"))
    if args.case != "incremental":
        plan_filters(root, args)
    if args.case != "scan":
        plan_incremental(root, args)


def plan_incremental(root: Path, args: argparse.Namespace) -> None:
    """The incremental case: print the three engines' plans and the ratio line."""
    metadata_location = build(root, args.files, args.snapshots, INCREMENTAL)
    extra = ("--range", str(args.range))
    results = {"icewright": run_child("incremental", root, args.repeat, *extra)}
    if args.only is None and not args.no_pyiceberg:
        results["pyiceberg"] = run_child("incremental-py", root, args.repeat, *extra)
    if args.only is None and not args.no_java:
        a, b = results["icewright"]["range"]
        answer = run_java(
            [
                {
                    "op": "incremental",
                    "metadata_location": metadata_location,
                    "from_exclusive": a,
                    "to": b,
                    "repeat": args.repeat,
                }
            ],
            str(root / "java"),
        )
        results["java"] = answer["results"][0]
    tasks = {kind: r["tasks"] for kind, r in results.items()}
    if len(set(tasks.values())) != 1:
        raise SystemExit(f"incremental: the engines disagree on the task count: {tasks}")
    ours = statistics.median(results["icewright"]["seconds"])
    line = (
        f"last {args.range} of {args.snapshots} snapshots ({tasks['icewright']:,} tasks)   "
        f"icewright {ours:6.3f}s"
    )
    ratios = {}
    for peer in ("pyiceberg", "java"):
        if peer in results:
            theirs = statistics.median(results[peer]["seconds"])
            ratios[peer] = ours / theirs
            line += f"   {peer} {theirs:6.3f}s"
    if "java" in results:
        line += (
            f"   (CPU: icewright {statistics.median(results['icewright']['cpu_seconds']):.3f}s,"
            f" java {statistics.median(results['java']['cpu_seconds']):.3f}s)"
        )
    print(line)
    print(
        f"incremental: icewright/pyiceberg={ratios.get('pyiceberg', float('nan')):.2f} "
        f"icewright/java={ratios.get('java', float('nan')):.2f}"
    )


def plan_filters(root: Path, args: argparse.Namespace) -> None:
    """The filter plans over the table of ``--files`` in ``--manifests``."""
    metadata_location = build(root, args.files, args.manifests)
    results = {"icewright": run_child("icewright", root, args.repeat)}
    stream = run_child("stream", root, args.repeat)
    expired = run_child("expire", root, 1)
    if args.only is None and not args.no_pyiceberg:
        results["pyiceberg"] = run_child("pyiceberg", root, args.repeat)
    if args.only is None and not args.no_java:
        results["java"] = java_plan(root, metadata_location, args.repeat)

    def median(kind: str, name: str, what: str = "seconds") -> float:
        return statistics.median(results[kind]["filters"][name][what])

    # pyiceberg's tasks carry every column metric, as icewright's do by default; Java's
    # planFiles() leaves them out (no includeColumnStats()), as column_stats=False does.
    worst: dict[str, float] = {}
    for name in FILTERS:
        tasks = {kind: r["filters"][name]["tasks"] for kind, r in results.items()}
        if len(set(tasks.values())) != 1:
            raise SystemExit(f"{name}: the engines disagree on the task count: {tasks}")
        for peer, ours_name in (("pyiceberg", name), ("java", f"{name} (no stats)")):
            ours = median("icewright", ours_name)
            line = f"{ours_name:31s} {tasks['icewright']:>9,} tasks   icewright {ours:6.2f}s"
            if peer in results:
                ratio = ours / median(peer, name)
                worst[peer] = max(worst.get(peer, 0.0), ratio)
                line += f"   {peer} {median(peer, name):6.2f}s   ratio {ratio:.2f}"
            if peer == "java" and "java" in results:
                # CPU time of every thread: Java plans with a pool of worker threads
                line += (
                    f"   (CPU: icewright {median('icewright', ours_name, 'cpu_seconds'):.2f}s,"
                    f" java {median('java', name, 'cpu_seconds'):.2f}s)"
                )
            print(line)
    for kind in ("icewright", "pyiceberg"):
        if kind in results:
            r = results[kind]
            print(
                f"{kind} planning process: peak RSS {r['peak_rss_mb']:.0f} MiB "
                f"({r['rss_before_mb']:.0f} MiB after loading the table)"
            )
    print(
        f"icewright whole table a manifest at a time (TableScan.iter_tasks, all column "
        f"metrics): {stream['tasks']:,} tasks in {stream['seconds']:.2f}s, peak RSS "
        f"{stream['peak_rss_mb']:.0f} MiB ({stream['rss_before_mb']:.0f} MiB after loading)"
    )
    if "java" in results:
        streamed = statistics.median(stream["no_stats_seconds"])
        java_whole = median("java", "whole table")
        print(
            f"icewright whole table streamed without column metrics (iter_tasks counted, as "
            f"the Java side counts planFiles()): {streamed:.2f}s   java {java_whole:.2f}s   "
            f"ratio {streamed / java_whole:.2f}"
        )
    print(
        f"icewright expire dry run ({expired['snapshots']} snapshots, file cleanup planned): "
        f"{expired['seconds']:.2f}s, peak RSS {expired['peak_rss_mb']:.0f} MiB "
        f"({expired['rss_before_mb']:.0f} MiB after loading)"
    )
    print(
        f"plan: icewright/pyiceberg={worst.get('pyiceberg', float('nan')):.2f} "
        f"icewright/java={worst.get('java', float('nan')):.2f}"
    )


if __name__ == "__main__":
    main()
