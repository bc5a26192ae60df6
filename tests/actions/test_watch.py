"""The watch core (:mod:`icewright.actions.watch`) and ``wait_for_snapshot``, its loop.

New snapshots after a watermark, filters, one pointer read per idle poll; against a real
SQLite catalog in ``tmp_path``, snapshots committed with :mod:`icewright.commit` (no Spark,
no orchestrator).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import icewright.actions
from icewright.actions import wait_for_snapshot
from icewright.actions.watch import (
    SnapshotFilter,
    SnapshotWatch,
    Watermark,
    new_snapshots,
    snapshot_record,
)
from icewright.catalog import Catalog, Identifier, SqlCatalog
from icewright.commit import expire_snapshots
from icewright.errors import NoSuchTable, ValidationError
from tests.sensors.support import TABLE, append, compact, delete_all, make_table, sql_catalog


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    """A SQLite catalog in ``tmp_path`` with the empty table ``sales.orders``."""
    cat = sql_catalog(tmp_path / "icewright")
    make_table(cat)
    yield cat
    cat.close()


class CountingCatalog(SqlCatalog):
    """A real SQLite catalog that counts pointer reads and metadata loads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pointer_reads = 0
        self.loads = 0

    def table_metadata_location(self, identifier: Any) -> str:
        self.pointer_reads += 1
        return super().table_metadata_location(identifier)

    def load_table(self, identifier: Any) -> Any:
        self.loads += 1
        return super().load_table(identifier)


@pytest.fixture
def counting(tmp_path: Any) -> CountingCatalog:
    cat = CountingCatalog("icewright", f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh"))
    make_table(cat)
    return cat


def test_idle_polls_read_only_the_pointer(counting: CountingCatalog) -> None:
    first = append(counting, 3)
    watch = SnapshotWatch.open(counting, TABLE, after=Watermark(first.snapshot_id))
    assert not watch.poll().found
    loads, pointers = counting.loads, counting.pointer_reads
    for _ in range(5):
        result = watch.poll()
        assert not result.changed and not result.found
    assert counting.loads == loads  # nothing but the pointer was read
    assert counting.pointer_reads == pointers + 5
    second = append(counting, 4)
    loads = counting.loads
    result = watch.poll()
    assert result.changed and [s.snapshot_id for s in result.snapshots] == [second.snapshot_id]
    assert counting.loads == loads + 1
    assert result.head == Watermark(
        second.snapshot_id, second.sequence_number, result.snapshots[0].timestamp_ms
    )


def test_new_snapshots_oldest_first_after_the_watermark(catalog: Catalog) -> None:
    ids = [append(catalog, 2, start=10 * i).snapshot_id for i in range(4)]
    metadata = catalog.load_table(TABLE).metadata
    assert [s.snapshot_id for s in new_snapshots(metadata, "main", None)] == ids
    assert [s.snapshot_id for s in new_snapshots(metadata, "main", Watermark(ids[1]))] == ids[2:]
    assert new_snapshots(metadata, "main", Watermark(ids[-1])) == []


def test_a_watermark_gone_from_the_branch_does_not_make_old_snapshots_new(
    catalog: Catalog,
) -> None:
    ids = [append(catalog, 1, start=i).snapshot_id for i in range(4)]
    table = catalog.load_table(TABLE)
    mark = Watermark.of(table.metadata.snapshot_by_id(ids[1]))
    expire_snapshots(table, snapshot_ids=[ids[0], ids[1]])
    metadata = catalog.load_table(TABLE).metadata
    assert metadata.snapshot_by_id(ids[1]) is None
    assert [s.snapshot_id for s in new_snapshots(metadata, "main", mark)] == ids[2:]
    # An unknown id without order information: every snapshot of the branch counts.
    assert [s.snapshot_id for s in new_snapshots(metadata, "main", Watermark(123))] == ids[2:]


def test_default_operations_skip_compaction_but_see_delete(catalog: Catalog) -> None:
    base = append(catalog, 4)
    watch = SnapshotWatch.open(catalog, TABLE, after=Watermark(base.snapshot_id))
    rewrite = compact(catalog)
    assert str(rewrite.operation) == "replace"
    result = watch.poll()
    assert result.changed and not result.found and result.examined == 1
    gone = delete_all(catalog)
    result = watch.poll()
    assert [str(s.operation) for s in result.snapshots] == ["delete"]
    assert result.snapshots[0].snapshot_id == gone.snapshot_id

    replaces = SnapshotWatch.open(
        catalog, TABLE, after=Watermark(base.snapshot_id), filter=SnapshotFilter.build(["replace"])
    )
    assert [s.snapshot_id for s in replaces.poll().snapshots] == [rewrite.snapshot_id]
    anything = SnapshotWatch.open(
        catalog, TABLE, after=Watermark(base.snapshot_id), filter=SnapshotFilter.build(None)
    )
    assert len(anything.poll().snapshots) == 2


def test_summary_and_record_count_filters(catalog: Catalog) -> None:
    small = append(catalog, 2, props={"source": "crm"})
    big = append(catalog, 50, props={"source": "crm"})
    other = append(catalog, 80, props={"source": "web"})
    crm = SnapshotFilter.build(summary_filters={"source": "crm"})
    big_crm = SnapshotFilter.build(summary_filters={"source": "crm"}, min_added_records=10)
    big_any = SnapshotFilter.build(min_added_records=50)
    metadata = catalog.load_table(TABLE).metadata
    snaps = new_snapshots(metadata, "main", None)
    assert [s.snapshot_id for s in snaps if crm.passes(s)] == [small.snapshot_id, big.snapshot_id]
    assert [s.snapshot_id for s in snaps if big_crm.passes(s)] == [big.snapshot_id]
    assert [s.snapshot_id for s in snaps if big_any.passes(s)] == [
        big.snapshot_id,
        other.snapshot_id,
    ]


def test_timestamp_filter_counts_only_later_commits(catalog: Catalog) -> None:
    first = append(catalog, 1)
    second = append(catalog, 1)
    metadata = catalog.load_table(TABLE).metadata
    t1 = metadata.snapshot_by_id(first.snapshot_id).timestamp_ms
    t2 = metadata.snapshot_by_id(second.snapshot_id).timestamp_ms
    late = SnapshotFilter.build(min_timestamp_ms=t1)
    kept = [s.snapshot_id for s in new_snapshots(metadata, "main", None) if late.passes(s)]
    assert kept == ([second.snapshot_id] if t2 > t1 else [])


def test_branch_is_watched_not_main(catalog: Catalog) -> None:
    from icewright.commit import ManageSnapshots

    base = append(catalog, 1)
    ManageSnapshots(catalog.load_table(TABLE)).create_branch("audit", base.snapshot_id).commit()
    on_branch = append(catalog, 3, branch="audit")
    main_watch = SnapshotWatch.open(catalog, TABLE, after=Watermark(base.snapshot_id))
    branch_watch = SnapshotWatch.open(
        catalog, TABLE, branch="audit", after=Watermark(base.snapshot_id)
    )
    assert not main_watch.poll().found
    assert [s.snapshot_id for s in branch_watch.poll().snapshots] == [on_branch.snapshot_id]


def test_record_describes_the_snapshot(catalog: Catalog) -> None:
    result = append(catalog, 7, props={"batch": "b1"})
    snapshot = catalog.load_table(TABLE).metadata.snapshot_by_id(result.snapshot_id)
    record = snapshot_record(snapshot)
    assert record["snapshot_id"] == result.snapshot_id
    assert record["sequence_number"] == result.sequence_number == 1
    assert record["operation"] == "append"
    assert record["added_records"] == 7
    assert record["timestamp_ms"] == snapshot.timestamp_ms
    assert record["summary"]["batch"] == "b1"
    assert record["parent_snapshot_id"] is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"operations": ["apend"]},
        {"operations": []},
        {"summary_filters": ["source"]},
        {"min_added_records": -1},
        {"min_added_records": "many"},
    ],
)
def test_bad_filters_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SnapshotFilter.build(**kwargs)


def test_watermark_json_round_trip_and_bad_values() -> None:
    mark = Watermark(5, 2, 1000)
    assert Watermark.from_json(mark.to_json()) == mark
    assert Watermark.from_json("42") == Watermark(42)
    assert Watermark.from_json(None) is None
    for bad in (True, {"id": 1}, [1], {"snapshot_id": "x"}):
        with pytest.raises(ValidationError):
            Watermark.from_json(bad)
    with pytest.raises(ValidationError):
        SnapshotWatch.open(
            SqlCatalog("x", "sqlite://", "/tmp/x"), Identifier.parse("a.b"), branch=""
        )


def test_resolve_after_and_advance(catalog: Catalog) -> None:
    first = append(catalog, 1)
    watch = SnapshotWatch.open(catalog, TABLE)
    mark = watch.resolve_after(first.snapshot_id)
    assert mark == Watermark(first.snapshot_id, first.sequence_number, mark.timestamp_ms)
    assert mark.sequence_number == 1 and mark.timestamp_ms > 0
    assert watch.resolve_after(999) == Watermark(999)  # unknown: no order information
    watch.after = mark
    second = append(catalog, 2)
    result = watch.poll()
    assert [s.snapshot_id for s in result.snapshots] == [second.snapshot_id]
    assert watch.after == mark  # polling alone does not move the watermark
    watch.advance(result)
    assert watch.after == result.head == watch.head()
    assert watch.after is not None and watch.after.snapshot_id == second.snapshot_id
    assert watch.last_location == catalog.table_metadata_location(TABLE)
    assert not watch.poll().changed


def test_the_core_is_exported_from_actions_and_imports_no_orchestrator() -> None:
    from icewright.actions import watch

    for name in watch.__all__:
        assert getattr(icewright.actions, name) is getattr(watch, name)
        assert name in icewright.actions.__all__
    code = (
        "import sys, icewright.actions as a, icewright.actions.wait\n"
        "a.SnapshotWatch, a.wait_for_snapshot\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('airflow', 'dagster'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- wait_for_snapshot: the loop over the watch ---------------------------------------------


def test_wait_returns_new_snapshots_or_times_out_with_the_head(catalog: Catalog) -> None:
    first = append(catalog, 1)
    second = append(catalog, 3, start=10)
    found = wait_for_snapshot(
        TABLE, catalog=catalog, after_snapshot_id=first.snapshot_id, timeout=0
    )
    assert not found.timed_out and found.polls == 1
    assert [s.snapshot_id for s in found.snapshots] == [second.snapshot_id]
    assert found.latest_snapshot_id == second.snapshot_id and found.table == TABLE
    assert found.metadata_location == catalog.table_metadata_location(TABLE)
    every = wait_for_snapshot(TABLE, catalog=catalog, timeout=0)
    assert [s.snapshot_id for s in every.snapshots] == [first.snapshot_id, second.snapshot_id]
    none = wait_for_snapshot(
        TABLE, catalog=catalog, after_snapshot_id=second.snapshot_id, timeout=0
    )
    assert none.timed_out and none.snapshots == () and not none.found
    assert none.latest_snapshot_id == second.snapshot_id
    assert none.metadata_location == catalog.table_metadata_location(TABLE)


def test_wait_keeps_the_head_across_idle_polls_and_reads_metadata_once(tmp_path: Path) -> None:
    counting = CountingCatalog("icewright", f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh"))
    make_table(counting)
    head = append(counting, 2)
    loads = counting.loads
    result = wait_for_snapshot(
        TABLE,
        catalog=counting,
        after_snapshot_id=head.snapshot_id,
        timeout=0.35,
        poll_interval=0.1,
    )
    assert result.timed_out and result.polls >= 3
    assert counting.loads == loads + 1  # the pointer never moved after the first poll
    assert result.latest_snapshot_id == head.snapshot_id


def test_wait_filters_on_summary_records_and_timestamp(catalog: Catalog) -> None:
    small = append(catalog, 1, props={"source": "crm"})
    big = append(catalog, 5, props={"source": "web"})
    metadata = catalog.load_table(TABLE).metadata
    t_small = metadata.snapshot_by_id(small.snapshot_id).timestamp_ms
    t_big = metadata.snapshot_by_id(big.snapshot_id).timestamp_ms

    def ids(**kwargs: Any) -> list[int]:
        result = wait_for_snapshot(TABLE, catalog=catalog, timeout=0, **kwargs)
        assert result.timed_out == (not result.snapshots)
        return [s.snapshot_id for s in result.snapshots]

    assert ids(summary_filters={"source": "crm"}) == [small.snapshot_id]
    assert ids(min_added_records=2) == [big.snapshot_id]
    assert ids(min_timestamp_ms=t_small - 1) == [small.snapshot_id, big.snapshot_id]
    assert ids(min_timestamp_ms=t_big) == []  # strictly after
    assert ids(operations=("delete",)) == []
    # A misspelt operation is refused (it would match nothing and wait forever).
    with pytest.raises(ValidationError, match="apend"):
        ids(operations=("apend",))
    assert ids(operations=None) == [small.snapshot_id, big.snapshot_id]


def test_wait_counts_every_branch_snapshot_after_an_id_the_branch_lacks(
    catalog: Catalog,
) -> None:
    ids = [append(catalog, 1, start=i).snapshot_id for i in range(3)]
    expire_snapshots(catalog.load_table(TABLE), snapshot_ids=[ids[0]])
    result = wait_for_snapshot(TABLE, catalog=catalog, after_snapshot_id=ids[0], timeout=0)
    assert [s.snapshot_id for s in result.snapshots] == ids[1:]


def test_wait_on_a_branch(catalog: Catalog) -> None:
    from icewright.commit import ManageSnapshots

    base = append(catalog, 1)
    ManageSnapshots(catalog.load_table(TABLE)).create_branch("audit", base.snapshot_id).commit()
    on_branch = append(catalog, 2, branch="audit")
    main = wait_for_snapshot(TABLE, catalog=catalog, after_snapshot_id=base.snapshot_id, timeout=0)
    audit = wait_for_snapshot(
        TABLE, catalog=catalog, branch="audit", after_snapshot_id=base.snapshot_id, timeout=0
    )
    assert main.timed_out and main.latest_snapshot_id == base.snapshot_id
    assert [s.snapshot_id for s in audit.snapshots] == [on_branch.snapshot_id]
    assert audit.latest_snapshot_id == on_branch.snapshot_id


@pytest.mark.parametrize(
    "kwargs",
    [
        {"poll_interval": 0},
        {"timeout": -1},
        {"min_timestamp_ms": "soon"},
        {"min_timestamp_ms": True},
    ],
)
def test_wait_refuses_bad_arguments(catalog: Catalog, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        wait_for_snapshot(TABLE, catalog=catalog, **kwargs)


def test_wait_on_a_missing_table_raises(catalog: Catalog) -> None:
    with pytest.raises(NoSuchTable):
        wait_for_snapshot("sales.nowhere", catalog=catalog, timeout=0)
