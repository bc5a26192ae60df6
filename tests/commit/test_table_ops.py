"""Create, create-or-replace (REPLACE TABLE), register and drop on a real SQLite catalog.

REPLACE TABLE expectations follow Iceberg Java's ``TableMetadata.buildReplacement``
(same uuid and history, column ids reused by name, main removed); pyiceberg 0.12 and
Iceberg Java read the replaced table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.commit.refs import ManageSnapshots
from icewright.commit.table_ops import (
    ReplaceTable,
    create_or_replace_table,
    create_table,
    drop_table,
    register_table,
)
from icewright.errors import (
    NoSuchTable,
    TableAlreadyExists,
    UnsupportedFormatVersion,
    ValidationError,
)
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)
from tests.commit.support import SCHEMA

UTC = dt.UTC

NEW_SCHEMA = Schema(
    NestedField(10, "region", StringType()),
    NestedField(11, "id", LongType(), required=True),
    NestedField(12, "amount", DoubleType()),
    NestedField(13, "tags", ListType(14, StructType(NestedField(15, "k", StringType())), False)),
    identifier_field_ids=(11,),
)


def files(table: Table, ids: range, region: str = "eu") -> list[DataFile]:
    ts = dt.datetime(2026, 3, 1, tzinfo=UTC)
    data = [{"id": i, "ts": ts, "region": region} for i in ids]
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    cat = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    yield cat
    cat.engine.dispose()


def test_create_table_with_tuples_and_if_not_exists(catalog: SqlCatalog, pyi: Any) -> None:
    table = create_table(
        catalog,
        "db.t",
        SCHEMA,
        [("day", "ts"), ("bucket", "id", 4)],
        ["region", ("ts", "desc")],
        properties={"owner": "etl"},
        format_version=1,
    )
    m = table.metadata
    assert m.format_version == 1
    assert [(f.name, str(f.transform), f.field_id) for f in m.spec().fields] == [
        ("ts_day", "day", 1000),
        ("id_bucket", "bucket[4]", 1001),
    ]
    assert [(f.source_id, str(f.direction)) for f in m.sort_order().fields] == [
        (3, "asc"),
        (2, "desc"),
    ]
    loaded = pyi.load_table("db.t")
    assert loaded.format_version == 1 and loaded.properties["owner"] == "etl"
    with pytest.raises(TableAlreadyExists):
        create_table(catalog, "db.t", SCHEMA)
    same = create_table(catalog, "db.t", SCHEMA, if_not_exists=True)
    assert same.metadata_location == table.metadata_location
    with pytest.raises(UnsupportedFormatVersion):
        create_table(catalog, "db.v3", SCHEMA, format_version=3)


def test_create_or_replace_creates_when_missing(catalog: SqlCatalog) -> None:
    table = create_or_replace_table(catalog, "db.new", SCHEMA, [("identity", "region")])
    assert table.metadata.format_version == 2
    assert table.metadata.spec().fields[0].name == "region"


def test_replace_keeps_uuid_and_history_and_reuses_ids(catalog: SqlCatalog, pyi: Any) -> None:
    table = create_table(
        catalog, "db.t", SCHEMA, [("identity", "region"), ("day", "ts")], properties={"a": "1"}
    )
    first = fast_append(table, files(table, range(3)))
    tagged = ManageSnapshots(first.table).create_tag("before", first.snapshot_id).commit().table
    replaced = create_or_replace_table(
        catalog,
        "db.t",
        NEW_SCHEMA,
        [("identity", "region"), ("bucket", "id", 8)],
        [("amount", "desc")],
        properties={"b": "2"},
    )
    m = replaced.metadata
    old = tagged.metadata
    assert m.table_uuid == old.table_uuid
    assert m.snapshots == old.snapshots and m.current_snapshot_id is None
    assert "main" not in m.refs and m.refs["before"].snapshot_id == first.snapshot_id
    assert m.snapshot_log == old.snapshot_log
    assert len(m.metadata_log) == len(old.metadata_log) + 1
    # Columns named as before keep their ids; new ones continue from last-column-id (3),
    # a struct's own fields numbered before nested ones (Java's assignFreshIds order).
    schema = m.schema()
    assert m.current_schema_id == 1
    assert [(f.field_id, f.name) for f in schema.fields] == [
        (3, "region"),
        (1, "id"),
        (4, "amount"),
        (5, "tags"),
    ]
    assert schema.find_field("tags.element").field_id == 6
    assert schema.find_field("tags.element.k").field_id == 7
    assert schema.identifier_field_ids == (1,)
    assert m.last_column_id == 7
    # identity(region) keeps partition field id 1000; bucket[8](id) is new: 1002.
    assert m.default_spec_id == 1
    assert [(f.source_id, f.field_id, f.name) for f in m.spec().fields] == [
        (3, 1000, "region"),
        (1, 1002, "id_bucket"),
    ]
    assert m.last_partition_id == 1002
    assert [(f.source_id, str(f.direction)) for f in m.sort_order().fields] == [(4, "desc")]
    assert dict(m.properties) == {"a": "1", "b": "2"}
    loaded = pyi.load_table("db.t")
    assert loaded.current_snapshot() is None
    assert loaded.scan().to_arrow().num_rows == 0
    # History stays readable: the old snapshot, through its own schema.
    before = loaded.scan(snapshot_id=first.snapshot_id).to_arrow()
    assert sorted(before.column("id").to_pylist()) == [0, 1, 2]
    # The replaced table takes new data.
    after = fast_append(
        replaced,
        write_data_files(
            replaced.io,
            replaced.metadata,
            rows_to_arrow(schema, [{"region": "eu", "id": 9, "amount": 1.5, "tags": []}]),
        ),
    )
    assert after.snapshot_id is not None and after.sequence_number == 2
    assert pyi.load_table("db.t").scan().to_arrow().column("id").to_pylist() == [9]


def test_replace_with_the_same_definition_reuses_schema_spec_and_order(catalog: SqlCatalog) -> None:
    table = create_table(catalog, "db.t", SCHEMA, [("identity", "region")], ["id"])
    replaced = create_or_replace_table(catalog, "db.t", SCHEMA, [("identity", "region")], ["id"])
    m = replaced.metadata
    assert m.current_schema_id == 0 and len(m.schemas) == 1
    assert m.default_spec_id == 0 and len(m.partition_specs) == 1
    assert m.default_sort_order_id == 1 and len(m.sort_orders) == 1
    assert m.table_uuid == table.metadata.table_uuid


def test_v1_replace_keeps_positional_partition_ids(catalog: SqlCatalog, pyi: Any) -> None:
    create_table(catalog, "db.t", SCHEMA, [("identity", "region"), ("day", "ts")], format_version=1)
    replaced = create_or_replace_table(
        catalog, "db.t", SCHEMA, [("bucket", "id", 2), ("day", "ts")]
    )
    m = replaced.metadata
    assert m.format_version == 1
    # Java's v1 rule: the old fields keep their places (region becomes void), new ones follow.
    assert [(f.name, str(f.transform), f.field_id) for f in m.spec().fields] == [
        ("region", "void", 1000),
        ("ts_day", "day", 1001),
        ("id_bucket", "bucket[2]", 1002),
    ]
    loaded = pyi.load_table("db.t")
    assert [str(f.transform) for f in loaded.spec().fields] == ["void", "day", "bucket[2]"]
    upgraded = create_or_replace_table(catalog, "db.t", SCHEMA, properties={"format-version": "2"})
    assert upgraded.metadata.format_version == 2
    with pytest.raises(ValidationError, match="downgrade"):
        create_or_replace_table(catalog, "db.t", SCHEMA, format_version=1)


def test_replace_retries_on_the_refreshed_table(catalog: SqlCatalog) -> None:
    table = create_table(catalog, "db.t", SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    stale = table
    appended = fast_append(table, files(table, range(2)))
    result = ReplaceTable(stale, NEW_SCHEMA).commit()
    m = result.table.refresh().metadata
    assert result.committed
    assert [s.snapshot_id for s in m.snapshots] == [appended.snapshot_id]  # kept, not lost
    assert m.current_snapshot_id is None and m.schema().find_field("amount").field_id == 4


def test_register_and_drop(catalog: SqlCatalog, pyi: Any) -> None:
    table = create_table(catalog, "db.t", SCHEMA)
    batch = files(table, range(4))
    result = fast_append(table, batch)
    drop_table(catalog, "db.t")
    assert not catalog.table_exists("db.t")
    assert result.table.io.exists(result.metadata_location)  # no purge: files stay
    registered = register_table(catalog, "db.again", result.metadata_location)
    assert registered.metadata.current_snapshot_id == result.snapshot_id
    assert sorted(pyi.load_table("db.again").scan().to_arrow().column("id").to_pylist()) == [
        0,
        1,
        2,
        3,
    ]
    snap = registered.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    drop_table(catalog, "db.again", purge=True)
    assert not registered.io.exists(snap.manifest_list)
    assert not registered.io.exists(batch[0].file_path)
    assert not registered.io.exists(result.metadata_location)
    with pytest.raises(NoSuchTable):
        drop_table(catalog, "db.again")


def test_schema_type_needing_v3_is_refused_on_replace(catalog: SqlCatalog) -> None:
    from icewright.spec.types import TimestampNsType

    create_table(catalog, "db.t", SCHEMA)
    bad = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestampNsType()))
    with pytest.raises(ValidationError, match="needs table format version 3"):
        create_or_replace_table(catalog, "db.t", bad)
    ok = Schema(NestedField(1, "n", IntegerType()), NestedField(2, "ts", TimestamptzType()))
    assert create_or_replace_table(catalog, "db.t", ok).metadata.schema().fields[1].field_id == 2


@pytest.mark.interop
def test_iceberg_java_reads_the_replaced_table(
    catalog: SqlCatalog,
    iceberg_java: Any,
) -> None:
    table = create_table(catalog, "db.t", SCHEMA, [("identity", "region")])
    first = fast_append(table, files(table, range(3)))
    replaced = create_or_replace_table(catalog, "db.t", NEW_SCHEMA, [("bucket", "id", 8)])
    with iceberg_java.batch() as batch:
        meta = batch.parse_table_metadata(replaced.metadata_location)
        old = batch.scan(replaced.metadata_location, snapshot_id=first.snapshot_id)
    parsed = meta.value
    assert parsed["uuid"] == str(table.metadata.table_uuid)
    assert parsed["current_snapshot_id"] in (None, -1)
    assert parsed["last_column_id"] == 7 and parsed["current_schema_id"] == 1
    assert old.value.count == 3
