"""Helpers shared by the commit tests: the table schema, rows, real data and delete files,
and three readers.

* :data:`SCHEMA`: the schema of the ``make_table`` fixture's tables (``id``, ``ts``,
  ``region``);
* rows and files: :func:`rows`, :func:`files_for`, :func:`one_file`,
  :func:`position_delete_file`, :func:`equality_delete_file` (real Parquet files written
  through the table's FileIO, so they work on every catalog kind);
* what the metadata references: :func:`current_entries`, :func:`live_paths`,
  :func:`referenced_metadata_files`, :func:`avro_files`;
* readers: :func:`scan_rows` (icewright's own scan planning, pyarrow reading the planned
  files; any catalog kind), :func:`pyiceberg_read` / :func:`pyiceberg_table` (pyiceberg
  0.12 on the same SQLite catalog), :func:`duckdb_rows` (DuckDB's Iceberg extension on
  the metadata file).
"""

from __future__ import annotations

import datetime as dt
import io as _io
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import Table
from icewright.commit.snapshot_producer import metadata_dir
from icewright.manifest.data_file import DataFile, FileContent, FileFormat, ManifestEntry
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.scan import plan_files
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType, TimestamptzType
from icewright.spec.values import to_bytes

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "region", StringType()),
)

__all__ = [
    "FAST",
    "POS_PATH_ID",
    "POS_POS_ID",
    "UTC",
    "avro_files",
    "current_entries",
    "duckdb_rows",
    "equality_delete_file",
    "files_for",
    "live_paths",
    "one_file",
    "position_delete_file",
    "pyiceberg_read",
    "pyiceberg_table",
    "referenced_metadata_files",
    "rows",
    "scan_rows",
]

UTC = dt.UTC
FAST = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
"""Table properties that make lost races retry at once (the rules stay the same)."""

# The reserved field ids of a position delete file's columns (spec: "Position Delete Files").
POS_PATH_ID = 2147483546
POS_POS_ID = 2147483545


# --- rows and files ------------------------------------------------------------------------


def rows(n: int, day: int = 1, region: str = "eu", start: int = 0) -> list[dict[str, Any]]:
    """``n`` rows with ids from ``start``, all in partition (day, region)."""
    base = dt.datetime(2026, 3, day, tzinfo=UTC)
    return [
        {"id": start + i, "ts": base + dt.timedelta(minutes=i), "region": region} for i in range(n)
    ]


def files_for(table: Table, data: list[dict[str, Any]]) -> list[DataFile]:
    """Real Parquet data files for ``data`` (one per partition)."""
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def one_file(table: Table, data: list[dict[str, Any]]) -> DataFile:
    """One real data file (``data`` must be a single partition)."""
    (f,) = files_for(table, data)
    return f


def position_delete_file(table: Table, data_file: DataFile, positions: list[int]) -> DataFile:
    """A real position delete file (Parquet ``file_path``/``pos``) for rows of ``data_file``."""
    arrow_schema = pa.schema(
        [
            pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(POS_PATH_ID)}),
            pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(POS_POS_ID)}),
        ]
    )
    data = pa.table(
        {"file_path": [data_file.file_path] * len(positions), "pos": positions},
        schema=arrow_schema,
    )
    buf = _io.BytesIO()
    pq.write_table(data, buf)
    path = f"{table.location}/data/pos-deletes-{uuid.uuid4()}.parquet"
    table.io.create(path, buf.getvalue())
    path_bytes = to_bytes(StringType(), data_file.file_path)
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.POSITION_DELETES,
        record_count=len(positions),
        file_size_in_bytes=len(buf.getvalue()),
        partition=data_file.partition,
        spec_id=data_file.spec_id,
        lower_bounds={POS_PATH_ID: path_bytes, POS_POS_ID: to_bytes(LongType(), min(positions))},
        upper_bounds={POS_PATH_ID: path_bytes, POS_POS_ID: to_bytes(LongType(), max(positions))},
    )


def equality_delete_file(table: Table, like: DataFile, ids: list[int]) -> DataFile:
    """A real equality delete file on ``id`` in the partition of ``like``."""
    arrow_schema = pa.schema([pa.field("id", pa.int64(), False, {b"PARQUET:field_id": "1"})])
    buf = _io.BytesIO()
    pq.write_table(pa.table({"id": ids}, schema=arrow_schema), buf)
    path = f"{table.location}/data/eq-deletes-{uuid.uuid4()}.parquet"
    table.io.create(path, buf.getvalue())
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.EQUALITY_DELETES,
        record_count=len(ids),
        file_size_in_bytes=len(buf.getvalue()),
        partition=like.partition,
        spec_id=like.spec_id,
        equality_ids=(1,),
        lower_bounds={1: to_bytes(LongType(), min(ids))},
        upper_bounds={1: to_bytes(LongType(), max(ids))},
        null_value_counts={1: 0},
        value_counts={1: len(ids)},
    )


# --- what the metadata references ----------------------------------------------------------


def current_entries(table: Table, *, live_only: bool = True) -> list[tuple[Any, ManifestEntry]]:
    """(manifest, entry) of the current snapshot, data and delete manifests."""
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    out = []
    for m in read_manifest_list(table.io.read(snap.manifest_list)):
        for e in read_manifest(table.io.read(m.manifest_path), m):
            if e.is_live or not live_only:
                out.append((m, e))
    return out


def live_paths(table: Table, content: FileContent = FileContent.DATA) -> set[str]:
    """Paths of the live files of one content kind in the current snapshot."""
    return {
        e.data_file.file_path for _, e in current_entries(table) if e.data_file.content is content
    }


def referenced_metadata_files(table: Table) -> set[str]:
    """Manifest lists and manifests that some snapshot of the table references."""
    out: set[str] = set()
    for snap in table.metadata.snapshots:
        assert snap.manifest_list is not None
        out.add(snap.manifest_list)
        out.update(m.manifest_path for m in read_manifest_list(table.io.read(snap.manifest_list)))
    return out


def avro_files(table: Table) -> set[str]:
    """Every Avro file (manifest or manifest list) under the table's metadata directory."""
    return {
        f.path
        for f in table.io.list_prefix(metadata_dir(table.metadata))
        if f.path.endswith(".avro")
    }


# --- readers -------------------------------------------------------------------------------


def _read_parquet(table: Table, path: str) -> pa.Table:
    return pq.read_table(pa.BufferReader(table.io.read(path)))


def _column_by_id(data: pa.Table, field_id: int) -> pa.ChunkedArray | None:
    for i, f in enumerate(data.schema):
        if f.metadata and f.metadata.get(b"PARQUET:field_id") == str(field_id).encode():
            return data.column(i)
    return None


def scan_rows(
    table: Table, columns: Sequence[str] = ("id", "ts", "region"), *, snapshot_id: int | None = None
) -> list[tuple[Any, ...]]:
    """The live rows of ``table`` as sorted tuples of ``columns``: icewright plans the scan
    (manifests, delete association), pyarrow reads each planned file through the table's
    FileIO; columns are matched by field id, a column a file lacks reads as null, and
    position deletes are applied. Equality deletes are refused (this reader has no use
    for them)."""
    schema = table.metadata.schema()
    fields = [schema.find_field(name) for name in columns]
    out: list[tuple[Any, ...]] = []
    for task in plan_files(table, snapshot_id=snapshot_id):
        deleted: set[int] = set()
        for d in task.delete_files:
            assert d.content is FileContent.POSITION_DELETES, f"cannot apply {d.file_path}"
            deletes = _read_parquet(table, d.file_path).to_pylist()
            deleted.update(r["pos"] for r in deletes if r["file_path"] == task.file_path)
        data = _read_parquet(table, task.file_path)
        cols = []
        for f in fields:
            col = _column_by_id(data, f.field_id)
            cols.append([None] * data.num_rows if col is None else col.to_pylist())
        out.extend(row for pos, row in enumerate(zip(*cols, strict=True)) if pos not in deleted)
    return sorted(out, key=lambda r: tuple((v is None, v) for v in r))


@contextmanager
def pyiceberg_table(tmp_path: Path, name: str = "db.orders") -> Iterator[Any]:
    """The table as pyiceberg 0.12 loads it from the SQLite catalog the tests make in
    ``tmp_path`` (catalog name ``test``, warehouse ``tmp_path/wh``)."""
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    theirs = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    try:
        yield theirs.load_table(name)
    finally:
        theirs.engine.dispose()


def pyiceberg_read(
    tmp_path: Path, name: str = "db.orders"
) -> tuple[list[int], list[int], list[str]]:
    """Sorted ids, snapshot ids and operations, as pyiceberg 0.12 reads the table."""
    with pyiceberg_table(tmp_path, name) as loaded:
        ids = sorted(loaded.scan().to_arrow().column("id").to_pylist())
        snaps = loaded.snapshots()
        ops = [str(s.summary.operation.value) if s.summary else "" for s in snaps]
        return ids, [s.snapshot_id for s in snaps], ops


def duckdb_rows(
    metadata_location: str, columns: Sequence[str] = ("id", "ts", "region")
) -> list[tuple[Any, ...]]:
    """The rows DuckDB's Iceberg extension reads from ``metadata_location``, as sorted
    tuples of ``columns``."""
    from tests.support.duckdb import duckdb_scan_columns

    names, data = duckdb_scan_columns(metadata_location)
    index = [names.index(c) for c in columns]
    return sorted(
        (tuple(r[i] for i in index) for r in data),
        key=lambda r: tuple((v is None, v) for v in r),
    )
