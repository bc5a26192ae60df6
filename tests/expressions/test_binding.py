"""Binding to a schema: name resolution, literal conversion and simplification."""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from decimal import Decimal
from typing import Any

import pytest
from pyiceberg.expressions.literals import literal as py_literal
from pyiceberg.types import (
    DateType as PyDate,
)
from pyiceberg.types import (
    DecimalType as PyDecimal,
)
from pyiceberg.types import (
    TimestampType as PyTimestamp,
)
from pyiceberg.types import (
    TimestamptzType as PyTimestamptz,
)
from pyiceberg.types import (
    UUIDType as PyUUID,
)

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    BoundPredicate,
    Operation,
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_null,
    parse,
    starts_with,
)
from icewright.spec.schema import Schema
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
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
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "name", StringType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "ts", TimestampType()),
    NestedField(6, "tz", TimestamptzType()),
    NestedField(7, "ns", TimestampNsType()),
    NestedField(8, "tzns", TimestamptzNsType()),
    NestedField(9, "price", DecimalType(9, 2)),
    NestedField(10, "f", FloatType()),
    NestedField(11, "dbl", DoubleType()),
    NestedField(12, "u", UUIDType()),
    NestedField(13, "bin", BinaryType()),
    NestedField(14, "fx", FixedType(3)),
    NestedField(15, "flag", BooleanType()),
    NestedField(16, "t", TimeType()),
    NestedField(
        17,
        "loc",
        StructType(
            NestedField(18, "lat", DoubleType(), required=True),
            NestedField(19, "city", StringType()),
        ),
    ),
    NestedField(20, "tags", ListType(21, StringType(), element_required=True)),
    NestedField(22, "attrs", MapType(23, StringType(), 24, LongType())),
    NestedField(25, "gone", UnknownType()),
    NestedField(
        26,
        "req",
        StructType(NestedField(27, "inner", LongType(), required=True)),
        required=True,
    ),
)

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


def _bound(expr: Any) -> BoundPredicate:
    result = bind(expr, SCHEMA)
    assert isinstance(result, BoundPredicate), result
    return result


def _value(column: str, literal: Any) -> Any:
    return _bound(equal(column, literal)).literal


def _micros(t: dt.datetime) -> int:
    delta = t - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


CONVERSIONS: list[tuple[str, Any, Any]] = [
    ("id", 5, 5),
    ("id", Decimal("7.0"), 7),
    ("i", -(2**31), -(2**31)),
    ("name", "abc", "abc"),
    ("d", "2026-01-31", (dt.date(2026, 1, 31) - EPOCH_DATE).days),
    ("d", "1969-12-31", -1),
    ("d", dt.date(2000, 2, 29), (dt.date(2000, 2, 29) - EPOCH_DATE).days),
    ("d", 19000, 19000),
    ("d", dt.datetime(1969, 12, 31, 23, 0), -1),  # Java: a timestamp's day (floor)
    ("ts", "2026-01-01T00:00:00", _micros(dt.datetime(2026, 1, 1))),
    ("ts", "2026-01-01 10:15", _micros(dt.datetime(2026, 1, 1, 10, 15))),
    ("ts", "1969-12-31T23:59:59.999999", -1),
    ("ts", dt.datetime(2026, 1, 1, 1, 2, 3, 4), _micros(dt.datetime(2026, 1, 1, 1, 2, 3, 4))),
    ("ts", 123, 123),
    ("tz", "2026-01-01T02:00:00+02:00", _micros(dt.datetime(2026, 1, 1))),
    ("tz", "2026-01-01T00:00:00Z", _micros(dt.datetime(2026, 1, 1))),
    (
        "tz",
        dt.datetime(2026, 1, 1, 3, tzinfo=dt.timezone(dt.timedelta(hours=3))),
        _micros(dt.datetime(2026, 1, 1)),
    ),
    ("ns", "1970-01-01T00:00:00.000000001", 1),
    ("ns", dt.datetime(1970, 1, 1, 0, 0, 0, 5), 5000),
    ("ns", 7, 7),  # an int is the column's own unit: nanoseconds here
    ("tzns", "1970-01-01T00:00:01-00:00", 1_000_000_000),
    ("t", "10:15:30", (10 * 3600 + 15 * 60 + 30) * 1_000_000),
    ("t", dt.time(0, 0, 1, 5), 1_000_005),
    ("price", "12.3", Decimal("12.30")),
    ("price", Decimal("-0.5"), Decimal("-0.50")),
    ("price", 4, Decimal("4.00")),
    ("price", 0.1, Decimal("0.10")),  # the shortest decimal of the float, as Java
    ("f", 0.1, struct.unpack("<f", struct.pack("<f", 0.1))[0]),
    ("f", 3, 3.0),
    ("dbl", Decimal("2.5"), 2.5),
    ("dbl", -1, -1.0),
    (
        "u",
        "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ),
    ("bin", "0aFF", b"\x0a\xff"),
    ("bin", b"\x00", b"\x00"),
    ("fx", "010203", b"\x01\x02\x03"),
    ("flag", True, True),
    ("loc.lat", 1, 1.0),
]


@pytest.mark.parametrize(("column", "literal", "expected"), CONVERSIONS)
def test_literal_conversion(column: str, literal: Any, expected: Any) -> None:
    value = _value(column, literal)
    assert value == expected
    assert type(value) is type(expected)


def test_decimal_keeps_the_column_scale() -> None:
    assert str(_value("price", "12.3")) == "12.30"
    assert str(_value("price", 4)) == "4.00"


@pytest.mark.parametrize(
    ("py_type", "column", "text"),
    [
        (PyDate(), "d", "2026-01-31"),
        (PyDate(), "d", "1900-03-01"),
        (PyTimestamp(), "ts", "2026-01-01T10:15:30.123456"),
        (PyTimestamp(), "ts", "1960-06-30T23:00:00"),
        (PyTimestamptz(), "tz", "2026-01-01T10:15:30+05:30"),
        (PyDecimal(9, 2), "price", "123.45"),
        (PyUUID(), "u", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ],
)
def test_conversion_agrees_with_pyiceberg(py_type: Any, column: str, text: str) -> None:
    expected = py_literal(text).to(py_type).value
    if isinstance(py_type, PyUUID) and isinstance(expected, bytes):
        expected = uuid.UUID(bytes=expected)
    assert _value(column, text) == expected


CONVERSION_ERRORS = [
    ("i", 2**31, "out of range"),
    ("i", -(2**31) - 1, "out of range"),
    ("id", 2**63, "out of range"),
    ("id", "5", "without quotes"),
    ("id", True, "without quotes"),
    ("name", 5, "quoted string"),
    ("d", "2026-02-30", "not a valid calendar date"),
    ("d", "31/01/2026", "ISO-8601 date"),
    ("d", 2**31, "out of range"),
    ("ts", "2026-01-01", "a date is not a timestamp"),  # Java: no implicit midnight
    ("ts", dt.date(2026, 1, 1), "a date is not a timestamp"),
    ("ts", "2026-01-01T00:00:00+00:00", "leave out the offset"),
    ("ts", "2026-01-01T25:00:00", "valid time of day"),
    ("ts", "yesterday", "ISO-8601 timestamp"),
    ("tz", "2026-01-01T00:00:00", "add the offset"),
    ("tz", dt.datetime(2026, 1, 1), "aware datetime"),
    ("ts", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "naive datetime"),
    ("t", "24:00:00", "valid time of day"),
    ("t", 86_400_000_000, "out of range"),
    ("price", "abc", "not a decimal number"),
    ("price", Decimal("12345678.9"), "out of range"),
    ("f", 1e39, "32-bit float"),
    ("dbl", Decimal("1e400"), "64-bit double"),
    ("dbl", "1.5", "without quotes"),
    ("u", "not-a-uuid", "not a UUID"),
    ("bin", "xyz", "hexadecimal"),
    ("fx", "0102", "holds 3"),
    ("flag", 1, "true or false"),
]


@pytest.mark.parametrize(("column", "literal", "words"), CONVERSION_ERRORS)
def test_conversion_errors_name_column_and_value(column: str, literal: Any, words: str) -> None:
    with pytest.raises(ValidationError) as info:
        bind(equal(column, literal), SCHEMA)
    message = str(info.value)
    assert words in message
    assert repr(column) in message
    assert repr(literal) in message


def test_unknown_column_lists_the_columns() -> None:
    with pytest.raises(ValidationError) as info:
        bind(equal("nope", 1), SCHEMA)
    message = str(info.value)
    assert "'nope'" in message
    for name in ("id", "name", "loc.lat", "tags.element", "attrs.value"):
        assert name in message


def test_case_sensitivity() -> None:
    with pytest.raises(ValidationError, match="cannot find column 'NAME'"):
        bind(equal("NAME", "a"), SCHEMA)
    bound = bind(equal("NAME", "a"), SCHEMA, case_sensitive=False)
    assert isinstance(bound, BoundPredicate) and bound.term.field_id == 3
    schema = Schema(NestedField(1, "Ab", LongType()), NestedField(2, "aB", LongType()))
    with pytest.raises(ValidationError, match="ambiguous"):
        bind(equal("ab", 1), schema, case_sensitive=False)
    # an exact match wins
    assert bind(equal("aB", 1), schema, False).term.field_id == 2  # type: ignore[attr-defined]


def test_type_checks_of_tests() -> None:
    with pytest.raises(ValidationError, match=r"IS NAN needs a float or double column.*'id'"):
        bind(is_nan("id"), SCHEMA)
    with pytest.raises(ValidationError, match="IS NOT NAN needs"):
        bind(parse("name is not nan"), SCHEMA)
    with pytest.raises(ValidationError, match=r"LIKE .* needs a string column"):
        bind(starts_with("id", "1"), SCHEMA)
    with pytest.raises(ValidationError, match="only IS NULL / IS NOT NULL"):
        bind(equal("loc", 1), SCHEMA)
    assert bind(is_nan("f"), SCHEMA).op is Operation.IS_NAN  # type: ignore[attr-defined]


def test_null_tests_of_required_and_unknown_columns_are_decided() -> None:
    assert bind(is_null("id"), SCHEMA) is ALWAYS_FALSE
    assert bind(not_null("id"), SCHEMA) is ALWAYS_TRUE
    assert bind(is_null("req.inner"), SCHEMA) is ALWAYS_FALSE
    # required inside an optional struct can still be null
    assert isinstance(bind(is_null("loc.lat"), SCHEMA), BoundPredicate)
    assert bind(is_null("gone"), SCHEMA) is ALWAYS_TRUE
    assert bind(not_null("gone"), SCHEMA) is ALWAYS_FALSE
    assert isinstance(bind(is_null("loc"), SCHEMA), BoundPredicate)


def test_sets_are_simplified() -> None:
    one = _bound(is_in("id", [3, 3]))
    assert (one.op, one.literals) == (Operation.EQ, (3,))
    one_not = _bound(not_in("id", [3]))
    assert (one_not.op, one_not.literals) == (Operation.NOT_EQ, (3,))
    assert bind(is_in("id", []), SCHEMA) is ALWAYS_FALSE
    assert bind(not_in("id", []), SCHEMA) is ALWAYS_TRUE
    # values between two ints never match, so they drop out of the set
    assert bind(is_in("id", [1.5, 2.5]), SCHEMA) is ALWAYS_FALSE
    assert _bound(is_in("id", [1, 1.5, Decimal("2")])).literals == (1, 2)
    # "1" and 1 convert to the same date (day 1)
    assert _bound(is_in("d", [1, "1970-01-02", 2])).literals == (1, 2)


def test_literals_between_column_values_rewrite_the_comparison() -> None:
    def case(expr: Any) -> Any:
        b = bind(expr, SCHEMA)
        return b if not isinstance(b, BoundPredicate) else (b.op, b.literal)

    assert case(equal("id", 2.5)) is ALWAYS_FALSE
    assert case(not_equal("id", 2.5)) is ALWAYS_TRUE
    assert case(less_than("id", 2.5)) == (Operation.LT_EQ, 2)
    assert case(less_than_or_equal("id", -2.5)) == (Operation.LT_EQ, -3)
    assert case(greater_than("id", 2.5)) == (Operation.GT_EQ, 3)
    assert case(greater_than_or_equal("id", Decimal("-2.5"))) == (Operation.GT_EQ, -2)
    assert case(less_than("price", Decimal("1.005"))) == (Operation.LT_EQ, Decimal("1.00"))
    assert case(greater_than("price", "1.005")) == (Operation.GT_EQ, Decimal("1.01"))
    assert case(equal("price", "1.005")) is ALWAYS_FALSE
    # just past the end of the range: a comparison that is decided
    assert case(less_than("i", 2**31 - 0.5)) == (Operation.LT_EQ, 2**31 - 1)
    assert case(greater_than("i", 2**31 - 0.5)) is ALWAYS_FALSE
    assert case(less_than("i", -(2**31) - 0.5)) is ALWAYS_FALSE
    # sub-microsecond timestamps
    assert case(less_than("ts", "1970-01-01T00:00:00.0000005")) == (Operation.LT_EQ, 0)
    assert case(equal("ts", "1970-01-01T00:00:00.0000005")) is ALWAYS_FALSE


def test_nested_references() -> None:
    lat = _bound(equal("loc.lat", 1.0)).term
    assert (lat.field_id, lat.name, lat.accessor, lat.nested) == (18, "loc.lat", (16, 0), True)
    assert lat.eval((None,) * 16 + ((2.5, "x"),)) == 2.5
    assert lat.eval((None,) * 17) is None
    element = _bound(equal("tags.element", "a")).term
    assert element.accessor is None and element.in_list_or_map
    with pytest.raises(ValidationError, match="inside a list or map"):
        element.eval(())
    value = _bound(greater_than("attrs.value", 1)).term
    assert value.in_list_or_map


def test_binding_keeps_structure_and_bound_parts() -> None:
    expr = and_(equal("id", 1), not_(equal("name", "a")))
    bound = bind(expr, SCHEMA)
    assert bound.is_bound
    assert str(bound) == "id = 1 AND NOT (name = 'a')"
    assert bind(bound, SCHEMA) == bound  # binding twice changes nothing
    assert bind(expr, SCHEMA.as_struct()) == bound
    with pytest.raises(ValidationError, match="Schema or StructType"):
        bind(expr, "schema")  # type: ignore[arg-type]
    assert bind(greater_than("id", 2), SCHEMA).term.required  # type: ignore[attr-defined]
