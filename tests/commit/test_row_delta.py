"""A minimal row delta (Java's ``BaseRowDelta``): adding position and equality deletes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import Table
from icewright.commit.delete import delete_files
from icewright.commit.merge_append import MergeAppend, append
from icewright.commit.row_delta import RowDelta
from icewright.errors import ValidationError
from tests.commit.support import (
    FAST,
    files_for,
    one_file,
    position_delete_file,
    pyiceberg_read,
    rows,
)


def test_position_deletes_are_applied_by_pyiceberg(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table = make_table(**FAST)
    f = one_file(table, rows(4, 1, "eu", 0))
    table = MergeAppend(table, [f]).commit().table
    result = RowDelta(table).add_deletes(position_delete_file(table, f, [1, 3])).commit()
    assert result.operation is not None and result.operation.value == "delete"
    s = result.summary
    assert (s["added-delete-files"], s["added-position-delete-files"]) == ("1", "1")
    assert (s["added-position-deletes"], s["total-position-deletes"]) == ("2", "2")
    assert s["total-records"] == "4"  # deleted rows still count in data files
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == [0, 2]
    assert ops == ["append", "delete"]
    both = RowDelta(result.table).add_rows(one_file(table, rows(1, 2, "eu", 9)))
    both.add_deletes(position_delete_file(table, f, [0]))
    assert both.operation().value == "overwrite"
    assert RowDelta(table).add_rows(f).operation().value == "append"


def test_referenced_data_files_must_still_exist(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    f = one_file(table, rows(4, 1, "eu", 0))
    table = MergeAppend(table, [f]).commit().table
    delta = RowDelta(table).add_deletes(position_delete_file(table, f, [1]))
    delta.validate_data_files_exist([f.file_path]).validate_deleted_files()
    delete_files(table, paths=[f.file_path])
    with pytest.raises(ValidationError, match="missing data files"):
        delta.commit()


def test_conflicting_data_and_deletes_are_detected(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    f = one_file(table, rows(4, 1, "eu", 0))
    table = MergeAppend(table, [f]).commit().table
    delta = RowDelta(table).add_deletes(position_delete_file(table, f, [1]))
    delta.conflict_detection_filter("region = 'eu'").validate_no_conflicting_data_files()
    append(table, files_for(table, rows(1, 2, "us", 50)))  # outside the filter
    assert delta.commit().committed
    table = table.refresh()
    delta = RowDelta(table).add_deletes(position_delete_file(table, f, [2]))
    delta.conflict_detection_filter("region = 'eu'").validate_no_conflicting_delete_files()
    RowDelta(table).add_deletes(position_delete_file(table, f, [3])).commit()
    with pytest.raises(ValidationError, match="new conflicting delete files"):
        delta.commit()


def test_v1_tables_take_no_delete_files(make_table: Callable[..., Table]) -> None:
    table = make_table(format_version=1, **FAST)
    f = one_file(table, rows(2, 1, "eu", 0))
    table = MergeAppend(table, [f]).commit().table
    with pytest.raises(ValidationError, match="format version 2"):
        RowDelta(table).add_deletes(position_delete_file(table, f, [0]))
