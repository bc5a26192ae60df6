"""Replace partitions, a dynamic overwrite (Java's ``BaseReplacePartitions``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.commit.delete import DeleteFiles
from icewright.commit.merge_append import MergeAppend, append
from icewright.commit.overwrite import ReplacePartitions, replace_partitions
from icewright.commit.row_delta import RowDelta
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile
from tests.commit.support import (
    FAST,
    SCHEMA,
    avro_files,
    files_for,
    one_file,
    position_delete_file,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
)


def _start(
    make_table: Callable[..., Table], format_version: int = 2
) -> tuple[Table, list[DataFile]]:
    """Partitions (day 1, eu) ids 0-3, (day 2, eu) 10-11, (day 1, us) 100-102."""
    table = make_table(format_version=format_version, **FAST)
    files = [
        one_file(table, rows(4, 1, "eu", 0)),
        one_file(table, rows(2, 2, "eu", 10)),
        one_file(table, rows(3, 1, "us", 100)),
    ]
    return MergeAppend(table, files).commit().table, files


@pytest.mark.parametrize("format_version", [1, 2])
def test_replaces_only_the_partitions_of_the_new_files(
    make_table: Callable[..., Table], tmp_path: Path, format_version: int
) -> None:
    table, _ = _start(make_table, format_version)
    new = files_for(table, rows(2, 1, "eu", 50) + rows(1, 3, "us", 60))
    result = replace_partitions(table, new)
    assert result.operation is not None and result.operation.value == "overwrite"
    s = result.summary
    assert s["replace-partitions"] == "true"
    assert (s["added-data-files"], s["deleted-data-files"], s["deleted-records"]) == ("2", "1", "4")
    # (day 1, eu) and (day 3, us) changed; (day 3, us) was empty before.
    assert s["changed-partition-count"] == "2"
    assert s["total-records"] == "8"
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == [10, 11, 50, 51, 60, 100, 101, 102]
    assert ops == ["append", "overwrite"]


def test_unpartitioned_table_is_replaced_whole(catalog: SqlCatalog, tmp_path: Path) -> None:
    table = catalog.create_table("db.flat", SCHEMA, properties=FAST)
    table = append(table, files_for(table, rows(3, 1) + rows(2, 2, "us", 10))).table
    result = replace_partitions(table, files_for(table, rows(1, 5, "eu", 99)))
    assert result.summary["deleted-data-files"] == "1"
    assert result.summary["deleted-records"] == "5"
    ids, _, _ = pyiceberg_read(tmp_path, "db.flat")
    assert ids == [99]


def test_validate_append_only(make_table: Callable[..., Table], tmp_path: Path) -> None:
    table, _ = _start(make_table)
    before = avro_files(table)
    op = ReplacePartitions(table, files_for(table, rows(1, 1, "eu", 50))).validate_append_only()
    where = "ts_day=2026-03-01/region=eu"
    with pytest.raises(ValidationError, match=f"conflicts with existing partition: {where}"):
        op.commit()
    assert avro_files(table.refresh()) == before
    # A new partition replaces nothing and passes.
    fresh = ReplacePartitions(table, files_for(table, rows(1, 7, "eu", 70))).validate_append_only()
    assert fresh.commit().committed
    ids, _, _ = pyiceberg_read(tmp_path)
    assert 70 in ids and len(ids) == 10


def test_without_validation_the_last_writer_replaces_concurrent_data(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, _ = _start(make_table)
    stale = table
    op = ReplacePartitions(stale, files_for(stale, rows(2, 1, "eu", 50)))
    append(table, files_for(table, rows(1, 1, "eu", 40)))  # same partition, committed first
    assert op.commit().committed
    ids, _, _ = pyiceberg_read(tmp_path)
    # The retry re-applies on the refreshed table: the concurrent file is replaced too.
    assert ids == [10, 11, 50, 51, 100, 101, 102]


def test_conflicting_data_is_detected_per_partition(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table, _ = _start(make_table)
    stale = table
    op = ReplacePartitions(stale, files_for(stale, rows(2, 1, "eu", 50)))
    op.validate_no_conflicting_data()
    append(table, files_for(table, rows(1, 1, "us", 40)))  # another partition: fine
    assert op.commit().committed

    table = table.refresh()
    op = ReplacePartitions(
        table, files_for(table, rows(2, 1, "eu", 60))
    ).validate_no_conflicting_data()
    append(table, files_for(table, rows(1, 1, "eu", 41)))
    with pytest.raises(
        ValidationError, match=r"conflicting files .* partitions \[ts_day=2026-03-01/region=eu"
    ):
        op.commit()
    final = table.refresh()
    assert avro_files(final) == referenced_metadata_files(final)


def test_conflicting_deletes_are_detected(make_table: Callable[..., Table]) -> None:
    table, files = _start(make_table)
    op = ReplacePartitions(table, files_for(table, rows(1, 2, "eu", 50)))
    op.validate_no_conflicting_deletes()
    DeleteFiles(table).delete_file(files[1].file_path).commit()  # (day 2, eu)
    with pytest.raises(ValidationError, match="conflicting deleted files"):
        op.commit()

    table = table.refresh()
    op = ReplacePartitions(table, files_for(table, rows(1, 1, "us", 70)))
    op.validate_no_conflicting_deletes()
    RowDelta(table).add_deletes(position_delete_file(table, files[2], [0])).commit()
    with pytest.raises(ValidationError, match="new conflicting delete files"):
        op.commit()
    # Deletes elsewhere do not conflict.
    table = table.refresh()
    op = ReplacePartitions(table, files_for(table, rows(1, 1, "us", 71)))
    op.validate_no_conflicting_deletes().validate_no_conflicting_data()
    RowDelta(table).add_deletes(position_delete_file(table, files[0], [1])).commit()
    result = op.commit()
    # Replacing (day 1, us) also drops the delete file of that partition.
    assert result.summary["removed-delete-files"] == "1"
    assert result.summary["total-delete-files"] == "1"


def test_replace_needs_files(make_table: Callable[..., Table]) -> None:
    table, _ = _start(make_table)
    with pytest.raises(ValidationError, match="at least one data file"):
        ReplacePartitions(table).commit()
