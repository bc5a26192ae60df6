"""Sort orders: JSON round trips, defaults, building by column name, validation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.table.sorting import SortOrder as PySortOrder

from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.sorting import (
    UNSORTED_SORT_ORDER,
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
    build_sort_order,
)
from icewright.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    UnknownTransform,
    parse_transform,
)
from icewright.spec.types import (
    DoubleType,
    ListType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "data", StringType()),
    NestedField(3, "ts", TimestampType()),
    NestedField(4, "score", DoubleType()),
    NestedField(5, "tags", ListType(6, StringType())),
)

# The example of Appendix C "Sort Orders".
ORDER_EXAMPLE = {
    "order-id": 1,
    "fields": [
        {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"},
    ],
}


def test_appendix_c_example_round_trips() -> None:
    order = SortOrder.from_json(ORDER_EXAMPLE)
    assert order.order_id == 1
    assert order.fields == (
        SortField(2, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(3, BucketTransform(4), SortDirection.DESC, NullOrder.NULLS_LAST),
    )
    assert order.to_json() == ORDER_EXAMPLE
    assert SortOrder.from_json(json.loads(json.dumps(order.to_json()))) == order


def test_unsorted_order() -> None:
    assert UNSORTED_SORT_ORDER.order_id == 0
    assert UNSORTED_SORT_ORDER.is_unsorted
    assert UNSORTED_SORT_ORDER.to_json() == {"order-id": 0, "fields": []}
    assert SortOrder.from_json({"order-id": 0, "fields": []}) == UNSORTED_SORT_ORDER


def test_enums_are_strings() -> None:
    assert SortDirection("asc") is SortDirection.ASC
    assert str(SortDirection.DESC) == "desc"
    assert isinstance(NullOrder.NULLS_LAST, str)
    assert NullOrder.NULLS_LAST.value == "nulls-last"
    assert str(NullOrder.NULLS_FIRST) == "nulls-first"
    # strings are accepted and normalised into the enums
    f = SortField(1, IdentityTransform(), "desc", "nulls-last")  # type: ignore[arg-type]
    assert f.direction is SortDirection.DESC and f.null_order is NullOrder.NULLS_LAST


def test_multi_argument_source_ids_round_trip() -> None:
    obj = {
        "order-id": 2,
        "fields": [
            {
                "transform": "zorder",
                "source-ids": [1, 2],
                "direction": "asc",
                "null-order": "nulls-first",
            }
        ],
    }
    order = SortOrder.from_json(obj)
    assert order.fields[0].source_ids == (1, 2)
    assert isinstance(order.fields[0].transform, UnknownTransform)
    assert order.has_unknown_transform
    assert order.to_json() == obj


def test_order_json_is_read_by_pyiceberg() -> None:
    order = build_sort_order(SCHEMA, [("ts", "desc"), ("id", "asc", "nulls-last")], order_id=3)
    theirs = PySortOrder.model_validate_json(json.dumps(order.to_json()))
    assert theirs.order_id == 3
    assert [
        (f.source_id, str(f.transform), f.direction.value, f.null_order.value)
        for f in theirs.fields
    ] == [(3, "identity", "desc", "nulls-last"), (1, "identity", "asc", "nulls-last")]
    assert SortOrder.from_json(json.loads(theirs.model_dump_json(by_alias=True))) == order


@pytest.mark.parametrize(
    "bad",
    [
        {"order-id": 1, "fields": [{"transform": "identity", "source-id": 1, "direction": "up",
                                    "null-order": "nulls-first"}]},
        {"order-id": 1, "fields": [{"transform": "identity", "source-id": 1, "direction": "asc",
                                    "null-order": "first"}]},
        {"order-id": 1, "fields": [{"transform": "identity", "direction": "asc",
                                    "null-order": "nulls-first"}]},
        {"order-id": 1, "fields": [{"source-id": 1, "direction": "asc",
                                    "null-order": "nulls-first"}]},
        {"order-id": 1, "fields": [{"transform": "bucket[0]", "source-id": 1, "direction": "asc",
                                    "null-order": "nulls-first"}]},
        {"order-id": 0, "fields": [{"transform": "identity", "source-id": 1, "direction": "asc",
                                    "null-order": "nulls-first"}]},
        {"order-id": 1, "fields": []},
        {"order-id": "1", "fields": []},
        {"fields": []},
        {"order-id": 1, "fields": {}},
        {"order-id": 1, "fields": ["identity"]},
        [],
    ],
)  # fmt: skip
def test_bad_json_raises_validation_error(bad: Any) -> None:
    with pytest.raises(ValidationError):
        SortOrder.from_json(bad)


def test_order_id_zero_is_reserved() -> None:
    with pytest.raises(ValidationError, match="reserved"):
        SortOrder(SortField(1), order_id=0)
    with pytest.raises(ValidationError, match="must have order id 0"):
        SortOrder(order_id=1)


# --- building -------------------------------------------------------------------


def test_build_with_java_default_null_orders() -> None:
    order = build_sort_order(SCHEMA, [("ts", "desc"), ("id", "asc", "nulls-last"), "data"])
    assert order.order_id == 1
    assert order.fields == (
        SortField(3, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
        SortField(1, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_LAST),
        SortField(2, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
    )


def test_build_with_transform() -> None:
    order = build_sort_order(
        SCHEMA, [("ts", "asc", "nulls-first", "day"), ("id", "desc", "nulls-last", "bucket[8]")]
    )
    assert order.fields[0].transform == DayTransform()
    assert order.fields[1].transform == BucketTransform(8)


def test_build_empty_is_unsorted() -> None:
    assert build_sort_order(SCHEMA, []) is UNSORTED_SORT_ORDER


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([("nope", "asc")], "no column named"),
        ([("id", "sideways")], "direction"),
        ([("id", "asc", "nulls-middle")], "null order"),
        ([("data", "asc", "nulls-first", "day")], "cannot be applied"),
        ([("id", "asc", "nulls-first", "zorder")], "unknown transform"),
        ([("tags", "asc")], "primitive"),
        ([()], "must be"),
    ],
)
def test_build_rejects_bad_fields(fields: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build_sort_order(SCHEMA, fields)


def test_check_compatible() -> None:
    SortOrder.from_json(ORDER_EXAMPLE).check_compatible(SCHEMA)
    UNSORTED_SORT_ORDER.check_compatible(SCHEMA)
    with pytest.raises(ValidationError, match="not in schema"):
        SortOrder(SortField(42)).check_compatible(SCHEMA)
    with pytest.raises(ValidationError, match="cannot be applied"):
        SortOrder(SortField(4, BucketTransform(2))).check_compatible(SCHEMA)
    with pytest.raises(ValidationError, match="inside a list or map"):
        SortOrder(SortField(6)).check_compatible(SCHEMA)


def test_satisfies() -> None:
    by_hour = SortOrder(SortField(3, HourTransform()), SortField(1))
    by_day = SortOrder(SortField(3, DayTransform()))
    assert by_hour.satisfies(by_day)
    assert not by_day.satisfies(by_hour)
    assert by_day.satisfies(UNSORTED_SORT_ORDER)
    desc = SortOrder(SortField(3, DayTransform(), SortDirection.DESC, NullOrder.NULLS_LAST))
    assert not by_hour.satisfies(desc)
    assert by_hour.same_order(by_hour.with_order_id(9))
    assert by_hour != by_hour.with_order_id(9)


def test_order_is_immutable() -> None:
    order = SortOrder.from_json(ORDER_EXAMPLE)
    with pytest.raises(AttributeError):
        order.order_id = 2
    with pytest.raises(AttributeError):
        order.fields[0].direction = SortDirection.DESC  # type: ignore[misc]
    assert hash(order) == hash(SortOrder.from_json(ORDER_EXAMPLE))


# --- random round trips ---------------------------------------------------------

_TRANSFORMS = st.one_of(
    st.sampled_from(["identity", "year", "month", "day", "hour", "void", "zorder"]),
    st.integers(1, 1000).map(lambda n: f"bucket[{n}]"),
    st.integers(1, 1000).map(lambda n: f"truncate[{n}]"),
)


@st.composite
def sort_orders(draw: st.DrawFn) -> SortOrder:
    n = draw(st.integers(0, 5))
    if n == 0:
        return UNSORTED_SORT_ORDER
    fields = [
        SortField(
            draw(st.integers(1, 300)),
            parse_transform(draw(_TRANSFORMS)),
            draw(st.sampled_from(list(SortDirection))),
            draw(st.sampled_from(list(NullOrder))),
        )
        for _ in range(n)
    ]
    return SortOrder(*fields, order_id=draw(st.integers(1, 50)))


@settings(max_examples=100, deadline=None)
@given(sort_orders())
def test_random_orders_round_trip_through_json(order: SortOrder) -> None:
    text = json.dumps(order.to_json())
    assert SortOrder.from_json(json.loads(text)) == order
    theirs = PySortOrder.model_validate_json(text)
    # pyiceberg renders transforms it does not know as "unknown"; compare the known ones
    assert [
        (f.source_id, str(f.transform), f.direction.value, f.null_order.value)
        for f, ours in zip(theirs.fields, order.fields, strict=True)
        if not ours.transform.is_unknown
    ] == [
        (f.source_id, str(f.transform), f.direction.value, f.null_order.value)
        for f in order.fields
        if not f.transform.is_unknown
    ]
