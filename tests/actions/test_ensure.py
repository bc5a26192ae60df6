"""``ensure_table`` and ``table_health``: the actions behind declarative assets."""

from __future__ import annotations

import pyarrow as pa
import pytest

from icewright.actions import ensure_table, table_health
from icewright.catalog import SqlCatalog
from icewright.commit import append
from icewright.errors import ValidationError
from icewright.text.declaration import parse_schema


def _write(catalog: SqlCatalog, rows: int) -> None:
    from icewright.arrow import write_data_files

    table = catalog.load_table("db.t")
    data = pa.table({"id": pa.array(range(rows), pa.int64())})
    append(table, write_data_files(table.io, table.metadata, data))


def test_ensure_creates_then_evolves_then_changes_nothing(catalog: SqlCatalog) -> None:
    first = ensure_table("db.t", parse_schema("id long not null, ts timestamptz"), catalog=catalog)
    assert first.created and first.committed and first.changes == ()

    wider = parse_schema("id long not null, ts timestamptz, region string, score float")
    evolved = ensure_table(
        "db.t",
        wider,
        catalog=catalog,
        partition_by=[("day", "ts")],
        sort_by=["id"],
        properties={"write.target-file-size-bytes": "1048576"},
    )
    assert not evolved.created
    assert evolved.changes == ("schema", "partitioning", "sort-order", "properties")
    metadata = catalog.load_table("db.t").metadata
    assert [f.name for f in metadata.schema().fields] == ["id", "ts", "region", "score"]
    assert metadata.schema().find_field("region").required is False

    again = ensure_table(
        "db.t",
        wider,
        catalog=catalog,
        partition_by=[("day", "ts")],
        sort_by=["id"],
        properties={"write.target-file-size-bytes": "1048576"},
    )
    assert again.changes == () and not again.committed
    assert catalog.load_table("db.t").metadata_location == evolved.metadata_location

    # a promotion widens; dropping a column from the declaration keeps it
    promoted = ensure_table("db.t", parse_schema("id long not null, score double"), catalog=catalog)
    assert promoted.changes == ("schema", "partitioning", "sort-order")
    metadata = catalog.load_table("db.t").metadata
    assert str(metadata.schema().find_field("score").field_type) == "double"
    assert [f.name for f in metadata.schema().fields] == ["id", "ts", "region", "score"]
    assert metadata.spec().fields == () and metadata.sort_order().fields == ()


def test_ensure_refuses_an_incompatible_change(catalog: SqlCatalog) -> None:
    ensure_table("db.t", parse_schema("id long not null, name string"), catalog=catalog)
    before = catalog.load_table("db.t").metadata_location
    with pytest.raises(ValidationError):
        ensure_table("db.t", parse_schema("id long not null, name int"), catalog=catalog)
    assert catalog.load_table("db.t").metadata_location == before


def test_ensure_creates_missing_namespaces(catalog: SqlCatalog) -> None:
    result = ensure_table("lake.raw.t", parse_schema("id long"), catalog=catalog)
    assert result.created and catalog.namespace_exists(("lake", "raw"))


def test_table_health(catalog: SqlCatalog) -> None:
    ensure_table("db.t", parse_schema("id long not null"), catalog=catalog)
    empty = table_health("db.t", catalog=catalog)
    assert empty.snapshot_id is None and empty.snapshot_age_seconds is None
    assert empty.small_file_share == 0.0 and empty.record_change is None
    _write(catalog, 100)
    _write(catalog, 50)
    health = table_health("db.t", catalog=catalog, small_file_bytes=1)
    assert health.snapshot_count == 2 and health.data_files == 2
    assert health.small_files == 0 and health.small_file_share == 0.0
    assert (health.total_records, health.previous_records) == (150, 100)
    assert health.record_change == 0.5
    assert 0 <= health.snapshot_age_seconds < 60
    assert table_health("db.t", catalog=catalog).small_file_share == 1.0
