"""delete_file_use: which live data files each live delete file applies to, and which
delete files dangle (apply to none), by the spec's scope and sequence number rules."""

from __future__ import annotations

from icewright.catalog import SqlCatalog, Table
from icewright.commit import FastAppend, RowDelta, delete_files
from icewright.scan import TableScan
from icewright.scan.delete_files import DeleteFileUse, delete_file_use, live_delete_files
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import (
    SCHEMA,
    equality_delete_file,
    one_file,
    position_delete_file,
    rows,
)


def _use(table: Table) -> DeleteFileUse:
    snapshot = table.metadata.current_snapshot()
    return delete_file_use(TableScan.of(table).iter_tasks(), live_delete_files(table.io, snapshot))


def _table(catalog: SqlCatalog) -> Table:
    spec = build_partition_spec(SCHEMA, [("identity", "region")])
    return catalog.create_table("db.t", SCHEMA, spec)


def test_targets_and_dangling_by_scope_and_sequence_number(catalog: SqlCatalog) -> None:
    table = _table(catalog)
    old_eu = one_file(table, rows(3, region="eu"))
    us = one_file(table, rows(2, region="us", start=10))
    table = FastAppend(table, [old_eu, us]).commit().table
    pos = position_delete_file(table, old_eu, [0])
    eq = equality_delete_file(table, us, [10])
    table = RowDelta(table).add_deletes(pos).add_deletes(eq).commit().table
    new_eu = one_file(table, rows(2, region="eu", start=20))
    table = FastAppend(table, [new_eu]).commit().table

    use = _use(table)
    assert set(use.deletes) == {pos.file_path, eq.file_path}
    assert use.targets == {pos.file_path: {old_eu.file_path}, eq.file_path: {us.file_path}}
    assert {t.file_path for t in use.tasks} == {old_eu.file_path, us.file_path}
    assert use.dangling() == []
    # once the files they apply to are gone, they dangle (the newer eu file is not theirs)
    assert {d.file_path for d in use.dangling([old_eu.file_path, us.file_path])} == {
        pos.file_path,
        eq.file_path,
    }
    assert [p.file_path for p in use.position_delete_files()] == [pos.file_path]

    table = delete_files(table, paths=[us]).table
    assert [d.file_path for d in _use(table).dangling()] == [eq.file_path]


def test_no_delete_files_no_use(catalog: SqlCatalog) -> None:
    table = _table(catalog)
    table = FastAppend(table, [one_file(table, rows(2))]).commit().table
    assert live_delete_files(table.io, table.metadata.current_snapshot()) == []
    assert _use(table).dangling() == []
