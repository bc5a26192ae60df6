"""Merge append (Java's ``MergeAppend``) and ``append`` choosing merge or fast append."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import Table
from icewright.commit.append import FastAppend
from icewright.commit.merge_append import MergeAppend, append, new_append
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, EntryStatus, FileContent, FileFormat
from icewright.manifest.manifest_list import read_manifest_list
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    files_for,
    live_paths,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
)


@pytest.mark.parametrize("format_version", [1, 2])
def test_merge_append_builds_history_read_by_pyiceberg(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    table = make_table(format_version=format_version, **FAST)
    first = append(table, files_for(table, rows(4, 1) + rows(2, 2, "us", 100)))
    assert first.committed and first.operation is not None and first.operation.value == "append"
    assert first.summary["added-data-files"] == "2"
    assert first.summary["added-records"] == "6"
    assert first.summary["total-records"] == "6"
    assert first.summary["changed-partition-count"] == "2"
    assert first.sequence_number == (1 if format_version == 2 else 0)
    second = append(first.table, files_for(first.table, rows(3, 3, "eu", 200)))
    assert second.summary["total-records"] == "9"
    assert second.summary["total-data-files"] == "3"
    ids, snaps, ops = pyiceberg_read(tmp_path)
    assert ids == [0, 1, 2, 3, 100, 101, 200, 201, 202]
    assert snaps == [first.snapshot_id, second.snapshot_id]
    assert ops == ["append", "append"]


def test_append_picks_merge_or_fast_by_property(make_table: Callable[..., Table]) -> None:
    merging = make_table("db.merging", **FAST)
    assert type(new_append(merging)) is MergeAppend
    fast = make_table("db.fast", **FAST, **{"commit.manifest-merge.enabled": "false"})
    assert type(new_append(fast)) is FastAppend
    result = append(fast, files_for(fast, rows(2)))
    assert result.committed and len(live_paths(result.table)) == 1


def test_append_of_the_same_file_twice_adds_it_once(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    (f,) = files_for(table, rows(3))
    result = MergeAppend(table, [f, f]).commit()
    assert result.summary["added-data-files"] == "1"
    assert len(current_entries(result.table)) == 1


def test_lost_race_reuses_new_manifest_and_cleans_merged_ones(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table = make_table(**FAST, **{"commit.manifest.min-count-to-merge": "2"})
    table = append(table, files_for(table, rows(2, 1))).table
    stale = table
    winner = append(table, files_for(table, rows(2, 2, "eu", 10)))
    late = MergeAppend(stale, files_for(stale, rows(2, 3, "eu", 20)))
    result = late.commit()
    assert result.committed
    final = result.table.refresh()
    # The first attempt merged [new, first]; the retry merged [new, winner's merged one].
    last_list = final.metadata.snapshots[-1].manifest_list or ""
    assert len(read_manifest_list(final.io.read(last_list))) == 1
    added = [e for _, e in current_entries(final) if e.status is EntryStatus.ADDED]
    assert len(current_entries(final)) == 3
    assert [e.snapshot_id for e in added] == [result.snapshot_id]
    assert avro_files(final) == referenced_metadata_files(final)
    ids, snaps, _ = pyiceberg_read(tmp_path)
    assert ids == [0, 1, 10, 11, 20, 21]
    assert snaps[-2:] == [winner.snapshot_id, result.snapshot_id]


def test_bad_files_are_refused_before_anything_is_written(
    make_table: Callable[..., Table],
) -> None:
    table = make_table(**FAST)
    before = avro_files(table)
    delete_file = DataFile(
        file_path=f"{table.location}/data/x.parquet",
        file_format=FileFormat.PARQUET,
        record_count=1,
        file_size_in_bytes=10,
        content=FileContent.POSITION_DELETES,
    )
    with pytest.raises(ValidationError, match="only data files"):
        MergeAppend(table, [delete_file])
    with pytest.raises(ValidationError, match="partition spec 7"):
        MergeAppend(table, [delete_file.replace(content=FileContent.DATA, spec_id=7)])
    with pytest.raises(ValidationError, match="partition tuple has 0 values"):
        MergeAppend(table, [delete_file.replace(content=FileContent.DATA)])
    assert avro_files(table) == before
