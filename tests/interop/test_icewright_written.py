"""What icewright writes, read by three independent implementations.

icewright creates tables in a SQL catalog on SQLite (v1 and v2; every primitive
type; every partition transform) and fills them with fast appends of Parquet files
written in-process with field ids and metrics; it also creates a view with two
versions. Then:

* pyiceberg 0.12 opens the tables through the same SQLite catalog and scans them;
* DuckDB's Iceberg extension scans each table's metadata file, offline;
* Iceberg Java 1.10.2 parses EVERY table metadata, view metadata and manifest file
  of the corpus with its own parsers (``TableMetadataParser``, ``ViewMetadataParser``,
  ``ManifestFiles.read``), agrees on what they hold, and scans the tables.

Every expectation is the rows we appended or what icewright itself recorded.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table, View
from icewright.commit.append import fast_append
from icewright.manifest.avro_codec import open_container
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icewright.spec.view_metadata import (
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)
from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import IcebergJava

pytestmark = [pytest.mark.slow, pytest.mark.interop]

UTC = dt.UTC
CATALOG_NAME = "corpus"

ALL_TYPES = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "flag", BooleanType()),
    NestedField(3, "small", IntegerType()),
    NestedField(4, "ratio", FloatType()),
    NestedField(5, "score", DoubleType()),
    NestedField(6, "amount", DecimalType(12, 3)),
    NestedField(7, "day", DateType()),
    NestedField(8, "clock", TimeType()),
    NestedField(9, "local_ts", TimestampType()),
    NestedField(10, "ts", TimestamptzType()),
    NestedField(11, "name", StringType()),
    NestedField(12, "uid", UUIDType()),
    NestedField(13, "code", FixedType(4)),
    NestedField(14, "payload", BinaryType()),
)

# Spark (and so Iceberg Java's Spark scan) has no time type: most tables leave it out.
NO_TIME = Schema(*(f for f in ALL_TYPES.fields if f.name != "clock"))

# (table name, format version, partition fields); tables named *_all_types keep "clock"
TABLES: list[tuple[str, int, list[tuple[Any, ...]]]] = [
    (
        "v2_spread",
        2,
        [("day", "ts"), ("identity", "name"), ("bucket", "id", 8), ("truncate", "small", 10)],
    ),
    ("v2_time", 2, [("year", "day"), ("month", "local_ts"), ("hour", "ts")]),
    (
        "v2_more",
        2,
        [
            ("bucket", "uid", 4),
            ("truncate", "name", 3),
            ("identity", "day"),
            ("bucket", "amount", 5),
        ],
    ),
    ("v1_all_types", 1, []),
    ("v2_all_types", 2, [("identity", "clock")]),
    ("v1_parts", 1, [("identity", "flag"), ("month", "day")]),
]


def make_rows(start: int, n: int) -> list[dict[str, Any]]:
    base = dt.datetime(2025, 12, 30, 22, 0, tzinfo=UTC)
    rows = []
    for i in range(start, start + n):
        ts = base + dt.timedelta(hours=7 * i, seconds=i)
        rows.append(
            {
                "id": i * 37 - 100,
                "flag": None if i % 5 == 0 else i % 2 == 0,
                "small": None if i % 7 == 3 else i * 3 - 40,
                "ratio": i / 4,
                "score": None if i % 6 == 1 else i * 1.5 - 7,
                "amount": Decimal(i * 1234 - 5000).scaleb(-3),
                "day": (ts - dt.timedelta(days=400)).date(),
                "clock": dt.time(i % 24, (i * 7) % 60, i % 60, i * 11 % 1_000_000),
                "local_ts": ts.replace(tzinfo=None) - dt.timedelta(days=40),
                "ts": ts,
                "name": None if i % 9 == 4 else f"n{i % 4}-é{i}",
                "uid": uuid.UUID(int=(i * 7919) << 64 | i),
                "code": bytes([i % 256, 1, 2, 3]),
                "payload": None if i % 8 == 2 else bytes(range(i % 5)),
            }
        )
    return rows


def canonical(value: Any) -> Any:
    """One comparable form for a value however a reader returns it."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value.quantize(Decimal("0.001")))
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        return str(uuid.UUID(bytes=raw)) if len(raw) == 16 else raw.hex()
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, bool | int | str):
        return value
    raise TypeError(f"no canonical form for {value!r}")


def canonical_rows(
    rows: list[dict[str, Any]] | list[tuple[Any, ...]], columns: list[str]
) -> list[tuple[Any, ...]]:
    out = []
    for row in rows:
        values = [row[c] for c in columns] if isinstance(row, dict) else list(row)
        out.append(tuple(canonical(v) for v in values))
    return sorted(out, key=lambda r: r[0])


@dataclass
class Corpus:
    root: Path
    catalog: SqlCatalog
    tables: dict[str, Table]
    rows: dict[str, list[dict[str, Any]]]
    view: View

    def metadata_files(self) -> list[str]:
        return sorted(str(p) for p in self.root.rglob("*.metadata.json"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    root = tmp_path_factory.mktemp("corpus")
    catalog = SqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{root}/catalog.db", warehouse=str(root / "wh")
    )
    catalog.create_namespace("db")
    tables: dict[str, Table] = {}
    all_rows: dict[str, list[dict[str, Any]]] = {}
    for name, version, fields in TABLES:
        schema = ALL_TYPES if name.endswith("_all_types") else NO_TIME
        spec = build_partition_spec(schema, fields)
        table = catalog.create_table(f"db.{name}", schema, spec, format_version=version)
        rows: list[dict[str, Any]] = []
        for start, n in ((0, 40), (40, 25)):
            batch = make_rows(start, n)
            files = write_data_files(
                table.io, table.metadata, rows_to_arrow(table.metadata.schema(), batch)
            )
            table = fast_append(table, files).table
            names = {f.name for f in schema.fields}
            rows += [{k: v for k, v in r.items() if k in names} for r in batch]
        tables[name] = table
        all_rows[name] = rows

    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType())
    )
    now = 1_763_700_000_000
    first = ViewVersion(
        version_id=1,
        timestamp_ms=now,
        schema_id=0,
        representations=(SQLViewRepresentation("SELECT id, name FROM db.v2_spread", "spark"),),
        default_namespace=("db",),
        default_catalog=CATALOG_NAME,
        summary=StringMap({"engine-name": "icewright"}),
    )
    view_meta = ViewMetadata(
        view_uuid=uuid.uuid4(),
        location=str(root / "wh" / "db" / "names"),
        current_version_id=1,
        versions=(first,),
        version_log=(ViewHistoryEntry(now, 1),),
        schemas=(schema,),
        properties=StringMap({"comment": "ids and names"}),
    )
    view = catalog.create_view("db.names", view_meta)
    second = ViewVersion(
        version_id=2,
        timestamp_ms=now + 1000,
        schema_id=0,
        representations=(
            SQLViewRepresentation("SELECT id, name FROM db.v2_spread WHERE id > 0", "spark"),
            SQLViewRepresentation("SELECT id, name FROM db.v2_spread WHERE id > 0", "trino"),
        ),
        default_namespace=("db",),
        default_catalog=CATALOG_NAME,
    )
    updated = ViewMetadata(
        view_uuid=view_meta.view_uuid,
        location=view_meta.location,
        current_version_id=2,
        versions=(first, second),
        version_log=(*view_meta.version_log, ViewHistoryEntry(now + 1000, 2)),
        schemas=(schema,),
        properties=view_meta.properties,
    )
    catalog.commit_view("db.names", view.metadata_location, updated)
    yield Corpus(root, catalog, tables, all_rows, catalog.load_view("db.names"))


def columns_of(table: Table) -> list[str]:
    return [f.name for f in table.metadata.schema().fields]


def test_pyiceberg_opens_and_scans_through_the_same_catalog(corpus: Corpus) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    py = PySqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{corpus.root}/catalog.db", warehouse=str(corpus.root / "wh")
    )
    assert sorted(t[1] for t in py.list_tables("db")) == sorted(corpus.tables)
    for name, table in corpus.tables.items():
        pt = py.load_table(f"db.{name}")
        assert pt.metadata.format_version == table.metadata.format_version
        assert [s.snapshot_id for s in pt.snapshots()] == [
            s.snapshot_id for s in table.metadata.snapshots
        ]
        assert [s.summary.operation.value for s in pt.snapshots()] == ["append", "append"]  # type: ignore[union-attr]
        cols = columns_of(table)
        got = pt.scan().to_arrow().to_pylist()
        assert canonical_rows(got, cols) == canonical_rows(corpus.rows[name], cols), name
        first = pt.scan(snapshot_id=table.metadata.snapshots[0].snapshot_id).to_arrow()
        assert first.num_rows == 40
        # pyiceberg prunes by icewright's partition values and metrics.
        filtered = pt.scan(row_filter="id >= 1000").to_arrow().to_pylist()
        want = [r for r in corpus.rows[name] if r["id"] >= 1000]
        assert canonical_rows(filtered, cols) == canonical_rows(want, cols)


def test_duckdb_scans_every_table(corpus: Corpus) -> None:
    # DuckDB reads Parquet's fixed_len_byte_array(16) uuid and time columns differently;
    # compare the columns DuckDB maps to Iceberg's types one to one.
    for name, table in corpus.tables.items():
        cols = [c for c in columns_of(table) if c not in ("uid", "clock")]
        columns, rows = duckdb_scan_columns(table.metadata_location)
        assert list(columns) == columns_of(table), name
        idx = [columns.index(c) for c in cols]
        got = [tuple(r[i] for i in idx) for r in rows]
        assert canonical_rows(got, cols) == canonical_rows(corpus.rows[name], cols), name


def _icewright_entries(table: Table) -> dict[str, dict[str, Any]]:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = {}
    for m in read_manifest_list(table.io.read(snap.manifest_list)):
        for e in read_manifest(table.io.read(m.manifest_path), m):
            out[e.data_file.file_path] = {
                "record_count": e.data_file.record_count,
                "size": e.data_file.file_size_in_bytes,
                "snapshot_id": e.snapshot_id,
                "sequence_number": e.sequence_number,
                "lower": dict(e.data_file.lower_bounds or {}),
                "upper": dict(e.data_file.upper_bounds or {}),
                "nulls": dict(e.data_file.null_value_counts or {}),
                "partition_path": table.metadata.spec_by_id(m.partition_spec_id).partition_to_path(
                    e.data_file.partition, table.metadata.schema()
                ),
            }
    return out


def _doc(value: Any) -> dict[str, Any]:
    """A JSON document with type strings in one spelling (Java writes "decimal(9, 2)",
    icewright the spec's canonical "decimal(9,2)"; both are valid per Appendix C)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return json.loads(re.sub(r'"decimal\((\d+),\s*(\d+)\)"', r'"decimal(\1,\2)"', text))


def test_iceberg_java_parses_every_file_and_agrees(corpus: Corpus) -> None:
    java = IcebergJava()
    metadata_files = corpus.metadata_files()
    table_files = [p for p in metadata_files if "names" not in p]
    view_files = [p for p in metadata_files if "/names/" in p]
    assert len(table_files) == 3 * len(TABLES) and len(view_files) == 2
    assert sum(not n.endswith("_all_types") for n in corpus.tables) == 4
    with java.batch() as batch:
        parsed = {p: batch.parse_table_metadata(p) for p in table_files}
        views = {p: batch.parse_view_metadata(p) for p in view_files}
        manifests = {
            n: batch.table_manifests(t.metadata_location) for n, t in corpus.tables.items()
        }
        scans = {
            n: batch.scan(t.metadata_location)
            for n, t in corpus.tables.items()
            if not n.endswith("_all_types")
        }

    for path, pending in parsed.items():
        ours = TableMetadata.from_json(Path(path).read_bytes())
        theirs = pending.value
        assert theirs["format_version"] == ours.format_version
        assert theirs["uuid"] == str(ours.table_uuid)
        assert theirs["last_sequence_number"] == ours.last_sequence_number
        assert theirs["last_column_id"] == ours.last_column_id
        assert [s["snapshot_id"] for s in theirs["snapshots"]] == [
            s.snapshot_id for s in ours.snapshots
        ]
        assert [s["sequence_number"] for s in theirs["snapshots"]] == [
            s.sequence_number for s in ours.snapshots
        ]
        for js, s in zip(theirs["snapshots"], ours.snapshots, strict=True):
            assert js["manifest_list"] == s.manifest_list
            assert js["summary"] == {k: v for k, v in (s.summary or {}).items() if k != "operation"}
        # Java's own serialization of what it parsed equals ours on every spec field.
        java_doc = _doc(theirs["json"])
        our_doc = _doc(ours.to_json().decode())
        for key in (
            "schemas",
            "partition-specs",
            "sort-orders",
            "refs",
            "snapshot-log",
            "properties",
        ):
            assert java_doc.get(key) == our_doc.get(key), (path, key)
        assert len(java_doc.get("metadata-log", [])) == len(our_doc.get("metadata-log", []))

    for path, pending in views.items():
        theirs = pending.value
        ours_view = ViewMetadata.from_json(Path(path).read_bytes())
        assert theirs["current_version_id"] == ours_view.current_version_id
        assert len(theirs["versions"]) == len(ours_view.versions)
        java_doc = _doc(theirs["json"])
        our_doc = _doc(ours_view.to_json().decode())
        assert java_doc["versions"] == our_doc["versions"]
        assert java_doc["schemas"] == our_doc["schemas"]

    for name, table in corpus.tables.items():
        ours_entries = _icewright_entries(table)
        theirs_m = manifests[name].value
        their_entries = {e["file_path"]: e for m in theirs_m["manifests"] for e in m["entries"]}
        assert set(their_entries) == set(ours_entries), name
        for path, e in their_entries.items():
            o = ours_entries[path]
            assert e["record_count"] == o["record_count"]
            assert e["file_size_in_bytes"] == o["size"]
            assert e["snapshot_id"] == o["snapshot_id"]
            assert e["data_sequence_number"] == o["sequence_number"]
            assert e["lower_bounds"] == o["lower"]
            assert e["upper_bounds"] == o["upper"]
            assert e["null_value_counts"] == o["nulls"]
            # Java computes the partition path from the partition values icewright wrote.
            assert e["partition_path"] == o["partition_path"]
        if name not in scans:
            continue
        scan = scans[name].value
        assert scan.count == len(corpus.rows[name])
        cols = [
            c for c in columns_of(table) if c != "uid"
        ]  # Spark has no uuid type: it returns a string
        idx = [scan.columns.index(c) for c in cols]
        got = [tuple(r[i] for i in idx) for r in scan.rows]
        assert canonical_rows(got, cols) == canonical_rows(corpus.rows[name], cols), name


def test_arrow_helper_rows_match_written_schema(corpus: Corpus) -> None:
    # The corpus rows are typed by the table schema (a guard against a silent cast).
    arrow = rows_to_arrow(ALL_TYPES, make_rows(0, 3))
    assert arrow.schema.field("uid").type == pa.binary(16)
    assert arrow.schema.field("id").metadata == {b"PARQUET:field_id": b"1"}


def test_a_long_history_of_appends_reads_the_same_in_every_engine(tmp_path: Path) -> None:
    """120 one-row appends: each manifest list holds its parent's blocks as they were
    stored (avro_encoder.StoredBlock), so the current list has several blocks, written
    by different commits. pyiceberg, DuckDB and Iceberg Java read every manifest and
    every row of it."""
    catalog = SqlCatalog("long", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    table = catalog.create_table("db.long", schema)
    for n in range(120):
        batch = rows_to_arrow(schema, [{"id": n}])
        table = fast_append(table, write_data_files(table.io, table.metadata, batch)).table
    current = table.metadata.current_snapshot()
    assert current is not None and current.manifest_list is not None
    data = table.io.read(current.manifest_list)
    container = open_container(data, "the current list")
    assert len(container.stored_blocks) >= 2  # blocks copied from earlier lists

    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    py = PySqlCatalog("long", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path))
    scanned = py.load_table("db.long").scan().to_arrow()
    assert sorted(scanned.column("id").to_pylist()) == list(range(120))
    _, rows = duckdb_scan_columns(table.metadata_location)
    assert sorted(r[0] for r in rows) == list(range(120))
    java = IcebergJava()
    with java.batch() as batch:
        listed = batch.read_manifest_list(current.manifest_list)
        scan = batch.scan(table.metadata_location)
    assert [m["path"] for m in listed.value] == [m.manifest_path for m in read_manifest_list(data)]
    assert len(listed.value) == 120
    assert sorted(r[0] for r in scan.value.rows) == list(range(120))
