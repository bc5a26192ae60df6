"""Interop with pyiceberg 0.12's ``SqlCatalog`` through one SQLite database, both ways."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icewright.catalog import Identifier, SqlCatalog
from icewright.spec.partitioning import build_partition_spec
from tests.catalog.helpers import SCHEMA, changed, view_metadata

pytestmark = pytest.mark.interop

ROWS = pa.table(
    {"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]},
    schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())]),
)


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[SqlCatalog, Any]]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    uri = f"sqlite:///{tmp_path}/catalog.db"
    ours = SqlCatalog("shared", uri, str(tmp_path / "wh"))
    theirs = PyIcebergSqlCatalog("shared", uri=uri, warehouse=f"file://{tmp_path}/wh")
    yield ours, theirs
    ours.close()
    theirs.engine.dispose()


def test_icewright_table_opens_in_pyiceberg(both: tuple[SqlCatalog, Any]) -> None:
    ours, theirs = both
    ours.create_namespace("db", {"owner": "alice"})
    spec = build_partition_spec(SCHEMA, [("identity", "name")])
    table = ours.create_table("db.t", SCHEMA, partition_spec=spec, properties={"k": "v"})

    assert ("db",) in theirs.list_namespaces()
    assert theirs.load_namespace_properties("db")["owner"] == "alice"
    assert theirs.list_tables("db") == [("db", "t")]
    loaded = theirs.load_table("db.t")
    assert loaded.metadata_location == table.metadata_location
    assert str(loaded.metadata.table_uuid) == str(table.metadata.table_uuid)
    schema = loaded.schema()
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in schema.fields] == [
        (1, "id", "long", True),
        (2, "name", "string", False),
    ]
    assert schema.identifier_field_ids == [1]
    assert [(f.source_id, str(f.transform)) for f in loaded.spec().fields] == [(2, "identity")]
    assert loaded.properties["k"] == "v"
    assert loaded.current_snapshot() is None

    # A commit made by icewright is what pyiceberg sees next.
    new = ours.commit_table("db.t", table.metadata_location, changed(table.metadata, k="w"))
    again = theirs.load_table("db.t")
    assert again.metadata_location == new
    assert again.properties["k"] == "w"
    assert [e.metadata_file for e in again.metadata.metadata_log] == [table.metadata_location]


def test_pyiceberg_writes_icewright_reads_and_commits(both: tuple[SqlCatalog, Any]) -> None:
    ours, theirs = both
    ours.create_namespace("db")
    ours.create_table("db.t", SCHEMA)
    theirs.load_table("db.t").append(ROWS)

    table = ours.load_table("db.t")
    snapshot = table.metadata.current_snapshot()
    assert snapshot is not None
    assert table.metadata_location == theirs.load_table("db.t").metadata_location
    assert snapshot.summary is not None
    assert snapshot.summary["added-records"] == "3"

    new = ours.commit_table("db.t", table.metadata_location, changed(table.metadata, x="1"))
    reloaded = theirs.load_table("db.t")
    assert reloaded.metadata_location == new
    current = reloaded.current_snapshot()
    assert current is not None
    assert current.snapshot_id == snapshot.snapshot_id
    assert sorted(reloaded.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]


def test_pyiceberg_table_opens_in_icewright(both: tuple[SqlCatalog, Any]) -> None:
    ours, theirs = both
    theirs.create_namespace("ns", {"team": "data"})
    created = theirs.create_table("ns.p", schema=ROWS.schema)
    created.append(ROWS)

    assert ours.list_namespaces() == [("ns",)]
    assert ours.load_namespace_properties("ns") == {"team": "data"}
    assert ours.list_tables("ns") == [Identifier(("ns",), "p")]
    table = ours.load_table("ns.p")
    theirs_now = theirs.load_table("ns.p")
    assert table.metadata_location == theirs_now.metadata_location
    assert [(f.field_id, f.name) for f in table.metadata.schema().fields] == [
        (1, "id"),
        (2, "name"),
    ]
    snapshot = table.metadata.current_snapshot()
    current = theirs_now.current_snapshot()
    assert snapshot is not None and current is not None
    assert snapshot.snapshot_id == current.snapshot_id
    # pyiceberg appends after an icewright commit, building on it.
    new = ours.commit_table("ns.p", table.metadata_location, changed(table.metadata, y="2"))
    theirs.load_table("ns.p").append(ROWS)
    assert ours.load_table("ns.p").metadata.metadata_log[-1].metadata_file == new


def test_views_stay_out_of_pyiceberg_table_listing(both: tuple[SqlCatalog, Any]) -> None:
    from pyiceberg.exceptions import NoSuchTableError

    ours, theirs = both
    ours.create_namespace("db")
    ours.create_view("db.v", view_metadata(ours.default_table_location("db.v"), "SELECT 1"))
    assert theirs.list_tables("db") == []
    with pytest.raises(NoSuchTableError):
        theirs.load_table("db.v")


def test_purge_deletes_data_written_by_pyiceberg(both: tuple[SqlCatalog, Any]) -> None:
    ours, theirs = both
    ours.create_namespace("db")
    table = ours.create_table("db.t", SCHEMA)
    theirs.load_table("db.t").append(ROWS)
    theirs.load_table("db.t").append(ROWS)
    files = [p for p in Path(table.location).rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    assert any(p.suffix == ".avro" for p in files)
    ours.drop_table("db.t", purge=True)
    assert [p for p in Path(table.location).rglob("*") if p.is_file()] == []
