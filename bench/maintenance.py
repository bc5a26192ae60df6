"""Maintenance benchmark: icewright's expire and orphan removal against Iceberg Java's.

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

    flock /tmp/icewright-heavy.lock .venv/bin/python bench/maintenance.py
        [--files 100000] [--history 1000] [--orphans 1000] [--distributed]

With ``--distributed`` a third identical table (``db.icd``) is expired and cleaned with
``distributed=True`` (the walks as Spark jobs on a local session started before the clock,
as Java's is), and its times and ratios are printed next to the in-process path's.

The last line reads ``maintenance: icewright/java=<worst ratio>``.
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

from _common import SCHEMA, peak_rss_mb, prepared_files, run_java

DAY_S = 86_400


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


def icewright_child(warehouse: Path, distributed: bool = False) -> dict[str, Any]:
    from icewright.actions import expire, remove_orphan_files
    from icewright.catalog import FileSystemCatalog
    from icewright.runners.local import LocalRunner

    catalog = FileSystemCatalog("bench", warehouse=str(warehouse))
    name = "db.icd" if distributed else "db.ice"
    runner = LocalRunner()
    if distributed:
        runner.spark.range(1).count()  # the session starts before the clock
    start = time.perf_counter()
    expired = expire(
        catalog.load_table(name),
        older_than=int(time.time() * 1000),
        retain_last=1,
        distributed=distributed,
        runner=runner,
    )
    expire_s = time.perf_counter() - start
    start = time.perf_counter()
    removed = remove_orphan_files(
        catalog.load_table(name),
        older_than=int((time.time() - DAY_S) * 1000),
        distributed=distributed,
        runner=runner,
    )
    orphans_s = time.perf_counter() - start
    return {
        "expire": {
            "seconds": expire_s,
            "snapshots": len(expired.expired_snapshot_ids),
            "data_files": expired.deleted_data_files,
            "manifests": expired.deleted_manifests,
            "manifest_lists": expired.deleted_manifest_lists,
        },
        "orphans": {"seconds": orphans_s, "files": len(removed.orphan_paths)},
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
        ],
        str(root / "java"),
    )
    expire, orphans = answer["results"]
    return {
        "expire": {"seconds": expire["seconds"], "rows": expire["rows"]},
        "orphans": {"seconds": orphans["seconds"], "files": len(orphans["rows"])},
    }


def child(warehouse: Path, *, distributed: bool) -> dict[str, Any]:
    """icewright's run in a fresh process (its peak memory is its own)."""
    command = [sys.executable, __file__, "--child", str(warehouse)]
    done = subprocess.run(
        command + (["--distributed"] if distributed else []),
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
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(icewright_child(args.child, args.distributed)))
        return

    root = Path(tempfile.mkdtemp(prefix="icewright-bench-maintenance-"))
    warehouse = root / "java" / "warehouse"  # the Java session's hadoop_cat warehouse
    start = time.perf_counter()
    names = ("ice", "java", "icd") if args.distributed else ("ice", "java")
    for name in names:
        build(warehouse, name, args.files, args.history, args.orphans)
    print(f"built {len(names)} tables in {time.perf_counter() - start:.1f}s under {root}")

    ours = child(warehouse, distributed=False)
    spread = child(warehouse, distributed=True) if args.distributed else None
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
        same = (d["data_files"], d["manifests"], do["files"]) == (
            e["data_files"],
            e["manifests"],
            o["files"],
        )
        if not same:
            raise SystemExit("the distributed and in-process paths disagree")
    if o["files"] != java["orphans"]["files"]:
        raise SystemExit("the engines disagree on the orphan count")
    worst = max(e["seconds"] / java["expire"]["seconds"], o["seconds"] / java["orphans"]["seconds"])
    print(f"maintenance: icewright/java={worst:.2f}")


if __name__ == "__main__":
    main()
