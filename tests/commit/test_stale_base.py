"""A table handle loaded before an expire still commits (issue 12, item 1).

The handle's current snapshot is expired by another writer and its manifest list
deleted; an operation applied on the stale handle must refresh and re-apply, as Iceberg
Java does (it refreshes before each attempt), not fail with ``NoSuchFile``. The rows are
checked on the table afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit import UpdateProperties, update_schema
from icewright.commit.append import fast_append
from icewright.commit.delete import delete_files
from icewright.commit.expire import expire_snapshots
from icewright.commit.merge_append import append
from icewright.commit.overwrite import replace_partitions
from icewright.commit.rewrite import rewrite_files
from icewright.commit.table_ops import create_table
from icewright.errors import NoSuchFile, ValidationError
from icewright.io.local import local_path
from icewright.manifest.data_file import DataFile
from icewright.scan import plan_files
from icewright.spec.types import StringType
from tests.commit.support import SCHEMA


def _files(table: Table, start: int, region: str = "eu") -> list[DataFile]:
    rows = [{"id": start + i, "ts": None, "region": region} for i in range(2)]
    return write_data_files(table.io, table.metadata, rows_to_arrow(SCHEMA, rows))


def _ids(table: Table) -> list[int]:
    import pyarrow.parquet as pq

    out: list[int] = []
    for task in plan_files(table.refresh()):
        out.extend(pq.read_table(local_path(task.file_path)).column("id").to_pylist())
    return sorted(out)


def _stale_handle(catalog: SqlCatalog) -> tuple[Table, list[DataFile]]:
    """A handle whose current snapshot another writer has expired since."""
    table = create_table(catalog, "db.t", SCHEMA)
    first = _files(table, 0)
    fast_append(table, first)
    stale = table.refresh()
    fast_append(stale, _files(stale, 10))
    fast_append(stale.refresh(), _files(stale, 20))
    time.sleep(0.002)
    expire_snapshots(stale.refresh(), older_than_ms=int(time.time() * 1000), retain_last=1)
    snapshot = stale.metadata.current_snapshot()
    assert snapshot is not None
    assert not Path(local_path(snapshot.manifest_list)).exists()  # really gone
    return stale, first


OPERATIONS: dict[str, tuple[Callable[[Table, list[DataFile]], Any], list[int]]] = {
    "fast append": (lambda t, _: fast_append(t, _files(t, 30)), [0, 1, 10, 11, 20, 21, 30, 31]),
    "merge append": (lambda t, _: append(t, _files(t, 30)), [0, 1, 10, 11, 20, 21, 30, 31]),
    "replace partitions": (
        lambda t, _: replace_partitions(t, _files(t, 30)),
        [30, 31],  # the table is unpartitioned: every row is replaced
    ),
    "delete files": (lambda t, first: delete_files(t, paths=first), [10, 11, 20, 21]),
    "schema update": (
        lambda t, _: update_schema(t).add_column("note", StringType()).commit(),
        [0, 1, 10, 11, 20, 21],
    ),
    "property update": (
        lambda t, _: UpdateProperties(t).set("owner", "etl").commit(),
        [0, 1, 10, 11, 20, 21],
    ),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_stale_handle_commits_after_expire(name: str, catalog: SqlCatalog) -> None:
    stale, first = _stale_handle(catalog)
    operation, expected = OPERATIONS[name]
    result = operation(stale, first)
    if hasattr(result, "committed"):
        assert result.committed
    assert _ids(stale) == expected


def test_rewrite_from_an_expired_start_is_a_validation_error(catalog: SqlCatalog) -> None:
    """A rewrite validates from the snapshot it read; with that snapshot expired the history
    since cannot be checked, so it fails clearly (as Iceberg Java's does) and changes
    nothing, instead of failing on a missing file."""
    stale, first = _stale_handle(catalog)
    before = stale.refresh().metadata_location
    with pytest.raises(ValidationError, match="snapshots in between expired"):
        rewrite_files(stale, first, _files(stale, 40))
    assert stale.refresh().metadata_location == before
    # Started from the current state, the same rewrite commits.
    rewrite_files(stale.refresh(), first, _files(stale, 40))
    assert _ids(stale) == [10, 11, 20, 21, 40, 41]


def test_missing_file_of_a_current_base_is_not_retried(catalog: SqlCatalog) -> None:
    """When the pointer did not move, a missing manifest list is the table's own fault:
    the error comes out at once (no retry can mend it)."""
    table = create_table(catalog, "db.t", SCHEMA)
    fast_append(table, _files(table, 0))
    table = table.refresh()
    snapshot = table.metadata.current_snapshot()
    assert snapshot is not None
    Path(local_path(snapshot.manifest_list)).unlink()
    with pytest.raises(NoSuchFile):
        fast_append(table, _files(table, 10))
