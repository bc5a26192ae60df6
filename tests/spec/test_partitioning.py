"""Partition specs: JSON (object and bare-list forms), v1 id assignment, building by
column name, validation against a schema, partition types and Hive paths."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.partitioning import PartitionSpec as PyPartitionSpec

from icewright.errors import ValidationError
from icewright.spec.partitioning import (
    PARTITION_DATA_ID_START,
    UNPARTITIONED_PARTITION_SPEC,
    PartitionField,
    PartitionSpec,
    build_partition_spec,
    url_encode,
)
from icewright.spec.schema import Schema
from icewright.spec.transforms import (
    BucketTransform,
    DayTransform,
    IdentityTransform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    parse_transform,
)
from icewright.spec.types import (
    DateType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    UnknownType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "data", StringType()),
    NestedField(3, "category", StringType()),
    NestedField(4, "ts", TimestamptzType()),
    NestedField(5, "price", DoubleType()),
    NestedField(6, "loc", StructType(NestedField(7, "city", StringType()))),
    NestedField(8, "tags", ListType(9, StringType())),
)

# The example of Appendix C "Partition Specs".
SPEC_EXAMPLE = {
    "spec-id": 0,
    "fields": [
        {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
    ],
}


def test_appendix_c_example_round_trips() -> None:
    spec = PartitionSpec.from_json(SPEC_EXAMPLE)
    assert spec.spec_id == 0
    assert spec.fields == (
        PartitionField(4, 1000, DayTransform(), "ts_day"),
        PartitionField(1, 1001, BucketTransform(16), "id_bucket"),
    )
    assert spec.to_json() == SPEC_EXAMPLE
    assert PartitionSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_bare_list_form_round_trips() -> None:
    spec = PartitionSpec.from_json(SPEC_EXAMPLE)
    bare = spec.fields_to_json()
    assert bare == SPEC_EXAMPLE["fields"]
    assert PartitionSpec.from_fields_json(bare, spec_id=0) == spec
    assert PartitionSpec.from_fields_json(bare, spec_id=7).spec_id == 7


def test_v1_field_ids_are_assigned_from_1000() -> None:
    v1 = [
        {"source-id": 4, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "name": "id_bucket", "transform": "bucket[16]"},
        {"source-id": 3, "name": "category", "transform": "identity"},
    ]
    spec = PartitionSpec.from_fields_json(v1)
    assert [f.field_id for f in spec.fields] == [1000, 1001, 1002]
    assert spec.last_assigned_field_id == 1002


def test_missing_ids_continue_after_the_highest_assigned() -> None:
    mixed = [
        {"source-id": 4, "field-id": 1005, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "name": "id_bucket", "transform": "bucket[16]"},
    ]
    assert [f.field_id for f in PartitionSpec.from_fields_json(mixed).fields] == [1005, 1006]


def test_object_form_requires_field_ids_only_when_absent_in_v1_sense() -> None:
    # the object form parses v1 specs without field ids as well
    obj = {"spec-id": 2, "fields": [{"source-id": 1, "name": "id", "transform": "identity"}]}
    spec = PartitionSpec.from_json(obj)
    assert spec.spec_id == 2 and spec.fields[0].field_id == PARTITION_DATA_ID_START


def test_multi_argument_source_ids_round_trip() -> None:
    obj = {
        "spec-id": 1,
        "fields": [
            {"source-ids": [1, 3], "field-id": 1000, "name": "z", "transform": "zorder"},
            {"source-id": 2, "field-id": 1001, "name": "data", "transform": "identity"},
        ],
    }
    spec = PartitionSpec.from_json(obj)
    first = spec.fields[0]
    assert first.source_ids == (1, 3) and first.source_id == 1
    assert isinstance(first.transform, UnknownTransform)
    assert spec.has_unknown_transform
    # only source-ids is written for a multi-argument field (Appendix C note 1)
    assert spec.to_json() == obj


def test_unknown_transform_blocks_writes_only() -> None:
    spec = PartitionSpec(
        PartitionField(1, 1000, IdentityTransform(), "id"),
        PartitionField(2, 1001, UnknownTransform("geohash[7]"), "g"),
    )
    spec.check_compatible(SCHEMA)  # readers ignore the unknown field
    with pytest.raises(ValidationError, match="'g' \\(geohash\\[7\\]\\)"):
        spec.check_writable()
    build_partition_spec(SCHEMA, [("bucket", "id", 2)]).check_writable()


def test_unknown_transform_is_written_back_unchanged() -> None:
    obj = {
        "spec-id": 0,
        "fields": [{"source-id": 1, "field-id": 1000, "name": "g", "transform": "geohash[7]"}],
    }
    assert PartitionSpec.from_json(obj).to_json() == obj


def test_spec_json_is_read_by_pyiceberg() -> None:
    spec = build_partition_spec(
        SCHEMA,
        [("day", "ts"), ("bucket", "id", 16), ("identity", "category"), ("truncate", "data", 4)],
        spec_id=3,
    )
    theirs = PyPartitionSpec.model_validate_json(json.dumps(spec.to_json()))
    assert theirs.spec_id == 3
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in theirs.fields] == [
        (f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields
    ]
    assert PartitionSpec.from_json(json.loads(theirs.model_dump_json(by_alias=True))) == spec


@pytest.mark.parametrize(
    "bad",
    [
        [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[0]"}],
        [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[-3]"}],
        [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "truncate[0]"}],
        [{"field-id": 1000, "name": "b", "transform": "identity"}],
        [{"source-id": "1", "field-id": 1000, "name": "b", "transform": "identity"}],
        [{"source-id": 1, "field-id": 1000, "name": 5, "transform": "identity"}],
        [{"source-id": 1, "field-id": 1000, "name": "b", "transform": 3}],
        [{"source-ids": [], "field-id": 1000, "name": "b", "transform": "identity"}],
        [
            {"source-id": 1, "field-id": 1000, "name": "b", "transform": "identity"},
            {"source-id": 2, "field-id": 1001, "name": "b", "transform": "identity"},
        ],
        [
            {"source-id": 1, "field-id": 1000, "name": "a", "transform": "identity"},
            {"source-id": 2, "field-id": 1000, "name": "b", "transform": "identity"},
        ],
        ["identity"],
    ],
)
def test_bad_json_raises_validation_error(bad: list[Any]) -> None:
    with pytest.raises(ValidationError):
        PartitionSpec.from_fields_json(bad)
    with pytest.raises(ValidationError):
        PartitionSpec.from_json({"spec-id": 0, "fields": bad})


def test_bad_json_shapes() -> None:
    with pytest.raises(ValidationError):
        PartitionSpec.from_json("x")
    with pytest.raises(ValidationError):
        PartitionSpec.from_json({"spec-id": 0})
    with pytest.raises(ValidationError):
        PartitionSpec.from_json({"spec-id": "0", "fields": []})


# --- building -------------------------------------------------------------------


def test_build_with_java_default_names_and_ids() -> None:
    spec = build_partition_spec(
        SCHEMA,
        [
            ("day", "ts"),
            ("bucket", "id", 16),
            ("identity", "category"),
            ("truncate", "data", 4),
            ("void", "price"),
            ("identity", "loc.city"),
        ],
    )
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields] == [
        (4, 1000, "ts_day", "day"),
        (1, 1001, "id_bucket", "bucket[16]"),
        (3, 1002, "category", "identity"),
        (2, 1003, "data_trunc", "truncate[4]"),
        (5, 1004, "price_null", "void"),
        (7, 1005, "loc.city", "identity"),
    ]


@pytest.mark.parametrize(
    ("transform", "expected"),
    [("year", "ts_year"), ("month", "ts_month"), ("day", "ts_day"), ("hour", "ts_hour")],
)
def test_time_default_names(transform: str, expected: str) -> None:
    assert build_partition_spec(SCHEMA, [(transform, "ts")]).fields[0].name == expected


def test_build_continues_from_last_partition_id() -> None:
    spec = build_partition_spec(
        SCHEMA, [("identity", "category"), ("bucket", "id", 8)], spec_id=2, last_partition_id=1004
    )
    assert spec.spec_id == 2
    assert [f.field_id for f in spec.fields] == [1005, 1006]
    assert spec.last_assigned_field_id == 1006


def test_build_with_custom_name() -> None:
    spec = build_partition_spec(SCHEMA, [("bucket", "id", 4, "shard")])
    assert spec.fields[0].name == "shard"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([("identity", "nope")], "no column named 'nope'"),
        ([("bucket", "price", 4)], "cannot be applied"),
        ([("day", "data")], "cannot be applied"),
        ([("bucket", "id", 0)], "bucket count must be positive"),
        ([("bucket", "id")], "needs an argument"),
        ([("day", "ts", 3)], "takes no argument"),
        ([("zorder", "id")], "unknown transform"),
        ([("identity", "tags")], "primitive"),
        ([("identity", "loc")], "primitive"),
        ([("bucket", "id", 4), ("bucket", "id", 4)], "more than once"),
        ([("day", "ts"), ("hour", "ts")], "redundant"),
        ([("identity", "id"), ("identity", "id", None, "id2")], "redundant"),
        ([("bucket", "id", 4, "data")], "schema column has that name"),
        ([("bucket", "id", 4, "id")], "schema column has that name"),
        ([("identity", "id", None, "data")], "schema column has that name"),
        ([("identity", "id", None, "")], "non-empty"),
        ([("identity",)], "must be"),
    ],
)
def test_build_rejects_bad_fields(fields: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build_partition_spec(SCHEMA, fields)


# --- schema checks --------------------------------------------------------------


def test_check_compatible_accepts_good_specs() -> None:
    PartitionSpec.from_json(SPEC_EXAMPLE).check_compatible(SCHEMA)
    UNPARTITIONED_PARTITION_SPEC.check_compatible(SCHEMA)
    # a void field may keep a dropped column; unknown transforms are not checked
    PartitionSpec(
        PartitionField(99, 1000, VoidTransform(), "gone"),
        PartitionField(5, 1001, UnknownTransform("zorder"), "z"),
    ).check_compatible(SCHEMA)
    # identity and other fields may carry their own source's name
    PartitionSpec(PartitionField(2, 1000, TruncateTransform(2), "data")).check_compatible(SCHEMA)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (PartitionField(99, 1000, IdentityTransform(), "x"), "not in schema"),
        (PartitionField(5, 1000, BucketTransform(2), "p"), "cannot be applied"),
        (PartitionField(2, 1000, DayTransform(), "d"), "cannot be applied"),
        (PartitionField(9, 1000, IdentityTransform(), "t"), "inside a list or map"),
        (PartitionField(6, 1000, IdentityTransform(), "l"), "primitive"),
        (PartitionField(1, 1000, BucketTransform(2), "data"), "not its source"),
    ],
)
def test_check_compatible_rejects(field: PartitionField, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PartitionSpec(field).check_compatible(SCHEMA)


def test_partition_field_validation() -> None:
    with pytest.raises(ValidationError):
        PartitionField(1, 1000, IdentityTransform(), "")
    with pytest.raises(ValidationError):
        PartitionField(1, 1000, "identity", "x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        PartitionField(1, 1000, IdentityTransform(), "x", source_ids=(2, 1))
    assert PartitionField(1, 1000, IdentityTransform(), "x").source_ids == (1,)


# --- structure ------------------------------------------------------------------


def test_unpartitioned() -> None:
    assert UNPARTITIONED_PARTITION_SPEC.is_unpartitioned
    assert UNPARTITIONED_PARTITION_SPEC.spec_id == 0
    assert UNPARTITIONED_PARTITION_SPEC.fields == ()
    assert UNPARTITIONED_PARTITION_SPEC.last_assigned_field_id == 999
    assert UNPARTITIONED_PARTITION_SPEC.to_json() == {"spec-id": 0, "fields": []}
    # only void fields still partition nothing (Java isUnpartitioned)
    assert PartitionSpec(PartitionField(1, 1000, VoidTransform(), "id_null")).is_unpartitioned
    assert PartitionSpec.from_json(SPEC_EXAMPLE).is_partitioned


def test_partition_type() -> None:
    spec = build_partition_spec(
        SCHEMA,
        [("day", "ts"), ("bucket", "id", 16), ("identity", "category"), ("void", "price")],
    )
    assert spec.partition_type(SCHEMA) == StructType(
        NestedField(1000, "ts_day", DateType(), required=False),
        NestedField(1001, "id_bucket", IntegerType(), required=False),
        NestedField(1002, "category", StringType(), required=False),
        NestedField(1003, "price_null", DoubleType(), required=False),
    )


def test_partition_type_of_dropped_source_is_unknown() -> None:
    spec = PartitionSpec(PartitionField(99, 1000, VoidTransform(), "gone"))
    assert spec.partition_type(SCHEMA).fields[0].field_type == UnknownType()


def test_compatible_with_ignores_ids_only() -> None:
    a = build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "id", 16)], spec_id=0)
    b = build_partition_spec(
        SCHEMA, [("day", "ts"), ("bucket", "id", 16)], spec_id=4, last_partition_id=1010
    )
    assert a != b
    assert a.compatible_with(b) and b.compatible_with(a)
    assert not a.compatible_with(build_partition_spec(SCHEMA, [("day", "ts")]))
    assert not a.compatible_with(build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "id", 8)]))
    assert not a.compatible_with(
        build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "id", 16, "other")])
    )
    assert not a.compatible_with(
        build_partition_spec(SCHEMA, [("bucket", "id", 16), ("day", "ts")])
    )


def test_spec_is_immutable_and_hashable() -> None:
    spec = PartitionSpec.from_json(SPEC_EXAMPLE)
    with pytest.raises(AttributeError):
        spec.spec_id = 3
    with pytest.raises(AttributeError):
        spec.fields[0].name = "x"  # type: ignore[misc]
    assert len({spec, PartitionSpec.from_json(SPEC_EXAMPLE), spec.with_spec_id(1)}) == 2
    assert spec.with_spec_id(1).fields == spec.fields


def test_lookups() -> None:
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "ts", 4), ("identity", "id")])
    assert [f.name for f in spec.fields_by_source_id(4)] == ["ts_day", "ts_bucket"]
    assert spec.identity_source_ids() == frozenset({1})
    assert len(spec) == 3 and [f.name for f in spec] == ["ts_day", "ts_bucket", "id"]


# --- paths ----------------------------------------------------------------------


def test_partition_to_path() -> None:
    spec = build_partition_spec(
        SCHEMA,
        [("day", "ts"), ("bucket", "id", 16), ("identity", "category"), ("truncate", "data", 4)],
    )
    path = spec.partition_to_path((17486, 3, "a b/c&d", None), SCHEMA)
    assert path == "ts_day=2017-11-16/id_bucket=3/category=a+b%2Fc%26d/data_trunc=null"


def test_partition_to_path_of_time_transforms_before_the_epoch() -> None:
    # one time transform per column (two would be redundant), so one spec each
    for transform, expected in [
        ("year", "ts_year=1969"),
        ("month", "ts_month=1969-12"),
        ("day", "ts_day=1969-12-31"),
        ("hour", "ts_hour=1969-12-31-23"),
    ]:
        spec = build_partition_spec(SCHEMA, [(transform, "ts")])
        assert spec.partition_to_path((-1,), SCHEMA) == expected


def test_partition_to_path_escapes_names_and_unicode() -> None:
    schema = Schema(NestedField(1, "wei rd", StringType()))
    spec = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "wei rd"))
    assert spec.partition_to_path(("\u00e9~*",), schema) == "wei+rd=%C3%A9%7E*"


def test_partition_to_path_needs_one_value_per_field() -> None:
    spec = PartitionSpec.from_json(SPEC_EXAMPLE)
    with pytest.raises(ValidationError, match="2 fields"):
        spec.partition_to_path((1,), SCHEMA)


def test_url_encode_matches_java_urlencoder_rules() -> None:
    # java.net.URLEncoder keeps a-zA-Z0-9 . - * _ and turns space into +
    assert url_encode("aZ09.-*_") == "aZ09.-*_"
    assert url_encode(" ") == "+"
    assert url_encode("~!'()") == "%7E%21%27%28%29"
    assert url_encode("=/:+%") == "%3D%2F%3A%2B%25"


# --- random round trips ---------------------------------------------------------

_TRANSFORM_TEXT = st.one_of(
    st.sampled_from(["identity", "year", "month", "day", "hour", "void"]),
    st.integers(1, 10_000).map(lambda n: f"bucket[{n}]"),
    st.integers(1, 10_000).map(lambda n: f"truncate[{n}]"),
    st.sampled_from(["zorder", "geohash[5]", "custom"]),
)


@st.composite
def partition_specs(draw: st.DrawFn) -> PartitionSpec:
    n = draw(st.integers(0, 6))
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=n, max_size=n, unique=True))
    field_ids = draw(st.lists(st.integers(1000, 5000), min_size=n, max_size=n, unique=True))
    fields = []
    for name, fid in zip(names, field_ids, strict=True):
        transform = parse_transform(draw(_TRANSFORM_TEXT))
        sources = draw(st.lists(st.integers(1, 200), min_size=1, max_size=3))
        if len(sources) > 1 and not transform.is_unknown:
            sources = sources[:1]
        fields.append(PartitionField(sources[0], fid, transform, name, tuple(sources)))
    return PartitionSpec(*fields, spec_id=draw(st.integers(0, 100)))


@settings(max_examples=150, deadline=None)
@given(partition_specs())
def test_random_specs_round_trip_through_json(spec: PartitionSpec) -> None:
    text = json.dumps(spec.to_json())
    again = PartitionSpec.from_json(json.loads(text))
    assert again == spec
    assert json.dumps(again.to_json()) == text
    assert PartitionSpec.from_fields_json(spec.fields_to_json(), spec.spec_id) == spec
    assert again.compatible_with(spec)
