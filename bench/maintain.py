"""``maintain`` on a neglected table: the dry run's plan, the run, and a second run.

Builds, in a Hadoop-layout warehouse (icewright's FileSystemCatalog), table ``db.neglected``
partitioned by ``day(ts)`` (bench/_common.py's schema) that no one maintained:

- ``--manifests`` appends (default 5,000) of ``--files`` / ``--manifests`` real Parquet
  files each (default 10: 50,000 small files in 5,000 manifests, a few KB each);
- ``--snapshots`` - ``--manifests`` row deltas (default 5,000), each adding one position
  delete file (real Parquet, scoped to one data file) in its own delete manifest: 10,000
  snapshots in all;
- ``--orphans`` unreferenced files (default 1,000) under ``data/``, ten days old;
- retention ``history.expire.max-snapshot-age-ms=1000``, ``min-snapshots-to-keep=1``
  (what the table's owner asked for and no one ran), ``commit.manifest-merge.enabled=false``
  (so the row deltas do not merge the manifests as they build the table).

Then ``maintain(dry_run=True)`` (the plan is printed with its figures and planning time),
``maintain()`` (the result and its time, in this process with local Spark for the
compaction), and ``maintain()`` again, which must do nothing. Printed before and after:
files under the table location, live data and delete files, data manifests, snapshots,
and the size of the current metadata file.

    flock /tmp/icewright-heavy.lock .venv/bin/python bench/maintain.py
        [--snapshots 10000] [--files 50000] [--manifests 5000] [--orphans 1000]

The last line reads ``maintain: plan <s> run <s> second run changed nothing``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import DAY_US, DAYS, FIRST_DAY, REPO, SCHEMA

sys.path.insert(0, str(REPO))  # tests.commit.support: position delete files

DAY_S = 86_400
BATCH = 100


def files_on_disk(location: str) -> tuple[int, int]:
    """(files, bytes) under ``location``."""
    count = size = 0
    for dirpath, _, names in os.walk(location):
        for name in names:
            count += 1
            size += os.path.getsize(os.path.join(dirpath, name))
    return count, size


def build(root: Path, manifests: int, per_manifest: int, deltas: int, orphans: int) -> Any:
    """The neglected table (see the module docstring); its Table handle."""
    import dataclasses

    import pyarrow as pa
    from tests.commit.support import position_delete_file

    from icewright.arrow import write_data_files
    from icewright.catalog import FileSystemCatalog
    from icewright.commit.append import FastAppend
    from icewright.commit.row_delta import RowDelta
    from icewright.commit.update import commit_updates
    from icewright.spec.partitioning import build_partition_spec

    catalog = FileSystemCatalog("bench", warehouse=str(root / "warehouse"))
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.neglected",
        SCHEMA,
        build_partition_spec(SCHEMA, [("day", "ts")]),
        properties={
            "history.expire.max-snapshot-age-ms": "1000",
            "history.expire.min-snapshots-to-keep": "1",
            # as fast appends leave it: a row delta would otherwise merge the manifests
            "commit.manifest-merge.enabled": "false",
        },
    )
    # one real file per day, copied under every name of that day: same rows, same metrics
    templates = {}
    for day in range(FIRST_DAY, FIRST_DAY + DAYS):
        rows = 20
        data = pa.table(
            {
                "id": pa.array(range(day * 100, day * 100 + rows), pa.int64()),
                "ts": pa.array([day * DAY_US + i for i in range(rows)], pa.timestamp("us", "UTC")),
                "region": pa.array(["eu"] * rows),
                "amount": pa.array([float(i) for i in range(rows)]),
            }
        )
        (written,) = write_data_files(table.io, table.metadata, data)
        templates[day] = (written, Path(written.file_path).read_bytes())
    all_files = []
    for first in range(0, manifests, BATCH):
        ops = []
        for n in range(first, min(first + BATCH, manifests)):
            batch = []
            for i in range(per_manifest):
                day = FIRST_DAY + (n * per_manifest + i) % DAYS
                template, blob = templates[day]
                path = f"{table.location}/data/ts_day={day}/a{n:05d}-{i:02d}.parquet"
                os.makedirs(os.path.dirname(path), exist_ok=True)
                Path(path).write_bytes(blob)
                batch.append(dataclasses.replace(template, file_path=path))
            all_files += batch
            ops.append(FastAppend(table, batch))
        table = commit_updates(table, ops).table
    for first in range(0, deltas, BATCH):
        ops = []
        for n in range(first, min(first + BATCH, deltas)):
            target = all_files[(n * 7919) % len(all_files)]
            ops.append(RowDelta(table).add_deletes(position_delete_file(table, target, [n % 20])))
        table = commit_updates(table, ops).table
    ten_days_ago = time.time() - 10 * DAY_S
    for i in range(orphans):
        path = f"{table.location}/data/ts_day={FIRST_DAY}/orphan-{i:05d}.parquet"
        Path(path).write_bytes(b"orphan")
        os.utime(path, (ten_days_ago, ten_days_ago))
    return catalog.load_table("db.neglected")


def state(table: Any) -> dict[str, Any]:
    """What the table holds and how big its metadata is."""
    from icewright.actions import table_health

    fresh = table.refresh()
    health = table_health(fresh, small_file_bytes=None)
    files, size = files_on_disk(fresh.location)
    return {
        "files_under_location": files,
        "bytes_under_location": size,
        "snapshots": health.snapshot_count,
        "data_files": health.data_files,
        "live_delete_files": health.layout.live_delete_files,
        "data_manifests": health.layout.data_manifests,
        "delete_manifests": health.layout.delete_manifests,
        "metadata_file_bytes": health.metadata_bytes,
        "rows": health.total_records,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snapshots", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--manifests", type=int, default=5_000)
    parser.add_argument("--orphans", type=int, default=1_000)
    parser.add_argument("--keep", action="store_true", help="keep the warehouse")
    args = parser.parse_args()
    from icewright.actions import LocalRunner, maintain
    from icewright.spark.session import local_session

    root = Path(tempfile.mkdtemp(prefix="icewright-bench-maintain-"))
    started = time.perf_counter()
    table = build(
        root,
        args.manifests,
        args.files // args.manifests,
        args.snapshots - args.manifests,
        args.orphans,
    )
    print(f"built in {time.perf_counter() - started:.1f} s under {root}", flush=True)
    before = state(table)
    print("before:", json.dumps(before), flush=True)
    time.sleep(1.1)  # the retention is one second

    runner = LocalRunner(local_session())
    dry = maintain(table, dry_run=True, runner=runner)
    assert dry.plan is not None
    print(f"\ndry run: planned in {dry.plan.planning_seconds:.2f} s; due: {dry.plan.due}")
    for step in dry.plan.steps:
        print(f"  {step.name:<18} {'due' if step.due else '-':<4} {step.reason}")
        print(f"  {'':<23} {json.dumps(step.figures)}")

    started = time.perf_counter()
    done = maintain(table, runner=runner)
    run_s = time.perf_counter() - started
    print(f"\nrun: {run_s:.1f} s (planning {done.plan.planning_seconds:.2f} s)")  # type: ignore[union-attr]
    for step in done.steps:
        shown = step.error or json.dumps(dict(step.changes))
        print(f"  {step.name:<18} {'ran' if step.ran else '-':<4} {step.seconds:7.1f} s  {shown}")
    after = state(table)
    print("after:", json.dumps(after))
    for key in before:
        print(f"  {key:<22} {before[key]:>12} -> {after[key]}")

    second = maintain(table, runner=runner)
    ran = [s.name for s in second.steps if s.ran]
    print(f"\nsecond run: ran {ran or 'nothing'}; changed: {second.changed}")
    assert not second.changed, second.to_document()
    assert not done.failed, done.to_document()
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"maintain: plan {dry.plan.planning_seconds:.2f} run {run_s:.1f} "
        f"second run changed {'something' if second.changed else 'nothing'}"
    )


if __name__ == "__main__":
    main()
