"""Schemas: Appendix C JSON, lookups, validation, and pyiceberg as an independent peer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg import schema as pys
from pyiceberg import types as pyt

from icewright.errors import ValidationError
from icewright.spec.schema import (
    Schema,
    assign_fresh_ids,
    assign_ids_like,
    fresh_ids,
    walk_fields,
)
from icewright.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestamptzType,
    UnknownType,
    VariantType,
    type_from_json,
)
from icewright.spec.values import from_json_value
from tests.spec import strategies as ist

# A nested schema in Appendix C form, as Iceberg Java writes it
SCHEMA_JSON: dict[str, Any] = {
    "type": "struct",
    "schema-id": 3,
    "identifier-field-ids": [1, 5],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string", "doc": "payload"},
        {
            "id": 3,
            "name": "location",
            "required": True,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 4, "name": "lat", "required": False, "type": "double"},
                    {"id": 5, "name": "zone", "required": True, "type": "int"},
                ],
            },
        },
        {
            "id": 6,
            "name": "points",
            "required": False,
            "type": {
                "type": "list",
                "element-id": 7,
                "element": {
                    "type": "struct",
                    "fields": [{"id": 8, "name": "x", "required": True, "type": "float"}],
                },
                "element-required": True,
            },
        },
        {
            "id": 9,
            "name": "attrs",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 10,
                "key": "string",
                "value-id": 11,
                "value": "decimal(9,2)",
                "value-required": False,
            },
        },
        {
            "id": 12,
            "name": "added",
            "required": False,
            "type": "timestamptz",
            "initial-default": "2017-11-16T22:31:08.000000+00:00",
            "write-default": "2017-11-16T22:31:08.000000+00:00",
        },
    ],
}


@pytest.fixture
def schema() -> Schema:
    return Schema.from_json(SCHEMA_JSON)


def test_json_round_trip_is_exact(schema: Schema) -> None:
    assert schema.to_json() == SCHEMA_JSON
    assert Schema.from_json(json.loads(json.dumps(schema.to_json()))) == schema
    assert schema.schema_id == 3
    assert schema.identifier_field_ids == (1, 5)


def test_identifier_ids_are_written_only_when_set() -> None:
    s = Schema(NestedField(1, "a", LongType(), required=True))
    assert "identifier-field-ids" not in s.to_json()  # as Iceberg Java's SchemaParser
    assert s.to_json()["schema-id"] == 0


def test_v1_schema_without_schema_id() -> None:
    s = Schema.from_json(
        {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int"}]}
    )
    assert s.schema_id == 0
    assert s.find_type("a") == IntegerType()


def test_lookups_by_id_and_dotted_name(schema: Schema) -> None:
    assert schema.find_field(1).name == "id"
    assert schema.find_field("location.lat").field_id == 4
    assert schema.find_field("points.element.x").field_id == 8
    assert schema.find_field("points.element").field_id == 7
    assert schema.find_field("attrs.key").field_id == 10
    assert schema.find_field("attrs.value").field_id == 11
    assert schema.find_field("LOCATION.Lat", case_sensitive=False).field_id == 4
    assert schema.find_type(11) == DecimalType(9, 2)
    assert schema.find_type("added") == TimestamptzType()
    assert schema.column_name(8) == "points.element.x"
    assert schema.parent_id(8) == 7
    assert schema.parent_id(7) == 6
    assert schema.parent_id(1) is None
    assert [f.field_id for f in schema.leaf_fields()] == [1, 2, 4, 5, 8, 10, 11, 12]
    assert schema.field_ids() == frozenset(range(1, 13))
    assert schema.as_struct().fields == schema.fields


def test_failed_lookups_name_the_columns(schema: Schema) -> None:
    with pytest.raises(ValidationError, match="no field with id 99"):
        schema.find_field(99)
    with pytest.raises(ValidationError, match=r"location\.lat"):
        schema.find_field("location.latitude")
    with pytest.raises(ValidationError):
        schema.find_field("LOCATION.lat")  # case-sensitive by default
    with pytest.raises(ValidationError):
        schema.column_name(99)


def test_highest_field_id_covers_nested_types() -> None:
    s = Schema(
        NestedField(1, "a", ListType(40, MapType(7, StringType(), 55, IntegerType()))),
        NestedField(2, "b", StructType(NestedField(30, "c", LongType()))),
    )
    assert s.highest_field_id == 55
    assert Schema().highest_field_id == 0


@pytest.mark.parametrize(
    "fields",
    [
        (NestedField(1, "a", LongType()), NestedField(1, "b", LongType())),
        (NestedField(1, "a", ListType(1, LongType())),),
        (NestedField(1, "a", MapType(2, StringType(), 2, LongType())),),
        (
            NestedField(1, "a", StructType(NestedField(3, "x", LongType()))),
            NestedField(3, "b", LongType()),
        ),
    ],
    ids=["top-level", "list-element", "map-key-value", "nested-struct"],
)
def test_duplicate_ids_are_rejected(fields: tuple[NestedField, ...]) -> None:
    with pytest.raises(ValidationError, match="field id"):
        Schema(*fields)


@pytest.mark.parametrize(
    "fields",
    [
        (NestedField(1, "a", LongType()), NestedField(2, "a", IntegerType())),
        (
            NestedField(
                1, "s", StructType(NestedField(2, "x", LongType()), NestedField(3, "x", LongType()))
            ),
        ),
        # the dotted name "a.b" would mean both the top-level "a.b" and field b of a
        (
            NestedField(1, "a", StructType(NestedField(2, "b", LongType()))),
            NestedField(3, "a.b", LongType()),
        ),
    ],
    ids=["top-level", "nested", "dotted-collision"],
)
def test_duplicate_names_are_rejected(fields: tuple[NestedField, ...]) -> None:
    with pytest.raises(ValidationError, match="name"):
        Schema(*fields)


def test_same_names_in_different_structs_are_fine() -> None:
    s = Schema(
        NestedField(1, "a", StructType(NestedField(2, "x", LongType()))),
        NestedField(3, "b", StructType(NestedField(4, "x", LongType()))),
    )
    assert s.find_field("b.x").field_id == 4


REQUIRED_STRUCT = StructType(NestedField(11, "inner", LongType(), required=True))
OPTIONAL_PARENT = StructType(NestedField(21, "inner", LongType(), required=True))


@pytest.mark.parametrize(
    ("fields", "ids", "message"),
    [
        ((NestedField(1, "a", LongType(), required=True),), [2], "not a field"),
        ((NestedField(1, "a", LongType()),), [1], "required"),
        ((NestedField(1, "s", REQUIRED_STRUCT, required=True),), [1], "primitive"),
        ((NestedField(1, "f", FloatType(), required=True),), [1], "float or double"),
        ((NestedField(1, "d", DoubleType(), required=True),), [1], "float or double"),
        ((NestedField(1, "v", VariantType(), required=True),), [1], "primitive"),
        ((NestedField(20, "s", OPTIONAL_PARENT, required=False),), [21], "optional field 's'"),
        (
            (
                NestedField(
                    1, "l", ListType(2, StructType(NestedField(3, "k", LongType(), True))), True
                ),
            ),
            [3],
            "list or map",
        ),
        (
            (NestedField(1, "m", MapType(2, LongType(), 3, LongType()), required=True),),
            [2],
            "list or map",
        ),
    ],
    ids=[
        "missing",
        "optional",
        "struct",
        "float",
        "double",
        "variant",
        "optional-parent",
        "in-list",
        "map-key",
    ],
)
def test_identifier_field_rules(
    fields: tuple[NestedField, ...], ids: list[int], message: str
) -> None:
    # spec "Identifier Field IDs"
    with pytest.raises(ValidationError, match=message):
        Schema(*fields, identifier_field_ids=ids)


def test_identifier_nested_in_required_structs_is_fine() -> None:
    s = Schema(NestedField(10, "s", REQUIRED_STRUCT, required=True), identifier_field_ids=[11])
    assert s.identifier_field_ids == (11,)
    assert Schema.from_json(s.to_json()) == s


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "struct",
        {"type": "list", "fields": []},
        {"type": "struct"},
        {"type": "struct", "fields": {}},
        {"type": "struct", "fields": [], "identifier-field-ids": "1"},
        {"type": "struct", "fields": [], "identifier-field-ids": [True]},
        {"type": "struct", "fields": [], "schema-id": "0"},
        {"type": "struct", "fields": [], "schema-id": False},
        {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]},
    ],
    ids=repr,
)
def test_bad_schema_json(bad: Any) -> None:
    with pytest.raises(ValidationError):
        Schema.from_json(bad)


def test_identity_and_hashing(schema: Schema) -> None:
    other = schema.with_schema_id(7)
    assert other.schema_id == 7
    assert other != schema
    assert other.same_structure(schema)
    assert other.with_schema_id(3) == schema
    assert hash(other.with_schema_id(3)) == hash(schema)
    assert len({schema, other, Schema.from_json(SCHEMA_JSON)}) == 2


# --- property tests ------------------------------------------------------------------


def _all_ids(t: IcebergType) -> list[int]:
    """Every field id in a type, collected independently of Schema's own index."""
    if isinstance(t, StructType):
        return [i for f in t.fields for i in (f.field_id, *_all_ids(f.field_type))]
    if isinstance(t, ListType):
        return [t.element_id, *_all_ids(t.element_type)]
    if isinstance(t, MapType):
        return [t.key_id, t.value_id, *_all_ids(t.key_type), *_all_ids(t.value_type)]
    return []


@settings(deadline=None)
@given(ist.schemas())
def test_random_schemas_round_trip_through_json_text(s: Schema) -> None:
    text = json.dumps(s.to_json())
    back = Schema.from_json(json.loads(text))
    assert back == s
    assert json.dumps(back.to_json()) == text


@settings(deadline=None)
@given(ist.schemas(defaults=False))
def test_random_schema_lookups(s: Schema) -> None:
    ids = _all_ids(s.as_struct())
    assert s.highest_field_id == max(ids, default=0)
    assert s.field_ids() == frozenset(ids)
    for field_id in ids:
        f = s.find_field(field_id)
        assert f.field_id == field_id
        assert s.find_field(s.column_name(field_id)) == f


@settings(deadline=None)
@given(ist.schemas())
def test_random_defaults_parse_as_values(s: Schema) -> None:
    # the strategy writes defaults with values.to_json_value; they must read back
    for f in _walk_fields(s.fields):
        for default in (f.initial_default, f.write_default):
            if default is not None:
                assert from_json_value(f.field_type, default) is not None


def _walk_fields(fields: tuple[NestedField, ...]) -> list[NestedField]:
    out: list[NestedField] = []
    for f in fields:
        out.append(f)
        if isinstance(f.field_type, StructType):
            out += _walk_fields(f.field_type.fields)
    return out


# --- pyiceberg as an independent peer -----------------------------------------------


def _normalize_pyiceberg(obj: Any) -> Any:
    """pyiceberg's JSON, minus its two harmless deviations from Iceberg Java's writer:
    "decimal(9, 2)" (the spec's canonical form has no space) and an empty
    "identifier-field-ids" list (Java leaves the key out)."""
    if isinstance(obj, dict):
        out = {k: _normalize_pyiceberg(v) for k, v in obj.items()}
        if out.get("identifier-field-ids") == []:
            del out["identifier-field-ids"]
        return out
    if isinstance(obj, list):
        return [_normalize_pyiceberg(v) for v in obj]
    if isinstance(obj, str) and obj.startswith("decimal("):
        return str(type_from_json(obj))
    return obj


def test_pyiceberg_schema_parses_and_writes_back_equal() -> None:
    py_schema = pys.Schema(
        pyt.NestedField(1, "id", pyt.LongType(), required=True),
        pyt.NestedField(2, "tags", pyt.ListType(3, pyt.StringType(), element_required=False)),
        pyt.NestedField(
            4,
            "prices",
            pyt.MapType(5, pyt.StringType(), 6, pyt.DecimalType(9, 2), value_required=True),
            doc="by currency",
        ),
        pyt.NestedField(
            7,
            "where",
            pyt.StructType(
                pyt.NestedField(8, "ts", pyt.TimestamptzNanoType(), required=True),
                pyt.NestedField(9, "raw", pyt.FixedType(16)),
                pyt.NestedField(10, "u", pyt.UUIDType()),
            ),
            required=True,
        ),
        pyt.NestedField(11, "gone", pyt.UnknownType()),
        pyt.NestedField(12, "day", pyt.DateType()),
        schema_id=4,
        identifier_field_ids=[1, 8],
    )
    theirs = json.loads(py_schema.model_dump_json())
    ours = Schema.from_json(theirs)
    assert ours.identifier_field_ids == (1, 8)
    assert ours.find_type("where.ts") == type_from_json("timestamptz_ns")
    assert ours.to_json() == _normalize_pyiceberg(theirs)
    # and pyiceberg reads our JSON back as the schema it started from
    assert pys.Schema.model_validate_json(json.dumps(ours.to_json())) == py_schema


def test_pyiceberg_reads_our_defaults_as_the_same_values() -> None:
    s = Schema(
        NestedField(1, "n", IntegerType(), initial_default=5, write_default=6),
        NestedField(2, "d", DecimalType(9, 2), initial_default="1.50"),
        NestedField(3, "s", StringType(), write_default="x"),
        NestedField(4, "day", type_from_json("date"), initial_default="2017-11-16"),
    )
    py_schema = pys.Schema.model_validate_json(json.dumps(s.to_json()))
    back = Schema.from_json(json.loads(py_schema.model_dump_json()))
    for ours, theirs in zip(s.fields, back.fields, strict=True):
        for a, b in (
            (ours.initial_default, theirs.initial_default),
            (ours.write_default, theirs.write_default),
        ):
            assert from_json_value(ours.field_type, a) == from_json_value(ours.field_type, b)


# types whose JSON strings pyiceberg 0.12 reads as the spec writes them (it has no variant,
# and writes/reads geometry and geography parameters in a quoted form of its own)
PYICEBERG_LEAVES: st.SearchStrategy[PrimitiveType] = st.one_of(
    ist.storable_primitive_types(), st.just(UnknownType())
)


@settings(max_examples=60, deadline=None)
@given(ist.schemas(defaults=False, leaves=PYICEBERG_LEAVES))
def test_random_schemas_agree_with_pyiceberg(s: Schema) -> None:
    ours = s.to_json()
    py_schema = pys.Schema.model_validate_json(json.dumps(ours))
    theirs = json.loads(py_schema.model_dump_json())
    assert _normalize_pyiceberg(theirs) == ours
    assert Schema.from_json(theirs) == s
    assert py_schema.highest_field_id == s.highest_field_id
    assert list(py_schema.identifier_field_ids) == list(s.identifier_field_ids)


# --- id assignment (Java TypeUtil.assignFreshIds) ---------------------------------------------

NESTED = Schema(
    NestedField(10, "id", LongType(), required=True),
    NestedField(
        11,
        "loc",
        StructType(
            NestedField(20, "lat", DoubleType()),
            NestedField(21, "tags", ListType(30, StringType())),
        ),
    ),
    NestedField(12, "m", MapType(40, StringType(), 41, LongType())),
    identifier_field_ids=(10,),
)


def test_fresh_ids_number_a_struct_before_its_nested_fields() -> None:
    fresh, id_map = assign_fresh_ids(NESTED)
    assert [(".".join(p), f.field_id) for p, f in _walk(fresh)] == [
        ("id", 1),
        ("loc", 2),
        ("loc.lat", 4),
        ("loc.tags", 5),
        ("loc.tags.element", 6),
        ("m", 3),
        ("m.key", 7),
        ("m.value", 8),
    ]
    assert fresh.identifier_field_ids == (1,) and id_map[10] == 1
    counter = iter(range(100, 200))
    t = fresh_ids(NESTED.find_field("loc").field_type, lambda: next(counter))
    assert isinstance(t, StructType)
    assert [f.field_id for f in t.fields] == [100, 101]


def test_ids_like_a_base_keep_known_names_and_number_new_ones_after_the_last() -> None:
    base = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "loc", StructType(NestedField(3, "lat", DoubleType()))),
    )
    renumbered, last = assign_ids_like(NESTED, base, last_column_id=9)
    ids = {".".join(p): f.field_id for p, f in _walk(renumbered)}
    assert ids == {
        "id": 1,
        "loc": 2,
        "m": 10,
        "loc.lat": 3,
        "loc.tags": 11,
        "loc.tags.element": 12,
        "m.key": 13,
        "m.value": 14,
    }
    assert last == 14 and renumbered.identifier_field_ids == (1,)
    assert assign_ids_like(base, base, last_column_id=9) == (base, 9)


def _walk(schema: Schema) -> list[tuple[tuple[str, ...], NestedField]]:
    return list(walk_fields(schema.fields))
