"""Branches, tags, rollback, cherry-pick and write-audit-publish on a real SQLite catalog.

Rules follow the spec ("Snapshot References") and Iceberg Java's ``SnapshotManager``,
``CherryPickOperation`` and ``WapUtil``; pyiceberg 0.12 and Iceberg Java read the
results (refs, time travel by tag, branch heads).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.properties import UpdateProperties
from icewright.commit.refs import ManageSnapshots, StagedAppend, ancestor_ids
from icewright.commit.snapshot_producer import SnapshotProducer
from icewright.commit.summary import SummaryBuilder
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.snapshots import Operation, Snapshot, SnapshotRefType
from icewright.spec.table_metadata import TableMetadata

UTC = dt.UTC


def files(table: Table, ids: range, region: str = "eu", day: int = 1) -> list[DataFile]:
    ts = dt.datetime(2026, 3, day, tzinfo=UTC)
    data = [{"id": i, "ts": ts, "region": region} for i in ids]
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def live_ids(pyi_table: Any, snapshot_id: int | None = None) -> list[int]:
    scan = pyi_table.scan() if snapshot_id is None else pyi_table.scan(snapshot_id=snapshot_id)
    return sorted(scan.to_arrow().column("id").to_pylist())


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    cat = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    yield cat
    cat.engine.dispose()


@pytest.fixture
def history(make_table: Callable[..., Table]) -> tuple[Table, list[int]]:
    """A table with three appends on main: ids 0-1, 10-11, 20-21."""
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    snaps = []
    for start in (0, 10, 20):
        result = fast_append(table, files(table, range(start, start + 2)))
        table = result.table
        assert result.snapshot_id is not None
        snaps.append(result.snapshot_id)
    return table, snaps


# --- branches and tags ------------------------------------------------------------------


def test_branches_and_tags_are_seen_by_pyiceberg(
    history: tuple[Table, list[int]], pyi: Any
) -> None:
    table, (s1, s2, s3) = history
    result = (
        ManageSnapshots(table)
        .create_tag("v1", s1, max_ref_age_ms=86_400_000)
        .create_branch("audit", s2, min_snapshots_to_keep=2, max_snapshot_age_ms=3_600_000)
        .create_branch("now")
        .commit()
    )
    refs = result.table.refresh().metadata.refs
    assert (
        refs["v1"].is_tag
        and refs["v1"].snapshot_id == s1
        and refs["v1"].max_ref_age_ms == 86_400_000
    )
    assert (
        refs["audit"].min_snapshots_to_keep == 2 and refs["audit"].max_snapshot_age_ms == 3_600_000
    )
    assert refs["now"].snapshot_id == s3 and refs["main"].snapshot_id == s3
    assert result.table.metadata.current_snapshot_id == s3
    loaded = pyi.load_table("db.orders")
    theirs = loaded.refs()
    assert {n: (r.snapshot_id, str(r.snapshot_ref_type)) for n, r in theirs.items()} == {
        "main": (s3, "branch"),
        "v1": (s1, "tag"),
        "audit": (s2, "branch"),
        "now": (s3, "branch"),
    }
    # Time travel by tag and by branch.
    assert live_ids(loaded, loaded.snapshot_by_name("v1").snapshot_id) == [0, 1]
    assert live_ids(loaded, loaded.snapshot_by_name("audit").snapshot_id) == [0, 1, 10, 11]
    assert live_ids(loaded) == [0, 1, 10, 11, 20, 21]


def test_remove_rename_replace(history: tuple[Table, list[int]]) -> None:
    table, (s1, s2, s3) = history
    t = ManageSnapshots(table).create_tag("t", s1).create_branch("b", s1).commit().table
    t = (
        ManageSnapshots(t)
        .rename_branch("b", "b2")
        .replace_branch("b2", s2)
        .replace_tag("t", s3)
        .set_max_ref_age_ms("t", 1000)
        .commit()
        .table
    )
    refs = t.metadata.refs
    assert "b" not in refs and refs["b2"].snapshot_id == s2
    assert refs["t"].snapshot_id == s3 and refs["t"].max_ref_age_ms == 1000
    t = ManageSnapshots(t).replace_branch("b3", "t").commit().table  # by ref name: created
    assert t.metadata.refs["b3"] == refs["t"].__class__(s3, SnapshotRefType.BRANCH)
    t = ManageSnapshots(t).remove_branch("b2").remove_tag("t").commit().table
    assert set(t.metadata.refs) == {"main", "b3"}
    assert t.metadata.current_snapshot_id == s3


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda m, s: m.create_branch("main", s[0]), "reference exists"),
        (lambda m, s: m.create_tag("x", 12345), "no snapshot 12345"),
        (lambda m, s: m.remove_tag("main"), "is a branch, not a tag"),
        (lambda m, s: m.remove_branch("nope"), "no branch named 'nope'"),
        (lambda m, s: m.create_tag("t", s[0]).set_min_snapshots_to_keep("t", 3), "tag cannot"),
        (lambda m, s: m.create_tag("t", s[0]).replace_branch("t", s[1]), "is a tag"),
        (lambda m, s: m.rollback_to(999), "no snapshot 999"),
    ],
)
def test_invalid_ref_changes_fail_and_commit_nothing(
    history: tuple[Table, list[int]],
    build: Callable[[ManageSnapshots, list[int]], Any],
    message: str,
) -> None:
    table, snaps = history
    with pytest.raises(ValidationError, match=message):
        build(ManageSnapshots(table), snaps).commit()
    assert table.refresh().metadata_location == table.metadata_location


def test_main_is_protected(history: tuple[Table, list[int]]) -> None:
    table, _ = history
    with pytest.raises(ValidationError, match="cannot be removed"):
        ManageSnapshots(table).remove_branch("main")
    with pytest.raises(ValidationError, match="cannot be renamed"):
        ManageSnapshots(table).rename_branch("main", "trunk")


def test_write_to_a_branch_then_fast_forward_main(
    history: tuple[Table, list[int]], pyi: Any
) -> None:
    table, (_, _, s3) = history
    table = ManageSnapshots(table).create_branch("audit").commit().table
    on_branch = FastAppend(table, files(table, range(30, 32)), branch="audit").commit()
    assert on_branch.table.metadata.current_snapshot_id == s3  # main did not move
    assert on_branch.table.metadata.refs["audit"].snapshot_id == on_branch.snapshot_id
    loaded = pyi.load_table("db.orders")
    assert live_ids(loaded) == [0, 1, 10, 11, 20, 21]
    assert live_ids(loaded, on_branch.snapshot_id) == [0, 1, 10, 11, 20, 21, 30, 31]
    forwarded = ManageSnapshots(on_branch.table).fast_forward("main", "audit").commit()
    assert forwarded.snapshot_id == on_branch.snapshot_id
    assert forwarded.table.metadata.snapshot_log[-1].snapshot_id == on_branch.snapshot_id
    assert live_ids(pyi.load_table("db.orders")) == [0, 1, 10, 11, 20, 21, 30, 31]


def test_a_write_to_a_new_branch_starts_at_mains_head(
    history: tuple[Table, list[int]], pyi: Any
) -> None:
    # Iceberg Java (SnapshotUtil.latestSnapshot): a branch a write creates starts at the
    # current snapshot, so publishing it later is a fast-forward.
    table, (_, _, head) = history
    result = fast_append(table, files(table, range(30, 32)), branch="dev")
    snap = result.table.metadata.snapshot_by_id(result.snapshot_id or 0)
    assert snap is not None and snap.parent_snapshot_id == head
    assert result.table.metadata.current_snapshot_id == head
    loaded = pyi.load_table("db.orders")
    assert live_ids(loaded, result.snapshot_id) == [0, 1, 10, 11, 20, 21, 30, 31]
    published = ManageSnapshots(result.table).fast_forward("main", "dev").commit()
    assert published.table.metadata.current_snapshot_id == result.snapshot_id


def test_fast_forward_only_goes_forward(history: tuple[Table, list[int]]) -> None:
    table, (s1, _, s3) = history
    table = ManageSnapshots(table).create_branch("old", s1).commit().table
    # main (s3) is not an ancestor of old (s1): that would be a rollback, not a fast-forward.
    with pytest.raises(ValidationError, match="not an ancestor"):
        ManageSnapshots(table).fast_forward("main", "old").commit()
    moved = ManageSnapshots(table).fast_forward("old", "main").commit().table
    assert moved.metadata.refs["old"].snapshot_id == s3
    created = ManageSnapshots(moved).fast_forward("fresh", "main").commit().table
    assert created.metadata.refs["fresh"].snapshot_id == s3


def test_rollback_and_set_current(history: tuple[Table, list[int]], pyi: Any) -> None:
    table, (_, s2, s3) = history
    back = ManageSnapshots(table).rollback_to(s2).commit().table
    assert back.metadata.current_snapshot_id == s2
    assert back.metadata.snapshot_log[-1].snapshot_id == s2
    assert live_ids(pyi.load_table("db.orders")) == [0, 1, 10, 11]
    # s3 is no longer an ancestor of main: rollback refuses, set_current jumps.
    with pytest.raises(ValidationError, match="not an ancestor"):
        ManageSnapshots(back).rollback_to(s3).commit()
    ahead = ManageSnapshots(back).set_current_snapshot(s3).commit().table
    assert ahead.metadata.current_snapshot_id == s3
    snap2 = ahead.metadata.snapshot_by_id(s2)
    assert snap2 is not None
    by_time = ManageSnapshots(ahead).rollback_to_time(snap2.timestamp_ms + 1).commit().table
    assert by_time.metadata.current_snapshot_id == s2
    with pytest.raises(ValidationError, match="no snapshot older"):
        ManageSnapshots(by_time).rollback_to_time(0).commit()


def test_ref_changes_reapply_after_a_concurrent_append(history: tuple[Table, list[int]]) -> None:
    table, (s1, _, _) = history
    stale = table
    appended = fast_append(table, files(table, range(40, 41)))
    result = ManageSnapshots(stale).create_tag("keep", s1).create_branch("head").commit()
    refs = result.table.refresh().metadata.refs
    assert refs["keep"].snapshot_id == s1
    # "head" was resolved on the refreshed table: main's head after the concurrent append.
    assert refs["head"].snapshot_id == appended.snapshot_id
    assert refs["main"].snapshot_id == appended.snapshot_id


def test_racing_branch_creation_fails_clearly(history: tuple[Table, list[int]]) -> None:
    table, (s1, s2, _) = history
    stale = table
    ManageSnapshots(table).create_branch("b", s1).commit()
    with pytest.raises(ValidationError, match="reference exists"):
        ManageSnapshots(stale).create_branch("b", s2).commit()
    assert table.refresh().metadata.refs["b"].snapshot_id == s1


def test_branch_on_an_empty_table_gets_an_empty_snapshot(make_table: Callable[..., Table]) -> None:
    table = make_table()
    t = ManageSnapshots(table).create_branch("dev", max_ref_age_ms=5000).commit().table
    ref = t.metadata.refs["dev"]
    assert ref.max_ref_age_ms == 5000
    snap = t.metadata.snapshot_by_id(ref.snapshot_id)
    assert snap is not None and snap.parent_snapshot_id is None
    assert snap.summary is not None and snap.summary["total-records"] == "0"
    assert t.metadata.current_snapshot_id is None
    with pytest.raises(ValidationError, match="no snapshot"):
        ManageSnapshots(t).create_tag("t").commit()


# --- cherry-pick -----------------------------------------------------------------------


def test_cherry_pick_append_from_a_branch(history: tuple[Table, list[int]], pyi: Any) -> None:
    table, (s1, _, s3) = history
    table = ManageSnapshots(table).create_branch("side", s1).commit().table
    side = FastAppend(table, files(table, range(50, 53)), branch="side").commit()
    assert side.snapshot_id is not None
    picked = ManageSnapshots(side.table).cherry_pick(side.snapshot_id).commit()
    new = picked.table.metadata.current_snapshot()
    assert new is not None and new.snapshot_id not in (side.snapshot_id, s3)
    assert new.parent_snapshot_id == s3
    assert new.operation is Operation.APPEND
    assert picked.summary["source-snapshot-id"] == str(side.snapshot_id)
    assert picked.summary["added-data-files"] == "1" and picked.summary["added-records"] == "3"
    assert picked.summary["total-records"] == "9"
    assert live_ids(pyi.load_table("db.orders")) == [0, 1, 10, 11, 20, 21, 50, 51, 52]
    with pytest.raises(ValidationError, match="already cherry-picked"):
        ManageSnapshots(picked.table).cherry_pick(side.snapshot_id).commit()
    with pytest.raises(ValidationError, match="already an ancestor"):
        ManageSnapshots(picked.table).cherry_pick(s1).commit()


def test_cherry_pick_of_a_child_of_main_fast_forwards(history: tuple[Table, list[int]]) -> None:
    table, _ = history
    table = ManageSnapshots(table).create_branch("next").commit().table
    child = FastAppend(table, files(table, range(60, 61)), branch="next").commit()
    picked = ManageSnapshots(child.table).cherry_pick(child.snapshot_id or 0).commit()
    assert picked.snapshot_id == child.snapshot_id  # no new snapshot
    assert len(picked.table.metadata.snapshots) == 4
    assert picked.table.metadata.current_snapshot_id == child.snapshot_id
    assert "source-snapshot-id" not in picked.summary


# --- write-audit-publish -----------------------------------------------------------------


def wap_table(history: tuple[Table, list[int]]) -> Table:
    table, _ = history
    return UpdateProperties(table).set("write.wap.enabled", "true").commit().table


def test_staging_needs_wap_enabled(history: tuple[Table, list[int]]) -> None:
    table, _ = history
    with pytest.raises(ValidationError, match=r"write\.wap\.enabled=true"):
        StagedAppend(table, files(table, range(70, 71)), wap_id="w").commit()
    assert len(table.refresh().metadata.snapshots) == 3


def test_publish_a_staged_append_by_fast_forward(
    history: tuple[Table, list[int]], pyi: Any
) -> None:
    table = wap_table(history)
    head = table.metadata.current_snapshot_id
    staged = StagedAppend(table, files(table, range(70, 72)), wap_id="job-1").commit()
    t = staged.table.refresh()
    assert t.metadata.current_snapshot_id == head and set(t.metadata.refs) == {"main"}
    snap = t.metadata.snapshot_by_id(staged.snapshot_id or 0)
    assert snap is not None and snap.parent_snapshot_id == head
    assert snap.summary is not None and snap.summary["wap.id"] == "job-1"
    loaded = pyi.load_table("db.orders")
    assert live_ids(loaded) == [0, 1, 10, 11, 20, 21]  # audit: not visible yet
    assert live_ids(loaded, staged.snapshot_id) == [0, 1, 10, 11, 20, 21, 70, 71]
    published = ManageSnapshots(t).publish("job-1").commit()
    assert published.snapshot_id == staged.snapshot_id  # its parent was main's head
    assert live_ids(pyi.load_table("db.orders")) == [0, 1, 10, 11, 20, 21, 70, 71]
    with pytest.raises(ValidationError, match="already published"):
        ManageSnapshots(published.table).publish("job-1").commit()


def test_publish_after_other_commits_cherry_picks(
    history: tuple[Table, list[int]], pyi: Any
) -> None:
    table = wap_table(history)
    staged = StagedAppend(table, files(table, range(80, 82)), wap_id="job-2").commit()
    other = fast_append(staged.table, files(staged.table, range(90, 91)))
    published = ManageSnapshots(other.table).publish("job-2").commit()
    new = published.table.metadata.current_snapshot()
    assert new is not None and new.parent_snapshot_id == other.snapshot_id
    assert published.summary["published-wap-id"] == "job-2"
    assert published.summary["source-snapshot-id"] == str(staged.snapshot_id)
    assert "wap.id" not in published.summary
    assert live_ids(pyi.load_table("db.orders")) == [0, 1, 10, 11, 20, 21, 80, 81, 90]
    # The same data staged again under the same id cannot be published twice.
    again = StagedAppend(published.table, files(published.table, range(99, 100)), wap_id="job-2")
    twice = again.commit()
    with pytest.raises(ValidationError, match="already published"):
        ManageSnapshots(twice.table).cherry_pick(twice.snapshot_id or 0).commit()
    with pytest.raises(ValidationError, match="no snapshot of the table was staged"):
        ManageSnapshots(twice.table).publish("never").commit()


def test_staged_commit_key_is_found_off_branch(history: tuple[Table, list[int]]) -> None:
    table = wap_table(history)
    batch = files(table, range(5, 6))
    first = StagedAppend(table, batch, wap_id="k", commit_key="run-1").commit()
    again = StagedAppend(first.table, batch, wap_id="k", commit_key="run-1").commit()
    assert first.committed and not again.committed
    assert again.snapshot_id == first.snapshot_id
    assert len(again.table.refresh().metadata.snapshots) == 4


class StagedReplacePartitions(SnapshotProducer):
    """Test stand-in for a dynamic overwrite staged under WAP (Spark's INSERT OVERWRITE
    with a wap id): ``replace-partitions=true``, the replaced partitions' files deleted,
    no branch moved."""

    def __init__(self, table: Table, new_files: list[DataFile], wap_id: str) -> None:
        props = {"wap.id": wap_id, "replace-partitions": "true"}
        super().__init__(table, snapshot_properties=props)
        self.new_files = new_files

    def operation(self) -> Operation:
        return Operation.OVERWRITE

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        assert parent is not None and parent.manifest_list is not None
        replaced = {(f.spec_id, f.partition) for f in self.new_files}
        out = []
        added = ManifestWriter(
            format_version=2, spec=base.spec(), schema=base.schema(), snapshot_id=self.snapshot_id
        )
        for f in self.new_files:
            added.add(f)
            summary.added_file(base.spec(), f)
        path = self.new_manifest_path(base)
        data, m = added.finish(path)
        self.table.io.create(path, data)
        out.append(m)
        for old in read_manifest_list(self.table.io.read(parent.manifest_list)):
            w = ManifestWriter(
                format_version=2,
                spec=base.spec(),
                schema=base.schema(),
                snapshot_id=self.snapshot_id,
            )
            for e in read_manifest(self.table.io.read(old.manifest_path), old):
                seq = e.sequence_number or 0
                if not e.is_live:
                    continue
                if (e.data_file.spec_id, e.data_file.partition) in replaced:
                    w.delete(
                        e.data_file,
                        data_sequence_number=seq,
                        file_sequence_number=e.file_sequence_number,
                    )
                    summary.deleted_file(base.spec(), e.data_file)
                else:
                    w.existing(
                        e.data_file,
                        snapshot_id=e.snapshot_id or 0,
                        data_sequence_number=seq,
                        file_sequence_number=e.file_sequence_number,
                    )
            path = self.new_manifest_path(base)
            data, m = w.finish(path)
            self.table.io.create(path, data)
            out.append(m)
        return out

    def apply(self, base: TableMetadata) -> TableMetadata:
        staged = super().apply(base).snapshot_by_id(self.snapshot_id)
        assert staged is not None
        return base.add_snapshot(staged)


def test_publish_a_dynamic_overwrite(history: tuple[Table, list[int]], pyi: Any) -> None:
    table = wap_table(history)  # main: ids 0-1, 10-11, 20-21 in partition (day 1, eu)
    us = fast_append(table, files(table, range(100, 102), "us")).table
    staged = StagedReplacePartitions(us, files(us, range(200, 203), "eu"), "ow-1").commit()
    loaded = pyi.load_table("db.orders")
    assert live_ids(loaded, staged.snapshot_id) == [100, 101, 200, 201, 202]
    # A commit to another partition does not conflict: the overwrite is re-applied.
    later = fast_append(staged.table, files(staged.table, range(300, 301), "us", day=2))
    published = ManageSnapshots(later.table).publish("ow-1").commit()
    assert published.operation is Operation.OVERWRITE
    assert published.summary["deleted-data-files"] == "3"
    assert published.summary["added-records"] == "3" and published.summary["deleted-records"] == "6"
    assert published.summary["published-wap-id"] == "ow-1"
    assert live_ids(pyi.load_table("db.orders")) == [100, 101, 200, 201, 202, 300]


def test_dynamic_overwrite_conflicting_with_new_data_is_refused(
    history: tuple[Table, list[int]],
) -> None:
    table = wap_table(history)
    staged = StagedReplacePartitions(table, files(table, range(200, 201), "eu"), "ow-2").commit()
    later = fast_append(staged.table, files(staged.table, range(400, 401), "eu"))
    with pytest.raises(ValidationError, match="replaced partition"):
        ManageSnapshots(later.table).publish("ow-2").commit()
    assert later.table.refresh().metadata.current_snapshot_id == later.snapshot_id


def test_ancestor_ids_walks_parents(history: tuple[Table, list[int]]) -> None:
    table, (s1, s2, s3) = history
    assert ancestor_ids(table.metadata, s3) == [s3, s2, s1]
    assert ancestor_ids(table.metadata, None) == []


@pytest.mark.interop
def test_iceberg_java_reads_branches_tags_and_picks(
    history: tuple[Table, list[int]],
    iceberg_java: Any,
) -> None:
    table = wap_table(history)
    _, (s1, _, _) = history
    table = ManageSnapshots(table).create_tag("v1", s1).create_branch("side", s1).commit().table
    side = FastAppend(table, files(table, range(50, 52)), branch="side").commit()
    final = ManageSnapshots(side.table).cherry_pick(side.snapshot_id or 0).commit().table
    with iceberg_java.batch() as batch:
        meta = batch.parse_table_metadata(final.metadata_location)
        main = batch.scan(final.metadata_location)
        tag = batch.scan(final.metadata_location, branch="v1")
        branch = batch.scan(final.metadata_location, branch="side")
    assert set(meta.value["refs"]) == {"main", "v1", "side"}

    def ids(scan: Any) -> list[int]:
        return sorted(r[scan.value.columns.index("id")] for r in scan.value.rows)

    assert ids(main) == [0, 1, 10, 11, 20, 21, 50, 51]
    assert ids(tag) == [0, 1]
    assert ids(branch) == [0, 1, 50, 51]
