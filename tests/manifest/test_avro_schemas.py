"""The Avro schemas of manifests and manifest lists against the spec's field tables."""

from __future__ import annotations

from typing import Any

import fastavro
import pytest

from icewright.errors import UnsupportedFormatVersion
from icewright.manifest import manifest_entry_schema, manifest_list_schema, struct_to_avro
from icewright.manifest.avro_schemas import decimal_required_bytes, sanitize_name
from icewright.spec.types import (
    DecimalType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
)

from .samples import ALL_TYPES_SCHEMA, ALL_TYPES_SPEC, SCHEMA, SPEC


def fields(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in record["fields"]}


def ids(record: dict[str, Any]) -> dict[int, str]:
    return {f["field-id"]: f["name"] for f in record["fields"]}


def required_ids(record: dict[str, Any]) -> set[int]:
    return {f["field-id"] for f in record["fields"] if not isinstance(f["type"], list)}


def optional_fields_have_null_default(record: dict[str, Any]) -> bool:
    return all(
        f.get("default", "missing") is None for f in record["fields"] if isinstance(f["type"], list)
    )


# Spec "Manifest Entry Fields" / "Data File Fields": id -> name.
DATA_FILE_V2 = {
    134: "content",
    100: "file_path",
    101: "file_format",
    102: "partition",
    103: "record_count",
    104: "file_size_in_bytes",
    108: "column_sizes",
    109: "value_counts",
    110: "null_value_counts",
    137: "nan_value_counts",
    125: "lower_bounds",
    128: "upper_bounds",
    131: "key_metadata",
    132: "split_offsets",
    135: "equality_ids",
    140: "sort_order_id",
    143: "referenced_data_file",
}
DATA_FILE_V1 = {
    **{k: v for k, v in DATA_FILE_V2.items() if k not in (134, 135, 143)},
    105: "block_size_in_bytes",
}
DATA_FILE_V3 = {
    **DATA_FILE_V2,
    142: "first_row_id",
    144: "content_offset",
    145: "content_size_in_bytes",
}


@pytest.mark.parametrize(
    ("version", "expected", "required"),
    [
        (1, DATA_FILE_V1, {100, 101, 102, 103, 104, 105}),
        (2, DATA_FILE_V2, {134, 100, 101, 102, 103, 104}),
        (3, DATA_FILE_V3, {134, 100, 101, 102, 103, 104}),
    ],
)
def test_manifest_entry_schema_matches_spec_tables(
    version: int, expected: dict[int, str], required: set[int]
) -> None:
    schema = manifest_entry_schema(version, SPEC.partition_type(SCHEMA))
    fastavro.parse_schema(schema)  # a valid Avro schema
    assert schema["name"] == "manifest_entry"
    top = ids(schema)
    if version == 1:
        assert top == {0: "status", 1: "snapshot_id", 2: "data_file"}
        assert required_ids(schema) == {0, 1, 2}
    else:
        assert top == {
            0: "status",
            1: "snapshot_id",
            3: "sequence_number",
            4: "file_sequence_number",
            2: "data_file",
        }
        assert required_ids(schema) == {0, 2}
    assert optional_fields_have_null_default(schema)
    data_file = fields(schema)["data_file"]["type"]
    assert data_file["name"] == "r2"
    assert ids(data_file) == expected
    assert required_ids(data_file) == required
    assert optional_fields_have_null_default(data_file)


def test_data_file_maps_and_lists_carry_their_ids() -> None:
    data_file = fields(manifest_entry_schema(2, SPEC.partition_type(SCHEMA)))["data_file"]["type"]
    f = fields(data_file)
    for name, key_id, value_id, value_type in [
        ("column_sizes", 117, 118, "long"),
        ("value_counts", 119, 120, "long"),
        ("null_value_counts", 121, 122, "long"),
        ("nan_value_counts", 138, 139, "long"),
        ("lower_bounds", 126, 127, "bytes"),
        ("upper_bounds", 129, 130, "bytes"),
    ]:
        null, array = f[name]["type"]
        assert null == "null"
        # Appendix A: non-string keys -> array of 2-field records with logicalType map.
        assert array["type"] == "array"
        assert array["logicalType"] == "map"
        record = array["items"]
        assert record["name"] == f"k{key_id}_v{value_id}"
        assert [(x["name"], x["type"], x["field-id"]) for x in record["fields"]] == [
            ("key", "int", key_id),
            ("value", value_type, value_id),
        ]
    assert f["split_offsets"]["type"][1] == {"type": "array", "items": "long", "element-id": 133}
    assert f["equality_ids"]["type"][1] == {"type": "array", "items": "int", "element-id": 136}
    assert f["file_path"]["type"] == "string"
    assert f["key_metadata"]["type"] == ["null", "bytes"]


def test_partition_struct_uses_partition_field_ids_and_names() -> None:
    data_file = fields(manifest_entry_schema(2, SPEC.partition_type(SCHEMA)))["data_file"]["type"]
    partition = fields(data_file)["partition"]
    assert partition["field-id"] == 102
    record = partition["type"]
    assert record["name"] == "r102"
    assert [(f["name"], f["field-id"], f["type"]) for f in record["fields"]] == [
        ("region", 1000, ["null", "string"]),
        ("ts_day", 1001, ["null", {"type": "int", "logicalType": "date"}]),
        ("id_bucket", 1002, ["null", "int"]),
        ("name_trunc", 1003, ["null", "string"]),
    ]
    assert optional_fields_have_null_default(record)


def test_unpartitioned_partition_struct_is_an_empty_record() -> None:
    schema = manifest_entry_schema(2, StructType())
    fastavro.parse_schema(schema)
    data_file = fields(schema)["data_file"]["type"]
    assert fields(data_file)["partition"]["type"] == {
        "type": "record",
        "name": "r102",
        "fields": [],
    }


def test_appendix_a_type_mapping() -> None:
    record = struct_to_avro(ALL_TYPES_SPEC.partition_type(ALL_TYPES_SCHEMA), "r102")
    fastavro.parse_schema(record)
    got = {f["name"]: f["type"][1] for f in record["fields"]}
    assert got["b"] == "boolean"
    assert got["i"] == "int"
    assert got["l"] == "long"
    assert got["f"] == "float"
    assert got["d"] == "double"
    assert got["dec"] == {
        "type": "fixed",
        "name": "decimal_9_2",
        "size": 4,
        "logicalType": "decimal",
        "precision": 9,
        "scale": 2,
    }
    # Avro forbids a second definition of a name, and pyiceberg cannot follow references:
    # the second decimal(9,2) is defined again under a name made unique by its field id.
    assert got["dec2"] == {**got["dec"], "name": "decimal_9_2_1015"}
    assert got["big"]["size"] == 16
    assert got["dt"] == {"type": "int", "logicalType": "date"}
    assert got["t"] == {"type": "long", "logicalType": "time-micros"}
    assert got["ts"] == {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}
    assert got["tstz"] == {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}
    assert got["s"] == "string"
    assert got["u"] == {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}
    assert got["fx"] == {"type": "fixed", "name": "fixed_3", "size": 3}
    assert got["bin"] == "bytes"


def test_nested_types_map_per_appendix_a() -> None:
    struct = StructType(
        NestedField(1, "tags", MapType(2, StringType(), 3, LongType(), value_required=False)),
        NestedField(4, "items", ListType(5, StructType(NestedField(6, "x", LongType())), False)),
        NestedField(7, "gone", UnknownType()),
    )
    record = struct_to_avro(struct, "table")
    fastavro.parse_schema(record)
    f = fields(record)
    assert f["tags"]["type"][1] == {
        "type": "map",
        "values": ["null", "long"],
        "key-id": 2,
        "value-id": 3,
    }
    items = f["items"]["type"][1]
    assert items["element-id"] == 5
    assert items["items"][0] == "null"
    assert items["items"][1]["name"] == "r5"
    assert f["gone"]["type"] == "null"


def test_decimal_sizes_hold_every_value_of_the_precision() -> None:
    for precision in range(1, 39):
        size = decimal_required_bytes(precision)
        assert 2 ** (8 * size - 1) > 10**precision - 1
        assert 2 ** (8 * (size - 1) - 1) <= 10**precision - 1


def test_invalid_avro_names_are_sanitized_and_kept() -> None:
    assert sanitize_name("1x-y") == "_1x_x2Dy"
    record = struct_to_avro(StructType(NestedField(1000, "a b", DecimalType(3, 1))), "r102")
    fastavro.parse_schema(record)
    (f,) = record["fields"]
    assert f["name"] == "a_x20b"
    assert f["iceberg-field-name"] == "a b"


# Spec "Manifest Lists": id -> (name, required in v1, required in v2/v3)
MANIFEST_FILE = {
    500: ("manifest_path", True, True),
    501: ("manifest_length", True, True),
    502: ("partition_spec_id", True, True),
    517: ("content", None, True),
    515: ("sequence_number", None, True),
    516: ("min_sequence_number", None, True),
    503: ("added_snapshot_id", True, True),
    504: ("added_files_count", False, True),
    505: ("existing_files_count", False, True),
    506: ("deleted_files_count", False, True),
    512: ("added_rows_count", False, True),
    513: ("existing_rows_count", False, True),
    514: ("deleted_rows_count", False, True),
    507: ("partitions", False, False),
    519: ("key_metadata", False, False),
}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_manifest_list_schema_matches_spec_table(version: int) -> None:
    schema = manifest_list_schema(version)
    fastavro.parse_schema(schema)
    assert schema["name"] == "manifest_file"
    expected = {
        fid: (name, req1 if version == 1 else req2)
        for fid, (name, req1, req2) in MANIFEST_FILE.items()
        if version > 1 or req1 is not None
    }
    if version == 3:
        expected[520] = ("first_row_id", False)
    got = {f["field-id"]: (f["name"], not isinstance(f["type"], list)) for f in schema["fields"]}
    assert got == expected
    assert optional_fields_have_null_default(schema)
    summaries = fields(schema)["partitions"]["type"][1]
    assert summaries["element-id"] == 508
    element = summaries["items"]
    assert element["name"] == "r508"
    assert [(f["name"], f["field-id"], f["type"]) for f in element["fields"]] == [
        ("contains_null", 509, "boolean"),
        ("contains_nan", 518, ["null", "boolean"]),
        ("lower_bound", 510, ["null", "bytes"]),
        ("upper_bound", 511, ["null", "bytes"]),
    ]


def test_unsupported_format_version() -> None:
    with pytest.raises(UnsupportedFormatVersion, match="format version 4"):
        manifest_list_schema(4)
    with pytest.raises(UnsupportedFormatVersion):
        manifest_entry_schema(0, StructType())
