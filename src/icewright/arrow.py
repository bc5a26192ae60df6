"""Arrow bridge: Iceberg schemas as Arrow schemas, and a small in-process data-file writer.

Spark writes data files in production. This module writes Parquet data files from
an Arrow table in this process, for small data (tests, examples, a first load): with
Iceberg field ids (spec: "Parquet" in "Appendix A"), one file per partition, and the
column metrics of the table's ``write.metadata.metrics.*`` properties.
"""

from __future__ import annotations

import datetime as dt
import io as _io
import uuid
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile
from icewright.manifest.metrics import data_file_from_parquet, nan_value_counts
from icewright.spec.partitioning import PartitionSpec
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
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

FIELD_ID = b"PARQUET:field_id"
_EPOCH_DATE = dt.date(1970, 1, 1)


def _field(f: NestedField) -> pa.Field:
    return pa.field(
        f.name,
        type_to_arrow(f.field_type),
        nullable=not f.required,
        metadata={FIELD_ID: str(f.field_id).encode()},
    )


def type_to_arrow(t: IcebergType) -> pa.DataType:
    """The Arrow type Iceberg's Parquet mapping uses for ``t``."""
    simple: dict[type, pa.DataType] = {
        BooleanType: pa.bool_(),
        IntegerType: pa.int32(),
        LongType: pa.int64(),
        FloatType: pa.float32(),
        DoubleType: pa.float64(),
        DateType: pa.date32(),
        TimeType: pa.time64("us"),
        TimestampType: pa.timestamp("us"),
        TimestamptzType: pa.timestamp("us", tz="UTC"),
        TimestampNsType: pa.timestamp("ns"),
        TimestamptzNsType: pa.timestamp("ns", tz="UTC"),
        StringType: pa.large_string(),
        UUIDType: pa.binary(16),
        BinaryType: pa.large_binary(),
    }
    if type(t) in simple:
        return simple[type(t)]
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, StructType):
        return pa.struct([_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.large_list(_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(_field(t.key_field), _field(t.value_field))
    raise ValidationError(f"type {t} has no Arrow representation for writing")


def schema_to_arrow(schema: Schema) -> pa.Schema:
    """The Arrow schema of ``schema``, each field carrying its Iceberg field id."""
    return pa.schema([_field(f) for f in schema.fields])


def to_iceberg_values(array: pa.Array | pa.ChunkedArray, t: IcebergType) -> list[Any]:
    """The values of a primitive Arrow column in icewright's Python value conventions."""
    if isinstance(t, DateType):
        return [None if v is None else (v - _EPOCH_DATE).days for v in array.to_pylist()]
    if isinstance(t, TimeType | TimestampType | TimestamptzType):
        return _as_integers(array, "us")
    if isinstance(t, TimestampNsType | TimestamptzNsType):
        return _as_integers(array, "ns")
    if isinstance(t, UUIDType):
        return [None if v is None else uuid.UUID(bytes=v) for v in array.to_pylist()]
    if isinstance(t, DecimalType):
        return [None if v is None else Decimal(v) for v in array.to_pylist()]
    return list(array.to_pylist())


def _as_integers(array: pa.Array | pa.ChunkedArray, unit: str) -> list[Any]:
    """Times and timestamps as integers in ``unit`` since midnight / the epoch."""
    t = array.type
    if t.unit != unit:
        array = pc.cast(array, pa.time64(unit) if pa.types.is_time(t) else pa.timestamp(unit, t.tz))
    return list(pc.cast(array, pa.int64()).to_pylist())


def partition_tuples(data: pa.Table, spec: PartitionSpec, schema: Schema) -> list[tuple[Any, ...]]:
    """The partition tuple of every row of ``data`` (spec: "Partition Transforms")."""
    columns = []
    for pf in spec.fields:
        source = schema.find_field(pf.source_id)
        name = schema.column_name(pf.source_id)
        if "." in name:
            raise ValidationError(
                f"partitioning by the nested column {name!r} is not supported here"
            )
        raw = to_iceberg_values(data.column(name), source.field_type)
        columns.append([pf.transform.apply(source.field_type, v) for v in raw])
    return list(zip(*columns, strict=True)) if columns else [()] * data.num_rows


def write_data_files(
    io: FileIO,
    metadata: TableMetadata,
    data: pa.Table,
    *,
    target_rows_per_file: int = 1_000_000,
) -> list[DataFile]:
    """Write ``data`` as Parquet data files of the table's current spec and schema.

    Columns are matched by name and cast to the table's Arrow types; a missing
    required column is an error. Nothing is committed: pass the result to an append.
    """
    schema = metadata.schema()
    spec = metadata.spec()
    spec.check_writable()
    arrow_schema = schema_to_arrow(schema)
    missing = [f.name for f in schema.fields if f.required and f.name not in data.column_names]
    if missing:
        raise ValidationError(f"the data lacks the required columns {missing}")
    extra = sorted(set(data.column_names) - {f.name for f in schema.fields})
    if extra:
        raise ValidationError(f"the data has columns the table does not: {extra}")
    columns = [
        data.column(f.name).cast(arrow_schema.field(f.name).type)
        if f.name in data.column_names
        else pa.nulls(data.num_rows, arrow_schema.field(f.name).type)
        for f in schema.fields
    ]
    aligned = pa.Table.from_arrays(columns, schema=arrow_schema)
    keys = partition_tuples(aligned, spec, schema)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for row, key in enumerate(keys):
        groups.setdefault(key, []).append(row)

    data_dir = metadata.properties.get("write.data.path") or f"{metadata.location.rstrip('/')}/data"
    out: list[DataFile] = []
    for key, rows in groups.items():
        part = aligned.take(pa.array(rows, pa.int64()))
        for start in range(0, part.num_rows, target_rows_per_file):
            chunk = part.slice(start, target_rows_per_file)
            out.append(_write_one(io, metadata, data_dir, spec, schema, key, chunk))
    return out


def _write_one(  # noqa: PLR0917 - a private helper of write_data_files
    io: FileIO,
    metadata: TableMetadata,
    data_dir: str,
    spec: PartitionSpec,
    schema: Schema,
    partition: tuple[Any, ...],
    chunk: pa.Table,
) -> DataFile:
    buffer = _io.BytesIO()
    codec = metadata.properties.get("write.parquet.compression-codec", "zstd")
    pq.write_table(chunk, buffer, compression=None if codec == "uncompressed" else codec)
    payload = buffer.getvalue()
    prefix = f"{spec.partition_to_path(partition, schema)}/" if spec.fields else ""
    path = f"{data_dir}/{prefix}{uuid.uuid4()}.parquet"
    io.create(path, payload)
    footer = pq.read_metadata(pa.BufferReader(payload))
    return data_file_from_parquet(
        path,
        len(payload),
        footer,
        schema,
        partition=partition,
        spec_id=spec.spec_id,
        properties=metadata.properties,
        nan_counts=nan_value_counts(chunk),
    )


def rows_to_arrow(schema: Schema, rows: Sequence[dict[str, Any]]) -> pa.Table:
    """An Arrow table of ``rows`` (dicts by column name) typed by ``schema``."""
    return pa.Table.from_pylist(list(rows), schema=schema_to_arrow(schema))


def schema_from_arrow(schema: pa.Schema) -> Schema:
    """A new Iceberg schema for an Arrow schema: fresh ids from 1, every column optional
    (as a schema derived from a Spark source). Nanosecond timestamps become microsecond
    ones (format 2 has no nanoseconds; a value with nanoseconds then fails its cast when
    written), integers narrower than 32 bits ``int``, unsigned ones the next wider type."""
    counter = iter(range(1, 1 << 31))

    def next_id() -> int:
        return next(counter)

    ids = [next_id() for _ in schema]  # top-level columns first, as Java assigns them
    return Schema(
        *[
            NestedField(i, f.name, _from_arrow(f.type, next_id), False)
            for i, f in zip(ids, schema, strict=True)
        ]
    )


_FROM_ARROW: dict[pa.DataType, IcebergType] = {
    pa.bool_(): BooleanType(),
    pa.int8(): IntegerType(),
    pa.int16(): IntegerType(),
    pa.int32(): IntegerType(),
    pa.uint8(): IntegerType(),
    pa.uint16(): IntegerType(),
    pa.int64(): LongType(),
    pa.uint32(): LongType(),
    pa.float16(): FloatType(),
    pa.float32(): FloatType(),
    pa.float64(): DoubleType(),
    pa.date32(): DateType(),
    pa.date64(): DateType(),
    pa.string(): StringType(),
    pa.large_string(): StringType(),
    pa.binary(): BinaryType(),
    pa.large_binary(): BinaryType(),
}


def _from_arrow(t: pa.DataType, next_id: Callable[[], int]) -> IcebergType:
    """The Iceberg type of the Arrow type ``t`` (nested ids from ``next_id``)."""
    if t in _FROM_ARROW:
        return _FROM_ARROW[t]
    if pa.types.is_string_view(t):
        return StringType()
    if pa.types.is_timestamp(t):
        return TimestamptzType() if t.tz is not None else TimestampType()
    if pa.types.is_time(t):
        return TimeType()
    if pa.types.is_decimal(t) and t.precision <= DecimalType.MAX_PRECISION:
        return DecimalType(t.precision, t.scale)
    if pa.types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    if pa.types.is_dictionary(t):
        return _from_arrow(t.value_type, next_id)
    if pa.types.is_struct(t):
        ids = [next_id() for _ in range(t.num_fields)]
        return StructType(
            *[
                NestedField(i, t.field(n).name, _from_arrow(t.field(n).type, next_id), False)
                for n, i in enumerate(ids)
            ]
        )
    if pa.types.is_map(t):
        key_id, value_id = next_id(), next_id()
        key = _from_arrow(t.key_type, next_id)
        return MapType(key_id, key, value_id, _from_arrow(t.item_type, next_id), False)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        element_id = next_id()
        return ListType(element_id, _from_arrow(t.value_type, next_id), False)
    raise ValidationError(
        f"the Arrow type {t} has no Iceberg type: cast the column to one that has (e.g. "
        "unsigned 64-bit integers to int64, durations to int64)"
    )
