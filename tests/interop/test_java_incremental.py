"""Incremental reads against Iceberg Java's incremental append scan, on generated histories.

Each example builds a table history with icewright (fast and merging appends, overwrites,
file deletes, compaction, expiry keeping the last one to three snapshots, appends to a
second branch; :class:`tests.scan.test_incremental.History` plus ``expire``), draws
ranges ``(A, B]`` on ``main``'s line and reads each two ways:
``icewright.spark.read.read_changes(spark, table, start=A, end=B)`` and Iceberg Java's
``spark.read.format("iceberg").option("start-snapshot-id", A).option("end-snapshot-id",
B)`` (Spark 3.5, Iceberg 1.10.2; all of an example's reads in one Java batch).

Asserted:

* a range of appends and compactions: both read the same rows;
* a range holding an overwrite or delete: icewright refuses it, naming the snapshot;
  Java does not refuse. Its ``IncrementalAppendScan`` keeps only the range's ``append``
  snapshots and silently skips the rest, so it returns the rows of the files those
  appends added: the rows an overwrite added are missing, and the rows a delete removed
  may still be there. The test checks that this is exactly what Java returns (the files
  icewright plans for the range's appends alone, read with pyarrow);
* ``A`` expired but still the parent of a retained snapshot of ``B``'s line (what a job
  that processed up to ``A`` holds after an expiry): both read the range.

Example counts: each example costs one Java batch (a new Spark session, one read per
range) and a Spark job per icewright read: under a second once the JVMs are warm. 16
examples of up to 10 steps with three ranges each reach every kind of range (the last
test checks the tally) in about 15 s with the Java peer's start; the planner's own
property (tests/scan/test_incremental.py, 60 examples, no Spark, no Java) covers the
history space more widely.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from icewright.catalog import SqlCatalog, Table
from icewright.commit.expire import expire_snapshots
from icewright.commit.refs import ancestor_ids
from icewright.errors import ValidationError
from icewright.scan.incremental import SnapshotRange, plan_appends, snapshot_range
from icewright.spark.read import read_changes
from icewright.spec.snapshots import Operation, Snapshot
from tests.scan.test_incremental import OPS, History
from tests.support.java import IcebergJava, Pending

pytestmark = [pytest.mark.slow, pytest.mark.interop]

Row = tuple[int, str, float]


class Generated(History):
    """The planner tests' history, and expiry (``retain_last`` 1 to 3, files cleaned)."""

    def do(self, op: str, pick: int) -> None:
        if op != "expire":
            super().do(op, pick)
            return
        if self.table.metadata.current_snapshot_id is None:
            return
        expire_snapshots(
            self.table, older_than_ms=int(time.time() * 1000) + 1, retain_last=1 + pick % 3
        )
        self.table = self.table.refresh()


def _row(values: Any) -> Row:
    """(id, region, epoch seconds of ts): Spark's naive local and Java's aware datetimes
    compared as instants."""
    ident, ts, region = values
    assert isinstance(ts, dt.datetime)
    return (ident, region, ts.timestamp())


def _file_rows(h: History, tasks: Any) -> Counter[Row]:
    out: Counter[Row] = Counter()
    for task in tasks:
        out.update(_row((r["id"], r["ts"], r["region"])) for r in h.read(task.file_path))
    return out


def _main_line(table: Table) -> list[Snapshot]:
    """Main's retained ancestry, oldest first."""
    m = table.metadata
    return [s for s in map(m.snapshot_by_id, reversed(ancestor_ids(m, m.current_snapshot_id))) if s]


def _starts(line: list[Snapshot]) -> list[int]:
    """Candidate range starts on main's line, oldest first: the expired parent of its oldest
    retained snapshot (if any), then every snapshot but the head."""
    out = [s.snapshot_id for s in line[:-1]]
    if line and line[0].parent_snapshot_id is not None:
        out.insert(0, line[0].parent_snapshot_id)
    return out


@dataclasses.dataclass
class Range:
    start: int
    end: int
    expired_start: bool
    removing: list[int]  # overwrite and delete snapshots in the range
    java: Pending[Any] | None = None


TALLY: Counter[str] = Counter()
"""What the examples covered (printed with ``-s``, checked by the last test)."""

STEPS = st.lists(
    st.tuples(st.sampled_from((*OPS, "expire")), st.integers(0, 7)), min_size=2, max_size=10
)


@settings(
    max_examples=16,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS, data=st.data())
def test_incremental_reads_agree_with_iceberg_java(
    spark: SparkSession,
    iceberg_java: IcebergJava,
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[tuple[str, int]],
    data: st.DataObject,
) -> None:
    root = tmp_path_factory.mktemp("incremental")
    catalog = SqlCatalog("test", uri=f"sqlite:///{root}/catalog.db", warehouse=str(root / "wh"))
    catalog.create_namespace("db")
    h = Generated(catalog, "db.t")
    for op, pick in [("append", 0), *steps]:
        h.do(op, pick)
    table = h.table
    snapshots = _main_line(table)
    starts = _starts(snapshots)
    if not starts:
        return
    line = [s.snapshot_id for s in snapshots]
    expired = {sid for sid in starts if table.metadata.snapshot_by_id(sid) is None}
    ranges: list[Range] = []
    for n in range(3):
        # the first range starts at the expired parent when expiry left one
        first = n == 0 and starts[0] in expired
        start = starts[0] if first else data.draw(st.sampled_from(starts), label="start")
        later = line[line.index(start) + 1 :] if start in line else line
        end = data.draw(st.sampled_from(later), label="end")
        ops = {s.snapshot_id: s.operation for s in table.metadata.snapshots}
        between = line[line.index(start) + 1 if start in line else 0 : line.index(end) + 1]
        removing = [s for s in between if ops[s] not in (Operation.APPEND, Operation.REPLACE)]
        ranges.append(Range(start, end, start in expired, removing))
    with iceberg_java.batch() as java:
        for r in ranges:
            r.java = java.scan(
                table.metadata_location,
                options={"start-snapshot-id": r.start, "end-snapshot-id": r.end},
            )
    for r in ranges:
        assert r.java is not None
        theirs = Counter(_row(v) for v in r.java.value.rows)
        TALLY["expired start"] += r.expired_start
        if r.removing:
            TALLY["overwrite or delete in the range"] += 1
            with pytest.raises(ValidationError, match=f"snapshot {r.removing[0]} in the range"):
                read_changes(spark, table, start=r.start, end=r.end)
            # Java: the appends of the range alone, the other snapshots skipped.
            span = snapshot_range(table.metadata, r.start, r.end)
            appends = tuple(s for s in span.snapshots if s.operation is Operation.APPEND)
            only = SnapshotRange(r.start, r.end, appends)
            plan = plan_appends(table.metadata, table.io, only)
            assert theirs == _file_rows(h, plan.tasks), r
            continue
        TALLY["appends (and compactions) only"] += 1
        TALLY["empty"] += not theirs
        ours = read_changes(spark, table, start=r.start, end=r.end).collect()
        assert Counter(_row(tuple(row)) for row in ours) == theirs, r


def test_the_examples_reached_every_kind_of_range() -> None:
    """Runs after the property: its examples met each kind of range."""
    print("\nincremental ranges against Iceberg Java:", dict(sorted(TALLY.items())))
    assert TALLY["appends (and compactions) only"] >= 5, TALLY
    assert TALLY["overwrite or delete in the range"] >= 3, TALLY
    assert TALLY["expired start"] >= 1, TALLY
