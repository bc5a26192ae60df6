"""Time travel: by snapshot id, by ref (branch or tag) and by timestamp; bad inputs."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from icewright.catalog import Table
from icewright.commit.refs import ManageSnapshots
from icewright.commit.schema_update import UpdateSchema
from icewright.errors import ValidationError
from icewright.scan import (
    TableScan,
    plan_files,
    resolve_scan_target,
    snapshot_as_of_time,
    snapshot_id_as_of_time,
)
from icewright.spec.snapshots import SnapshotLogEntry
from tests.scan.support import append, make_rows, pause

UTC = dt.UTC


def paths(tasks: Any) -> set[str]:
    return {t.file_path for t in tasks}


@pytest.fixture
def history(make_table: Callable[..., Table]) -> tuple[Table, list[int], list[set[str]]]:
    """Three appends to a region-partitioned table: the table, snapshot ids, live files."""
    table = make_table(fields=[("identity", "region")])
    ids, live = [], []
    files: set[str] = set()
    for k in range(3):
        pause()
        table = append(table, make_rows(8, start=8 * k))
        snap = table.metadata.current_snapshot()
        assert snap is not None
        ids.append(snap.snapshot_id)
        files = files | {t.file_path for t in plan_files(table)}
        live.append(set(files))
    return table, ids, live


def test_default_scan_reads_the_current_snapshot(history: Any) -> None:
    table, ids, live = history
    scan = TableScan.of(table)
    snapshot = scan.snapshot()
    assert snapshot is not None and snapshot.snapshot_id == ids[-1]
    assert paths(scan.plan_files()) == live[-1]
    # each append wrote one file per region
    assert [len(s) for s in live] == [4, 8, 12]


def test_by_snapshot_id_reads_that_snapshot(history: Any, py_catalog: Any) -> None:
    table, ids, live = history
    py_table = py_catalog.load_table("db.t")
    for sid, expected in zip(ids, live, strict=True):
        ours = paths(plan_files(table, snapshot_id=sid))
        assert ours == expected
        theirs = {t.file.file_path for t in py_table.scan(snapshot_id=sid).plan_files()}
        assert ours == theirs


def test_by_timestamp_follows_the_snapshot_log(history: Any) -> None:
    table, ids, live = history
    log = table.metadata.snapshot_log
    assert [e.snapshot_id for e in log] == ids
    for entry, expected in zip(log, live, strict=True):
        # exactly at the entry, and just before the next one
        assert paths(plan_files(table, as_of_ms=entry.timestamp_ms)) == expected
    assert paths(plan_files(table, as_of_ms=log[1].timestamp_ms - 1)) == live[0]
    assert paths(plan_files(table, as_of_ms=log[-1].timestamp_ms + 10**6)) == live[-1]
    moment = dt.datetime.fromtimestamp(log[1].timestamp_ms / 1000, tz=UTC)
    assert TableScan.of(table).as_of(moment).snapshot().snapshot_id == ids[1]  # type: ignore[union-attr]


def test_a_time_before_the_first_snapshot_is_refused(history: Any) -> None:
    table, _, _ = history
    first = table.metadata.snapshot_log[0].timestamp_ms
    with pytest.raises(ValidationError, match="no snapshot was current"):
        plan_files(table, as_of_ms=first - 1)
    with pytest.raises(ValidationError, match="aware datetime"):
        TableScan.of(table).as_of(dt.datetime(2030, 1, 1))  # naive: which zone?
    with pytest.raises(ValidationError, match="milliseconds"):
        plan_files(table, as_of_ms="yesterday")  # type: ignore[arg-type]


def test_timestamp_ties_pick_the_first_log_entry_as_java_does(history: Any) -> None:
    table, ids, _ = history
    meta = dataclasses.replace(
        table.metadata,
        snapshot_log=(
            SnapshotLogEntry(1000, ids[0]),
            SnapshotLogEntry(2000, ids[1]),
            SnapshotLogEntry(2000, ids[2]),
        ),
    )
    assert snapshot_id_as_of_time(meta, 2000) == ids[1]
    assert snapshot_id_as_of_time(meta, 1999) == ids[0]
    assert snapshot_id_as_of_time(meta, 10**12) == ids[1]


def test_a_log_entry_of_an_expired_snapshot_is_refused(history: Any) -> None:
    table, ids, _ = history
    meta = dataclasses.replace(
        table.metadata,
        snapshot_log=(SnapshotLogEntry(1000, 424242), SnapshotLogEntry(2000, ids[0])),
    )
    assert snapshot_id_as_of_time(meta, 1500) == 424242
    with pytest.raises(ValidationError, match=r"424242.*expired"):
        snapshot_as_of_time(meta, 1500)
    empty = dataclasses.replace(table.metadata, snapshot_log=())
    with pytest.raises(ValidationError, match="snapshot log is empty"):
        snapshot_id_as_of_time(empty, 10**12)


def test_rollback_changes_what_was_current_afterwards(history: Any) -> None:
    table, ids, live = history
    pause()
    table = ManageSnapshots(table).rollback_to(ids[0]).commit().table
    assert paths(plan_files(table)) == live[0]
    # after the rollback, the log says ids[0] is current again; before it, ids[2] was
    now = table.metadata.snapshot_log[-1].timestamp_ms
    assert table.metadata.snapshot_log[-1].snapshot_id == ids[0]
    assert paths(plan_files(table, as_of_ms=now)) == live[0]
    assert paths(plan_files(table, as_of_ms=now - 1)) == live[2]


def test_refs_branch_and_tag(history: Any, py_catalog: Any) -> None:
    table, ids, live = history
    table = ManageSnapshots(table).create_tag("v1", ids[0]).create_branch("audit", ids[1]).commit()
    table = table.table
    assert paths(plan_files(table, ref="v1")) == live[0]
    assert paths(TableScan.of(table).use_ref("audit").plan_files()) == live[1]
    assert paths(plan_files(table, ref="main")) == live[2]
    py_table = py_catalog.load_table("db.t")
    for ref, expected in (("v1", live[0]), ("audit", live[1])):
        assert {t.file.file_path for t in py_table.scan().use_ref(ref).plan_files()} == expected


def test_time_travel_binds_to_the_snapshot_schema(history: Any) -> None:
    table, ids, _ = history
    table = UpdateSchema(table).rename_column("region", "area").commit().table
    table = ManageSnapshots(table).create_tag("old", ids[0]).create_branch("b", ids[0]).commit()
    table = table.table
    # the old name is what the snapshot was written with (Java: SnapshotUtil.schemaFor)
    eu_then = plan_files(table, snapshot_id=ids[0], filter="region = 'eu'")
    assert len(eu_then) == 1 and eu_then[0].partition == ("eu",)
    with pytest.raises(ValidationError, match="region"):
        plan_files(table, filter="region = 'eu'")
    assert paths(plan_files(table, filter="area = 'eu'")) == {
        t.file_path for t in plan_files(table) if t.partition == ("eu",)
    }
    # a tag reads with its snapshot's schema, a branch with the table's current one
    assert len(plan_files(table, ref="old", filter="region = 'us'")) == 1
    assert len(plan_files(table, ref="b", filter="area = 'us'")) == 1
    with pytest.raises(ValidationError, match="region"):
        plan_files(table, ref="b", filter="region = 'us'")
    as_of = table.metadata.snapshot_log[0].timestamp_ms
    assert TableScan.of(table).as_of(as_of).schema().find_field("region").field_id == 3


def test_bad_selectors(history: Any) -> None:
    table, ids, _ = history
    with pytest.raises(ValidationError, match=r"no snapshot 12345.*known snapshot ids"):
        plan_files(table, snapshot_id=12345)
    with pytest.raises(ValidationError, match=r"no branch or tag named 'nope'.*main"):
        plan_files(table, ref="nope")
    with pytest.raises(ValidationError, match="only one of"):
        plan_files(table, snapshot_id=ids[0], ref="main")
    with pytest.raises(ValidationError, match="already reads by snapshot_id"):
        TableScan.of(table).use_snapshot(ids[0]).use_ref("main")
    with pytest.raises(ValidationError, match="already reads by ref"):
        TableScan.of(table).use_ref("main").as_of(1)
    with pytest.raises(ValidationError, match="integer"):
        plan_files(table, snapshot_id=True)
    with pytest.raises(ValidationError, match="branch or tag name"):
        plan_files(table, ref="")


def test_an_empty_table_plans_nothing(make_table: Callable[..., Table]) -> None:
    table = make_table()
    assert plan_files(table) == []
    assert plan_files(table, ref="main") == []
    target = resolve_scan_target(table.metadata)
    assert target.snapshot is None and target.schema == table.metadata.schema()
    with pytest.raises(ValidationError, match="snapshot log is empty"):
        plan_files(table, as_of_ms=10**12)
