"""Iceberg types: Appendix C JSON forms, validation, and the promotion rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from pyiceberg.types import NestedField as PyNestedField

from icewright.errors import ValidationError
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
    PrimitiveType,
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
    field_from_json,
    field_to_json,
    is_promotion_allowed,
    parse_primitive,
    type_from_json,
    type_to_json,
)
from tests.spec import strategies as ist

# every canonical type string of Appendix C, with the type it names
CANONICAL: list[tuple[str, PrimitiveType]] = [
    ("unknown", UnknownType()),
    ("boolean", BooleanType()),
    ("int", IntegerType()),
    ("long", LongType()),
    ("float", FloatType()),
    ("double", DoubleType()),
    ("date", DateType()),
    ("time", TimeType()),
    ("timestamp", TimestampType()),
    ("timestamptz", TimestamptzType()),
    ("timestamp_ns", TimestampNsType()),
    ("timestamptz_ns", TimestamptzNsType()),
    ("string", StringType()),
    ("uuid", UUIDType()),
    ("fixed[16]", FixedType(16)),
    ("binary", BinaryType()),
    ("decimal(9,2)", DecimalType(9, 2)),
    ("decimal(38,0)", DecimalType(38, 0)),
    ("variant", VariantType()),
    ("geometry", GeometryType()),
    ("geometry(srid:4326)", GeometryType("srid:4326")),
    ("geography", GeographyType()),
    ("geography(srid:4326)", GeographyType("srid:4326")),
    ("geography(srid:4326, spherical)", GeographyType("srid:4326", "spherical")),
    ("geography(EPSG:4326, karney)", GeographyType("EPSG:4326", "karney")),
]


@pytest.mark.parametrize(("text", "expected"), CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_type_strings_round_trip(text: str, expected: PrimitiveType) -> None:
    t = type_from_json(text)
    assert t == expected
    assert type(t) is type(expected)
    assert type_to_json(t) == text
    assert str(t) == text
    assert hash(t) == hash(expected)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # Appendix C: readers accept optional whitespace around parameters and separators
        ("decimal(9, 2)", "decimal(9,2)"),
        ("decimal( 9 ,2 )", "decimal(9,2)"),
        ("fixed[ 16 ]", "fixed[16]"),
        ("geometry( srid:4326 )", "geometry(srid:4326)"),
        ("geography(srid:4326,spherical)", "geography(srid:4326, spherical)"),
        ("geography( srid:4326 , vincenty )", "geography(srid:4326, vincenty)"),
        ("  long ", "long"),
        # Iceberg Java matches type names case-insensitively (Types.fromTypeName)
        ("LONG", "long"),
        ("Decimal(9, 2)", "decimal(9,2)"),
        ("Timestamp_NS", "timestamp_ns"),
        ("geography(EPSG:4326, Karney)", "geography(EPSG:4326, karney)"),
    ],
)
def test_lenient_type_strings_write_back_canonical(text: str, canonical: str) -> None:
    assert type_to_json(type_from_json(text)) == canonical


def test_parameter_defaults_make_equal_types() -> None:
    # spec: geometry's C defaults to OGC:CRS84; geography's A to spherical
    assert GeometryType() == GeometryType("OGC:CRS84")
    assert GeographyType() == GeographyType("OGC:CRS84", "spherical")
    assert GeographyType("EPSG:4326") == GeographyType("EPSG:4326", "spherical")
    assert GeographyType("EPSG:4326") != GeographyType("EPSG:4326", "karney")
    assert GeometryType("EPSG:4326") != GeographyType("EPSG:4326")
    assert hash(GeometryType()) == hash(GeometryType("OGC:CRS84"))
    assert FixedType(16) != FixedType(8)
    assert DecimalType(9, 2) != DecimalType(9, 3)


def test_v3_types_need_format_version_3() -> None:
    for name in ("unknown", "variant", "timestamp_ns", "timestamptz_ns", "geometry", "geography"):
        assert parse_primitive(name).min_format_version == 3
    for name in ("long", "decimal(9,2)", "fixed[4]", "uuid", "timestamptz"):
        assert parse_primitive(name).min_format_version == 1


@pytest.mark.parametrize(
    "bad",
    [
        "varchar",
        "integer",
        "decimal(40,2)",
        "decimal(0,0)",
        "decimal(9)",
        "decimal(9,-2)",
        "fixed[0]",
        "fixed[]",
        "fixed(16)",
        "geography(srid:4326, flat)",
        "list<int>",
        "",
    ],
)
def test_bad_type_strings(bad: str) -> None:
    with pytest.raises(ValidationError):
        type_from_json(bad)


# --- nested types ----------------------------------------------------------------

# Appendix C examples for list and map, exactly
SPEC_LIST = {"type": "list", "element-id": 3, "element-required": True, "element": "string"}
SPEC_MAP = {
    "type": "map",
    "key-id": 4,
    "key": "string",
    "value-id": 5,
    "value-required": False,
    "value": "double",
}
SPEC_STRUCT = {
    "type": "struct",
    "fields": [
        {
            "id": 1,
            "name": "id",
            "required": True,
            "type": "uuid",
            "initial-default": "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb",
            "write-default": "ec5911be-b0a7-458c-8438-c9a3e53cffae",
        },
        {"id": 2, "name": "data", "required": False, "type": SPEC_LIST},
        {"id": 6, "name": "m", "required": False, "type": SPEC_MAP, "doc": "a map"},
    ],
}


def test_spec_list_and_map_examples() -> None:
    lst = type_from_json(SPEC_LIST)
    assert lst == ListType(3, StringType(), element_required=True)
    assert type_to_json(lst) == SPEC_LIST
    mp = type_from_json(SPEC_MAP)
    assert mp == MapType(4, StringType(), 5, DoubleType(), value_required=False)
    assert type_to_json(mp) == SPEC_MAP
    assert [f.field_id for f in mp.fields] == [4, 5]
    assert mp.key_field.required and not mp.value_field.required


def test_spec_struct_example_round_trips_with_defaults() -> None:
    t = type_from_json(SPEC_STRUCT)
    assert isinstance(t, StructType)
    first = t.fields[0]
    assert first.required and first.field_type == UUIDType()
    assert first.initial_default == "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb"
    assert first.write_default == "ec5911be-b0a7-458c-8438-c9a3e53cffae"
    assert t.field_by_name("m") is not None and t.field_by_name("m").doc == "a map"  # type: ignore[union-attr]
    assert t.field_by_id(2) == t.fields[1]
    assert t.field_by_name("nope") is None
    assert type_to_json(t) == SPEC_STRUCT


def test_optional_field_keys_are_written_only_when_set() -> None:
    f = NestedField(1, "a", IntegerType())
    assert field_to_json(f) == {"id": 1, "name": "a", "required": False, "type": "int"}
    g = NestedField(2, "b", IntegerType(), True, "doc", 0, 5)
    assert field_to_json(g) == {
        "id": 2,
        "name": "b",
        "required": True,
        "type": "int",
        "doc": "doc",
        "initial-default": 0,
        "write-default": 5,
    }
    assert field_from_json(field_to_json(g)) == g
    assert f.optional and not g.optional


def test_fields_with_object_defaults_are_hashable() -> None:
    # a struct default is {} (spec "Default values"); a list default is a JSON array
    point = StructType(NestedField(2, "x", IntegerType(), initial_default=0))
    a = NestedField(1, "point", point, initial_default={}, write_default={})
    b = NestedField(3, "tags", ListType(4, StringType()), initial_default=["x"])
    assert hash(a) == hash(NestedField(1, "point", point, initial_default={}, write_default={}))
    assert len({a, b}) == 2
    assert a != NestedField(1, "point", point)  # defaults still take part in equality


def test_unknown_must_be_optional() -> None:
    # spec "Primitive Types": unknown "must be optional with null defaults"
    assert NestedField(1, "u", UnknownType()).optional
    with pytest.raises(ValidationError, match="optional"):
        NestedField(1, "u", UnknownType(), required=True)
    with pytest.raises(ValidationError, match="optional"):
        ListType(1, UnknownType(), element_required=True)
    with pytest.raises(ValidationError, match="optional"):
        MapType(1, StringType(), 2, UnknownType(), value_required=True)
    with pytest.raises(ValidationError, match="optional"):
        MapType(1, UnknownType(), 2, StringType(), value_required=False)
    with pytest.raises(ValidationError, match="optional"):
        field_from_json({"id": 1, "name": "u", "required": True, "type": "unknown"})
    assert ListType(1, UnknownType(), element_required=False).element_field.optional


@pytest.mark.parametrize(
    "bad",
    [
        ["int"],
        None,
        5,
        {"type": "set", "element": "int"},
        {"fields": []},
        {"type": "struct"},
        {"type": "struct", "fields": {"id": 1}},
        {"type": "struct", "fields": ["int"]},
        {"type": "struct", "fields": [{"name": "a", "required": True, "type": "int"}]},
        {"type": "struct", "fields": [{"id": 1, "required": True, "type": "int"}]},
        {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]},
        {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True}]},
        {"type": "struct", "fields": [{"id": "1", "name": "a", "required": True, "type": "int"}]},
        {"type": "struct", "fields": [{"id": True, "name": "a", "required": True, "type": "int"}]},
        {"type": "struct", "fields": [{"id": 1, "name": 7, "required": True, "type": "int"}]},
        {"type": "struct", "fields": [{"id": 1, "name": "a", "required": "yes", "type": "int"}]},
        {
            "type": "struct",
            "fields": [{"id": 1, "name": "a", "required": True, "type": "int", "doc": 5}],
        },
        {"type": "list", "element": "int", "element-required": True},
        {"type": "list", "element-id": 1, "element-required": True},
        {"type": "list", "element-id": 1, "element": "int"},
        {"type": "list", "element-id": 1, "element": "int", "element-required": 1},
        {"type": "map", "key-id": 1, "key": "int", "value-id": 2, "value": "int"},
        {"type": "map", "key": "int", "value-id": 2, "value": "int", "value-required": True},
        {"type": "map", "key-id": 1, "key": "int", "value-id": 2, "value-required": True},
        {"type": "list", "element-id": 1, "element": "decimal(40,2)", "element-required": True},
    ],
    ids=repr,
)
def test_bad_type_json(bad: Any) -> None:
    with pytest.raises(ValidationError):
        type_from_json(bad)


@settings(deadline=None)
@given(ist.nested_types())
def test_nested_types_round_trip_through_json_text(t: IcebergType) -> None:
    text = json.dumps(type_to_json(t))
    back = type_from_json(json.loads(text))
    assert back == t
    assert json.dumps(type_to_json(back)) == text


@settings(deadline=None)
@given(ist.primitive_types())
def test_primitive_types_round_trip(t: PrimitiveType) -> None:
    assert type_from_json(type_to_json(t)) == t
    assert type_to_json(type_from_json(type_to_json(t))) == type_to_json(t)


@settings(deadline=None)
@given(ist.storable_primitive_types())
def test_primitive_strings_parse_in_pyiceberg(t: PrimitiveType) -> None:
    # an independent parser reads our canonical strings as the same type
    field = {"id": 1, "name": "x", "type": type_to_json(t), "required": False}
    parsed = PyNestedField.model_validate(field).field_type
    assert type_from_json(str(parsed)) == t


# --- promotion (spec "Schema Evolution") --------------------------------------------

ALLOWED = [
    (IntegerType(), LongType()),
    (FloatType(), DoubleType()),
    (DecimalType(9, 2), DecimalType(12, 2)),
    (DecimalType(9, 2), DecimalType(38, 2)),
    (LongType(), LongType()),
    (DecimalType(9, 2), DecimalType(9, 2)),
]
V3_ONLY = [
    (DateType(), TimestampType()),
    (DateType(), TimestampNsType()),
    (UnknownType(), LongType()),
    (UnknownType(), StringType()),
    (UnknownType(), StructType(NestedField(1, "a", IntegerType()))),
]
NEVER = [
    (LongType(), IntegerType()),
    (DoubleType(), FloatType()),
    (IntegerType(), StringType()),
    (IntegerType(), DoubleType()),
    (DecimalType(9, 2), DecimalType(8, 2)),
    (DecimalType(9, 2), DecimalType(12, 3)),
    (DateType(), TimestamptzType()),
    (DateType(), TimestamptzNsType()),
    (TimestampType(), TimestampNsType()),
    (TimestampType(), TimestamptzType()),
    (StringType(), BinaryType()),
    (FixedType(4), FixedType(8)),
    (FixedType(4), BinaryType()),
    (UUIDType(), FixedType(16)),
    (LongType(), UnknownType()),
]


@pytest.mark.parametrize(("source", "target"), ALLOWED, ids=str)
def test_promotions_allowed_in_every_version(source: IcebergType, target: IcebergType) -> None:
    for version in (1, 2, 3):
        assert is_promotion_allowed(source, target, format_version=version)


@pytest.mark.parametrize(("source", "target"), V3_ONLY, ids=str)
def test_promotions_added_in_v3(source: IcebergType, target: IcebergType) -> None:
    assert is_promotion_allowed(source, target)
    assert is_promotion_allowed(source, target, format_version=3)
    assert not is_promotion_allowed(source, target, format_version=2)


@pytest.mark.parametrize(("source", "target"), NEVER, ids=str)
def test_promotions_never_allowed(source: IcebergType, target: IcebergType) -> None:
    assert not is_promotion_allowed(source, target)
    assert not is_promotion_allowed(source, target, format_version=2)
