"""Expire snapshots: Java's retention rules, the commit, and the file cleanup after it.

Histories are built with real commits (FastAppend and a rewrite-like overwrite made with
the SnapshotProducer machinery) on a real SQLite catalog, with real Parquet files; the
result is read back by pyiceberg 0.12 through the same catalog database.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import FileSystemCatalog, SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.commit.expire import ExpireSnapshots, expire_snapshots
from icewright.commit.snapshot_producer import SnapshotProducer, metadata_dir, new_snapshot_id
from icewright.commit.summary import SummaryBuilder
from icewright.errors import CommitFailed, CommitStateUnknown, ValidationError
from icewright.io.local import local_path
from icewright.manifest.data_file import DataFile, FileContent, FileFormat, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_list import ManifestListWriter, read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.snapshots import (
    Operation,
    Snapshot,
    SnapshotRef,
    SnapshotRefType,
    Summary,
)
from icewright.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icewright.spec.table_metadata import TableMetadata

UTC = dt.UTC
TAG, BRANCH = SnapshotRefType.TAG, SnapshotRefType.BRANCH


# --- helpers shared with test_orphans -------------------------------------------------


def rows(n: int, day: int = 1, region: str = "eu", start: int = 0) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 3, day, tzinfo=UTC)
    return [
        {"id": start + i, "ts": base + dt.timedelta(minutes=i), "region": region} for i in range(n)
    ]


def files_for(table: Table, data: list[dict[str, Any]]) -> list[DataFile]:
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def append(table: Table, data: list[dict[str, Any]]) -> Table:
    """Commit one FastAppend; the next commit gets a strictly later timestamp."""
    result = fast_append(table, files_for(table, data))
    time.sleep(0.003)
    return result.table


def manifests_of(table: Table, snapshot: Snapshot) -> list[ManifestFile]:
    assert snapshot.manifest_list is not None
    return read_manifest_list(table.io.read(snapshot.manifest_list))


def files_of(table: Table, snapshot: Snapshot) -> set[str]:
    out = set()
    for m in manifests_of(table, snapshot):
        for e in read_manifest(table.io.read(m.manifest_path), m):
            if e.is_live:
                out.add(e.data_file.file_path)
    return out


def with_refs(table: Table, **refs: SnapshotRef) -> Table:
    """Commit ``refs`` (branches and tags) onto the table."""
    md = table.metadata
    for name, ref in refs.items():
        md = md.set_ref(name, ref)
    md = md.with_previous_metadata(table.metadata_location, table.metadata.last_updated_ms)
    table.catalog.commit_table(table.identifier, table.metadata_location, md)
    return table.refresh()


def all_files(table: Table) -> set[str]:
    return {f.path for f in table.io.list_prefix(table.location)}


def pyiceberg_view(tmp_path: Path, name: str = "db.orders") -> tuple[list[int], list[int]]:
    """Sorted ids of every row and the snapshot ids, as pyiceberg reads the table."""
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    theirs = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    try:
        loaded = theirs.load_table(name)
        ids = sorted(loaded.scan().to_arrow().column("id").to_pylist())
        return ids, [s.snapshot_id for s in loaded.snapshots()]
    finally:
        theirs.engine.dispose()


class Overwrite(SnapshotProducer):
    """A rewrite-like overwrite (the shape of Java's ``BaseOverwriteFiles``): manifests holding
    a removed file are rewritten with it DELETED and the rest EXISTING; added data and delete
    files go into new manifests."""

    def __init__(
        self,
        table: Table,
        *,
        removed: Iterable[str] = (),
        added: Iterable[DataFile] = (),
        added_deletes: Iterable[DataFile] = (),
    ) -> None:
        super().__init__(table)
        self.removed = set(removed)
        self.added = list(added)
        self.added_deletes = list(added_deletes)

    def operation(self) -> Operation:
        return Operation.OVERWRITE

    def _write(self, base: TableMetadata, writer: ManifestWriter) -> ManifestFile:
        path = self.new_manifest_path(base)
        data, manifest = writer.finish(path)
        self.table.io.create(path, data)
        return manifest

    def _writer(self, base: TableMetadata, spec_id: int, content: Any = 0) -> ManifestWriter:
        return ManifestWriter(
            format_version=base.format_version,
            spec=base.spec_by_id(spec_id),
            schema=base.schema(),
            snapshot_id=self.snapshot_id,
            content=content,
        )

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        out: list[ManifestFile] = []
        existing = [] if parent is None else manifests_of(self.table, parent)
        for m in existing:
            entries = [
                e for e in read_manifest(self.table.io.read(m.manifest_path), m) if e.is_live
            ]
            if not any(e.data_file.file_path in self.removed for e in entries):
                out.append(m)
                continue
            writer = self._writer(base, m.partition_spec_id, m.content)
            for e in entries:
                assert e.sequence_number is not None and e.snapshot_id is not None
                if e.data_file.file_path in self.removed:
                    summary.deleted_file(base.spec_by_id(m.partition_spec_id), e.data_file)
                    writer.delete(
                        e.data_file,
                        data_sequence_number=e.sequence_number,
                        file_sequence_number=e.file_sequence_number,
                    )
                else:
                    writer.existing(
                        e.data_file,
                        snapshot_id=e.snapshot_id,
                        data_sequence_number=e.sequence_number,
                        file_sequence_number=e.file_sequence_number,
                    )
            out.append(self._write(base, writer))
        for files, content in ((self.added, 0), (self.added_deletes, 1)):
            if files:
                writer = self._writer(base, base.default_spec_id, content)
                for f in files:
                    summary.added_file(base.spec(), f)
                    writer.add(f)
                out.insert(0, self._write(base, writer))
        return out


def position_delete_file(table: Table, target: DataFile) -> DataFile:
    """A real position-delete Parquet file for row 0 of ``target`` (never applied here)."""
    path = f"{table.location}/data/delete-{new_snapshot_id()}.parquet"
    buffer = pa.BufferOutputStream()
    pq.write_table(
        pa.table({"file_path": [target.file_path], "pos": pa.array([0], pa.int64())}), buffer
    )
    payload = buffer.getvalue().to_pybytes()
    table.io.create(path, payload)
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        record_count=1,
        file_size_in_bytes=len(payload),
        content=FileContent.POSITION_DELETES,
        partition=target.partition,
        spec_id=target.spec_id,
    )


# --- retention -----------------------------------------------------------------------


@pytest.mark.parametrize("format_version", [1, 2])
def test_expire_by_age_keeps_newer_snapshots_and_shared_manifests(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    t = make_table(format_version=format_version)
    for day in (1, 2, 3, 4):
        t = append(t, rows(2, day, start=10 * day))
    s1, s2, s3, s4 = t.metadata.snapshots
    manifests_before = {m.manifest_path for m in manifests_of(t, s4)}
    data_before = files_of(t, s4)

    result = expire_snapshots(t, older_than_ms=s3.timestamp_ms)

    assert result.expired_snapshot_ids == (s1.snapshot_id, s2.snapshot_id)
    assert result.removed_refs == ()
    assert result.commit is not None and result.commit.committed
    after = t.refresh()
    assert [s.snapshot_id for s in after.metadata.snapshots] == [s3.snapshot_id, s4.snapshot_id]
    assert [e.snapshot_id for e in after.metadata.snapshot_log] == [
        s3.snapshot_id,
        s4.snapshot_id,
    ]
    assert after.metadata.current_snapshot_id == s4.snapshot_id
    # The expired snapshots' manifests are all still listed by s4: only their lists go.
    assert (result.deleted_manifest_lists, result.deleted_manifests) == (2, 0)
    assert (result.deleted_data_files, result.deleted_delete_files) == (0, 0)
    assert not after.io.exists(s1.manifest_list or "") and not after.io.exists(
        s2.manifest_list or ""
    )
    assert all(after.io.exists(p) for p in manifests_before | data_before)
    assert result.errors == () and result.data_files_skipped is None

    ids, snapshots = pyiceberg_view(tmp_path)
    assert ids == sorted(10 * d + i for d in (1, 2, 3, 4) for i in range(2))
    assert snapshots == [s3.snapshot_id, s4.snapshot_id]


def test_default_age_of_five_days_expires_nothing_new(make_table: Callable[..., Table]) -> None:
    t = make_table()
    t = append(append(t, rows(1)), rows(1, 2))
    location = t.metadata_location
    result = expire_snapshots(t)
    assert result.expired_snapshot_ids == () and result.commit is None
    assert t.refresh().metadata_location == location  # nothing was committed
    # Five days from now (the table default), both are old; min-snapshots-to-keep 1 keeps one.
    later = ExpireSnapshots(t, now_ms=t.metadata.snapshots[-1].timestamp_ms + 5 * 86_400_000 + 1)
    assert later.execute().expired_snapshot_ids == (t.metadata.snapshots[0].snapshot_id,)


def test_retain_last_and_the_min_snapshots_property(make_table: Callable[..., Table]) -> None:
    t = make_table(**{"history.expire.min-snapshots-to-keep": "3"})
    for day in range(1, 6):
        t = append(t, rows(1, day, start=day))
    snaps = t.metadata.snapshots
    future = snaps[-1].timestamp_ms + 1
    # Everything is older than the cutoff: the property keeps the last three.
    result = expire_snapshots(t, older_than_ms=future)
    assert result.expired_snapshot_ids == (snaps[0].snapshot_id, snaps[1].snapshot_id)
    t = t.refresh()
    # retain_last overrides the property.
    result = expire_snapshots(t, older_than_ms=future, retain_last=1)
    assert result.expired_snapshot_ids == (snaps[2].snapshot_id, snaps[3].snapshot_id)
    assert [s.snapshot_id for s in t.refresh().metadata.snapshots] == [snaps[4].snapshot_id]
    with pytest.raises(ValidationError, match="at least 1"):
        ExpireSnapshots(t).retain_last(0)


def test_expire_explicit_id_and_refusals(make_table: Callable[..., Table]) -> None:
    t = make_table()
    for day in (1, 2, 3, 4):
        t = append(t, rows(1, day, start=day))
    s1, s2, s3, s4 = t.metadata.snapshots
    t = with_refs(t, v1=SnapshotRef(s1.snapshot_id, TAG))

    with pytest.raises(ValidationError, match=r"still referenced by branch 'main'"):
        expire_snapshots(t, snapshot_ids=[s4.snapshot_id])
    with pytest.raises(ValidationError, match=r"still referenced by tag 'v1'"):
        expire_snapshots(t, snapshot_ids=[s1.snapshot_id])
    with pytest.raises(ValidationError, match="no such snapshot"):
        expire_snapshots(t, snapshot_ids=[12345])
    assert len(t.refresh().metadata.snapshots) == 4  # refusals changed nothing

    result = expire_snapshots(t, snapshot_ids=[s2.snapshot_id])
    assert result.expired_snapshot_ids == (s2.snapshot_id,)
    after = t.refresh().metadata
    assert [s.snapshot_id for s in after.snapshots] == [
        s1.snapshot_id,
        s3.snapshot_id,
        s4.snapshot_id,
    ]
    # Java's log rule: the removed s2 entry drops everything before it too.
    assert [e.snapshot_id for e in after.snapshot_log] == [s3.snapshot_id, s4.snapshot_id]
    assert after.refs["v1"].snapshot_id == s1.snapshot_id


def test_branches_and_tags_keep_history_per_their_retention(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    t = make_table()
    for day in (1, 2, 3, 4):
        t = append(t, rows(1, day, start=day))
    s1, s2, s3, s4 = t.metadata.snapshots
    t = with_refs(
        t,
        audit=SnapshotRef(s1.snapshot_id, BRANCH, min_snapshots_to_keep=2),
        v2=SnapshotRef(s2.snapshot_id, TAG),
    )
    b1 = fast_append(t, files_for(t, rows(1, 9, start=90)), branch="audit").snapshot_id
    t = t.refresh()
    cutoff = max(s.timestamp_ms for s in t.metadata.snapshots) + 1

    result = expire_snapshots(t, older_than_ms=cutoff)

    # main keeps s4 (min 1); audit keeps b1 and its parent s1 (min 2); the tag keeps s2.
    assert result.expired_snapshot_ids == (s3.snapshot_id,)
    after = t.refresh().metadata
    assert {s.snapshot_id for s in after.snapshots} == {
        s1.snapshot_id,
        s2.snapshot_id,
        s4.snapshot_id,
        b1,
    }
    assert set(after.refs) == {"main", "audit", "v2"}
    # s3's own manifest is still listed by s4: nothing but its list is deleted.
    assert (result.deleted_manifest_lists, result.deleted_manifests) == (1, 0)
    ids, snapshots = pyiceberg_view(tmp_path)
    assert ids == [1, 2, 3, 4]
    assert set(snapshots) == {s1.snapshot_id, s2.snapshot_id, s4.snapshot_id, b1}


def test_branch_max_snapshot_age_overrides_the_cutoff(make_table: Callable[..., Table]) -> None:
    t = make_table()
    for day in (1, 2, 3):
        t = append(t, rows(1, day, start=day))
    s3 = t.metadata.snapshots[-1]
    t = with_refs(t, main=SnapshotRef(s3.snapshot_id, BRANCH, max_snapshot_age_ms=10**12))
    # The builder's cutoff would expire s1 and s2, but main's own max age keeps them.
    result = expire_snapshots(t, older_than_ms=s3.timestamp_ms + 1)
    assert result.expired_snapshot_ids == ()
    assert len(t.refresh().metadata.snapshots) == 3


def test_ref_max_age_removes_old_tags_and_never_main(make_table: Callable[..., Table]) -> None:
    t = make_table(**{"history.expire.max-ref-age-ms": "60000"})
    for day in (1, 2, 3):
        t = append(t, rows(1, day, start=day))
    s1, s2, s3 = t.metadata.snapshots
    t = with_refs(
        t,
        old=SnapshotRef(s1.snapshot_id, TAG, max_ref_age_ms=1000),
        keep=SnapshotRef(s1.snapshot_id, TAG, max_ref_age_ms=10**9),
        by_default=SnapshotRef(s2.snapshot_id, TAG),
    )
    # Ten seconds later: "old" is past its own 1 s; "by_default" is within the table's 60 s.
    now = s3.timestamp_ms + 10_000
    result = ExpireSnapshots(t, now_ms=now).expire_older_than(s3.timestamp_ms).execute()
    assert result.removed_refs == ("old",)
    assert result.expired_snapshot_ids == ()  # s1 still tagged by "keep", s2 by "by_default"
    t = t.refresh()
    # Two minutes later the table default (60 s) removes "by_default" and s2 goes with it;
    # main is older than that too but is never removed.
    result = ExpireSnapshots(t, now_ms=now + 120_000).expire_older_than(s3.timestamp_ms).execute()
    assert result.removed_refs == ("by_default",)
    assert result.expired_snapshot_ids == (s2.snapshot_id,)
    after = t.refresh().metadata
    assert set(after.refs) == {"main", "keep"}
    assert after.current_snapshot_id == s3.snapshot_id


def test_gc_disabled_is_refused(make_table: Callable[..., Table]) -> None:
    t = append(make_table(**{"gc.enabled": "false"}), rows(1))
    with pytest.raises(ValidationError, match=r"gc.enabled='false'"):
        expire_snapshots(t, older_than_ms=2**62)
    with pytest.raises(ValidationError, match="garbage collection is disabled"):
        ExpireSnapshots(t)
    assert len(t.refresh().metadata.snapshots) == 1


def test_gc_disabled_after_construction_is_refused_at_apply(
    make_table: Callable[..., Table],
) -> None:
    t = append(append(make_table(), rows(1)), rows(1, 2))
    update = ExpireSnapshots(t).expire_older_than(2**62)
    md = t.metadata
    new = dataclasses.replace(md, properties=StringMap({**md.properties, "gc.enabled": "false"}))
    with pytest.raises(ValidationError, match="garbage collection is disabled"):
        update.apply(new)


# --- file cleanup ---------------------------------------------------------------------


def _overwrite_history(t: Table) -> tuple[Table, dict[str, Any]]:
    """s1 appends a1; s2 appends b1 and a delete file d1; s3 replaces a1 by c1, drops d1."""
    a1 = files_for(t, rows(3, 1, start=0))
    t = fast_append(t, a1).table
    time.sleep(0.003)
    b1 = files_for(t, rows(3, 1, "us", start=100))
    t = fast_append(t, b1).table
    time.sleep(0.003)
    d1 = position_delete_file(t, b1[0])
    t = Overwrite(t, added_deletes=[d1]).commit().table
    time.sleep(0.003)
    c1 = files_for(t, rows(2, 2, start=200))
    t = Overwrite(t, removed=[a1[0].file_path, d1.file_path], added=c1).commit().table
    return t, {"a1": a1[0], "b1": b1[0], "c1": c1[0], "d1": d1}


def test_cleanup_deletes_exactly_the_unreachable_files(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    t, f = _overwrite_history(make_table())
    s1, s2, s_del, s3 = t.metadata.snapshots
    before = all_files(t)
    retained_manifests = {m.manifest_path for m in manifests_of(t, s3)}
    expired_manifests = {
        m.manifest_path for s in (s1, s2, s_del) for m in manifests_of(t, s)
    } - retained_manifests

    result = expire_snapshots(t, older_than_ms=s3.timestamp_ms, report_paths=True)

    assert result.expired_snapshot_ids == (s1.snapshot_id, s2.snapshot_id, s_del.snapshot_id)
    assert set(result.manifest_list_paths) == {s.manifest_list for s in (s1, s2, s_del)}
    assert set(result.manifest_paths) == expired_manifests
    assert result.data_file_paths == (f["a1"].file_path,)
    assert result.delete_file_paths == (f["d1"].file_path,)
    assert (result.deleted_manifest_lists, result.deleted_manifests) == (3, len(expired_manifests))
    assert (result.deleted_data_files, result.deleted_delete_files) == (1, 1)
    deleted = set(
        result.manifest_list_paths
        + result.manifest_paths
        + result.data_file_paths
        + result.delete_file_paths
    )
    after = t.refresh()
    # Exactly those files are gone; the new metadata file is the only new one.
    assert before - all_files(after) == deleted
    assert all_files(after) - before == {after.metadata_location}
    assert files_of(after, s3) == {f["b1"].file_path, f["c1"].file_path}
    assert all(after.io.exists(p) for p in files_of(after, s3) | retained_manifests)
    ids, snapshots = pyiceberg_view(tmp_path)
    assert ids == [100, 101, 102, 200, 201]
    assert snapshots == [s3.snapshot_id]


def test_dry_run_lists_the_same_and_changes_nothing(make_table: Callable[..., Table]) -> None:
    t, f = _overwrite_history(make_table())
    cutoff = t.metadata.snapshots[-1].timestamp_ms
    before = all_files(t)
    location = t.metadata_location

    dry = expire_snapshots(t, older_than_ms=cutoff, dry_run=True)

    assert dry.dry_run and dry.commit is None
    assert t.refresh().metadata_location == location
    assert all_files(t) == before
    assert dry.data_file_paths == (f["a1"].file_path,)
    real = expire_snapshots(t, older_than_ms=cutoff, report_paths=True)
    assert real.expired_snapshot_ids == dry.expired_snapshot_ids
    for name in ("manifest_list_paths", "manifest_paths", "data_file_paths", "delete_file_paths"):
        assert set(getattr(real, name)) == set(getattr(dry, name)), name
    assert (dry.deleted_manifest_lists, dry.deleted_data_files) == (
        real.deleted_manifest_lists,
        real.deleted_data_files,
    )


def test_clean_files_false_commits_but_deletes_nothing(make_table: Callable[..., Table]) -> None:
    t, _ = _overwrite_history(make_table())
    before = all_files(t)
    result = expire_snapshots(
        t, older_than_ms=t.metadata.snapshots[-1].timestamp_ms, clean_files=False
    )
    assert len(result.expired_snapshot_ids) == 3 and not result.files_cleaned
    after = t.refresh()
    assert len(after.metadata.snapshots) == 1
    assert all_files(after) == before | {after.metadata_location}


def test_unreadable_retained_manifest_deletes_no_data_file(
    make_table: Callable[..., Table],
) -> None:
    t, f = _overwrite_history(make_table())
    s3 = t.metadata.snapshots[-1]
    # b1's manifest is listed by s3 (retained); make it unreadable.
    shared = next(
        m.manifest_path for m in manifests_of(t, s3) if f["b1"].file_path in files_of_manifest(t, m)
    )
    t.io.write(shared, b"not an avro file")

    result = expire_snapshots(t, older_than_ms=s3.timestamp_ms)

    assert result.commit is not None and len(result.expired_snapshot_ids) == 3
    assert result.deleted_data_files == 0 and result.deleted_delete_files == 0
    assert result.data_files_skipped is not None and "no data or delete file" in (
        result.data_files_skipped
    )
    assert any(shared in e for e in result.errors)
    assert t.io.exists(f["a1"].file_path) and t.io.exists(f["d1"].file_path)
    assert result.deleted_manifest_lists == 3


def test_unreadable_retained_manifest_list_deletes_no_manifest_or_data_file(
    make_table: Callable[..., Table],
) -> None:
    t, f = _overwrite_history(make_table())
    s3 = t.metadata.snapshots[-1]
    assert s3.manifest_list is not None
    t.io.delete(s3.manifest_list)

    result = expire_snapshots(t, older_than_ms=s3.timestamp_ms)

    assert result.deleted_manifests == 0 and result.deleted_data_files == 0
    assert result.data_files_skipped is not None
    assert t.io.exists(f["a1"].file_path)


def files_of_manifest(table: Table, manifest: ManifestFile) -> set[str]:
    return {
        e.data_file.file_path
        for e in read_manifest(table.io.read(manifest.manifest_path), manifest)
    }


def test_expired_statistics_are_removed_and_deleted(make_table: Callable[..., Table]) -> None:
    t = append(append(make_table(), rows(1)), rows(1, 2))
    s1, s2 = t.metadata.snapshots
    paths = {}
    for name in ("s1", "s2"):
        paths[name] = f"{t.location}/metadata/{name}.stats"
        t.io.create(paths[name], b"PFA1")
    md = dataclasses.replace(
        t.metadata,
        statistics=(
            StatisticsFile(s1.snapshot_id, paths["s1"], 4, 0),
            StatisticsFile(s2.snapshot_id, paths["s2"], 4, 0),
        ),
        partition_statistics=(PartitionStatisticsFile(s1.snapshot_id, paths["s1"] + ".p", 4),),
    )
    t.io.create(paths["s1"] + ".p", b"PAR1")
    t.catalog.commit_table(
        t.identifier,
        t.metadata_location,
        md.with_previous_metadata(t.metadata_location, md.last_updated_ms),
    )
    t = t.refresh()

    result = expire_snapshots(t, older_than_ms=s2.timestamp_ms)

    assert result.deleted_statistics_files == 2
    after = t.refresh().metadata
    assert [s.statistics_path for s in after.statistics] == [paths["s2"]]
    assert after.partition_statistics == ()
    assert not t.io.exists(paths["s1"]) and not t.io.exists(paths["s1"] + ".p")
    assert t.io.exists(paths["s2"])


# --- commit outcomes --------------------------------------------------------------------


class FlakyCatalog(SqlCatalog):
    """A real SQLite catalog whose next swaps fail, or whose outcome is hidden."""

    fail_next = 0
    unknown_after_success = False
    loads_fail = False
    loads_fail_after_commit = False

    def commit_table(self, identifier: Any, base: str, new: TableMetadata) -> str:
        if self.fail_next > 0:
            self.fail_next -= 1
            raise CommitFailed("injected: the pointer moved")
        location = super().commit_table(identifier, base, new)
        self.loads_fail = self.loads_fail or self.loads_fail_after_commit
        if self.unknown_after_success:
            raise CommitStateUnknown("injected: the swap landed but the answer was lost")
        return location

    def load_table(self, identifier: Any) -> Table:
        if self.loads_fail:
            raise ConnectionError("injected: the catalog is unreachable")
        return super().load_table(identifier)


@pytest.fixture
def flaky(tmp_path: Path) -> FlakyCatalog:
    cat = FlakyCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    cat.create_namespace("db")
    return cat


def _flaky_history(cat: FlakyCatalog, **props: str) -> Table:
    from tests.commit.support import SCHEMA

    t = cat.create_table("db.orders", SCHEMA, properties={"commit.retry.min-wait-ms": "1", **props})
    t, _ = _overwrite_history(t)
    return t


def test_failed_commit_deletes_nothing(flaky: FlakyCatalog) -> None:
    t = _flaky_history(flaky, **{"commit.retry.num-retries": "1"})
    before = all_files(t)
    flaky.fail_next = 5
    with pytest.raises(CommitFailed):
        expire_snapshots(t, older_than_ms=t.metadata.snapshots[-1].timestamp_ms)
    after = t.refresh()
    assert len(after.metadata.snapshots) == 4
    assert all_files(after) == before


def test_unknown_outcome_deletes_nothing(flaky: FlakyCatalog) -> None:
    t = _flaky_history(flaky)
    before = all_files(t)
    flaky.unknown_after_success = True
    with pytest.raises(CommitStateUnknown):
        expire_snapshots(t, older_than_ms=t.metadata.snapshots[-1].timestamp_ms)
    flaky.unknown_after_success = False
    after = t.refresh()
    assert len(after.metadata.snapshots) == 1  # the expiry did land...
    assert before <= all_files(after)  # ...but no file was deleted


def test_no_reload_after_the_commit_deletes_nothing(flaky: FlakyCatalog) -> None:
    t = _flaky_history(flaky)
    before = all_files(t)
    update = ExpireSnapshots(t).expire_older_than(t.metadata.snapshots[-1].timestamp_ms)
    flaky.loads_fail_after_commit = True
    result = update.execute()
    flaky.loads_fail = flaky.loads_fail_after_commit = False
    assert result.commit is not None and result.commit.committed
    assert len(result.expired_snapshot_ids) == 3 and not result.files_cleaned
    assert "no file was deleted" in result.errors[0]
    after = t.refresh()
    assert len(after.metadata.snapshots) == 1
    assert all_files(after) == before | {after.metadata_location}


def test_lost_race_reapplies_on_the_refreshed_table(flaky: FlakyCatalog, tmp_path: Path) -> None:
    t = _flaky_history(flaky)
    cutoff = t.metadata.snapshots[-1].timestamp_ms
    update = ExpireSnapshots(t).expire_older_than(cutoff)
    newer = append(t, rows(1, 5, start=500))  # lands before the expiry commits
    flaky.fail_next = 1
    result = update.execute()
    assert result.commit is not None and result.commit.committed
    after = t.refresh().metadata
    assert [s.snapshot_id for s in after.snapshots] == [
        t.metadata.snapshots[-1].snapshot_id,
        newer.metadata.current_snapshot_id,
    ]
    assert result.deleted_data_files == 1
    ids, _ = pyiceberg_view(tmp_path)
    assert ids == [100, 101, 102, 200, 201, 500]


def test_cleanup_on_s3_deletes_in_batches(s3_server: Any) -> None:
    bucket = s3_server.new_bucket()
    cat = FileSystemCatalog("s3", f"s3://{bucket}/wh", **s3_server.properties)
    cat.create_namespace("db")
    from tests.commit.support import SCHEMA

    t, f = _overwrite_history(cat.create_table("db.orders", SCHEMA))
    before = all_files(t)
    result = expire_snapshots(
        t, older_than_ms=t.metadata.snapshots[-1].timestamp_ms, report_paths=True
    )
    gone = {
        *result.manifest_list_paths,
        *result.manifest_paths,
        *result.data_file_paths,
        *result.delete_file_paths,
    }
    assert {f["a1"].file_path, f["d1"].file_path} <= gone
    assert (result.deleted_manifest_lists, result.deleted_data_files) == (3, 1)
    after = t.refresh()
    assert before - all_files(after) == gone
    assert all(after.io.exists(p) for p in files_of(after, after.metadata.snapshots[0]))


# --- scale ----------------------------------------------------------------------------


def _synthetic_history(t: Table, count: int) -> Table:
    """``count`` snapshots built directly: each replaces the previous copy of one file.

    Snapshot i lists the first append's manifest and its own manifest with one copy of a
    real data file; its parent's copy is dropped. Committed in one metadata swap. Files are
    written without the FileIO's fsync: this is setup, and fsync would dominate it.
    """

    def quick_write(path: str, data: bytes) -> None:
        Path(local_path(path)).write_bytes(data)

    md = t.metadata
    first = md.current_snapshot()
    assert first is not None
    shared = manifests_of(t, first)
    template = next(
        e.data_file for m in shared for e in read_manifest(t.io.read(m.manifest_path), m)
    )
    payload = t.io.read(template.file_path)
    parent = first.snapshot_id
    meta = metadata_dir(md)
    for i in range(1, count):
        sid = new_snapshot_id()
        seq = md.last_sequence_number + 1
        copy = template.replace(file_path=f"{t.location}/data/copy-{i}.parquet")
        quick_write(copy.file_path, payload)
        writer = ManifestWriter(
            format_version=2, spec=md.spec(), schema=md.schema(), snapshot_id=sid
        )
        writer.add(copy)
        data, manifest = writer.finish(f"{meta}/m-{i}.avro")
        quick_write(manifest.manifest_path, data)
        lists = ManifestListWriter(
            format_version=2, snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq
        )
        lists.add_all([manifest, *shared])
        list_path = f"{meta}/snap-{sid}.avro"
        quick_write(list_path, lists.to_bytes())
        ts = first.timestamp_ms + i
        snap = Snapshot(
            snapshot_id=sid,
            parent_snapshot_id=parent,
            sequence_number=seq,
            timestamp_ms=ts,
            manifest_list=list_path,
            summary=Summary(Operation.OVERWRITE, {}),
            schema_id=md.current_schema_id,
        )
        md = md.add_snapshot(snap).set_branch_snapshot(sid, timestamp_ms=ts)
        parent = sid
    md = md.with_previous_metadata(t.metadata_location, t.metadata.last_updated_ms)
    t.catalog.commit_table(t.identifier, t.metadata_location, md)
    return t.refresh()


def test_a_thousand_snapshots_expire_quickly(
    make_table: Callable[..., Table], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = append(make_table(), rows(3))
    t = _synthetic_history(t, 1000)
    snaps: Sequence[Snapshot] = t.metadata.snapshots
    assert len(snaps) == 1000

    started = time.perf_counter()
    result = expire_snapshots(t, older_than_ms=snaps[-1].timestamp_ms)
    elapsed = time.perf_counter() - started

    assert len(result.expired_snapshot_ids) == 999
    assert result.deleted_manifest_lists == 999
    assert result.deleted_manifests == 998  # m-1 .. m-998; the shared one and m-999 stay
    assert result.deleted_data_files == 998
    assert result.errors == ()
    after = t.refresh()
    assert [s.snapshot_id for s in after.metadata.snapshots] == [snaps[-1].snapshot_id]
    assert len(list(after.io.list_prefix(f"{after.location}/data"))) == 2
    ids, snapshots = pyiceberg_view(tmp_path)
    assert ids == [0, 0, 1, 1, 2, 2]
    assert snapshots == [snaps[-1].snapshot_id]
    with capsys.disabled():
        print(f"\n[expire] 1000 snapshots -> 1 in {elapsed:.2f}s")
    assert elapsed < 60
