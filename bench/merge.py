"""Merge benchmark: icewright's merge (merge-on-read and copy-on-write) against Iceberg
Java's Spark ``MERGE INTO`` and pyiceberg's ``Table.upsert``.

The data (written once as Parquet by Spark, untimed): a table of ``--rows`` rows (default
2,000,000: ``id``, ``ts`` over 20 days, ``amount``, ``name``) partitioned by ``day(ts)``,
and a change batch of ``--changes`` rows (default 200,000): half updates of rows of 5
days, 40% inserts of new ids, 10% deletes (``op`` = ``U``, ``I``, ``D``).

Each engine merges the batch by ``id`` into a fresh copy of the table, ``--repeat`` times
(default 3; the copies are built untimed), and the median is printed:

* icewright (a child process, local Spark): ``merge(..., delete_when="op = 'D'")`` in
  both modes, planning, the Spark job and the commit timed;
* Iceberg Java 1.10.2 on Spark 3.5 (``.venv-java``, the same local Spark settings the
  tests use): ``MERGE INTO ... WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN
  UPDATE ... WHEN NOT MATCHED THEN INSERT ...`` on tables with ``write.merge.mode`` set
  to each mode;
* pyiceberg 0.12: ``upsert`` of the updates and inserts (it has no deletes), in memory,
  into an unpartitioned copy (partitioned writes need the optional ``pyiceberg-core``
  package; an upsert reads the whole table either way).

Peak memory: the resident high-water mark of each engine's processes (Python and JVM).

    flock /tmp/icewright-heavy.lock .venv/bin/python bench/merge.py [--rows N] [--changes N]

The last line reads ``merge: icewright/java=<r> icewright/pyiceberg=<r>`` (icewright's
merge-on-read time over Java's merge-on-read time and over pyiceberg's upsert time; the
goals are at most 1.0 and at most 0.3).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import peak_rss_mb, run_java

from icewright.spark.row_changes import WriteMode

DAYS = 20
UPDATE_DAYS = 5
MODES: tuple[WriteMode, ...] = ("merge-on-read", "copy-on-write")


def generate(root: Path, rows: int, changes: int) -> None:
    """The base rows and the change batch as Parquet under ``root``."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

    from icewright.spark.session import local_session

    spark = local_session()
    start = int(time.mktime(time.strptime("2026-01-01", "%Y-%m-%d")))

    def rows_of(frame: Any) -> Any:
        day = F.col("id") % DAYS
        ts = F.lit(start) + day * 86_400 + (F.col("id") * 37) % 86_400
        return frame.select(
            F.col("id").cast("long").alias("id"),
            F.timestamp_seconds(ts).alias("ts"),
            ((F.col("id") * 13) % 10_000 / 100).cast("double").alias("amount"),
            F.concat(F.lit("name "), F.col("id").cast("string")).alias("name"),
        )

    rows_of(spark.range(rows)).repartition(8).write.mode("overwrite").parquet(str(root / "base"))
    updates, inserts = changes // 2, changes * 4 // 10
    deletes = changes - updates - inserts
    k = F.col("id")
    upd = rows_of(spark.range(updates).select((k * DAYS + k % UPDATE_DAYS).alias("id")))
    upd = upd.withColumn("amount", F.col("amount") + 1).withColumn("op", F.lit("U"))
    ins = rows_of(spark.range(rows, rows + inserts)).withColumn("op", F.lit("I"))
    dele = rows_of(spark.range(deletes).select((k * DAYS + 10 + k % UPDATE_DAYS).alias("id")))
    dele = dele.withColumn("op", F.lit("D"))
    batch = upd.unionByName(ins).unionByName(dele)
    batch.repartition(2).write.mode("overwrite").parquet(str(root / "changes"))
    spark.stop()


def icewright_child(root: Path, repeat: int) -> dict[str, Any]:
    """icewright's merges, ``repeat`` rounds of both modes (each on a fresh copy)."""
    from icewright.actions import append, create, merge
    from icewright.catalog import FileSystemCatalog
    from icewright.spark.session import local_session
    from icewright.text.declaration import parse_partitioning, parse_schema

    spark = local_session()
    catalog = FileSystemCatalog("bench", str(root / "ice-warehouse"))
    catalog.create_namespace("db")
    schema = parse_schema("id long not null, ts timestamptz, amount double, name string")
    base, changes = f"parquet:{root / 'base'}", f"parquet:{root / 'changes'}"

    def fresh(name: str) -> str:
        create(name, catalog=catalog, schema=schema, partition_by=parse_partitioning("day(ts)"))
        append(name, base, catalog=catalog)
        return name

    # warm-up: the session, the code paths (untimed)
    warm = fresh("db.warm")
    merge(warm, changes, on="id", delete_when="op = 'D'", catalog=catalog, mode="merge-on-read")
    times: dict[str, list[float]] = {m: [] for m in MODES}
    mode: WriteMode
    counts: dict[str, Any] = {}
    for i in range(repeat):
        for mode in MODES:
            name = fresh(f"db.{mode.replace('-', '_')}_{i}")
            began = time.perf_counter()
            result = merge(
                name, changes, on="id", delete_when="op = 'D'", catalog=catalog, mode=mode
            )
            times[mode].append(time.perf_counter() - began)
            counts[mode] = [result.rows_updated, result.rows_inserted, result.rows_deleted]
    jvm: Any = spark._jvm
    jvm_peak = _vm_hwm_mb(int(jvm.java.lang.ProcessHandle.current().pid()))
    spark.stop()
    return {"seconds": times, "counts": counts, "python_mb": peak_rss_mb(), "jvm_mb": jvm_peak}


def pyiceberg_child(root: Path, repeat: int) -> dict[str, Any]:
    """pyiceberg's upsert of the updates and inserts, ``repeat`` times on fresh copies."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

    base = pq.read_table(root / "base")
    base = base.cast(base.schema.set(1, base.schema.field(1).with_type(_utc_type())))
    changes = pq.read_table(root / "changes")
    upsert = changes.filter(pc.field("op") != "D").drop_columns(["op"])
    upsert = upsert.cast(base.schema)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestamptzType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
        NestedField(4, "name", StringType(), required=False),
    )
    warehouse = root / "py-warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root}/py.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("db")
    times: list[float] = []
    for i in range(repeat):
        table = catalog.create_table(f"db.t{i}", schema=schema)
        table.append(base)
        began = time.perf_counter()
        result = table.upsert(upsert, join_cols=["id"])
        times.append(time.perf_counter() - began)
    return {
        "seconds": times,
        "counts": [result.rows_updated, result.rows_inserted],
        "python_mb": peak_rss_mb(),
    }


def _utc_type() -> Any:
    import pyarrow as pa

    return pa.timestamp("us", tz="UTC")


def _vm_hwm_mb(pid: int) -> float:
    """The peak resident memory of process ``pid`` (Linux ``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def java_requests(root: Path, repeat: int) -> list[dict[str, Any]]:
    """Iceberg Java's statements: per round and mode a fresh table (untimed), the MERGE."""
    requests: list[dict[str, Any]] = []
    for i in range(repeat):
        for mode in MODES:
            name = f"hadoop_cat.db.{mode.replace('-', '_')}_{i}"
            requests.append(
                {
                    "op": "procedure",
                    "sql": f"CREATE TABLE {name} USING iceberg PARTITIONED BY (days(ts)) "
                    f"TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='{mode}') "
                    f"AS SELECT * FROM parquet.`{root / 'base'}`",
                }
            )
            requests.append(
                {
                    "op": "procedure",
                    "sql": f"MERGE INTO {name} t "
                    f"USING (SELECT * FROM parquet.`{root / 'changes'}`) s "
                    "ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE "
                    "WHEN MATCHED THEN UPDATE SET "
                    "t.ts = s.ts, t.amount = s.amount, t.name = s.name "
                    "WHEN NOT MATCHED AND s.op != 'D' THEN INSERT (id, ts, amount, name) "
                    "VALUES (s.id, s.ts, s.amount, s.name)",
                    "mode": mode,
                }
            )
    requests.append({"op": "memory"})
    return requests


def child(kind: str, root: Path, *args: str) -> dict[str, Any]:
    """Run this script's ``--child kind`` in a fresh process; its JSON answer."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{done.stderr[-4000:]}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--changes", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, root = args.child[0], Path(args.child[1])
        if kind == "generate":
            generate(root, args.rows, args.changes)
            print(json.dumps({}))
        elif kind == "icewright":
            print(json.dumps(icewright_child(root, args.repeat)))
        else:
            print(json.dumps(pyiceberg_child(root, args.repeat)))
        return
    root = Path(tempfile.mkdtemp(prefix="icewright-bench-merge-"))
    repeat = ["--repeat", str(args.repeat)]
    print(f"data: {args.rows:,} rows over {DAYS} days, a batch of {args.changes:,} changes")
    child("generate", root, "--rows", str(args.rows), "--changes", str(args.changes))
    ours = child("icewright", root, *repeat)
    java = run_java(java_requests(root, args.repeat), str(root / "java"))
    py = child("pyiceberg", root, *repeat)

    # the answers come in the order of the requests: (create, merge) per round and mode,
    # then the JVM's memory
    *statements, memory = java["results"]
    java_times: dict[str, list[float]] = {m: [] for m in MODES}
    for index, merged in enumerate(statements[1::2]):
        java_times[MODES[index % len(MODES)]].append(merged["seconds"])
    java_mb = memory["jvm_mb"]
    median = statistics.median
    ours_mb = ours["jvm_mb"] + ours["python_mb"]
    rows = [
        ("icewright merge-on-read", median(ours["seconds"]["merge-on-read"]), ours_mb),
        ("icewright copy-on-write", median(ours["seconds"]["copy-on-write"]), ours_mb),
        ("Iceberg Java merge-on-read", median(java_times["merge-on-read"]), java_mb),
        ("Iceberg Java copy-on-write", median(java_times["copy-on-write"]), java_mb),
        ("pyiceberg upsert (no deletes)", median(py["seconds"]), py["python_mb"]),
    ]
    print(f"icewright rows updated/inserted/deleted: {ours['counts']['merge-on-read']}")
    print(f"pyiceberg rows updated/inserted: {py['counts']}")
    print(f"{'engine':<32}{'median s':>10}{'peak MiB':>10}")
    for name, seconds, mb in rows:
        print(f"{name:<32}{seconds:>10.2f}{mb:>10.0f}")
    ours_mor = rows[0][1]
    to_java, to_py = ours_mor / rows[2][1], ours_mor / rows[4][1]
    print(f"merge: icewright/java={to_java:.2f} icewright/pyiceberg={to_py:.2f}")


if __name__ == "__main__":
    main()
