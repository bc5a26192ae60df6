"""Avro encoding and decoding shared by manifests and manifest lists (spec: Appendix A).

Reading decodes every record with the writer's schema minus its logical types, so
values come back as the ints and bytes the file stores; the few that the project's
value conventions represent differently (decimals, UUIDs) are converted from the
writer's schema. Fields are matched by field id, as Iceberg readers must.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
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
    return _identity


def _identity(raw: Any) -> Any:
    return raw


_INVALID = object()
_INT32_TYPES = IntegerType | DateType
_INT64_TYPES = (
    LongType | TimeType | TimestampType | TimestamptzType | TimestampNsType | TimestamptzNsType
)


def _is_int(value: Any, bits: int) -> bool:
    limit = 2 ** (bits - 1)
    return isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit


def _avro_datum(t: IcebergType, value: Any) -> Any:
    """The Avro datum of ``value``, or ``_INVALID`` when it does not fit type ``t``."""
    if isinstance(t, BooleanType):
        ok = isinstance(value, bool)
    elif isinstance(t, _INT32_TYPES):
        ok = _is_int(value, 32)
    elif isinstance(t, _INT64_TYPES):
        ok = _is_int(value, 64)
    elif isinstance(t, FloatType | DoubleType):
        return float(value) if _is_int(value, 64) or isinstance(value, float) else _INVALID
    elif isinstance(t, StringType):
        ok = isinstance(value, str)
    elif isinstance(t, UUIDType):
        return value.bytes if isinstance(value, uuid.UUID) else _INVALID
    elif isinstance(t, FixedType):
        ok = isinstance(value, bytes) and len(value) == t.length
    elif isinstance(t, BinaryType | GeometryType | GeographyType):
        ok = isinstance(value, bytes)
    elif isinstance(t, DecimalType):
        try:
            unscaled = decimal_to_unscaled(t, value)  # exact, checks scale and precision
        except ValidationError:
            return _INVALID
        # Appendix A: fixed of minBytesRequired(P), unscaled two's complement big-endian.
        return unscaled.to_bytes(decimal_required_bytes(t.precision), "big", signed=True)
    else:
        ok = False
    return value if ok else _INVALID


def partition_value_to_avro(t: IcebergType, value: Any, what: str) -> Any:
    """The Avro datum of one partition value of Iceberg type ``t`` (Appendix A).

    Checks the value against the project's Python conventions, so that a wrong value is
    reported with the field it belongs to instead of failing inside the Avro encoder.
    """
    if value is None:
        return None
    datum = _avro_datum(t, value)
    if datum is _INVALID:
        raise ValidationError(
            f"{what}: {value!r} is not a valid {t} value; see the value conventions "
            "(e.g. date as int days, timestamp as int microseconds, decimal as Decimal "
            "with the type's scale, uuid as uuid.UUID)"
        )
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
