"""Avro schemas of manifests and manifest lists (spec: Appendix A "Avro").

The manifest structs are declared here as Iceberg struct types with the field ids of the
spec's tables ("Manifest Entry Fields", "Data File Fields", "Manifest Lists"), one per
format version, and turned into Avro schemas by :func:`struct_to_avro`, which follows the
Appendix A type mapping:

* optional fields are ``["null", T]`` unions with ``"default": null``;
* field ids go into ``field-id`` (record fields) and ``element-id`` (arrays);
* maps with non-string keys are arrays of ``k<key-id>_v<value-id>`` records carrying
  ``"logicalType": "map"``;
* nested records are named ``r<field-id>`` and named types are defined once and then
  referred to by name, as the reference implementation does (Avro forbids redefining a
  name within one schema).
"""

from __future__ import annotations

import re
from typing import Any

from icewright.errors import UnsupportedFormatVersion, ValidationError
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
    UnknownType,
    UUIDType,
    VariantType,
)

AvroSchema = Any
"""An Avro schema in its parsed-JSON form (a str, list or dict)."""

MANIFEST_ENTRY_RECORD = "manifest_entry"
MANIFEST_FILE_RECORD = "manifest_file"
PARTITION_FIELD_ID = 102
DATA_FILE_FIELD_ID = 2
PARTITION_SUMMARIES_ELEMENT_ID = 508

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def decimal_required_bytes(precision: int) -> int:
    """The fewest bytes whose two's complement holds every unscaled value of ``precision``.

    Appendix A stores ``decimal(P,S)`` as ``fixed`` of this size.
    """
    size = 1
    while 2 ** (8 * size - 1) - 1 < 10**precision - 1:
        size += 1
    return size


def sanitize_name(name: str) -> str:
    """An Avro-legal name for an Iceberg field name, mangled the way the reference does.

    A leading digit becomes ``_<digit>``; any other character outside ``[A-Za-z0-9_]``
    becomes ``_x<HEX>`` of its code point. The original name is kept in the field's
    ``iceberg-field-name`` property.
    """
    out = []
    for i, ch in enumerate(name):
        if ch == "_" or ("A" <= ch <= "Z") or ("a" <= ch <= "z") or (i > 0 and "0" <= ch <= "9"):
            out.append(ch)
        elif "0" <= ch <= "9":
            out.append("_" + ch)
        else:
            out.append(f"_x{ord(ch):X}")
    return "".join(out)


def avro_field_name(name: str) -> str:
    """The Avro name a struct field of this Iceberg name is written under."""
    return name if _VALID_NAME.match(name) else sanitize_name(name)


class _NamedTypes:
    """The names of the Avro types already defined in the schema being built.

    Avro forbids defining a name twice. The reference implementation defines a repeated
    type (say two ``decimal(9,2)`` partition fields) once and refers to it by name, but
    pyiceberg cannot resolve such references; so a repeated type is defined again under
    a name made unique with the field id. Iceberg readers match fields by id, never by
    these names.
    """

    def __init__(self) -> None:
        self._defined: set[str] = set()

    def define(self, schema: dict[str, Any], field_id: int | None) -> dict[str, Any]:
        """``schema`` with a name not yet used in this Avro schema."""
        name = schema["name"]
        if name in self._defined:
            base = f"{name}_{field_id}" if field_id is not None else name
            name, n = base, 1
            while name in self._defined:
                name, n = f"{base}_{n}", n + 1
            schema = {**schema, "name": name}
        self._defined.add(name)
        return schema


def _timestamp(logical_type: str, *, utc: bool) -> dict[str, Any]:
    # Appendix A: "adjust-to-utc" is an Iceberg annotation telling timestamptz apart.
    return {"type": "long", "logicalType": logical_type, "adjust-to-utc": utc}


def _primitive_to_avro(t: IcebergType, field_id: int | None, names: _NamedTypes) -> AvroSchema:
    simple: dict[type[IcebergType], AvroSchema] = {
        BooleanType: "boolean",
        IntegerType: "int",
        LongType: "long",
        FloatType: "float",
        DoubleType: "double",
        StringType: "string",
        BinaryType: "bytes",
        # Appendix A: geometry and geography are WKB in Avro bytes.
        GeometryType: "bytes",
        GeographyType: "bytes",
        UnknownType: "null",
        DateType: {"type": "int", "logicalType": "date"},
        TimeType: {"type": "long", "logicalType": "time-micros"},
        TimestampType: _timestamp("timestamp-micros", utc=False),
        TimestamptzType: _timestamp("timestamp-micros", utc=True),
        TimestampNsType: _timestamp("timestamp-nanos", utc=False),
        TimestamptzNsType: _timestamp("timestamp-nanos", utc=True),
    }
    found = simple.get(type(t))
    if found is not None:
        return dict(found) if isinstance(found, dict) else found
    if isinstance(t, UUIDType):
        uuid_fixed = {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}
        return names.define(uuid_fixed, field_id)
    if isinstance(t, FixedType):
        fixed = {"type": "fixed", "name": f"fixed_{t.length}", "size": t.length}
        return names.define(fixed, field_id)
    if isinstance(t, DecimalType):
        return names.define(
            {
                "type": "fixed",
                "name": f"decimal_{t.precision}_{t.scale}",
                "size": decimal_required_bytes(t.precision),
                "logicalType": "decimal",
                "precision": t.precision,
                "scale": t.scale,
            },
            field_id,
        )
    raise ValidationError(f"type {t} has no Avro representation in a manifest")


def _option(schema: AvroSchema) -> AvroSchema:
    # Appendix A: the only union allowed is [null, T]; "unknown" is already null.
    return schema if schema == "null" else ["null", schema]


def _type_to_avro(t: IcebergType, field_id: int | None, names: _NamedTypes) -> AvroSchema:
    if isinstance(t, StructType):
        return _record(t, f"r{field_id}", names)
    if isinstance(t, ListType):
        element = _type_to_avro(t.element_type, t.element_id, names)
        return {
            "type": "array",
            "items": element if t.element_required else _option(element),
            "element-id": t.element_id,
        }
    if isinstance(t, MapType):
        key = _type_to_avro(t.key_type, t.key_id, names)
        value = _type_to_avro(t.value_type, t.value_id, names)
        if isinstance(t.key_type, StringType):
            return {
                "type": "map",
                "values": value if t.value_required else _option(value),
                "key-id": t.key_id,
                "value-id": t.value_id,
            }
        value_field: dict[str, Any] = {
            "name": "value",
            "type": value if t.value_required else _option(value),
            "field-id": t.value_id,
        }
        if not t.value_required:
            value_field["default"] = None
        return {
            "type": "array",
            "logicalType": "map",
            "items": names.define(
                {
                    "type": "record",
                    "name": f"k{t.key_id}_v{t.value_id}",
                    "fields": [{"name": "key", "type": key, "field-id": t.key_id}, value_field],
                },
                None,
            ),
        }
    if isinstance(t, VariantType):
        return names.define(
            {
                "type": "record",
                "name": f"r{field_id}" if field_id is not None else "variant",
                "logicalType": "variant",
                "fields": [
                    {"name": "metadata", "type": "bytes"},
                    {"name": "value", "type": "bytes"},
                ],
            },
            field_id,
        )
    return _primitive_to_avro(t, field_id, names)


def _field_to_avro(f: NestedField, names: _NamedTypes) -> dict[str, Any]:
    avro_name = avro_field_name(f.name)
    schema = _type_to_avro(f.field_type, f.field_id, names)
    out: dict[str, Any] = {"name": avro_name}
    if f.required:
        out["type"] = schema
    else:
        out["type"] = _option(schema)
        out["default"] = None
    if f.doc is not None:
        out["doc"] = f.doc
    out["field-id"] = f.field_id
    if avro_name != f.name:
        out["iceberg-field-name"] = f.name
    return out


def _record(struct: StructType, name: str, names: _NamedTypes) -> dict[str, Any]:
    fields = [_field_to_avro(f, names) for f in struct.fields]
    return names.define({"type": "record", "name": name, "fields": fields}, None)


def struct_to_avro(struct: StructType, record_name: str) -> dict[str, Any]:
    """The Avro record schema of an Iceberg struct, per Appendix A."""
    return _record(struct, record_name, _NamedTypes())


# --- the manifest structs (spec: "Manifest Entry Fields", "Data File Fields") ---------

_INT = IntegerType()
_LONG = LongType()
_STRING = StringType()
_BINARY = BinaryType()


def _req(field_id: int, name: str, t: IcebergType, doc: str) -> NestedField:
    return NestedField(field_id, name, t, required=True, doc=doc)


def _opt(field_id: int, name: str, t: IcebergType, doc: str) -> NestedField:
    return NestedField(field_id, name, t, required=False, doc=doc)


def _count_map(field_id: int, name: str, key_id: int, doc: str) -> NestedField:
    return _opt(field_id, name, MapType(key_id, _INT, key_id + 1, _LONG), doc)


def _bound_map(field_id: int, name: str, key_id: int, doc: str) -> NestedField:
    return _opt(field_id, name, MapType(key_id, _INT, key_id + 1, _BINARY), doc)


CONTENT = _req(134, "content", _INT, "File content: 0=data, 1=position deletes, 2=equality deletes")
FILE_PATH = _req(100, "file_path", _STRING, "Full URI of the file, with its scheme")
FILE_FORMAT = _req(101, "file_format", _STRING, "File format: avro, orc, parquet or puffin")
RECORD_COUNT = _req(103, "record_count", _LONG, "Number of rows in the file")
FILE_SIZE = _req(104, "file_size_in_bytes", _LONG, "File size in bytes")
BLOCK_SIZE = _req(105, "block_size_in_bytes", _LONG, "Deprecated; always a default in v1")
COLUMN_SIZES = _count_map(108, "column_sizes", 117, "Column id to bytes on disk")
VALUE_COUNTS = _count_map(109, "value_counts", 119, "Column id to value count, nulls and NaN too")
NULL_VALUE_COUNTS = _count_map(110, "null_value_counts", 121, "Column id to null count")
NAN_VALUE_COUNTS = _count_map(137, "nan_value_counts", 138, "Column id to NaN count")
LOWER_BOUNDS = _bound_map(125, "lower_bounds", 126, "Column id to lower bound (Appendix D)")
UPPER_BOUNDS = _bound_map(128, "upper_bounds", 129, "Column id to upper bound (Appendix D)")
KEY_METADATA = _opt(131, "key_metadata", _BINARY, "Encryption key metadata")
SPLIT_OFFSETS = _opt(132, "split_offsets", ListType(133, _LONG), "Split offsets, ascending")
EQUALITY_IDS = _opt(135, "equality_ids", ListType(136, _INT), "Field ids of equality deletes")
SORT_ORDER_ID = _opt(140, "sort_order_id", _INT, "Sort order id of the file")
FIRST_ROW_ID = _opt(142, "first_row_id", _LONG, "Row id of the first row of the file")
REFERENCED_DATA_FILE = _opt(143, "referenced_data_file", _STRING, "Data file all deletes refer to")
CONTENT_OFFSET = _opt(144, "content_offset", _LONG, "Offset of the content in the file")
CONTENT_SIZE = _opt(145, "content_size_in_bytes", _LONG, "Length of the content in the file")


def _partition_field(partition_type: StructType) -> NestedField:
    return _req(PARTITION_FIELD_ID, "partition", partition_type, "Partition tuple of the file")


def data_file_type(format_version: int, partition_type: StructType) -> StructType:
    """The ``data_file`` struct (field id 2) of a manifest of ``format_version``."""
    _check_version(format_version)
    partition = _partition_field(partition_type)
    if format_version == 1:
        return StructType(
            FILE_PATH,
            FILE_FORMAT,
            partition,
            RECORD_COUNT,
            FILE_SIZE,
            BLOCK_SIZE,
            COLUMN_SIZES,
            VALUE_COUNTS,
            NULL_VALUE_COUNTS,
            NAN_VALUE_COUNTS,
            LOWER_BOUNDS,
            UPPER_BOUNDS,
            KEY_METADATA,
            SPLIT_OFFSETS,
            SORT_ORDER_ID,
        )
    common = (
        CONTENT,
        FILE_PATH,
        FILE_FORMAT,
        partition,
        RECORD_COUNT,
        FILE_SIZE,
        COLUMN_SIZES,
        VALUE_COUNTS,
        NULL_VALUE_COUNTS,
        NAN_VALUE_COUNTS,
        LOWER_BOUNDS,
        UPPER_BOUNDS,
        KEY_METADATA,
        SPLIT_OFFSETS,
        EQUALITY_IDS,
        SORT_ORDER_ID,
    )
    if format_version == 2:
        return StructType(*common, REFERENCED_DATA_FILE)
    return StructType(*common, FIRST_ROW_ID, REFERENCED_DATA_FILE, CONTENT_OFFSET, CONTENT_SIZE)


def manifest_entry_type(format_version: int, partition_type: StructType) -> StructType:
    """The ``manifest_entry`` struct of a manifest of ``format_version``."""
    data_file = _req(
        DATA_FILE_FIELD_ID,
        "data_file",
        data_file_type(format_version, partition_type),
        "The file and its metrics",
    )
    status = _req(0, "status", _INT, "0=existing, 1=added, 2=deleted")
    if format_version == 1:
        # v1: snapshot_id is required and there are no sequence numbers.
        return StructType(
            status, _req(1, "snapshot_id", _LONG, "Snapshot that added it"), data_file
        )
    return StructType(
        status,
        _opt(1, "snapshot_id", _LONG, "Snapshot that added or deleted it; inherited when null"),
        _opt(3, "sequence_number", _LONG, "Data sequence number; inherited when null"),
        _opt(4, "file_sequence_number", _LONG, "File sequence number; inherited when null"),
        data_file,
    )


def manifest_entry_schema(format_version: int, partition_type: StructType) -> dict[str, Any]:
    """The Avro schema of a manifest: the ``manifest_entry`` record."""
    return struct_to_avro(
        manifest_entry_type(format_version, partition_type), MANIFEST_ENTRY_RECORD
    )


# --- the manifest list struct (spec: "Manifest Lists") --------------------------------

FIELD_SUMMARY = StructType(
    _req(509, "contains_null", BooleanType(), "Whether any partition value is null"),
    _opt(518, "contains_nan", BooleanType(), "Whether any partition value is NaN"),
    _opt(510, "lower_bound", _BINARY, "Lower bound of the partition values (Appendix D)"),
    _opt(511, "upper_bound", _BINARY, "Upper bound of the partition values (Appendix D)"),
)


def manifest_file_type(format_version: int) -> StructType:
    """The ``manifest_file`` struct of a manifest list of ``format_version``."""
    _check_version(format_version)
    path = _req(500, "manifest_path", _STRING, "Location of the manifest")
    length = _req(501, "manifest_length", _LONG, "Manifest size in bytes")
    spec_id = _req(502, "partition_spec_id", _INT, "Partition spec the manifest was written with")
    snapshot_id = _req(503, "added_snapshot_id", _LONG, "Snapshot that added the manifest")
    partitions = _opt(
        507,
        "partitions",
        ListType(PARTITION_SUMMARIES_ELEMENT_ID, FIELD_SUMMARY),
        "One summary per partition field",
    )
    key_metadata = _opt(519, "key_metadata", _BINARY, "Encryption key metadata")
    # The counts are optional in v1 and required from v2 on.
    count = _opt if format_version == 1 else _req
    added_files = count(504, "added_files_count", _INT, "Entries with status ADDED")
    existing_files = count(505, "existing_files_count", _INT, "Entries with status EXISTING")
    deleted_files = count(506, "deleted_files_count", _INT, "Entries with status DELETED")
    added_rows = count(512, "added_rows_count", _LONG, "Rows of files with status ADDED")
    existing_rows = count(513, "existing_rows_count", _LONG, "Rows of files with status EXISTING")
    deleted_rows = count(514, "deleted_rows_count", _LONG, "Rows of files with status DELETED")
    if format_version == 1:
        return StructType(
            path,
            length,
            spec_id,
            snapshot_id,
            added_files,
            existing_files,
            deleted_files,
            partitions,
            added_rows,
            existing_rows,
            deleted_rows,
            key_metadata,
        )
    fields = [
        path,
        length,
        spec_id,
        _req(517, "content", _INT, "0=data, 1=deletes"),
        _req(515, "sequence_number", _LONG, "Sequence number when the manifest was added"),
        _req(516, "min_sequence_number", _LONG, "Lowest data sequence number of live files"),
        snapshot_id,
        added_files,
        existing_files,
        deleted_files,
        added_rows,
        existing_rows,
        deleted_rows,
        partitions,
        key_metadata,
    ]
    if format_version >= 3:
        fields.append(_opt(520, "first_row_id", _LONG, "First row id of rows in ADDED data files"))
    return StructType(*fields)


def manifest_list_schema(format_version: int) -> dict[str, Any]:
    """The Avro schema of a manifest list: the ``manifest_file`` record."""
    return struct_to_avro(manifest_file_type(format_version), MANIFEST_FILE_RECORD)


SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)


def _check_version(format_version: int) -> None:
    if format_version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedFormatVersion(
            f"format version {format_version!r} is not supported for manifests: "
            f"use one of {SUPPORTED_FORMAT_VERSIONS}"
        )
