"""Rewriting files (compaction), Java's ``BaseRewriteFiles``, and its conflict rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import Table
from icewright.commit.delete import delete_files
from icewright.commit.merge_append import MergeAppend, append
from icewright.commit.rewrite import RewriteFiles, rewrite_files
from icewright.commit.row_delta import RowDelta
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, EntryStatus, FileContent
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    equality_delete_file,
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
    """Two small files of (day 1, eu): ids 0-2 and 3-4; one of (day 1, us): 100-101."""
    table = make_table(format_version=format_version, **FAST)
    files = [
        one_file(table, rows(3, 1, "eu", 0)),
        one_file(table, rows(2, 1, "eu", 3)),
        one_file(table, rows(2, 1, "us", 100)),
    ]
    return MergeAppend(table, files).commit().table, files


def _compacted(table: Table) -> DataFile:
    return one_file(table, rows(5, 1, "eu", 0))


@pytest.mark.parametrize("format_version", [1, 2])
def test_compaction_replaces_files_and_keeps_rows(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    table, (a, b, u) = _start(make_table, format_version)
    result = rewrite_files(table, [a, b], [_compacted(table)])
    assert result.operation is not None and result.operation.value == "replace"
    s = result.summary
    assert (s["added-data-files"], s["deleted-data-files"]) == ("1", "2")
    assert (s["added-records"], s["deleted-records"], s["total-records"]) == ("5", "5", "7")
    assert s["total-data-files"] == "2"
    assert live_paths(result.table) - {u.file_path} and u.file_path in live_paths(result.table)
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == [0, 1, 2, 3, 4, 100, 101]
    assert ops == ["append", "replace"]


def test_rewrite_of_a_concurrently_deleted_file_fails(make_table: Callable[..., Table]) -> None:
    table, (a, b, _) = _start(make_table)
    op = RewriteFiles(table).rewrite_files([a, b], [_compacted(table)])
    delete_files(table, paths=[b.file_path])
    with pytest.raises(ValidationError, match=f"missing required files to delete: {b.file_path}"):
        op.commit()
    final = table.refresh()
    assert avro_files(final) == referenced_metadata_files(final)


def test_rewrite_fails_when_its_file_got_a_new_delete(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (a, b, _) = _start(make_table)
    op = RewriteFiles(table).rewrite_files([a, b], [_compacted(table)])
    RowDelta(table).add_deletes(position_delete_file(table, a, [1])).commit()
    with pytest.raises(ValidationError, match=f"new delete for replaced data file {a.file_path}"):
        op.commit()
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [0, 2, 3, 4, 100, 101]  # the deleted row stays deleted


def test_new_deletes_for_other_files_do_not_conflict(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (a, b, u) = _start(make_table)
    other = one_file(table, rows(1, 1, "eu", 9))
    table = append(table, [other]).table
    op = RewriteFiles(table).rewrite_files([a, b], [_compacted(table)])
    # Same partition, another file: the delete's file_path bounds rule the rewrite out.
    table = RowDelta(table).add_deletes(position_delete_file(table, other, [0])).commit().table
    # Another partition.
    RowDelta(table).add_deletes(position_delete_file(table, u, [0])).commit()
    result = op.commit()
    assert result.committed
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [0, 1, 2, 3, 4, 101]


def test_starting_sequence_number_is_kept_for_new_files(
    make_table: Callable[..., Table],
) -> None:
    table, (a, b, _) = _start(make_table)
    start = table.metadata.current_snapshot()
    assert start is not None and start.sequence_number == 1
    compacted = _compacted(table)
    op = RewriteFiles(table).rewrite_files([a, b], [compacted]).use_starting_sequence_number()
    # A concurrent equality delete still applies to the new file (older data sequence
    # number), so it does not conflict.
    table = RowDelta(table).add_deletes(equality_delete_file(table, a, [1])).commit().table
    result = op.commit()
    assert result.committed and result.sequence_number == 3
    (entry,) = [
        e for _, e in current_entries(result.table) if e.data_file.file_path == compacted.file_path
    ]
    assert entry.status is EntryStatus.ADDED
    assert (entry.sequence_number, entry.file_sequence_number) == (1, 3)


def test_equality_delete_conflicts_unless_the_sequence_number_is_kept(
    make_table: Callable[..., Table],
) -> None:
    table, (a, b, _) = _start(make_table)
    op = RewriteFiles(table).rewrite_files([a, b], [_compacted(table)])
    RowDelta(table).add_deletes(equality_delete_file(table, a, [1])).commit()
    with pytest.raises(ValidationError, match="new delete for replaced data file"):
        op.commit()
    # Keeping the sequence number still fails for position deletes.
    table = table.refresh()
    (a2, b2) = [
        e.data_file
        for _, e in current_entries(table)
        if e.data_file.content is FileContent.DATA and e.data_file.partition[1] == "eu"
    ]
    op = RewriteFiles(table).rewrite_files([a2, b2], [_compacted(table)])
    op.data_sequence_number(table.metadata.current_snapshot().sequence_number)  # type: ignore[union-attr]
    RowDelta(table).add_deletes(position_delete_file(table, a2, [0])).commit()
    with pytest.raises(ValidationError, match="new position delete for replaced data file"):
        op.commit()


def test_rewrite_rules_on_the_files(make_table: Callable[..., Table]) -> None:
    table, (a, _b, _) = _start(make_table)
    with pytest.raises(ValidationError, match="may not add rows"):
        RewriteFiles(table).rewrite_files([a], [_compacted(table)]).commit()
    with pytest.raises(ValidationError, match="needs files to delete"):
        RewriteFiles(table).commit()
    pos = position_delete_file(table, a, [0])
    with pytest.raises(ValidationError, match="delete files to add must be empty"):
        RewriteFiles(table).rewrite_files([a], [one_file(table, rows(3, 1, "eu", 0)), pos]).commit()
    assert len(table.refresh().metadata.snapshots) == 1


def test_rewrite_of_delete_files(make_table: Callable[..., Table], tmp_path: Path) -> None:
    table, (a, _, _) = _start(make_table)
    first, second = position_delete_file(table, a, [0]), position_delete_file(table, a, [2])
    table = RowDelta(table).add_deletes(first).add_deletes(second).commit().table
    merged = position_delete_file(table, a, [0, 2])
    result = RewriteFiles(table).rewrite_files([first, second], [merged]).commit()
    s = result.summary
    assert (s["removed-delete-files"], s["added-delete-files"]) == ("2", "1")
    assert s["total-delete-files"] == "1"
    assert live_paths(result.table, FileContent.POSITION_DELETES) == {merged.file_path}
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [1, 3, 4, 100, 101]


def test_lost_race_with_an_append_still_lands(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, (a, b, _) = _start(make_table)
    op = RewriteFiles(table).rewrite_files([a, b], [_compacted(table)])
    append(table, files_for(table, rows(1, 1, "eu", 50)))
    result = op.commit()
    assert result.committed
    final = result.table.refresh()
    assert avro_files(final) == referenced_metadata_files(final)
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [0, 1, 2, 3, 4, 50, 100, 101]


def test_delete_files_older_than_all_data_are_dropped_with_their_manifest(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    # Java's dropDeleteFilesOlderThan: when a delete manifest is rewritten anyway, delete
    # files whose data sequence number is below every remaining data file's go too.
    table = make_table(**FAST)
    e1, u1 = one_file(table, rows(3, 1, "eu", 0)), one_file(table, rows(3, 1, "us", 100))
    table = MergeAppend(table, [e1, u1]).commit().table  # seq 1
    d_eu, d_us = position_delete_file(table, e1, [0]), position_delete_file(table, u1, [0])
    table = RowDelta(table).add_deletes(d_eu).add_deletes(d_us).commit().table  # seq 2
    table = append(table, files_for(table, rows(1, 3, "eu", 50))).table  # seq 3
    compacted = [one_file(table, rows(2, 1, "eu", 1)), one_file(table, rows(2, 1, "us", 101))]
    op = RewriteFiles(table).rewrite_files([e1, u1, d_eu], compacted)
    result = op.commit()
    s = result.summary
    # d_eu was named; d_us (seq 2) applies to no remaining data file (all seq >= 3).
    assert (s["removed-delete-files"], s["removed-position-delete-files"]) == ("2", "2")
    assert s["total-delete-files"] == "0"
    assert live_paths(result.table, FileContent.POSITION_DELETES) == set()
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [1, 2, 50, 101, 102]
