"""Transactions: several updates in one metadata commit, on a real SQLite catalog."""

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
from icewright.commit.spec_update import UpdatePartitionSpec
from icewright.commit.transaction import Transaction
from icewright.errors import CommitFailed, ValidationError
from icewright.manifest.data_file import DataFile
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import StringType

UTC = dt.UTC


def rows(ids: range, **extra: Any) -> list[dict[str, Any]]:
    ts = dt.datetime(2026, 3, 1, tzinfo=UTC)
    return [{"id": i, "ts": ts, "region": "eu", **extra} for i in ids]


def files(
    table: Table, data: list[dict[str, Any]], metadata: TableMetadata | None = None
) -> list[DataFile]:
    m = metadata or table.metadata
    return write_data_files(table.io, m, rows_to_arrow(m.schema(), data))


def metadata_files(table: Table) -> set[str]:
    return {f.path for f in table.io.list_prefix(f"{table.location}/metadata")}


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    cat = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    yield cat
    cat.engine.dispose()


def test_properties_and_append_in_one_commit(make_table: Callable[..., Table], pyi: Any) -> None:
    table = make_table()
    tx = Transaction(table)
    tx.update_properties().set("owner", "etl")
    append = tx.append(files(table, rows(range(3))))
    result = tx.commit()
    assert result.committed and result.snapshot_id == append.snapshot_id
    m = result.table.refresh().metadata
    assert m.properties["owner"] == "etl"
    assert len(m.snapshots) == 1
    assert len(m.metadata_log) == 1  # one commit: one new metadata file
    loaded = pyi.load_table("db.orders")
    assert loaded.properties["owner"] == "etl"
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]


def test_add_a_column_and_append_files_that_use_it(
    make_table: Callable[..., Table], pyi: Any
) -> None:
    table = make_table()
    tx = Transaction(table)
    tx.update_schema().add_column("note", StringType())
    assert tx.metadata.schema().find_field("note").field_id == 4
    tx.append(files(table, rows(range(2), note="hi"), tx.metadata))
    result = tx.commit()
    m = result.table.metadata
    snap = m.current_snapshot()
    assert snap is not None and snap.schema_id == m.current_schema_id == 1
    got = pyi.load_table("db.orders").scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["note"]) for r in got) == [(0, "hi"), (1, "hi")]


def test_evolve_the_spec_and_append_with_it(make_table: Callable[..., Table], pyi: Any) -> None:
    table = make_table()
    tx = Transaction(table)
    tx.update_spec().remove_field("region").add_field("id", "bucket[2]")
    new_files = files(table, rows(range(4)), tx.metadata)
    assert {f.spec_id for f in new_files} == {1}
    tx.append(new_files)
    result = tx.commit()
    assert result.table.metadata.default_spec_id == 1
    assert sorted(pyi.load_table("db.orders").scan().to_arrow().column("id").to_pylist()) == [
        0,
        1,
        2,
        3,
    ]


def test_two_appends_log_only_the_visible_snapshot(make_table: Callable[..., Table]) -> None:
    table = make_table()
    base = fast_append(table, files(table, rows(range(1)))).table
    tx = Transaction(base)
    first = tx.append(files(base, rows(range(10, 11))))
    second = tx.append(files(base, rows(range(20, 21))))
    result = tx.commit()
    m = result.table.metadata
    assert result.snapshot_id == second.snapshot_id
    one = m.snapshot_by_id(first.snapshot_id)
    two = m.snapshot_by_id(second.snapshot_id)
    assert one is not None and two is not None
    assert two.parent_snapshot_id == first.snapshot_id
    assert two.sequence_number == one.sequence_number + 1
    # Java drops the intermediate snapshot from the snapshot log: it was never visible.
    assert [e.snapshot_id for e in m.snapshot_log] == [
        base.metadata.current_snapshot_id,
        two.snapshot_id,
    ]
    assert two.summary is not None and two.summary["total-records"] == "3"


def test_transaction_reapplies_on_a_refreshed_table(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    stale = table
    other = fast_append(table, files(table, rows(range(1))))
    UpdateProperties(table).set("k", "theirs").commit()
    tx = Transaction(stale)
    tx.update_properties().set("k", "mine")
    mine = tx.append(files(stale, rows(range(5, 7))))
    result = tx.commit()
    m = result.table.refresh().metadata
    assert m.properties["k"] == "mine"
    snap = m.snapshot_by_id(mine.snapshot_id)
    assert snap is not None and snap.parent_snapshot_id == other.snapshot_id
    assert snap.summary is not None and snap.summary["total-records"] == "3"


def test_a_failing_update_commits_nothing_and_cleans_up(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    stale = table
    UpdatePartitionSpec(table).add_field("id", "bucket[4]").commit()
    before = metadata_files(table)
    tx = Transaction(stale)
    tx.append(files(stale, rows(range(3))))
    tx.update_spec().remove_field("region")
    with pytest.raises(ValidationError, match="default partition spec changed"):
        tx.commit()
    after = table.refresh()
    assert after.metadata.snapshots == ()
    # The append's manifest and manifest lists are deleted (a definite failure).
    assert metadata_files(after) == before


def test_context_manager_commits_on_success_only(make_table: Callable[..., Table]) -> None:
    table = make_table()
    with Transaction(table) as tx:
        tx.set_properties({"a": "1", "b": "2"})
    assert tx.result is not None and tx.result.committed
    assert dict(table.refresh().metadata.properties) == {"a": "1", "b": "2"}
    location = table.refresh().metadata_location
    with pytest.raises(RuntimeError), Transaction(table.refresh()) as tx2:
        tx2.set_properties({"c": "3"})
        raise RuntimeError("abort")
    assert tx2.result is None
    assert table.refresh().metadata_location == location


def test_misuse_is_refused(make_table: Callable[..., Table]) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match="no updates"):
        Transaction(table).commit()
    tx = Transaction(table)
    tx.set_location(table.location)
    tx.commit()
    with pytest.raises(ValidationError, match="already committed"):
        tx.commit()
    with pytest.raises(ValidationError, match="already committed"):
        tx.update_properties()
    with pytest.raises(ValidationError, match="expected a PendingUpdate"):
        Transaction(table).add("nope")  # type: ignore[type-var]


def test_generic_updates_and_refs_in_one_transaction(make_table: Callable[..., Table]) -> None:
    table = make_table()
    tx = Transaction(table)
    append = tx.add(FastAppend(table, files(table, rows(range(2)))))
    tx.manage_snapshots().create_tag("first").create_branch("dev")
    tx.replace_sort_order().desc("id")
    tx.upgrade_format_version(2)
    result = tx.commit()
    m = result.table.metadata
    # The tag and branch see the append made earlier in the same transaction.
    assert m.refs["first"].snapshot_id == append.snapshot_id == m.refs["dev"].snapshot_id
    assert m.default_sort_order_id == 1


def test_lost_races_are_retried_inside_one_loop(tmp_path: Path) -> None:
    from tests.commit.support import SCHEMA

    class Flaky(SqlCatalog):
        fail_next = 0

        def commit_table(self, identifier: Any, base: str, new: TableMetadata) -> str:
            if self.fail_next:
                self.fail_next -= 1
                raise CommitFailed("injected")
            return super().commit_table(identifier, base, new)

    cat = Flaky("test", uri=f"sqlite:///{tmp_path}/f.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    table = cat.create_table("db.t", SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    cat.fail_next = 2
    tx = Transaction(table)
    tx.set_properties({"x": "1"})
    tx.append(files(table, rows(range(2))))
    result = tx.commit()
    m = result.table.refresh().metadata
    assert m.properties["x"] == "1" and len(m.snapshots) == 1
    lists = [p for p in metadata_files(result.table) if "/snap-" in p]
    assert lists == [m.snapshots[0].manifest_list]  # losing attempts' lists deleted
