"""Deleting files by path or by row filter (Java's ``StreamingDelete``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import Table
from icewright.commit.delete import DeleteFiles, delete_files
from icewright.commit.merge_append import MergeAppend
from icewright.commit.row_delta import RowDelta
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, EntryStatus, FileContent, FileFormat
from icewright.manifest.manifest_list import read_manifest_list
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    files_for,
    live_paths,
    one_file,
    position_delete_file,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
)


def _start(
    make_table: Callable[..., Table], format_version: int = 2
) -> tuple[Table, list[DataFile]]:
    """E1 (day 1, eu, ids 0-3) and U1 (day 1, us, 100-102) in one manifest, E2 (day 2, eu,
    10-11) in a second one."""
    table = make_table(format_version=format_version, **FAST)
    e1, u1 = one_file(table, rows(4, 1, "eu", 0)), one_file(table, rows(3, 1, "us", 100))
    table = MergeAppend(table, [e1, u1]).commit().table
    e2 = one_file(table, rows(2, 2, "eu", 10))
    return MergeAppend(table, [e2]).commit().table, [e1, u1, e2]


def _manifests(table: Table) -> int:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return len(read_manifest_list(table.io.read(snap.manifest_list)))


@pytest.mark.parametrize("format_version", [1, 2])
def test_delete_by_path_and_by_file(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    table, (e1, _u1, e2) = _start(make_table, format_version)
    result = delete_files(table, paths=[e1.file_path, e2])
    assert result.operation is not None and result.operation.value == "delete"
    s = result.summary
    assert (s["deleted-data-files"], s["deleted-records"], s["total-records"]) == ("2", "6", "3")
    assert int(s["removed-files-size"]) == e1.file_size_in_bytes + e2.file_size_in_bytes
    assert s["changed-partition-count"] == "2"
    deleted = [e for _, e in current_entries(result.table, live_only=False) if not e.is_live]
    assert {e.snapshot_id for e in deleted} == {result.snapshot_id}
    if format_version == 2:
        # DELETED entries keep the data and file sequence numbers of the snapshot that
        # added them (spec: "Manifest Entry Fields").
        assert sorted((e.sequence_number, e.file_sequence_number) for e in deleted) == [
            (1, 1),
            (2, 2),
        ]
    kept = [e for _, e in current_entries(result.table)]
    assert [e.status for e in kept] == [EntryStatus.EXISTING]
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == [100, 101, 102]
    assert ops == ["append", "append", "delete"]


def test_delete_by_filter_removes_whole_files(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (_e1, u1, _e2) = _start(make_table)
    result = DeleteFiles(table).delete_from_row_filter("region = 'eu'").commit()
    assert result.summary["deleted-data-files"] == "2"
    assert live_paths(result.table) == {u1.file_path}
    # Metrics decide too: ids 10-11 only live in E2.
    result = DeleteFiles(result.table).delete_from_row_filter("id >= 100").commit()
    assert result.summary["deleted-data-files"] == "1"
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == []


def test_partial_match_fails_and_points_to_copy_on_write(
    make_table: Callable[..., Table],
) -> None:
    table, _ = _start(make_table)
    before = avro_files(table)
    with pytest.raises(ValidationError) as info:
        delete_files(table, row_filter="id = 2")
    message = str(info.value)
    assert "some, but not all, rows match filter id = 2" in message
    assert "copy-on-write" in message and "OverwriteFiles" in message
    assert avro_files(table.refresh()) == before
    assert len(table.refresh().metadata.snapshots) == 2


def test_manifest_without_live_files_is_dropped_by_the_next_snapshot(
    make_table: Callable[..., Table],
) -> None:
    table, (_e1, _u1, e2) = _start(make_table)
    assert _manifests(table) == 2
    result = delete_files(table, paths=[e2.file_path])
    # The rewritten manifest holds only the DELETED entry and is still listed ...
    assert _manifests(result.table) == 2
    only_deleted = [
        m
        for m, e in current_entries(result.table, live_only=False)
        if e.status is EntryStatus.DELETED
    ]
    assert only_deleted and only_deleted[0].added_snapshot_id == result.snapshot_id
    # ... and the next snapshot drops it.
    after = MergeAppend(result.table, files_for(result.table, rows(1, 3, "us", 300))).commit()
    assert _manifests(after.table) == 2
    assert all(e.is_live for _, e in current_entries(after.table, live_only=False))


def test_validate_files_exist(make_table: Callable[..., Table], tmp_path: Path) -> None:
    table, (e1, _u1, _e2) = _start(make_table)
    stale = table
    strict = DeleteFiles(stale).delete_file(e1.file_path).validate_files_exist()
    lenient = DeleteFiles(stale).delete_file(e1.file_path)
    delete_files(table, paths=[e1.file_path])
    with pytest.raises(ValidationError, match="missing required files to delete"):
        strict.commit()
    # Without the check a delete of a file that is gone commits and changes nothing.
    result = lenient.commit()
    assert result.committed and "deleted-data-files" not in result.summary
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [10, 11, 100, 101, 102]
    final = table.refresh()
    assert avro_files(final) == referenced_metadata_files(final)


def test_lost_race_cleans_the_manifest_filtered_for_the_old_base(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (e1, u1, e2) = _start(make_table)
    stale = table
    late = DeleteFiles(stale).delete_file(e1.file_path)
    # The winner rewrites the same manifest (E1 and U1 share it).
    winner = delete_files(table, paths=[u1.file_path])
    result = late.commit()
    assert result.committed
    final = result.table.refresh()
    # The manifest filtered for the first base (without the winner's delete) is gone.
    assert avro_files(final) == referenced_metadata_files(final)
    assert live_paths(final) == {e2.file_path}
    ids, snaps, _ = pyiceberg_read(tmp_path)
    assert ids == [10, 11]
    assert snaps[-2:] == [winner.snapshot_id, result.snapshot_id]


def test_filter_also_removes_delete_files_of_fully_deleted_partitions(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (e1, u1, _e2) = _start(make_table)
    table = RowDelta(table).add_deletes(position_delete_file(table, e1, [0, 1])).commit().table
    table = RowDelta(table).add_deletes(position_delete_file(table, u1, [0])).commit().table
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [2, 3, 10, 11, 101, 102]  # pyiceberg applies the position deletes
    result = delete_files(table, row_filter="region = 'eu'")
    s = result.summary
    assert (s["deleted-data-files"], s["removed-delete-files"]) == ("2", "1")
    assert s["removed-position-delete-files"] == "1" and s["total-delete-files"] == "1"
    remaining = live_paths(result.table, FileContent.POSITION_DELETES)
    assert len(remaining) == 1
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [101, 102]


def test_nothing_to_delete_is_refused(make_table: Callable[..., Table]) -> None:
    table, _ = _start(make_table)
    with pytest.raises(ValidationError, match="nothing to delete"):
        delete_files(table)
    with pytest.raises(ValidationError, match="delete files"):
        DeleteFiles(table).delete_file(
            DataFile(
                file_path="x.parquet",
                file_format=FileFormat.PARQUET,
                record_count=1,
                file_size_in_bytes=1,
                content=FileContent.EQUALITY_DELETES,
                equality_ids=(1,),
            )
        )
