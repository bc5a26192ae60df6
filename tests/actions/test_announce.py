"""Announcements: the one payload shape of "new snapshots" events, claims, and reading
the snapshots back out of the events that started a run (a SQLite catalog)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from icewright.actions.announce import (
    CLAIM_PREFIX,
    announcement,
    claim_key,
    claimed_by,
    commit_announcement,
    snapshots_in,
)
from icewright.actions.watch import snapshot_record
from icewright.commit import fast_append
from icewright.errors import ValidationError
from tests.sensors.support import TABLE, _files, append, make_table, sql_catalog


def test_a_commit_announces_the_snapshots_of_its_key_only(tmp_path: Path) -> None:
    catalog = sql_catalog(tmp_path)
    make_table(catalog)
    other = append(catalog, 1)
    table = catalog.load_table(TABLE)
    mine = fast_append(table, _files(table, 2, 10), commit_key="k")
    table = catalog.load_table(TABLE)
    series = fast_append(table, _files(table, 3, 20), commit_key="k:1")

    made = commit_announcement(
        TABLE, [mine.snapshot_id, series.snapshot_id, other.snapshot_id, None], "k", catalog=catalog
    )
    assert [s["snapshot_id"] for s in made["snapshots"]] == [mine.snapshot_id, series.snapshot_id]
    assert made["table"] == TABLE and made["branch"] == "main" and made["status"] == "success"
    assert made["head"]["snapshot_id"] == series.snapshot_id
    assert made["snapshots"][0]["added_records"] == 2
    # A no-op reports the table's current snapshot, which another commit made: none.
    assert commit_announcement(TABLE, [other.snapshot_id], "k", catalog=catalog)["snapshots"] == []
    # The watcher's records and the operator's are the same records.
    current = catalog.load_table(TABLE).metadata.snapshot_by_id(mine.snapshot_id)
    assert current is not None and made["snapshots"][0] == snapshot_record(current)


def test_claims_name_a_commit_key_and_its_series() -> None:
    assert claim_key("k").startswith(CLAIM_PREFIX) and claim_key("k") != claim_key("k2")
    assert claimed_by({"icewright.commit-key": "k"}) == [claim_key("k")]
    assert claimed_by({"icewright.commit-key": "k:3"}) == [claim_key("k:3"), claim_key("k")]
    series = "k:0123456789abcdef"
    assert claimed_by({"icewright.commit-key": series}) == [claim_key(series), claim_key("k")]
    airflow = "airflow:" + "0123456789abcdef" * 2 + "01234567"
    assert claimed_by({"icewright.commit-key": airflow}) == [claim_key(airflow)]
    assert claimed_by({}) == [] and claimed_by(None) == []


def test_snapshots_in_events_each_once_oldest_first() -> None:
    def record(sid: int, seq: int) -> dict[str, object]:
        return {
            "snapshot_id": sid,
            "sequence_number": seq,
            "timestamp_ms": seq,
            "operation": "append",
        }

    watcher = {"from_trigger": True, "payload": announcement(TABLE, [record(3, 3), record(1, 1)])}
    operator = {"payload": announcement(TABLE, [record(2, 2), record(3, 3)])}
    bare = announcement(TABLE, [record(4, 4)])
    found = snapshots_in([watcher, operator, bare, None, {"other": 1}, {"payload": None}])
    assert [s["snapshot_id"] for s in found] == [1, 2, 3, 4]
    assert snapshots_in([]) == []


def test_announced_source_names_the_range_of_the_announced_snapshots() -> None:
    from icewright.actions.announce import announced_source

    def record(sid: int, parent: int | None, seq: int) -> dict[str, Any]:
        return {"snapshot_id": sid, "parent_snapshot_id": parent, "sequence_number": seq}

    first = {"table": "sales.orders", "snapshots": [record(12, 11, 2), record(13, 12, 3)]}
    second = {"payload": {"table": "sales.orders", "snapshots": [record(14, 13, 4)]}}
    assert announced_source([second, first]) == "iceberg:sales.orders@11..14"
    assert announced_source([first], changelog=True) == "iceberg-changelog:sales.orders@11..13"
    fresh = {"table": "sales.orders", "snapshots": [record(1, None, 1)]}
    assert announced_source([fresh]) == "iceberg:sales.orders@..1"
    assert announced_source([{"table": "sales.orders", "snapshots": []}, None]) is None
    other = {"table": "sales.returns", "snapshots": [record(5, 4, 2)]}
    assert announced_source([first, other], table="sales.returns") == "iceberg:sales.returns@4..5"
    with pytest.raises(ValidationError, match="several tables"):
        announced_source([first, other])
