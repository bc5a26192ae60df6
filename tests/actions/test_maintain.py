"""maintain end to end with local Spark: a generated neglected table (hundreds of
snapshots and files, position deletes, orphans) maintained while another writer keeps
appending; every row and every concurrent commit survives, a second run does nothing."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, maintain
from icewright.catalog import SqlCatalog, Table
from icewright.commit import append
from icewright.commit.append import FastAppend
from icewright.commit.row_delta import RowDelta
from icewright.commit.update import commit_updates
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import FAST, SCHEMA, one_file, position_delete_file, rows, scan_rows

APPENDS = 240
PER_FILE = 4


def neglected(catalog: SqlCatalog) -> tuple[Table, set[int]]:
    """240 one-file appends over 6 days (a manifest each), 24 row deltas deleting one row
    each (a position delete file scoped to one data file), 5 orphans four days old; the
    ids it holds."""
    if not catalog.namespace_exists("db"):
        catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        build_partition_spec(SCHEMA, [("day", "ts")]),
        properties={
            **FAST,
            "history.expire.max-snapshot-age-ms": "1000",
            "history.expire.min-snapshots-to-keep": "3",
            "commit.manifest-merge.enabled": "false",
        },
    )
    files = [
        one_file(table, rows(PER_FILE, day=1 + n % 6, start=n * PER_FILE)) for n in range(APPENDS)
    ]
    for first in range(0, APPENDS, 60):
        batch = files[first : first + 60]
        table = commit_updates(table, [FastAppend(table, [f]) for f in batch]).table
    ids = set(range(APPENDS * PER_FILE))
    deltas = []
    for k in range(24):
        target = files[k * 10]
        deltas.append(RowDelta(table).add_deletes(position_delete_file(table, target, [1])))
        ids.discard(k * 10 * PER_FILE + 1)
    table = commit_updates(table, deltas).table
    old = time.time() - 4 * 86_400
    for i in range(5):
        path = os.path.join(table.location, "data", f"orphan-{i}.parquet")
        with open(path, "wb") as f:
            f.write(b"orphan")
        os.utime(path, (old, old))
    return table, ids


@pytest.mark.slow
def test_a_neglected_table_while_another_writer_appends(
    spark: SparkSession, catalog: SqlCatalog
) -> None:
    table, ids = neglected(catalog)
    time.sleep(1.1)  # past the table's one-second retention
    runner = LocalRunner(spark)
    dry = maintain(table, dry_run=True, runner=runner)
    assert dry.plan is not None and dry.plan.due == (
        "compaction",
        "rewrite_manifests",
        "expire",
        "remove_orphans",
    )
    assert dry.before["data_manifests"] == APPENDS and dry.before["delete_files"] == 24
    assert dry.before["snapshots"] == APPENDS + 24

    written: list[int] = []
    stop = threading.Event()

    def writer() -> None:  # another writer, committing through its own retry loop
        n = 10_000
        while not stop.is_set() and len(written) < 20:
            t = catalog.load_table("db.t")
            append(t, [one_file(t, rows(2, day=7, start=n))])
            written.extend((n, n + 1))
            n += 2

    other = threading.Thread(target=writer)
    other.start()
    try:
        done = maintain(table, runner=runner, commit_key="nightly")
    finally:
        stop.set()
        other.join()
    assert not done.failed, done.to_document()
    ran = {s.name: s for s in done.steps}
    assert ran["compaction"].changed and ran["compaction"].changes["data_files_removed"] >= APPENDS
    assert ran["compaction"].changes["delete_files_removed"] == 24
    assert ran["expire"].changes["snapshots_expired"] > APPENDS
    assert ran["remove_orphans"].changes["orphan_files_deleted"] == 5
    after: dict[str, Any] = dict(done.after)
    assert after["delete_files"] == 0 and after["snapshots"] <= 3 + len(written) // 2
    # every row and every concurrent commit is there
    assert {r[0] for r in scan_rows(catalog.load_table("db.t"), ("id",))} == ids | set(written)

    # the writer's own small files and snapshots are what is left to do; then nothing
    second = maintain("db.t", catalog=catalog, runner=runner)
    assert not second.failed, second.to_document()
    compacted = next(s for s in second.steps if s.name == "compaction")
    assert compacted.changes.get("data_files_removed", 0) <= len(written) // 2, compacted
    third = maintain("db.t", catalog=catalog, runner=runner)
    assert not third.changed and not third.failed, third.to_document()
    assert third.plan is not None and third.plan.due == ()
