"""Incremental scans over generated histories: the rows appended in (A, B] are the rows of
the table at B less those at A, pyiceberg's incremental append scan plans the same files,
a range with an overwrite or delete is refused by name, and the changelog nets out to the
table at B."""

from __future__ import annotations

import io
import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icewright.catalog import SqlCatalog, Table
from icewright.commit import (
    ManageSnapshots,
    UpdateProperties,
    append,
    delete_files,
    fast_append,
    overwrite,
    rewrite_files,
)
from icewright.errors import ValidationError
from icewright.manifest.manifest_list import read_manifest_list
from icewright.scan import plan_files
from icewright.scan.incremental import (
    ChangeType,
    plan_appends,
    plan_changelog,
    snapshot_range,
)
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.snapshots import Operation
from tests.commit.support import SCHEMA, files_for, rows

NAMES = itertools.count()
OPS = ("append", "merge_append", "overwrite", "delete", "rewrite", "side_append")


class History:
    """A table and a counter of fresh ids; each op commits one snapshot (or none)."""

    def __init__(self, catalog: SqlCatalog, name: str) -> None:
        spec = build_partition_spec(SCHEMA, [("identity", "region")])
        self.table = catalog.create_table(name, SCHEMA, spec)
        self.table = (
            UpdateProperties(self.table)
            .set("commit.manifest.min-count-to-merge", "2")
            .commit()
            .table
        )
        self.next_id = 0

    def fresh(self, n: int, region: str) -> list[dict[str, Any]]:
        out = rows(n, region=region, start=self.next_id)
        self.next_id += n
        return out

    def live(self) -> list[Any]:
        if not self.table.metadata.snapshots:
            return []
        return [t.data_file for t in plan_files(self.table)]

    def do(self, op: str, pick: int) -> None:
        t = self.table
        region = ("eu", "us")[pick % 2]
        live = self.live()
        if op == "append":
            result = fast_append(t, files_for(t, self.fresh(1 + pick % 3, region)))
        elif op == "merge_append":
            result = append(t, files_for(t, self.fresh(2, region)))
        elif op == "side_append":
            if "side" not in t.metadata.refs:
                if t.metadata.current_snapshot_id is None:
                    return
                t = ManageSnapshots(t).create_branch("side").commit().table
            result = fast_append(t, files_for(t, self.fresh(1, region)), branch="side")
        elif not live:
            return
        elif op == "overwrite":
            gone = live[pick % len(live)]
            new = files_for(t, self.fresh(1, region))
            result = overwrite(t, delete_files=[gone], add_files=new)
        elif op == "delete":
            result = delete_files(t, paths=[live[pick % len(live)]])
        else:  # rewrite: same rows, other files
            same = [f for f in live if f.partition == live[pick % len(live)].partition][:2]
            data = [r for f in same for r in self.read(f.file_path)]
            result = rewrite_files(t, same, files_for(t, data))
        self.table = result.table

    def read(self, path: str) -> list[dict[str, Any]]:
        return pq.read_table(io.BytesIO(self.table.io.read(path))).to_pylist()


def _ids(table: Table, path: str) -> list[int]:
    data = pq.read_table(io.BytesIO(table.io.read(path)), columns=["id"])
    return list(data.column("id").to_pylist())


def ids_at(table: Table, snapshot_id: int | None) -> Counter[int]:
    if snapshot_id is None:
        return Counter()
    out: Counter[int] = Counter()
    for task in plan_files(table, snapshot_id=snapshot_id):
        out.update(_ids(table, task.file_path))
    return out


def ids_of(table: Table, tasks: Any) -> Counter[int]:
    out: Counter[int] = Counter()
    for task in tasks:
        assert not task.delete_files
        out.update(_ids(table, task.file_path))
    return out


def main_line(table: Table) -> list[int]:
    """Main's ancestry, oldest first."""
    return [s.snapshot_id for s in snapshot_range(table.metadata, None).snapshots]


@pytest.fixture
def history(catalog: SqlCatalog) -> Callable[[str], History]:
    return lambda name: History(catalog, name)


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 7)), min_size=1, max_size=9),
)
def test_appended_rows_are_the_difference_and_pyiceberg_agrees(
    history: Callable[[str], History], pyiceberg_catalog: Any, ops: list[Any]
) -> None:
    h = history(f"db.t{next(NAMES)}")
    for op, pick in ops:
        h.do(op, pick)
    table = h.table
    if table.metadata.current_snapshot_id is None:
        return
    line = main_line(table)
    py_table = pyiceberg_catalog.load_table(str(table.identifier))
    for a, b in itertools.combinations([None, *line], 2):
        assert b is not None
        span = snapshot_range(table.metadata, a, b)
        removing = [
            s.snapshot_id
            for s in span.snapshots
            if s.operation not in (Operation.APPEND, Operation.REPLACE)
        ]
        if removing:
            with pytest.raises(ValidationError, match=f"snapshot {removing[0]} in the range"):
                plan_appends(table.metadata, table.io, span)
        else:
            plan = plan_appends(table.metadata, table.io, span)
            assert ids_of(table, plan.tasks) == ids_at(table, b) - ids_at(table, a)
            py_scan = py_table.incremental_append_scan(
                from_snapshot_id_exclusive=a, to_snapshot_id_inclusive=b
            )
            assert sorted(t.file.file_path for t in py_scan.plan_files()) == sorted(
                t.file_path for t in plan.tasks
            )
        changes = plan_changelog(table.metadata, table.io, span)[1]
        inserted = ids_of(table, [c.task for c in changes if c.change_type is ChangeType.INSERT])
        deleted = ids_of(table, [c.task for c in changes if c.change_type is ChangeType.DELETE])
        assert ids_at(table, a) + inserted - deleted == ids_at(table, b)  # Counter: no negatives
        ordinals = [c.ordinal for c in changes]
        assert ordinals == sorted(ordinals)
        assert {c.snapshot_id for c in changes} <= {s.snapshot_id for s in span.snapshots}


def test_the_range_reads_only_the_manifests_its_snapshots_wrote(history: Any) -> None:
    h = history("db.many")
    for _ in range(6):
        h.do("append", 0)
    line = main_line(h.table)
    plan = plan_appends(h.table.metadata, h.table.io, snapshot_range(h.table.metadata, line[-3]))
    assert plan.metrics.scanned_data_manifests == 2 and len(plan.tasks) == 2


def test_a_merged_manifest_contributes_only_its_added_entries(history: Any) -> None:
    h = history("db.merged")
    for _ in range(4):
        h.do("merge_append", 1)
    table = h.table
    line = main_line(table)
    last = table.metadata.snapshot_by_id(line[-1])
    assert last is not None and last.manifest_list is not None
    listed = read_manifest_list(table.io.read(last.manifest_list), last.manifest_list)
    merged = [m for m in listed if m.added_snapshot_id == line[-1] and m.existing_files_count]
    assert merged  # the last append wrote a manifest that also lists older files
    plan = plan_appends(table.metadata, table.io, snapshot_range(table.metadata, line[-2]))
    assert ids_of(table, plan.tasks) == ids_at(table, line[-1]) - ids_at(table, line[-2])


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("side", None, "is not an ancestor of"),
        (123, None, "snapshot 123, is not in the table"),
        ("nope", None, "neither a snapshot id nor a branch or tag"),
        (None, 7, "snapshot 7, is not in the table"),
    ],
)
def test_bad_ranges_are_one_line(history: Any, start: Any, end: Any, message: str) -> None:
    h = history("db.bad")
    h.do("append", 0)
    h.do("side_append", 0)
    h.do("append", 0)
    with pytest.raises(ValidationError, match=message) as raised:
        snapshot_range(h.table.metadata, start, end)
    assert "\n" not in str(raised.value)


def test_ranges_by_ref_name_and_the_empty_range(history: Any) -> None:
    h = history("db.refs")
    h.do("append", 0)
    first = h.table.metadata.current_snapshot_id
    h.table = ManageSnapshots(h.table).create_tag("v1", first).commit().table
    h.do("append", 1)
    span = snapshot_range(h.table.metadata, "v1", "main")
    assert [s.snapshot_id for s in span.snapshots] == [h.table.metadata.current_snapshot_id]
    assert snapshot_range(h.table.metadata, "main", "main").snapshots == ()


def test_a_range_from_the_start_of_an_expired_history_is_refused(history: Any) -> None:
    from icewright.commit import expire_snapshots

    h = history("db.expired")
    for _ in range(3):
        h.do("append", 0)
    line = main_line(h.table)
    expire_snapshots(h.table, older_than_ms=2**62, retain_last=2)
    table = h.table.refresh()
    with pytest.raises(ValidationError, match=f"before snapshot {line[1]} was expired"):
        snapshot_range(table.metadata, None)
    assert [s.snapshot_id for s in snapshot_range(table.metadata, line[1]).snapshots] == [line[2]]


def test_a_range_from_an_expired_start_reads_on_from_its_child(history: Any) -> None:
    """As Java's ``fromSnapshotExclusive``: a start expiry removed is accepted while it is
    the parent of a snapshot of the end's history (a job that read up to it reads on)."""
    from icewright.commit import expire_snapshots

    h = history("db.expired_start")
    for _ in range(4):
        h.do("append", 0)
    line = main_line(h.table)
    read_before = ids_at(h.table, line[1])
    expire_snapshots(h.table, older_than_ms=2**62, retain_last=2)
    table = h.table.refresh()
    assert table.metadata.snapshot_by_id(line[1]) is None
    span = snapshot_range(table.metadata, line[1])
    assert [s.snapshot_id for s in span.snapshots] == line[2:]
    plan = plan_appends(table.metadata, table.io, span)
    assert ids_of(table, plan.tasks) == ids_at(table, line[3]) - read_before
    # an expired snapshot further back is no parent of anything left: refused by name
    with pytest.raises(ValidationError, match=f"snapshot {line[0]}, is not in the table"):
        snapshot_range(table.metadata, line[0])


def test_a_range_of_appends_reads_one_manifest_list(
    history: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each snapshot's manifests are found in the end's list while none was rewritten
    (their added files add up to the summary's); a merged one sends the snapshot back to
    its own list, with the same result."""
    from icewright.scan.planner import ManifestPlanner

    read: list[int] = []
    original = ManifestPlanner.manifests

    def counting(self: ManifestPlanner, snapshot: Any) -> Any:
        read.append(snapshot.snapshot_id)
        return original(self, snapshot)

    monkeypatch.setattr(ManifestPlanner, "manifests", counting)
    fast = history("db.fast")
    for _ in range(6):
        fast.do("append", 0)
    line = main_line(fast.table)
    read.clear()
    plan = plan_appends(
        fast.table.metadata, fast.table.io, snapshot_range(fast.table.metadata, line[1])
    )
    assert read == [line[-1]]
    assert ids_of(fast.table, plan.tasks) == ids_at(fast.table, line[-1]) - ids_at(
        fast.table, line[1]
    )

    merged = history("db.merging")
    for _ in range(5):
        merged.do("merge_append", 1)
    line = main_line(merged.table)
    read.clear()
    table = merged.table
    plan = plan_appends(table.metadata, table.io, snapshot_range(table.metadata, line[0]))
    assert len(read) > 1  # some snapshots' manifests were merged away: their own lists read
    assert ids_of(table, plan.tasks) == ids_at(table, line[-1]) - ids_at(table, line[0])
