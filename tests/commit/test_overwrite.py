"""Overwrite by row filter and by files (Java's ``BaseOverwriteFiles``), with isolation levels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import Table
from icewright.commit.delete import DeleteFiles
from icewright.commit.merge_append import MergeAppend, append
from icewright.commit.overwrite import (
    IsolationLevel,
    OverwriteFiles,
    isolation_level_for,
    overwrite,
)
from icewright.commit.row_delta import RowDelta
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, EntryStatus
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    files_for,
    one_file,
    position_delete_file,
    pyiceberg_read,
    rows,
)


def _start(
    make_table: Callable[..., Table],
    format_version: int = 2,
    properties: dict[str, str] | None = None,
) -> tuple[Table, dict[str, DataFile]]:
    """E1 (day 1, eu, ids 0-3), E2 (day 2, eu, 10-11), U1 (day 1, us, 100-102)."""
    table = make_table(format_version=format_version, **FAST, **(properties or {}))
    e1 = one_file(table, rows(4, 1, "eu", 0))
    e2 = one_file(table, rows(2, 2, "eu", 10))
    u1 = one_file(table, rows(3, 1, "us", 100))
    table = MergeAppend(table, [e1, e2, u1]).commit().table
    return table, {"e1": e1, "e2": e2, "u1": u1}


@pytest.mark.parametrize("format_version", [1, 2])
def test_overwrite_by_filter_marks_deleted_and_keeps_history(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    table, f = _start(make_table, format_version)
    first_id = table.metadata.current_snapshot_id
    new = files_for(table, rows(2, 1, "eu", 50))
    op = OverwriteFiles(table).overwrite_by_row_filter("region = 'eu'").add_files(new)
    result = op.commit()
    assert result.operation is not None and result.operation.value == "overwrite"
    s = result.summary
    assert (s["added-data-files"], s["deleted-data-files"]) == ("1", "2")
    assert (s["added-records"], s["deleted-records"], s["total-records"]) == ("2", "6", "5")
    assert s["changed-partition-count"] == "2"
    assert int(s["removed-files-size"]) == f["e1"].file_size_in_bytes + f["e2"].file_size_in_bytes
    entries = [e for _, e in current_entries(result.table, live_only=False)]
    deleted = [e for e in entries if e.status is EntryStatus.DELETED]
    assert {e.data_file.file_path for e in deleted} == {f["e1"].file_path, f["e2"].file_path}
    # DELETED entries carry the new snapshot id and keep their sequence numbers (v2).
    assert {e.snapshot_id for e in deleted} == {result.snapshot_id}
    existing = [e for e in entries if e.status is EntryStatus.EXISTING]
    assert [(e.data_file.file_path, e.snapshot_id) for e in existing] == [
        (f["u1"].file_path, first_id)
    ]
    if format_version == 2:
        assert {(e.sequence_number, e.file_sequence_number) for e in deleted + existing} == {(1, 1)}
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == [50, 51, 100, 101, 102]
    assert ops == ["append", "overwrite"]


def test_copy_on_write_by_files(make_table: Callable[..., Table], tmp_path: Path) -> None:
    table, f = _start(make_table)
    rewritten = one_file(table, rows(3, 1, "eu", 1))  # E1 without id 0
    result = overwrite(table, delete_files=[f["e1"]], add_files=[rewritten])
    assert result.operation is not None and result.operation.value == "overwrite"
    assert result.summary["deleted-records"] == "4" and result.summary["added-records"] == "3"
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [1, 2, 3, 10, 11, 100, 101, 102]


def test_operation_follows_what_changes(make_table: Callable[..., Table]) -> None:
    table, f = _start(make_table)
    only_delete = OverwriteFiles(table).delete_file(f["u1"])
    assert only_delete.operation().value == "delete"
    only_add = OverwriteFiles(table).add_file(one_file(table, rows(1)))
    assert only_add.operation().value == "append"
    result = only_delete.commit()
    assert result.operation is not None and result.operation.value == "delete"


def test_partial_match_fails_and_points_to_copy_on_write(
    make_table: Callable[..., Table],
) -> None:
    table, _ = _start(make_table)
    before = avro_files(table)
    with pytest.raises(
        ValidationError, match=r"some, but not all, rows match filter id < 2.*overwrite"
    ):
        OverwriteFiles(table).overwrite_by_row_filter("id < 2").commit()
    assert avro_files(table.refresh()) == before
    assert len(table.refresh().metadata.snapshots) == 1


def test_added_files_must_match_the_filter_when_asked(make_table: Callable[..., Table]) -> None:
    table, _ = _start(make_table)
    op = OverwriteFiles(table).overwrite_by_row_filter("region = 'eu'")
    op.add_file(one_file(table, rows(1, 1, "us", 7))).validate_added_files_match_overwrite_filter()
    with pytest.raises(ValidationError, match="do not match filter"):
        op.commit()
    good = OverwriteFiles(table).overwrite_by_row_filter("region = 'eu'")
    good.add_file(
        one_file(table, rows(1, 1, "eu", 7))
    ).validate_added_files_match_overwrite_filter()
    assert good.commit().committed


def test_serializable_fails_on_concurrent_matching_append(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, _ = _start(make_table)
    stale = table
    op = OverwriteFiles(stale).overwrite_by_row_filter("region = 'eu'")
    op.add_files(files_for(stale, rows(1, 1, "eu", 50))).isolation_level_from_properties("update")
    append(table, files_for(table, rows(1, 3, "eu", 60)))
    with pytest.raises(ValidationError, match=r"conflicting files .* region = 'eu'"):
        op.commit()
    # A concurrent append outside the filter does not conflict.
    table = table.refresh()
    op = (
        OverwriteFiles(table)
        .overwrite_by_row_filter("region = 'eu'")
        .isolation_level("serializable")
    )
    op.add_files(files_for(table, rows(1, 1, "eu", 50)))
    append(table, files_for(table, rows(1, 3, "us", 70)))
    assert op.commit().committed
    ids, _, _ = pyiceberg_read(tmp_path)
    assert ids == [50, 70, 100, 101, 102]


def test_snapshot_isolation_allows_appends_but_not_deletes(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, f = _start(make_table, properties={"write.update.isolation-level": "snapshot"})
    assert isolation_level_for(table.metadata.properties, "update") is IsolationLevel.SNAPSHOT
    stale = table
    result_append = append(table, files_for(table, rows(1, 3, "eu", 60)))
    late = overwrite(
        stale, row_filter="region = 'eu'", add_files=files_for(stale, rows(1, 1, "eu", 50))
    )
    assert late.committed
    # Like Java, the filter applies to the refreshed table: the concurrent eu file goes too.
    ids, snaps, _ = pyiceberg_read(tmp_path)
    assert ids == [50, 100, 101, 102]
    assert snaps[-2:] == [result_append.snapshot_id, late.snapshot_id]

    table = late.table.refresh()
    stale = table
    op = OverwriteFiles(stale).overwrite_by_row_filter("region = 'us'").isolation_level("snapshot")
    op.add_files(files_for(stale, rows(1, 1, "us", 90)))
    DeleteFiles(table).delete_file(f["u1"]).commit()
    with pytest.raises(ValidationError, match="conflicting deleted files"):
        op.commit()


def test_copy_on_write_conflicts(make_table: Callable[..., Table]) -> None:
    table, f = _start(make_table)
    # A new position delete for the file being replaced: its deleted row would come back.
    stale = table
    op = OverwriteFiles(stale).delete_file(f["e1"]).add_file(one_file(stale, rows(4, 1, "eu", 0)))
    op.validate_no_conflicting_deletes()
    RowDelta(table).add_deletes(position_delete_file(table, f["e1"], [0])).commit()
    with pytest.raises(ValidationError, match="new delete for replaced data file"):
        op.commit()
    # The replaced file was removed concurrently.
    table = table.refresh()
    op = OverwriteFiles(table).delete_file(f["e2"]).add_file(one_file(table, rows(2, 2, "eu", 10)))
    op.validate_no_conflicting_deletes()
    DeleteFiles(table).delete_file(f["e2"].file_path).commit()
    with pytest.raises(ValidationError, match="missing required files to delete"):
        op.commit()


def test_conflict_detection_filter_narrows_data_conflicts(
    make_table: Callable[..., Table],
) -> None:
    table, f = _start(make_table)

    def cow(t: Table, conflict: str | None) -> OverwriteFiles:
        op = OverwriteFiles(t).delete_file(f["u1"]).add_file(one_file(t, rows(3, 1, "us", 100)))
        if conflict is not None:
            op.conflict_detection_filter(conflict)
        return op.isolation_level(IsolationLevel.SERIALIZABLE)

    # Without a conflict filter, a copy-on-write by files conflicts with any new data.
    op = cow(table, None)
    table = append(table, files_for(table, rows(1, 5, "eu", 40))).table
    with pytest.raises(ValidationError, match=r"conflicting files .* matching TRUE"):
        op.commit()
    # With the filter of the rows it read, only matching new data conflicts.
    op = cow(table, "region = 'us'")
    table = append(table, files_for(table, rows(1, 5, "eu", 41))).table
    assert op.commit().committed
    table = table.refresh()
    rewritten = next(
        e.data_file for _, e in current_entries(table) if e.data_file.partition[1] == "us"
    )
    op = (
        OverwriteFiles(table)
        .delete_file(rewritten)
        .add_file(one_file(table, rows(3, 1, "us", 100)))
    )
    op.conflict_detection_filter("region = 'us'").validate_no_conflicting_data()
    append(table, files_for(table, rows(1, 6, "us", 42)))
    with pytest.raises(ValidationError, match="region = 'us'"):
        op.commit()


def test_validate_from_an_older_snapshot(make_table: Callable[..., Table]) -> None:
    table, _ = _start(make_table)
    start_id = table.metadata.current_snapshot_id
    table = append(table, files_for(table, rows(1, 4, "eu", 70))).table
    op = OverwriteFiles(table).overwrite_by_row_filter("region = 'eu'")
    op.validate_from_snapshot(start_id).validate_no_conflicting_data()
    with pytest.raises(ValidationError, match=f"after snapshot {start_id}"):
        op.commit()
    # From the handle's own snapshot (the default) the same overwrite is fine.
    assert (
        OverwriteFiles(table)
        .overwrite_by_row_filter("region = 'eu'")
        .validate_no_conflicting_data()
        .commit()
        .committed
    )


def test_bad_isolation_settings_are_refused(make_table: Callable[..., Table]) -> None:
    with pytest.raises(ValidationError, match=r"write\.delete\.isolation-level='chaos'"):
        _start(make_table, properties={"write.delete.isolation-level": "chaos"})
    # written by another engine: the default (serializable), so commits still work
    chaos = {"write.delete.isolation-level": "chaos"}
    assert isolation_level_for(chaos, "delete") is IsolationLevel.SERIALIZABLE
    table, _ = _start(make_table)
    with pytest.raises(ValidationError, match="unknown command"):
        isolation_level_for(table.metadata.properties, "upsert")
    with pytest.raises(ValidationError, match="unknown isolation level"):
        OverwriteFiles(table).isolation_level("strict")
    with pytest.raises(ValidationError, match="nope"):
        OverwriteFiles(table).overwrite_by_row_filter("nope = 1")
