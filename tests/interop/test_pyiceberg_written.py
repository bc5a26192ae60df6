"""The harness on a table pyiceberg wrote: Iceberg Java and DuckDB must agree with pyiceberg.

pyiceberg 0.12 creates a partitioned table in a SQL catalog on SQLite and appends
two batches; ONE Iceberg Java batch then parses its metadata, reads its manifest
list and manifests (through the table and standalone), scans it (now and at the
first snapshot) and is handed two bad requests; DuckDB scans it too. Every
expectation comes from pyiceberg (an independent implementation) or from the
rows we appended. The same batch also parses the view-spec's example view
metadata (to keep the number of JVM starts small).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import IcebergJava, IcebergJavaError, Pending, sorted_rows

pytestmark = [pytest.mark.slow, pytest.mark.interop]

UTC = dt.UTC

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "category", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "local_ts", TimestampType()),
    NestedField(5, "amount", DecimalType(10, 2)),
    NestedField(6, "score", DoubleType()),
    NestedField(7, "flag", BooleanType()),
    NestedField(8, "day", DateType()),
    NestedField(9, "payload", BinaryType()),
    NestedField(10, "tags", ListType(11, StringType(), element_required=False)),
    NestedField(12, "attrs", MapType(13, StringType(), 14, StringType(), value_required=False)),
    NestedField(
        15,
        "point",
        StructType(NestedField(16, "x", DoubleType()), NestedField(17, "y", DoubleType())),
    ),
)

SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
    # pyiceberg 0.12 needs the optional pyiceberg-core package to write time or bucket
    # transforms, so both partition fields are identity (one string, one date).
    PartitionField(source_id=8, field_id=1001, transform=IdentityTransform(), name="day"),
)


def _row(i: int, category: str | None, day: int) -> dict[str, Any]:
    ts = dt.datetime(2024, 3, day, 10, i, 30, 123456, tzinfo=UTC)
    return {
        "id": i,
        "category": category,
        "ts": ts,
        "local_ts": ts.replace(tzinfo=None) + dt.timedelta(hours=2),
        "amount": Decimal(f"{i * 3}.{i:02d}"),
        "score": i / 4,
        "flag": i % 2 == 0,
        "day": ts.date(),
        "payload": bytes([i, 255 - i]),
        "tags": [f"t{i}", None] if i % 3 else [],
        "attrs": {"k": f"v{i}"} if i % 2 else None,
        "point": {"x": float(i), "y": -float(i)},
    }


FIRST = [_row(1, "books", 1), _row(2, "books", 2), _row(3, "games", 1)]
SECOND = [_row(4, None, 2), _row(5, "games", 3), _row(6, "books", 1)]
COLUMNS = tuple(f.name for f in SCHEMA.fields)


def _tuples(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted_rows([tuple(r[c] for c in COLUMNS) for r in rows])


# The first example metadata file of the view spec ("Appendix"/examples section of
# iceberg-view-spec.md), verbatim in content.
SPEC_VIEW_EXAMPLE: dict[str, Any] = {
    "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
    "format-version": 1,
    "location": "s3://bucket/warehouse/default.db/event_agg",
    "current-version-id": 1,
    "properties": {"comment": "Daily event counts"},
    "versions": [
        {
            "version-id": 1,
            "timestamp-ms": 1573518431292,
            "schema-id": 1,
            "default-catalog": "prod",
            "default-namespace": ["default"],
            "summary": {"engine-name": "Spark", "engine-version": "3.3.2"},
            "representations": [
                {
                    "type": "sql",
                    "sql": "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM events\nGROUP BY 2",
                    "dialect": "spark",
                }
            ],
        }
    ],
    "schemas": [
        {
            "schema-id": 1,
            "type": "struct",
            "fields": [
                {
                    "id": 1,
                    "name": "event_count",
                    "required": False,
                    "type": "int",
                    "doc": "Count of events",
                },
                {"id": 2, "name": "event_date", "required": False, "type": "date"},
            ],
        }
    ],
    "version-log": [{"timestamp-ms": 1573518431292, "version-id": 1}],
}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """A pyiceberg-written table with two append snapshots."""
    root = tmp_path_factory.mktemp("pyiceberg")
    catalog = SqlCatalog(
        "default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse"
    )
    catalog.create_namespace("db")
    tbl = catalog.create_table("db.items", schema=SCHEMA, partition_spec=SPEC)
    # create_table assigns fresh field ids, so the arrow schema comes from the table.
    arrow_schema = tbl.schema().as_arrow()
    tbl.append(pa.Table.from_pylist(FIRST, schema=arrow_schema))
    tbl.append(pa.Table.from_pylist(SECOND, schema=arrow_schema))
    return catalog.load_table("db.items")


@pytest.fixture(scope="module")
def java(
    iceberg_java: IcebergJava, table: Table, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Pending[Any]]:
    """Every Iceberg Java question of this module, asked in one subprocess."""
    view_file = tmp_path_factory.mktemp("view") / "00001-example.metadata.json"
    view_file.write_text(json.dumps(SPEC_VIEW_EXAMPLE), encoding="utf-8")
    meta = table.metadata
    current = table.current_snapshot()
    first = meta.snapshots[0]
    assert current is not None
    manifest = current.manifests(table.io)[0]
    location = table.metadata_location
    with iceberg_java.batch() as batch:
        answers: dict[str, Pending[Any]] = {
            "metadata": batch.parse_table_metadata(location),
            "missing": batch.parse_table_metadata(
                location.rsplit("/", 1)[0] + "/00099-missing.metadata.json"
            ),
            "not_a_view": batch.parse_view_metadata(location),
            "manifests": batch.table_manifests(location),
            "first_manifests": batch.table_manifests(location, first.snapshot_id),
            "manifest_list": batch.read_manifest_list(
                current.manifest_list,
                snapshot_id=current.snapshot_id,
                sequence_number=current.sequence_number or 0,
            ),
            "manifest": batch.read_manifest(
                manifest.manifest_path,
                snapshot_id=manifest.added_snapshot_id or 0,
                sequence_number=manifest.sequence_number,
                spec_id=manifest.partition_spec_id,
            ),
            "manifest_with_specs": batch.read_manifest(
                manifest.manifest_path,
                snapshot_id=manifest.added_snapshot_id or 0,
                sequence_number=manifest.sequence_number,
                spec_id=manifest.partition_spec_id,
                schema_json=json.loads(table.schema().model_dump_json()),
                specs_json=[json.loads(table.spec().model_dump_json())],
            ),
            "scan": batch.scan(location),
            "scan_first": batch.scan(location, snapshot_id=first.snapshot_id),
            "view": batch.parse_view_metadata(view_file),
        }
    return answers


def test_java_parses_pyiceberg_table_metadata(java: dict[str, Pending[Any]], table: Table) -> None:
    got = java["metadata"].value
    meta = table.metadata
    assert got["format_version"] == meta.format_version == 2
    assert got["uuid"] == str(meta.table_uuid)
    assert got["location"] == meta.location
    assert got["last_sequence_number"] == meta.last_sequence_number == 2
    assert got["last_column_id"] == meta.last_column_id == 17
    assert got["current_snapshot_id"] == meta.current_snapshot_id
    assert [
        (s["snapshot_id"], s["parent_id"], s["sequence_number"], s["manifest_list"], s["operation"])
        for s in got["snapshots"]
    ] == [
        (
            s.snapshot_id,
            s.parent_snapshot_id,
            s.sequence_number,
            s.manifest_list,
            s.summary.operation.value if s.summary else None,
        )
        for s in meta.snapshots
    ]
    assert got["snapshots"][1]["summary"]["added-records"] == "3"
    assert [(f["id"], f["name"], f["required"]) for f in got["schema"]["fields"]] == [
        (f.field_id, f.name, f.required) for f in table.schema().fields
    ]
    assert got["specs"][0]["fields"] == [
        {
            "name": f.name,
            "transform": str(f.transform),
            "source-id": f.source_id,
            "field-id": f.field_id,
        }
        for f in table.spec().fields
    ]
    assert [f["name"] for f in got["specs"][0]["fields"]] == ["category", "day"]
    assert got["refs"]["main"]["snapshot-id"] == meta.current_snapshot_id
    assert [e["snapshot_id"] for e in got["snapshot_log"]] == [
        e.snapshot_id for e in meta.snapshot_log
    ]
    assert [e["metadata_file"] for e in got["metadata_log"]] == [
        e.metadata_file for e in meta.metadata_log
    ]
    # Java re-serialises what it parsed: the identity fields survive the round trip.
    assert got["json"]["table-uuid"] == str(meta.table_uuid)
    assert got["json"]["current-snapshot-id"] == meta.current_snapshot_id


def _pyiceberg_entries(table: Table, snapshot_id: int | None = None) -> dict[str, Any]:
    snap = table.snapshot_by_id(snapshot_id) if snapshot_id else table.current_snapshot()
    assert snap is not None
    out = {}
    for manifest in snap.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
            out[entry.data_file.file_path] = entry
    return out


def test_java_reads_pyiceberg_manifests(java: dict[str, Pending[Any]], table: Table) -> None:
    got = java["manifests"].value
    current = table.current_snapshot()
    assert current is not None
    assert got["snapshot_id"] == current.snapshot_id
    assert got["manifest_list"] == current.manifest_list
    expected = _pyiceberg_entries(table)
    java_entries = {e["file_path"]: e for m in got["manifests"] for e in m["entries"]}
    assert set(java_entries) == set(expected)
    assert sum(e["record_count"] for e in java_entries.values()) == len(FIRST) + len(SECOND)
    for path, want in expected.items():
        entry = java_entries[path]
        data_file = want.data_file
        assert entry["status"] == want.status.name.lower()
        assert entry["snapshot_id"] == want.snapshot_id
        assert entry["data_sequence_number"] == want.sequence_number
        assert entry["file_sequence_number"] == want.file_sequence_number
        assert entry["file_format"] == data_file.file_format.name.lower()
        assert entry["record_count"] == data_file.record_count
        assert entry["file_size_in_bytes"] == data_file.file_size_in_bytes
        assert entry["partition"] == {
            "category": None if data_file.partition[0] is None else str(data_file.partition[0]),
            # Java prints a date partition value as its day number.
            "day": str(data_file.partition[1]),
        }
        assert entry["column_sizes"] == data_file.column_sizes
        assert entry["value_counts"] == data_file.value_counts
        assert entry["null_value_counts"] == data_file.null_value_counts
        assert entry["nan_value_counts"] == (data_file.nan_value_counts or {})
        assert entry["lower_bounds"] == data_file.lower_bounds
        assert entry["upper_bounds"] == data_file.upper_bounds
        assert entry["split_offsets"] == data_file.split_offsets
    # The first snapshot's view holds only the first append's files.
    first = java["first_manifests"].value
    first_paths = {e["file_path"] for m in first["manifests"] for e in m["entries"]}
    assert first_paths == set(_pyiceberg_entries(table, table.metadata.snapshots[0].snapshot_id))


def test_java_reads_standalone_manifest_list_and_manifest(
    java: dict[str, Pending[Any]], table: Table
) -> None:
    current = table.current_snapshot()
    assert current is not None
    listed = java["manifest_list"].value
    expected = current.manifests(table.io)
    assert [m["path"] for m in listed] == [m.manifest_path for m in expected]
    for got, want in zip(listed, expected, strict=True):
        assert got["length"] == want.manifest_length
        assert got["sequence_number"] == want.sequence_number
        assert got["min_sequence_number"] == want.min_sequence_number
        assert got["added_snapshot_id"] == want.added_snapshot_id
        assert got["added_files_count"] == want.added_files_count
        assert got["added_rows_count"] == want.added_rows_count
        assert [
            (p["contains_null"], p["lower_bound"], p["upper_bound"]) for p in got["partitions"]
        ] == [(p.contains_null, p.lower_bound, p.upper_bound) for p in want.partitions or []]
    # The same manifest read on its own (spec from its Avro header) gives the same entries
    # as read through the table.
    alone = java["manifest"].value
    through_table = next(
        m for m in java["manifests"].value["manifests"] if m["path"] == expected[0].manifest_path
    )
    assert alone["entries"] == through_table["entries"]
    # ... and so does reading it with the specs bound to the table schema (pyiceberg's JSON).
    assert java["manifest_with_specs"].value["entries"] == through_table["entries"]
    assert alone["manifest"]["added_snapshot_id"] == expected[0].added_snapshot_id


def test_java_scans_pyiceberg_rows(java: dict[str, Pending[Any]]) -> None:
    scan = java["scan"].value
    assert scan.columns == COLUMNS
    assert scan.count == 6
    assert scan.rows == _tuples(FIRST + SECOND)
    assert java["scan_first"].value.rows == _tuples(FIRST)


def test_duckdb_scans_pyiceberg_rows(duckdb_iceberg: Any, table: Table) -> None:
    columns, rows = duckdb_scan_columns(table.metadata_location, connection=duckdb_iceberg)
    assert columns == COLUMNS
    assert rows == _tuples(FIRST + SECOND)


def test_java_errors_come_back_as_messages(java: dict[str, Pending[Any]]) -> None:
    with pytest.raises(IcebergJavaError) as missing:
        _ = java["missing"].value
    assert missing.value.java_class is not None
    assert missing.value.java_class == "org.apache.iceberg.exceptions.NotFoundException"
    assert "00099-missing.metadata.json" in missing.value.message
    with pytest.raises(IcebergJavaError, match="view-uuid"):
        _ = java["not_a_view"].value
    # The failures did not stop the batch: the requests after them were answered.
    assert java["metadata"].ok and java["scan_first"].ok


def test_java_parses_spec_example_view(java: dict[str, Pending[Any]]) -> None:
    got = java["view"].value
    assert got["uuid"] == SPEC_VIEW_EXAMPLE["view-uuid"]
    assert got["format_version"] == 1
    assert got["location"] == SPEC_VIEW_EXAMPLE["location"]
    assert got["current_version_id"] == 1
    assert got["current_schema_id"] == 1
    assert got["properties"] == {"comment": "Daily event counts"}
    assert [f["name"] for f in got["schemas"][0]["fields"]] == ["event_count", "event_date"]
    (version,) = got["versions"]
    assert version["representations"] == SPEC_VIEW_EXAMPLE["versions"][0]["representations"]
    assert version["default-namespace"] == ["default"]
    assert got["version_log"] == [{"timestamp_ms": 1573518431292, "version_id": 1}]
    assert got["json"]["view-uuid"] == SPEC_VIEW_EXAMPLE["view-uuid"]
