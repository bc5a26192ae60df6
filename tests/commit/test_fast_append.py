"""Fast append: snapshots, summaries, retries, cleanup and commit keys on a real catalog."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.retry import RetryPolicy
from icewright.errors import CommitFailed, CommitStateUnknown, ValidationError
from icewright.manifest.data_file import DataFile, FileContent, FileFormat
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.table_metadata import TableMetadata

UTC = dt.UTC


def rows(n: int, day: int = 1, region: str = "eu", start: int = 0) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 3, day, tzinfo=UTC)
    return [
        {"id": start + i, "ts": base + dt.timedelta(minutes=i), "region": region} for i in range(n)
    ]


def files_for(table: Table, data: list[dict[str, Any]]) -> list[DataFile]:
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def live_paths(table: Table) -> set[str]:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = set()
    for m in read_manifest_list(table.io.read(snap.manifest_list)):
        for e in read_manifest(table.io.read(m.manifest_path), m):
            if e.is_live:
                out.add(e.data_file.file_path)
    return out


@pytest.mark.parametrize("format_version", [1, 2])
def test_append_twice_builds_history_and_totals(
    make_table: Callable[..., Table], format_version: int
) -> None:
    table = make_table(format_version=format_version)
    first = fast_append(table, files_for(table, rows(10, 1) + rows(5, 2, "us")))
    assert first.committed and first.operation is not None and first.operation.value == "append"
    assert first.summary["added-data-files"] == "2"
    assert first.summary["added-records"] == "15"
    assert first.summary["total-records"] == "15"
    assert first.summary["changed-partition-count"] == "2"
    assert first.sequence_number == (1 if format_version == 2 else 0)

    second = fast_append(first.table, files_for(first.table, rows(7, 3)))
    assert second.summary["total-records"] == "22"
    assert second.summary["total-data-files"] == "3"
    loaded = second.table.refresh()
    assert loaded.metadata_location == second.metadata_location
    snaps = loaded.metadata.snapshots
    assert [s.snapshot_id for s in snaps] == [first.snapshot_id, second.snapshot_id]
    assert snaps[1].parent_snapshot_id == first.snapshot_id
    assert len(live_paths(loaded)) == 3
    # The second snapshot's list keeps the first manifest and adds one.
    assert len(read_manifest_list(loaded.io.read(snaps[1].manifest_list or ""))) == 2
    # The metadata log records the previous metadata files.
    assert len(loaded.metadata.metadata_log) == 2


def test_lost_race_reapplies_on_the_fresh_table(make_table: Callable[..., Table]) -> None:
    table = make_table()
    stale = table  # both writers start from the same metadata
    winner = fast_append(table, files_for(table, rows(3, 1)))
    loser = fast_append(stale, files_for(stale, rows(4, 2)))
    assert loser.committed
    final = loser.table.refresh()
    assert final.metadata.current_snapshot() is not None
    assert [s.snapshot_id for s in final.metadata.snapshots] == [
        winner.snapshot_id,
        loser.snapshot_id,
    ]
    assert loser.summary["total-records"] == "7"
    assert len(live_paths(final)) == 2


class FlakyCatalog(SqlCatalog):
    """A real SQLite catalog whose next swaps fail or whose outcome is hidden."""

    fail_next = 0
    unknown_after_success = False

    def commit_table(self, identifier: Any, base: str, new: TableMetadata) -> str:  # type: ignore[override]
        if self.fail_next > 0:
            self.fail_next -= 1
            raise CommitFailed("injected: the pointer moved")
        location = super().commit_table(identifier, base, new)
        if self.unknown_after_success:
            raise CommitStateUnknown("injected: the swap landed but the answer was lost")
        return location


@pytest.fixture
def flaky(tmp_path: Any) -> FlakyCatalog:
    cat = FlakyCatalog("test", uri=f"sqlite:///{tmp_path}/flaky.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _table(cat: SqlCatalog, **props: str) -> Table:
    from tests.commit.support import SCHEMA

    return cat.create_table("db.t", SCHEMA, properties={"commit.retry.min-wait-ms": "1", **props})


def metadata_files(table: Table) -> set[str]:
    return {f.path for f in table.io.list_prefix(f"{table.location}/metadata")}


def test_next_swaps_fail_and_the_commit_still_lands(flaky: FlakyCatalog) -> None:
    table = _table(flaky)
    flaky.fail_next = 3
    result = fast_append(table, files_for(table, rows(5)))
    assert result.committed
    final = table.refresh()
    assert len(final.metadata.snapshots) == 1
    # Three losing attempts wrote manifest lists; only the committed one is left.
    lists = [p for p in metadata_files(final) if "/snap-" in p]
    assert lists == [final.metadata.snapshots[0].manifest_list]


def test_retries_exhausted_cleans_up_and_changes_nothing(flaky: FlakyCatalog) -> None:
    table = _table(flaky, **{"commit.retry.num-retries": "2"})
    before = metadata_files(table)
    flaky.fail_next = 10
    with pytest.raises(CommitFailed):
        fast_append(table, files_for(table, rows(5)))
    after = table.refresh()
    assert after.metadata.snapshots == ()
    assert metadata_files(after) == before  # no manifest or list left behind


def test_unknown_outcome_keeps_every_file_and_one_snapshot(flaky: FlakyCatalog) -> None:
    table = _table(flaky)
    flaky.unknown_after_success = True
    with pytest.raises(CommitStateUnknown):
        fast_append(table, files_for(table, rows(5)))
    flaky.unknown_after_success = False
    after = table.refresh()
    assert len(after.metadata.snapshots) == 1
    snap = after.metadata.snapshots[0]
    # The committed manifest list and its manifest are still there: nothing was deleted.
    assert snap.manifest_list is not None and after.io.exists(snap.manifest_list)
    for m in read_manifest_list(after.io.read(snap.manifest_list)):
        assert after.io.exists(m.manifest_path)
    assert len(live_paths(after)) == 1


def test_commit_key_commits_once(make_table: Callable[..., Table]) -> None:
    table = make_table()
    files = files_for(table, rows(5))
    first = fast_append(table, files, commit_key="dag/task/run/0")
    again = fast_append(first.table, files, commit_key="dag/task/run/0")
    assert first.committed and not again.committed
    assert again.snapshot_id == first.snapshot_id
    assert len(again.table.refresh().metadata.snapshots) == 1
    other = fast_append(first.table, files_for(first.table, rows(2)), commit_key="dag/task/run/1")
    assert other.committed and other.summary["icewright.commit-key"] == "dag/task/run/1"


def test_bad_files_are_refused_before_anything_is_written(make_table: Callable[..., Table]) -> None:
    table = make_table()
    before = metadata_files(table)
    delete_file = DataFile(
        file_path=f"{table.location}/data/x.parquet",
        file_format=FileFormat.PARQUET,
        record_count=1,
        file_size_in_bytes=10,
        content=FileContent.POSITION_DELETES,
    )
    with pytest.raises(ValidationError, match="append adds data files"):
        FastAppend(table, [delete_file])
    with pytest.raises(ValidationError, match="partition spec 7"):
        FastAppend(table, [delete_file.replace(content=FileContent.DATA, spec_id=7)])
    assert metadata_files(table) == before


def test_retry_policy_reads_table_properties() -> None:
    policy = RetryPolicy.from_properties(
        {"commit.retry.num-retries": "2", "commit.retry.min-wait-ms": "5"}
    )
    assert policy.num_retries == 2 and policy.min_wait_ms == 5
    assert 5 <= policy.backoff_ms(3) <= 20
    # invalid values (another engine wrote them) mean the defaults: never a failed commit
    lenient = RetryPolicy.from_properties({"commit.retry.num-retries": "many"})
    assert lenient.num_retries == RetryPolicy().num_retries
    calls: list[int] = []

    def attempt(n: int) -> str:
        calls.append(n)
        if n < 3:
            raise CommitFailed("race")
        return "done"

    assert policy.run(attempt, sleep=lambda _s: None) == "done"
    assert calls == [1, 2, 3]


def test_a_no_op_on_a_stale_handle_is_decided_on_the_current_table(
    make_table: Callable[..., Table],
) -> None:
    from icewright.commit.properties import UpdateProperties
    from icewright.commit.refs import ManageSnapshots

    table = make_table(k="v")
    stale = table.refresh()
    UpdateProperties(table.refresh()).set("k", "w").commit()
    # On the stale handle "k=v" changes nothing; on the table it undoes "k=w".
    result = UpdateProperties(stale).set("k", "v").commit()
    assert result.committed
    assert table.refresh().metadata.properties["k"] == "v"
    # And a true no-op writes no metadata file.
    before = table.refresh().metadata_location
    assert not UpdateProperties(table.refresh()).set("k", "v").commit().committed
    assert table.refresh().metadata_location == before

    first = fast_append(table.refresh(), files_for(table, rows(2)))
    stale = first.table
    fast_append(stale, files_for(stale, rows(2, 2)))
    # Rolling back to S1 is a no-op for the stale handle (its head is S1), not for the table.
    rolled = ManageSnapshots(stale).rollback_to(first.snapshot_id).commit()
    assert rolled.committed
    current = table.refresh().metadata.current_snapshot()
    assert current is not None and current.snapshot_id == first.snapshot_id
