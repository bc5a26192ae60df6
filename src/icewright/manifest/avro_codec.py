"""Avro encoding and decoding shared by manifests and manifest lists (spec: Appendix A).

Reading decodes every record with the writer's schema minus its logical types, so
values come back as the ints and bytes the file stores; the few that the project's
value conventions represent differently (decimals, UUIDs) are converted from the
writer's schema. Fields are matched by field id, as Iceberg readers must.
"""

from __future__ import annotations

import contextlib
import io
import json
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import fastavro

from icewright.errors import InvalidMetadata, ValidationError
from icewright.manifest.avro_schemas import AvroSchema, decimal_required_bytes
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icewright.spec.values import decimal_from_unscaled, decimal_to_unscaled

DEFAULT_CODEC = "deflate"
"""Avro block compression of manifests and manifest lists (what the reference writes)."""


def write_avro(
    schema: dict[str, Any],
    records: Iterable[dict[str, Any]],
    metadata: Mapping[str, str],
    codec: str = DEFAULT_CODEC,
) -> bytes:
    """An Avro container file of ``records`` with ``metadata`` in its header."""
    buf = io.BytesIO()
    try:
        fastavro.writer(buf, schema, records, metadata=dict(metadata), codec=codec)
    except ValueError as exc:
        if "codec" in str(exc).lower():
            raise ValidationError(
                f"unknown Avro codec {codec!r}: use null, deflate, snappy or zstandard"
            ) from exc
        raise
    return buf.getvalue()


def open_avro(data: bytes, what: str) -> tuple[dict[str, str], AvroSchema, list[dict[str, Any]]]:
    """Header metadata, writer schema and records of an Avro container file.

    The records are decoded with the writer schema minus its logical types, so values
    come back as the ints and bytes the file stores (fastavro would otherwise build
    dates, datetimes and Decimals, failing for out-of-range values); callers apply the
    project's conventions. Anything unreadable becomes :class:`InvalidMetadata`.
    """
    try:
        blocks = fastavro.block_reader(io.BytesIO(data))
        metadata = {k: v for k, v in blocks.metadata.items() if isinstance(v, str)}
        writer_schema = json.loads(metadata["avro.schema"])
        raw_schema = fastavro.parse_schema(strip_logical_types(writer_schema))
        records: list[dict[str, Any]] = []
        for block in blocks:
            body = block.bytes_  # type: ignore[attr-defined]  # the decompressed block
            body.seek(0)
            for _ in range(block.num_records):
                record = fastavro.schemaless_reader(body, raw_schema, None)
                assert isinstance(record, dict)
                records.append(record)
    except Exception as exc:  # fastavro raises many kinds of errors for corrupt input
        raise InvalidMetadata(
            f"{what}: not a readable Avro file ({type(exc).__name__}: {exc})"
        ) from exc
    return metadata, writer_schema, records


@dataclass(frozen=True)
class AvroContainer:
    """An Avro container file opened for decoding record by record.

    ``body`` is every block's decompressed data, one after the other; ``block_ends`` the
    offset in ``body`` where each block ends and ``block_counts`` how many records it
    holds. Records never span blocks, so ``body`` decodes as one stream of records.
    ``stored_blocks`` gives, for each block, where its data as stored (compressed with
    ``avro.codec``) starts and ends in the file; empty when the file was read another way.
    """

    metadata: dict[str, str]
    writer_schema: AvroSchema
    schema_text: str
    raw_schema: Any
    body: bytes
    block_ends: tuple[int, ...]
    block_counts: tuple[int, ...]
    stored_blocks: tuple[tuple[int, int], ...] = ()

    @property
    def record_count(self) -> int:
        """How many records the blocks say the file holds."""
        return sum(self.block_counts)

    def decode(self, start: int, end: int) -> tuple[list[dict[str, Any]], list[int]]:
        """The records of ``body[start:end]`` and the offset each starts at.

        Raises ``ValueError`` when the records do not end exactly at ``end``.
        """
        stream = io.BytesIO(self.body)
        stream.seek(start)
        records: list[dict[str, Any]] = []
        offsets: list[int] = []
        position = start
        while position < end:
            offsets.append(position)
            record = fastavro.schemaless_reader(stream, self.raw_schema, None)
            assert isinstance(record, dict)
            records.append(record)
            position = stream.tell()
        if position != end:
            raise ValueError(f"a record runs past offset {end}")
        return records, offsets


def open_container(data: bytes, what: str) -> AvroContainer:
    """The header and decompressed blocks of an Avro container file.

    Values decode as in :func:`open_avro` (logical types stripped). Anything unreadable
    becomes :class:`InvalidMetadata`.
    """
    try:
        metadata, sync, position = _read_header(data)
        schema_text = metadata["avro.schema"]
        writer_schema, raw_schema = _parsed_schema(schema_text)
        codec = metadata.get("avro.codec", "null")
        stored: tuple[tuple[int, int], ...] = ()
        if codec in ("null", "deflate"):
            parts, ends, counts, stored = _read_blocks(data, position, sync, codec)
        else:
            parts, ends, counts = _read_blocks_fastavro(data)
    except Exception as exc:  # corrupt input fails in many ways (IndexError, zlib.error ...)
        raise InvalidMetadata(
            f"{what}: not a readable Avro file ({type(exc).__name__}: {exc})"
        ) from exc
    return AvroContainer(
        metadata, writer_schema, schema_text, raw_schema, b"".join(parts), ends, counts, stored
    )


def _read_long(data: bytes, position: int) -> tuple[int, int]:
    """A zigzag varint (Avro ``long``) at ``position``, and the position after it."""
    shift = result = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), position
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")


def _read_header(data: bytes) -> tuple[dict[str, str], bytes, int]:
    # Avro spec, "Object Container Files": magic, a map of bytes, a 16-byte sync marker.
    if data[:4] != b"Obj\x01":
        raise ValueError("no Avro magic bytes at the start")
    metadata: dict[str, str] = {}
    position = 4
    while True:
        count, position = _read_long(data, position)
        if count == 0:
            break
        if count < 0:  # a block that also gives its size in bytes
            count = -count
            _, position = _read_long(data, position)
        for _ in range(count):
            size, position = _read_long(data, position)
            key = data[position : position + size].decode("utf-8")
            position += size
            size, position = _read_long(data, position)
            value = data[position : position + size]
            position += size
            if len(value) != size:
                raise ValueError("the header ends early")
            with contextlib.suppress(UnicodeDecodeError):  # binary: not something Iceberg stores
                metadata[key] = value.decode("utf-8")
    sync = data[position : position + 16]
    if len(sync) != 16:
        raise ValueError("the header ends before its sync marker")
    return metadata, sync, position + 16


def _read_blocks(
    data: bytes, position: int, sync: bytes, codec: str
) -> tuple[list[bytes], tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    parts: list[bytes] = []
    ends: list[int] = []
    counts: list[int] = []
    stored: list[tuple[int, int]] = []
    size = 0
    while position < len(data):
        count, position = _read_long(data, position)
        length, position = _read_long(data, position)
        if count < 0 or length < 0 or position + length + 16 > len(data):
            raise ValueError(f"a block at offset {position} is cut short or malformed")
        block = data[position : position + length]
        stored.append((position, position + length))
        position += length
        if data[position : position + 16] != sync:
            raise ValueError(f"the block ending at offset {position} has a wrong sync marker")
        position += 16
        if codec == "deflate":
            block = zlib.decompress(block, -15)  # raw RFC 1951 data
        parts.append(block)
        size += len(block)
        ends.append(size)
        counts.append(count)
    return parts, tuple(ends), tuple(counts), tuple(stored)


def _read_blocks_fastavro(data: bytes) -> tuple[list[bytes], tuple[int, ...], tuple[int, ...]]:
    parts: list[bytes] = []
    ends: list[int] = []
    counts: list[int] = []
    size = 0
    for block in fastavro.block_reader(io.BytesIO(data)):
        body = block.bytes_.getvalue()  # type: ignore[attr-defined]  # decompressed
        parts.append(body)
        size += len(body)
        ends.append(size)
        counts.append(block.num_records)
    return parts, tuple(ends), tuple(counts)


_PARSED: dict[str, tuple[AvroSchema, Any]] = {}


def _parsed_schema(schema_text: str) -> tuple[AvroSchema, Any]:
    """The writer schema and fastavro's parsed form of it without logical types.

    Remembered by schema text: every manifest list of a table has the same schema, and
    parsing it cost more than decoding a short list. Callers must not change the result.
    """
    found = _PARSED.get(schema_text)
    if found is None:
        writer_schema = json.loads(schema_text)
        found = (writer_schema, fastavro.parse_schema(strip_logical_types(writer_schema)))
        if len(_PARSED) < 256:
            _PARSED[schema_text] = found
    return found


def int_header(metadata: Mapping[str, str], key: str, default: int, what: str) -> int:
    """An integer of the Avro key-value metadata (stored as a string), or ``default``."""
    text = metadata.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidMetadata(
            f"{what}: metadata {key!r} must be an integer, got {text!r}"
        ) from None


def map_to_avro(values: Mapping[int, Any] | None) -> list[dict[str, Any]] | None:
    """The Avro datum of an int-keyed map: a list of key/value records."""
    if values is None:
        return None
    # Appendix A: int-keyed maps are arrays of key/value records; sorted for stable bytes.
    return [{"key": k, "value": values[k]} for k in sorted(values)]


def read_map(value: Any) -> dict[int, Any] | None:
    """An int-keyed map from its Avro datum (key/value records, or an Avro map)."""
    if value is None:
        return None
    if isinstance(value, dict):  # an Avro map (string keys) from a lenient writer
        return {int(k): v for k, v in value.items()}
    return {int(kv["key"]): kv["value"] for kv in value}


def strip_logical_types(schema: AvroSchema) -> AvroSchema:
    """A copy of a writer schema without ``logicalType`` annotations.

    Records decoded with it hold the raw ints and bytes the file stores for dates,
    times, timestamps, decimals and UUIDs, instead of the datetime, Decimal and UUID
    objects fastavro would make (and fail to make for out-of-range values);
    :func:`avro_value_converter` then applies the project's conventions.
    """
    if isinstance(schema, list):
        return [strip_logical_types(s) for s in schema]
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "logicalType":
                continue
            if key in ("type", "items", "values", "fields"):
                out[key] = strip_logical_types(value)
            else:
                out[key] = value
        return out
    return schema


def named_types(schema: AvroSchema) -> dict[str, dict[str, Any]]:
    """Every named type (record, fixed, enum) defined in ``schema``, by name."""
    found: dict[str, dict[str, Any]] = {}

    def visit(s: AvroSchema) -> None:
        if isinstance(s, list):
            for branch in s:
                visit(branch)
        elif isinstance(s, dict):
            kind = s.get("type")
            if kind in ("record", "fixed", "enum") and isinstance(s.get("name"), str):
                found.setdefault(s["name"], s)
            if kind == "record":
                for f in s.get("fields", []):
                    visit(f.get("type"))
            elif kind == "array":
                visit(s.get("items"))
            elif kind == "map":
                visit(s.get("values"))
            elif isinstance(kind, dict | list):
                visit(kind)

    visit(schema)
    return found


def resolve(schema: AvroSchema, named: dict[str, dict[str, Any]]) -> AvroSchema:
    """The type ``schema`` stands for: an optional union's non-null branch, a named
    type's definition for a reference, and ``{"type": {...}}`` unwrapped."""
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        if len(branches) != 1:
            return schema
        schema = branches[0]
    if isinstance(schema, str):
        return named.get(schema, schema)
    if isinstance(schema, dict):
        inner = schema.get("type")
        if isinstance(inner, dict | list) or (isinstance(inner, str) and inner in named):
            return resolve(inner, named)
    return schema


def avro_value_converter(
    schema: AvroSchema, named: dict[str, dict[str, Any]]
) -> Callable[[Any], Any]:
    """A function turning a raw Avro datum of ``schema`` into the project's Python value.

    Only decimals (unscaled two's complement bytes) and UUIDs (16 bytes, or a string
    from writers that use the ``string`` form) need a change: dates, times and
    timestamps already are the ints the project uses once logical types are stripped.
    """
    resolved = resolve(schema, named)
    logical = resolved.get("logicalType") if isinstance(resolved, dict) else None
    if logical == "decimal":
        scale = int(resolved.get("scale", 0))

        def to_decimal(raw: Any) -> Any:
            if raw is None:
                return None
            return decimal_from_unscaled(int.from_bytes(raw, "big", signed=True), scale)

        return to_decimal
    if logical == "uuid":

        def to_uuid(raw: Any) -> Any:
            if raw is None:
                return None
            return uuid.UUID(raw) if isinstance(raw, str) else uuid.UUID(bytes=bytes(raw))

        return to_uuid
    return as_stored


def as_stored(raw: Any) -> Any:
    """A stored value unchanged: what :func:`avro_value_converter` gives for most types."""
    return raw


_INVALID = object()
_INT32_TYPES = IntegerType | DateType
_INT64_TYPES = (
    LongType | TimeType | TimestampType | TimestamptzType | TimestampNsType | TimestamptzNsType
)


def _is_int(value: Any, bits: int) -> bool:
    limit = 2 ** (bits - 1)
    return isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit


def _check_bits(bits: int) -> Callable[[Any], Any]:
    limit = 2 ** (bits - 1)

    def check(value: Any) -> Any:
        ok = isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit
        return value if ok else _INVALID

    return check


def _checked(test: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        return value if test(value) else _INVALID

    return check


def avro_datum_converter(t: IcebergType) -> Callable[[Any], Any]:
    """A function turning a non-null value of type ``t`` into its Avro datum (Appendix A).

    It returns :data:`INVALID` when the value does not follow the project's conventions
    for ``t``. The type is looked at once, here, rather than for every value: writers
    convert one partition value per data file.
    """
    if isinstance(t, BooleanType):
        return _checked(lambda v: isinstance(v, bool))
    if isinstance(t, _INT32_TYPES):
        return _check_bits(32)
    if isinstance(t, _INT64_TYPES):
        return _check_bits(64)
    if isinstance(t, FloatType | DoubleType):
        return lambda v: float(v) if _is_int(v, 64) or isinstance(v, float) else _INVALID
    if isinstance(t, StringType):
        return _checked(lambda v: isinstance(v, str))
    if isinstance(t, UUIDType):
        return lambda v: v.bytes if isinstance(v, uuid.UUID) else _INVALID
    if isinstance(t, FixedType):
        length = t.length
        return _checked(lambda v: isinstance(v, bytes) and len(v) == length)
    if isinstance(t, BinaryType | GeometryType | GeographyType):
        return _checked(lambda v: isinstance(v, bytes))
    if isinstance(t, DecimalType):
        decimal_type = t
        size = decimal_required_bytes(t.precision)

        def to_fixed(value: Any) -> Any:
            try:
                unscaled = decimal_to_unscaled(decimal_type, value)  # exact: scale, precision
            except ValidationError:
                return _INVALID
            # Appendix A: fixed of minBytesRequired(P), unscaled two's complement big-endian.
            return unscaled.to_bytes(size, "big", signed=True)

        return to_fixed
    return lambda v: _INVALID


INVALID = _INVALID
"""What :func:`avro_datum_converter`'s functions return for a value that does not fit."""


def _avro_datum(t: IcebergType, value: Any) -> Any:
    """The Avro datum of ``value``, or ``_INVALID`` when it does not fit type ``t``."""
    return avro_datum_converter(t)(value)


def invalid_partition_value(t: IcebergType, value: Any, what: str) -> ValidationError:
    """The error for a partition value that does not fit its field's type ``t``."""
    return ValidationError(
        f"{what}: {value!r} is not a valid {t} value; see the value conventions "
        "(e.g. date as int days, timestamp as int microseconds, decimal as Decimal "
        "with the type's scale, uuid as uuid.UUID)"
    )


def partition_value_to_avro(t: IcebergType, value: Any, what: str) -> Any:
    """The Avro datum of one partition value of Iceberg type ``t`` (Appendix A).

    Checks the value against the project's Python conventions, so that a wrong value is
    reported with the field it belongs to instead of failing inside the Avro encoder.
    """
    if value is None:
        return None
    datum = _avro_datum(t, value)
    if datum is _INVALID:
        raise invalid_partition_value(t, value, what)
    return datum


def renames_by_field_id(record_schema: AvroSchema, struct: StructType) -> dict[str, str]:
    """Writer field name -> spec name, for fields whose ``field-id`` the spec names otherwise.

    Iceberg readers match fields by id, not by name (older writers used other names, e.g.
    ``added_data_files_count`` for field 504); records are renamed with this map.
    """
    if not isinstance(record_schema, dict):
        return {}
    by_id = {f.field_id: f.name for f in struct.fields}
    renames = {}
    for f in record_schema.get("fields", []):
        name = by_id.get(f.get("field-id"))
        if name is not None and name != f.get("name"):
            renames[f["name"]] = name
    return renames


def rename_fields(record: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """``record`` with its keys renamed per :func:`renames_by_field_id`."""
    if not renames:
        return record
    return {renames.get(k, k): v for k, v in record.items()}
