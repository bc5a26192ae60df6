"""Maintenance benchmark: icewright's expire, orphan removal and manifest rewriting against
Iceberg Java's.

Builds two identical tables (``db.ice`` for icewright, ``db.java`` for Iceberg Java) in a
Hadoop-layout warehouse (icewright's FileSystemCatalog; Java's ``hadoop`` catalog reads
the same directories), each:

- ``--history`` one-file appends (default 1,000 snapshots), whose files a delete then
  removes, so expiring those snapshots deletes their data files, manifests and lists;
- ``--files`` live data files (default 100,000) in 100 manifests (bench/_common.py);
- every data file present on disk (empty), plus ``--orphans`` files (default 1,000)
  under ``data/`` that no metadata names, last modified ten days ago.

Then, each engine on its own table: expire every snapshot older than now but the newest
with file cleanup (icewright: ``expire_snapshots``; Java: the ``expire_snapshots``
procedure), then remove orphan files older than a day (``remove_orphan_files``; Java's
procedure). icewright runs in a child process (table loading timed, as the procedures
load theirs), which reports its peak resident memory.

Manifest rewriting runs on two more identical tables (``db.icem``, ``db.javam``) of
``--manifests`` one-manifest appends (default 2,000, what a table appended to every few
minutes gathers in a week) of ``--manifest-files`` files each (default 25), over 30 days:
icewright's ``rewrite_manifests`` (in process) against Java's ``rewrite_manifests``
procedure (a Spark job on its local session), both clustering by partition into manifests
of the default 8 MiB; the live entries must agree in count.

    flock /tmp/icewright-heavy.lock .venv/bin/python bench/maintenance.py
        [--files 100000] [--history 1000] [--orphans 1000]
        [--manifests 2000] [--manifest-files 25] [--distributed] [--cluster]
        [--case deletes [--delete-rows 2000000] [--deletes 40]]

With ``--distributed`` a third identical table (``db.icd``) is expired and cleaned with
``distributed=True`` (the walks as Spark jobs on a local session started before the clock,
as Java's is), and a third manifest table (``db.icdm``) has its manifests rewritten by a
Spark job; their times and ratios are printed next to the in-process path's, with the
number of Spark tasks the walks ran.

With ``--cluster`` (implies ``--distributed``) a Spark standalone master and a 2-core
worker start on 127.0.0.1 (the tests' ``standalone_cluster``), and two more identical
tables are expired and cleaned there, one by an application with one executor of one
core, one with two executors of one core each; their times, task counts and the speedup
of two executors over one are printed.

The last line reads ``maintenance: icewright/java=<worst ratio of expire and orphans>
manifests: icewright/java=<ratio of the manifest rewrite>``.

``--case deletes`` runs only the position delete compaction: Iceberg Java's Spark writes
two identical tables of ``--delete-rows`` rows (default 2,000,000) over 4 partitions,
then ``--deletes`` merge-on-read ``DELETE``s (default 40) of
``write.delete.granularity=partition`` (a delete file per partition and commit);
icewright's ``rewrite --deletes-only`` (local Spark started before the clock) compacts
one, Java's ``rewrite_position_delete_files`` procedure the other; Java then reads both
(count and sum of ids must agree). Last line: ``deletes: icewright/java=<ratio>``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, SCHEMA, peak_rss_mb, prepared_files, run_java

sys.path.insert(0, str(REPO))  # tests.actions.submit_support: the standalone cluster

DAY_S = 86_400
CLUSTER_CORES = (1, 2)
"""Executor cores of the cluster runs (one executor of one core each)."""


def build(warehouse: Path, name: str, files: int, history: int, orphans: int) -> None:
    from icewright.catalog import FileSystemCatalog
    from icewright.commit.append import FastAppend
    from icewright.commit.delete import delete_files
    from icewright.commit.update import commit_updates
    from icewright.spec.partitioning import build_partition_spec

    catalog = FileSystemCatalog("bench", warehouse=str(warehouse))
    if not catalog.namespace_exists("db"):
        catalog.create_namespace("db")
    table = catalog.create_table(
        f"db.{name}", SCHEMA, build_partition_spec(SCHEMA, [("day", "ts")])
    )
    paths: list[str] = []
    old = [f for n in range(history) for f in prepared_files(table.location, 1, f"old-{n:05d}")]
    table = commit_updates(table, [FastAppend(table, [f]) for f in old]).table
    table = delete_files(table, paths=[f.file_path for f in old]).table
    paths += [f.file_path for f in old]
    manifests = 100
    for first in range(0, manifests, 10):
        batch = [
            prepared_files(table.location, files // manifests, f"m{n:05d}")
            for n in range(first, min(first + 10, manifests))
        ]
        table = commit_updates(table, [FastAppend(table, b) for b in batch]).table
        paths += [f.file_path for b in batch for f in b]
    ten_days_ago = time.time() - 10 * DAY_S
    orphan_dir = f"{table.location}/data/ts_day=0"
    orphan_paths = [f"{orphan_dir}/orphan-{i:05d}.parquet" for i in range(orphans)]
    for path in paths + orphan_paths:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb"):
            pass
    for path in orphan_paths:
        os.utime(path, (ten_days_ago, ten_days_ago))


def build_manifests(warehouse: Path, name: str, manifests: int, per_manifest: int) -> None:
    """``manifests`` one-manifest appends of ``per_manifest`` files each, one snapshot each
    (committed a hundred at a time)."""
    from icewright.catalog import FileSystemCatalog
    from icewright.commit.append import FastAppend
    from icewright.commit.update import commit_updates
    from icewright.spec.partitioning import build_partition_spec

    catalog = FileSystemCatalog("bench", warehouse=str(warehouse))
    if not catalog.namespace_exists("db"):
        catalog.create_namespace("db")
    table = catalog.create_table(
        f"db.{name}", SCHEMA, build_partition_spec(SCHEMA, [("day", "ts")])
    )
    for first in range(0, manifests, 100):
        batch = [
            prepared_files(table.location, per_manifest, f"a{n:05d}")
            for n in range(first, min(first + 100, manifests))
        ]
        table = commit_updates(table, [FastAppend(table, b) for b in batch]).table


def spark_tasks(ui: str) -> tuple[int, int]:
    """(tasks, stages) the application of the Spark UI ``ui`` has completed so far."""
    import urllib.request

    def get(path: str) -> Any:
        with urllib.request.urlopen(f"{ui}/api/v1/applications{path}", timeout=30) as r:
            return json.loads(r.read())

    time.sleep(1)  # the UI learns of finished tasks from the listener bus, a moment late
    app = get("")[0]["id"]
    stages = get(f"/{app}/stages?status=complete")
    return sum(s["numCompleteTasks"] for s in stages), len(stages)


def icewright_child(
    warehouse: Path, name: str, distributed: bool = False, master: str | None = None, cores: int = 0
) -> dict[str, Any]:
    from tests.actions.submit_support import CLUSTER_CONF, free_port

    from icewright.actions import expire, remove_orphan_files, rewrite_manifests
    from icewright.catalog import FileSystemCatalog
    from icewright.runners.local import LocalRunner
    from icewright.spark.session import local_session

    catalog = FileSystemCatalog("bench", warehouse=str(warehouse))
    runner = LocalRunner()
    ui = ""
    if distributed:
        port = free_port()
        ui = f"http://127.0.0.1:{port}"
        conf = {"spark.ui.enabled": "true", "spark.ui.port": str(port)}
        if master is not None:
            conf |= {
                **CLUSTER_CONF,
                "spark.master": master,
                "spark.cores.max": str(cores),
                "spark.executor.cores": "1",
                "spark.sql.shuffle.partitions": "4",
            }
        spark = local_session(**conf)
        runner = LocalRunner(spark)
        spark.range(1).count()  # the session starts before the clock
        if master is not None:  # and its executors have registered
            spark.sparkContext.parallelize(range(cores * 4), cores * 4).count()
    before = spark_tasks(ui) if ui else (0, 0)
    start = time.perf_counter()
    expired = expire(
        catalog.load_table(name),
        older_than=int(time.time() * 1000),
        retain_last=1,
        distributed=distributed,
        runner=runner,
    )
    expire_s = time.perf_counter() - start
    after_expire = spark_tasks(ui) if ui else (0, 0)
    start = time.perf_counter()
    removed = remove_orphan_files(
        catalog.load_table(name),
        older_than=int((time.time() - DAY_S) * 1000),
        distributed=distributed,
        runner=runner,
    )
    orphans_s = time.perf_counter() - start
    after_orphans = spark_tasks(ui) if ui else (0, 0)
    start = time.perf_counter()
    rewritten = rewrite_manifests(
        catalog.load_table(f"{name}m"), distributed=distributed, runner=runner
    )
    manifests_s = time.perf_counter() - start
    after_manifests = spark_tasks(ui) if ui else (0, 0)
    return {
        "expire": {
            "seconds": expire_s,
            "tasks": after_expire[0] - before[0],
            "stages": after_expire[1] - before[1],
            "snapshots": len(expired.expired_snapshot_ids),
            "data_files": expired.deleted_data_files,
            "manifests": expired.deleted_manifests,
            "manifest_lists": expired.deleted_manifest_lists,
        },
        "orphans": {
            "seconds": orphans_s,
            "files": len(removed.orphan_paths),
            "tasks": after_orphans[0] - after_expire[0],
            "stages": after_orphans[1] - after_expire[1],
        },
        "manifests": {
            "seconds": manifests_s,
            "replaced": rewritten.manifests_replaced,
            "created": rewritten.manifests_created,
            "entries": rewritten.entries_processed,
            "tasks": after_manifests[0] - after_orphans[0],
        },
        "peak_rss_mb": peak_rss_mb(),
    }


def java_child(root: Path) -> dict[str, Any]:
    now = dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    day_ago = (now - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    answer = run_java(
        [
            {
                "op": "procedure",
                "sql": "CALL hadoop_cat.system.expire_snapshots(table => 'db.java', "
                f"older_than => TIMESTAMP '{stamp}', retain_last => 1)",
            },
            {
                "op": "procedure",
                "sql": "CALL hadoop_cat.system.remove_orphan_files(table => 'db.java', "
                f"older_than => TIMESTAMP '{day_ago}')",
            },
            {
                "op": "procedure",
                "sql": "CALL hadoop_cat.system.rewrite_manifests(table => 'db.javam')",
            },
        ],
        str(root / "java"),
    )
    expire, orphans, manifests = answer["results"]
    replaced, created = (int(v) for v in manifests["rows"][0])
    return {
        "expire": {"seconds": expire["seconds"], "rows": expire["rows"]},
        "orphans": {"seconds": orphans["seconds"], "files": len(orphans["rows"])},
        "manifests": {"seconds": manifests["seconds"], "replaced": replaced, "created": created},
    }


def child(
    warehouse: Path, name: str, *, distributed: bool, master: str | None = None, cores: int = 0
) -> dict[str, Any]:
    """icewright's run in a fresh process (its peak memory is its own)."""
    command = [sys.executable, __file__, "--child", str(warehouse), "--table", name]
    command += ["--distributed"] if distributed else []
    command += ["--master", master, "--cores", str(cores)] if master else []
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"icewright child failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--orphans", type=int, default=1000)
    parser.add_argument("--manifests", type=int, default=2000)
    parser.add_argument("--manifest-files", type=int, default=25)
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--case", choices=["all", "deletes"], default="all")
    parser.add_argument("--delete-rows", type=int, default=2_000_000)
    parser.add_argument("--deletes", type=int, default=40)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-deletes", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--table", default="ice", help=argparse.SUPPRESS)
    parser.add_argument("--master", help=argparse.SUPPRESS)
    parser.add_argument("--cores", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_deletes:
        print(json.dumps(deletes_child(args.child_deletes)))
        return
    if args.case == "deletes":
        deletes_case(args.delete_rows, args.deletes)
        return
    if args.child:
        found = icewright_child(
            args.child, f"db.{args.table}", args.distributed, args.master, args.cores
        )
        print(json.dumps(found))
        return
    distributed = args.distributed or args.cluster

    root = Path(tempfile.mkdtemp(prefix="icewright-bench-maintenance-"))
    warehouse = root / "java" / "warehouse"  # the Java session's hadoop_cat warehouse
    start = time.perf_counter()
    names = ["ice", "java"] + (["icd"] if distributed else [])
    names += [f"ic{n}" for n in CLUSTER_CORES] if args.cluster else []
    for name in names:
        build(warehouse, name, args.files, args.history, args.orphans)
        build_manifests(warehouse, f"{name}m", args.manifests, args.manifest_files)
    print(f"built {len(names)} tables in {time.perf_counter() - start:.1f}s under {root}")

    ours = child(warehouse, "ice", distributed=False)
    spread = child(warehouse, "icd", distributed=True) if distributed else None
    clustered = on_cluster(root, warehouse) if args.cluster else {}
    java = java_child(root)

    e, o = ours["expire"], ours["orphans"]
    print(
        f"expire {e['snapshots']} snapshots, delete {e['data_files']} data files, "
        f"{e['manifests']} manifests, {e['manifest_lists']} manifest lists: "
        f"icewright {e['seconds']:.2f}s   java {java['expire']['seconds']:.2f}s   "
        f"ratio {e['seconds'] / java['expire']['seconds']:.2f}"
    )
    print(f"  Java's expire_snapshots result: {java['expire']['rows']}")
    print(
        "remove orphans (every file under the table location listed): "
        f"icewright {o['files']} files {o['seconds']:.2f}s   "
        f"java {java['orphans']['files']} files {java['orphans']['seconds']:.2f}s   "
        f"ratio {o['seconds'] / java['orphans']['seconds']:.2f}"
    )
    m, jm = ours["manifests"], java["manifests"]
    print(
        f"rewrite manifests ({m['entries']} entries in {m['replaced']} manifests): "
        f"icewright {m['created']} manifests {m['seconds']:.2f}s   "
        f"java {jm['replaced']} -> {jm['created']} manifests {jm['seconds']:.2f}s   "
        f"ratio {m['seconds'] / jm['seconds']:.2f}"
    )
    print(f"icewright maintenance process: peak RSS {ours['peak_rss_mb']:.0f} MiB")
    if spread is not None:
        d, do = spread["expire"], spread["orphans"]
        print(
            f"distributed (local Spark): expire {d['seconds']:.2f}s "
            f"(ratio to java {d['seconds'] / java['expire']['seconds']:.2f}, to in-process "
            f"{d['seconds'] / e['seconds']:.2f}); remove orphans {do['files']} files "
            f"{do['seconds']:.2f}s (ratio to java "
            f"{do['seconds'] / java['orphans']['seconds']:.2f}, "
            f"to in-process {do['seconds'] / o['seconds']:.2f}); peak RSS of that process "
            f"{spread['peak_rss_mb']:.0f} MiB"
        )
        print(
            f"  Spark tasks (local): expire {d['tasks']} in {d['stages']} stages, "
            f"remove orphans {do['tasks']} in {do['stages']} stages"
        )
        dm = spread["manifests"]
        print(
            f"distributed (local Spark): rewrite manifests {dm['created']} manifests "
            f"{dm['seconds']:.2f}s in {dm['tasks']} tasks (ratio to java "
            f"{dm['seconds'] / jm['seconds']:.2f}, to in-process "
            f"{dm['seconds'] / m['seconds']:.2f})"
        )
        for run in [spread, *clustered.values()]:
            same = (run["expire"]["data_files"], run["expire"]["manifests"]) == (
                e["data_files"],
                e["manifests"],
            )
            if not same or run["orphans"]["files"] != o["files"]:
                raise SystemExit("the distributed and in-process paths disagree")
            if run["manifests"]["entries"] != m["entries"]:
                raise SystemExit("the distributed manifest rewrite carried other entries")
    if clustered:
        report_cluster(clustered, java)
    if o["files"] != java["orphans"]["files"]:
        raise SystemExit("the engines disagree on the orphan count")
    if (m["replaced"], m["entries"]) != (jm["replaced"], args.manifests * args.manifest_files):
        raise SystemExit("the engines disagree on the manifests rewritten")
    worst = max(e["seconds"] / java["expire"]["seconds"], o["seconds"] / java["orphans"]["seconds"])
    print(
        f"maintenance: icewright/java={worst:.2f} "
        f"manifests: icewright/java={m['seconds'] / jm['seconds']:.2f}"
    )


def deletes_case(rows: int, deletes: int) -> None:
    """``--case deletes`` (see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="icewright-bench-deletes-"))
    warehouse = root / "java" / "warehouse"
    build: list[dict[str, Any]] = [
        {"op": "procedure", "sql": "CREATE NAMESPACE IF NOT EXISTS hadoop_cat.db"}
    ]
    for name in ("dice", "djava"):
        table = f"hadoop_cat.db.{name}"
        build.append(
            {
                "op": "procedure",
                "sql": f"CREATE TABLE {table} (id bigint, region string, amount double) "
                "USING iceberg PARTITIONED BY (region) TBLPROPERTIES ('format-version'='2', "
                "'write.delete.mode'='merge-on-read', "
                "'write.delete.granularity'='partition')",
            }
        )
        build.append(
            {
                "op": "procedure",
                "sql": f"INSERT INTO {table} SELECT id, concat('r', id % 4), id * 1.0 "
                f"FROM range({rows})",
            }
        )
        build += [
            # an odd modulus: every delete hits all four partitions
            {"op": "procedure", "sql": f"DELETE FROM {table} WHERE id % {deletes * 25 + 1} = {k}"}
            for k in range(deletes)
        ]
    start = time.perf_counter()
    run_java(build, str(root / "java"))
    print(
        f"built 2 tables ({rows:,} rows, {deletes} deletes each) in "
        f"{time.perf_counter() - start:.1f}s under {root}"
    )
    ours = json.loads(
        subprocess.run(
            [sys.executable, __file__, "--child-deletes", str(warehouse)],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    check = "SELECT count(*), sum(id) FROM hadoop_cat.db.{}"
    java = run_java(
        [
            {
                "op": "procedure",
                "sql": "CALL hadoop_cat.system.rewrite_position_delete_files(table => 'db.djava')",
            },
            {"op": "procedure", "sql": check.format("djava")},
            {"op": "procedure", "sql": check.format("dice")},
        ],
        str(root / "java"),
    )
    procedure, theirs, mine = java["results"]
    if theirs["rows"] != mine["rows"]:
        raise SystemExit(f"the engines disagree on the rows: {theirs['rows']} {mine['rows']}")
    from icewright.catalog import FileSystemCatalog
    from icewright.scan.delete_files import live_delete_files

    table = FileSystemCatalog("bench", warehouse=str(warehouse)).load_table("db.djava")
    java_files = len(live_delete_files(table.io, table.metadata.current_snapshot()))
    ratio = ours["seconds"] / procedure["seconds"]
    print(
        f"rewrite position deletes ({ours['before']} live delete files): icewright "
        f"{ours['after']} files {ours['seconds']:.2f}s (Python process peak RSS "
        f"{ours['peak_rss_mb']:.0f} MiB)   java {java_files} files "
        f"{procedure['seconds']:.2f}s   ratio {ratio:.2f}"
    )
    print(f"  rows after (count, sum of ids), read by Java from both: {mine['rows'][0]}")
    print(f"deletes: icewright/java={ratio:.2f}")


def deletes_child(warehouse: Path) -> dict[str, Any]:
    """icewright's side of ``--case deletes``, in its own process."""
    from icewright.actions import rewrite
    from icewright.catalog import FileSystemCatalog
    from icewright.runners.local import LocalRunner
    from icewright.scan.delete_files import live_delete_files
    from icewright.spark.session import local_session

    catalog = FileSystemCatalog("bench", warehouse=str(warehouse))
    spark = local_session()
    spark.range(1).count()  # the session starts before the clock, as Java's has
    table = catalog.load_table("db.dice")
    before = len(live_delete_files(table.io, table.metadata.current_snapshot()))
    start = time.perf_counter()
    rewrite(table, deletes_only=True, runner=LocalRunner(spark))
    seconds = time.perf_counter() - start
    table = catalog.load_table("db.dice")
    after = len(live_delete_files(table.io, table.metadata.current_snapshot()))
    return {"seconds": seconds, "before": before, "after": after, "peak_rss_mb": peak_rss_mb()}


def on_cluster(root: Path, warehouse: Path) -> dict[int, dict[str, Any]]:
    """The distributed runs on a standalone cluster of one 2-core worker, one application
    per entry of :data:`CLUSTER_CORES` (by executor cores)."""
    from tests.actions.submit_support import standalone_cluster

    runs: dict[int, dict[str, Any]] = {}
    with standalone_cluster(root / "cluster", cores=max(CLUSTER_CORES), memory="3g") as cluster:
        for cores in CLUSTER_CORES:
            runs[cores] = child(
                warehouse, f"ic{cores}", distributed=True, master=cluster.master_url, cores=cores
            )
    return runs


def report_cluster(runs: dict[int, dict[str, Any]], java: dict[str, Any]) -> None:
    """The cluster runs' times, tasks and the speedup of the most executors over one."""
    for cores, run in runs.items():
        d, do = run["expire"], run["orphans"]
        print(
            f"standalone cluster, {cores} executor(s) of 1 core: expire {d['seconds']:.2f}s "
            f"({d['tasks']} Spark tasks in {d['stages']} stages; ratio to java "
            f"{d['seconds'] / java['expire']['seconds']:.2f}); remove orphans "
            f"{do['seconds']:.2f}s ({do['tasks']} tasks in {do['stages']} stages; ratio to "
            f"java {do['seconds'] / java['orphans']['seconds']:.2f})"
        )
    one, most = runs[min(runs)], runs[max(runs)]
    print(
        f"cluster speedup, {max(runs)} executors over 1: expire "
        f"{one['expire']['seconds'] / most['expire']['seconds']:.2f}x, remove orphans "
        f"{one['orphans']['seconds'] / most['orphans']['seconds']:.2f}x"
    )


if __name__ == "__main__":
    main()
