"""Inclusive and strict projection, one table per transform.

Each row is (row predicate, expected inclusive projection, expected strict projection),
over a one-column table ``c`` whose partition field is ``p``. Expected values are worked
out by hand from the spec's transform definitions, taken from Iceberg Java's projection
tests (``TestDatesProjection``: the month tables), or computed by pyiceberg (bucket
numbers); the last tests compare whole projections with pyiceberg.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from pyiceberg.expressions.visitors import inclusive_projection as py_inclusive
from pyiceberg.expressions.visitors import strict_projection as py_strict
from pyiceberg.transforms import BucketTransform as PyBucket
from pyiceberg.types import LongType as PyLong
from pyiceberg.types import StringType as PyString
from pyiceberg.types import UUIDType as PyUUID

from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Expression,
    and_,
    equal,
    greater_than,
    greater_than_or_equal,
    inclusive_projection,
    is_in,
    less_than,
    less_than_or_equal,
    not_equal,
    not_in,
    or_,
    parse,
    strict_projection,
)
from icewright.spec.partitioning import PartitionField, PartitionSpec, build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.transforms import UnknownTransform, parse_transform
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampNsType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)
from tests.expressions.oracle import from_py, py_schema, py_spec, to_py

Row = tuple[Any, Any, Any]


def _spec(*fields: tuple[int, str, str]) -> PartitionSpec:
    """A spec from (source id, transform, name); allows fields Java's builder refuses."""
    return PartitionSpec(
        *(
            PartitionField(src, 1000 + i, parse_transform(t), name)
            for i, (src, t, name) in enumerate(fields)
        )
    )


def _expr(e: Expression | str) -> Expression:
    return parse(e) if isinstance(e, str) else e


def _check(column_type: IcebergType, transform: str, rows: list[Row]) -> None:
    schema = Schema(NestedField(1, "c", column_type))
    spec = _spec((1, transform, "p"))
    for row_pred, inclusive, strict in rows:
        expr = _expr(row_pred)
        assert inclusive_projection(spec, schema, expr) == _expr(inclusive), f"inclusive {expr}"
        assert strict_projection(spec, schema, expr) == _expr(strict), f"strict {expr}"


def test_identity() -> None:
    _check(
        LongType(),
        "identity",
        [
            ("c < 5", "p < 5", "p < 5"),
            ("c >= -3", "p >= -3", "p >= -3"),
            ("c = 7", "p = 7", "p = 7"),
            ("c != 7", "p != 7", "p != 7"),
            ("c in (1, 2)", "p in (1, 2)", "p in (1, 2)"),
            ("c not in (1, 2)", "p not in (1, 2)", "p not in (1, 2)"),
            ("c is null", "p is null", "p is null"),
            ("c is not null", "p is not null", "p is not null"),
            ("c = 2.5", "false", "false"),
        ],
    )
    _check(StringType(), "identity", [("c like 'ab%'", "p like 'ab%'", "p like 'ab%'")])
    _check(DoubleType(), "identity", [("c is nan", "p is nan", "p is nan")])


def _bucket(py_type: Any, value: Any) -> int:
    return int(PyBucket(16).transform(py_type)(value))


def test_bucket() -> None:
    b5, b6 = _bucket(PyLong(), 5), _bucket(PyLong(), 6)
    _check(
        LongType(),
        "bucket[16]",
        [
            ("c = 5", f"p = {b5}", "false"),
            ("c != 5", "true", f"p != {b5}"),
            ("c in (5, 6)", is_in("p", [b5, b6]), "false"),
            ("c not in (5, 6)", "true", not_in("p", [b5, b6])),
            ("c < 5", "true", "false"),
            ("c >= 5", "true", "false"),
            ("c is null", "p is null", "p is null"),
            ("c is not null", "p is not null", "p is not null"),
            ("c = 5 and c < 10", f"p = {b5}", "false"),
            ("c = 5 or c < 10", "true", "false"),
        ],
    )
    # int columns hash like longs (Appendix B), so the same bucket
    _check(IntegerType(), "bucket[16]", [("c = 5", f"p = {b5}", "false")])
    _check(
        StringType(),
        "bucket[16]",
        [
            ("c = 'iceberg'", f"p = {_bucket(PyString(), 'iceberg')}", "false"),
            ("c like 'ice%'", "true", "false"),
        ],
    )
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    _check(UUIDType(), "bucket[16]", [(equal("c", u), f"p = {_bucket(PyUUID(), u)}", "false")])


def test_truncate_integers() -> None:
    rows: list[Row] = [
        ("c < 5", "p <= 0", "p < 0"),
        ("c < 10", "p <= 0", "p < 10"),
        ("c <= 10", "p <= 10", "p < 10"),
        ("c <= 9", "p <= 0", "p < 10"),
        ("c > 9", "p >= 10", "p > 0"),
        ("c > 10", "p >= 10", "p > 10"),
        ("c >= 10", "p >= 10", "p > 0"),
        ("c >= 11", "p >= 10", "p > 10"),
        ("c = 15", "p = 10", "false"),
        ("c != 15", "true", "p != 10"),
        ("c in (1, 11, 15)", "p in (0, 10)", "false"),
        ("c not in (1, 11)", "true", "p not in (0, 10)"),
        ("c < -5", "p <= -10", "p < -10"),
        ("c >= -1", "p >= -10", "p > -10"),
        ("c = -1", "p = -10", "false"),
        ("c is null", "p is null", "p is null"),
    ]
    _check(IntegerType(), "truncate[10]", rows)
    _check(LongType(), "truncate[10]", rows)


def test_truncate_decimal() -> None:
    # spec example: W=50, scale 2: 10.65 -> 10.50
    _check(
        DecimalType(9, 2),
        "truncate[50]",
        [
            ("c = 10.65", "p = 10.50", "false"),
            ("c < 10.65", "p <= 10.50", "p < 10.50"),
            ("c < 10.50", "p <= 10.00", "p < 10.50"),
            ("c <= 10.99", "p <= 10.50", "p < 11.00"),
            ("c > 10.49", "p >= 10.50", "p > 10.00"),
            ("c >= 10.50", "p >= 10.50", "p > 10.00"),
            ("c != 10.65", "true", "p != 10.50"),
            ("c in (10.65, 10.10)", "p in (10.00, 10.50)", "false"),
            ("c < -0.01", "p <= -0.50", "p < -0.50"),
        ],
    )


def test_truncate_string() -> None:
    _check(
        StringType(),
        "truncate[3]",
        [
            ("c = 'abcdef'", "p = 'abc'", "false"),
            ("c = 'ab'", "p = 'ab'", "false"),
            ("c != 'abcdef'", "true", "p != 'abc'"),
            ("c < 'abcdef'", "p <= 'abc'", "p < 'abc'"),
            ("c <= 'ab'", "p <= 'ab'", "p < 'ab'"),
            ("c > 'abcdef'", "p >= 'abc'", "p > 'abc'"),
            ("c >= 'abcdef'", "p >= 'abc'", "p > 'abc'"),
            ("c like 'ab%'", "p like 'ab%'", "p like 'ab%'"),
            ("c like 'abc%'", "p = 'abc'", "p = 'abc'"),
            ("c like 'abcd%'", "p like 'abc%'", "false"),
            ("c not like 'ab%'", "p not like 'ab%'", "p not like 'ab%'"),
            ("c not like 'abc%'", "p != 'abc'", "p != 'abc'"),
            ("c not like 'abcd%'", "true", "p not like 'abc%'"),
            ("c in ('abcd', 'abxy', 'x')", "p in ('abc', 'abx', 'x')", "false"),
            ("c not in ('abcd', 'x')", "true", "p not in ('abc', 'x')"),
            # code points, not bytes (spec note 3)
            ("c = 'ééééé'", "p = 'ééé'", "false"),
        ],
    )


def test_truncate_binary() -> None:
    value = b"\x01\x02\x03\x04"
    cut = b"\x01\x02"
    _check(
        BinaryType(),
        "truncate[2]",
        [
            (equal("c", value), equal("p", cut), ALWAYS_FALSE),
            (less_than("c", value), less_than_or_equal("p", cut), less_than("p", cut)),
            (greater_than("c", value), greater_than_or_equal("p", cut), greater_than("p", cut)),
            (not_equal("c", value), ALWAYS_TRUE, not_equal("p", cut)),
            (is_in("c", [value, b"\x09"]), is_in("p", [cut, b"\x09"]), ALWAYS_FALSE),
        ],
    )


def test_day_of_timestamp() -> None:
    # 2026-01-01 is day 20454
    _check(
        TimestampType(),
        "day",
        [
            ("c < '2026-01-02T00:00:00'", "p <= 20454", "p < 20455"),
            ("c <= '2026-01-01T23:59:59.999999'", "p <= 20454", "p < 20455"),
            ("c >= '2026-01-01T00:00:00'", "p >= 20454", "p > 20453"),
            ("c > '2026-01-01T10:00:00'", "p >= 20454", "p > 20454"),
            ("c = '2026-01-01T10:00:00'", "p = 20454", "false"),
            ("c != '2026-01-01T10:00:00'", "true", "p != 20454"),
            (
                "c in ('2026-01-01T10:00:00', '2026-01-02T10:00:00')",
                "p in (20454, 20455)",
                "false",
            ),
            (
                "c not in ('2026-01-01T10:00:00', '2026-01-02T10:00:00')",
                "true",
                "p not in (20454, 20455)",
            ),
            ("c is null", "p is null", "p is null"),
            # before 1970: widened (inclusive) and narrowed (strict) for old writers, whose
            # transform gave day(1969-12-31 10:00) = 0 instead of -1 (Java ProjectionUtil)
            ("c < '1969-12-31T10:00:00'", "p <= 0", "p < -1"),
            ("c = '1969-12-31T10:00:00'", "p in (-1, 0)", "false"),
            ("c in ('1969-12-30T10:00:00', '1970-01-02T10:00:00')", "p in (-2, -1, 1)", "false"),
            ("c > '1969-12-30T10:00:00'", "p >= -2", "p > -1"),
            ("c != '1969-12-31T10:00:00'", "true", "p not in (-1, 0)"),
            ("c >= '1970-01-01T00:00:00'", "p >= 0", "p > 0"),
        ],
    )


def test_hour_and_year_of_timestamps() -> None:
    # 2026-01-01T10:00 is hour 20454 * 24 + 10 = 490906; year 2026 is 56
    _check(
        TimestamptzType(),
        "hour",
        [
            ("c >= '2026-01-01T10:00:00+00:00'", "p >= 490906", "p > 490905"),
            ("c = '2026-01-01T10:30:00Z'", "p = 490906", "false"),
        ],
    )
    _check(
        TimestampNsType(),
        "year",
        [
            ("c < '2026-01-01T00:00:00'", "p <= 55", "p < 56"),
            ("c = '2026-06-01T00:00:00.000000001'", "p = 56", "false"),
            ("c < '1960-01-01T00:00:00'", "p <= -10", "p < -10"),
        ],
    )


def test_day_of_date_has_no_compatibility_adjustment() -> None:
    # the day of a date is the date itself (Java Dates.DAY skips the 0.10 fix)
    _check(
        DateType(),
        "day",
        [
            ("c < '1969-12-31'", "p <= -2", "p < -1"),
            ("c = '1969-12-31'", "p = -1", "false"),
            ("c > '1969-12-30'", "p >= -1", "p > -2"),
        ],
    )


def test_month_of_date_matches_java_tests() -> None:
    # TestDatesProjection: testMonthStrictEpoch / testMonthInclusiveEpoch (1970-01 is 0)
    _check(
        DateType(),
        "month",
        [
            ("c < '1970-01-01'", "p <= 0", "p < 0"),
            ("c <= '1970-01-01'", "p <= 0", "p < 0"),
            ("c > '1970-01-01'", "p >= 0", "p > 1"),
            ("c >= '1970-01-01'", "p >= 0", "p > 0"),
            ("c = '1970-01-01'", "p = 0", "false"),
            ("c != '1970-01-01'", "true", "p != 0"),
            ("c in ('1970-01-01', '1969-12-31')", "p in (-1, 0)", "false"),
            ("c not in ('1970-01-01', '1969-12-31')", "true", "p not in (-1, 0)"),
        ],
    )
    # testNegativeMonthStrictLowerBound (1969-01 is -12) and ...UpperBound (1969-12 is -1)
    _check(
        DateType(),
        "month",
        [
            ("c < '1969-01-01'", "p <= -12", "p < -12"),
            ("c <= '1969-01-01'", "p <= -11", "p < -12"),
            ("c > '1969-01-01'", "p >= -12", "p > -11"),
            ("c >= '1969-01-01'", "p >= -12", "p > -12"),
            ("c != '1969-01-01'", "true", "p not in (-12, -11)"),
            ("c not in ('1969-01-01', '1969-12-31')", "true", "p not in (-12, -11, -1, 0)"),
            ("c < '1969-12-31'", "p <= 0", "p < -1"),
            ("c <= '1969-12-31'", "p <= 0", "p < 0"),
            ("c > '1969-12-31'", "p >= 0", "p > 0"),
            ("c >= '1969-12-31'", "p >= -1", "p > 0"),
            ("c not in ('1969-12-31', '1969-11-01')", "true", "p not in (-2, -1, 0)"),
        ],
    )
    # testMonthStrictLowerBound / testMonthStrictUpperBound (2017-01 is 564)
    _check(
        DateType(),
        "month",
        [
            ("c < '2017-01-01'", "p <= 563", "p < 564"),
            ("c >= '2017-01-01'", "p >= 564", "p > 563"),
            ("c <= '2017-12-31'", "p <= 575", "p < 576"),
            ("c > '2017-12-31'", "p >= 576", "p > 575"),
        ],
    )


def test_void_and_unknown_transforms() -> None:
    _check(LongType(), "void", [("c = 5", "true", "false"), ("c is null", "true", "false")])
    schema = Schema(NestedField(1, "c", LongType()))
    spec = PartitionSpec(PartitionField(1, 1000, UnknownTransform("zorder[3]"), "p"))
    for text in ("c = 5", "c < 5", "c is null"):
        assert inclusive_projection(spec, schema, parse(text)) is ALWAYS_TRUE
        assert strict_projection(spec, schema, parse(text)) is ALWAYS_FALSE


def test_unpartitioned_columns_and_logic() -> None:
    schema = Schema(NestedField(1, "c", LongType()), NestedField(2, "other", StringType()))
    spec = build_partition_spec(schema, [("identity", "c", None, "p")])
    expr = parse("c = 1 and other = 'x'")
    assert inclusive_projection(spec, schema, expr) == parse("p = 1")
    assert strict_projection(spec, schema, expr) is ALWAYS_FALSE
    expr = parse("c = 1 or other = 'x'")
    assert inclusive_projection(spec, schema, expr) is ALWAYS_TRUE
    assert strict_projection(spec, schema, expr) == parse("p = 1")
    # NOT is pushed down first: not (c < 5) is c >= 5 or c is null (null < 5 is false)
    assert inclusive_projection(spec, schema, parse("not (c < 5 or c = 9)")) == and_(
        parse("p >= 5 or p is null"), parse("p != 9")
    )


def test_several_fields_on_one_column() -> None:
    schema = Schema(NestedField(1, "ts", TimestampType()))
    spec = _spec((1, "day", "ts_day"), (1, "hour", "ts_hour"))
    expr = parse("ts > '2026-01-01T01:00:00'")
    # inclusive: both must hold; strict: either suffices (Java Projections)
    assert inclusive_projection(spec, schema, expr) == and_(
        parse("ts_day >= 20454"), parse("ts_hour >= 490897")
    )
    assert strict_projection(spec, schema, expr) == or_(
        parse("ts_day > 20454"), parse("ts_hour > 490897")
    )


def test_case_insensitive_projection() -> None:
    schema = Schema(NestedField(1, "c", LongType()))
    spec = build_partition_spec(schema, [("identity", "c", None, "p")])
    assert inclusive_projection(spec, schema, parse("C = 1"), case_sensitive=False) == parse(
        "p = 1"
    )


# --- pyiceberg as an oracle ------------------------------------------------------------

ORACLE_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestampType()),
    NestedField(3, "name", StringType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "price", DecimalType(9, 2)),
    NestedField(6, "n", IntegerType()),
)
ORACLE_SPEC = _spec(
    (1, "bucket[16]", "id_bucket"),
    (2, "day", "ts_day"),
    (2, "hour", "ts_hour"),
    (3, "truncate[3]", "name_trunc"),
    (4, "month", "d_month"),
    (4, "year", "d_year"),
    (5, "truncate[50]", "price_trunc"),
    (6, "identity", "n"),
)
# pyiceberg does not widen projections for pre-1970 values written by Iceberg 0.10 and
# earlier, so the oracle cases use later dates and times.
ORACLE_FILTERS = [
    "id = 5",
    "id in (1, 2, 3)",
    "id != 5",
    "id not in (1, 2)",
    "id < 5",
    "ts >= '2026-01-01T00:00:00'",
    "ts < '2026-01-01T10:00:00'",
    "ts > '2026-03-01T10:00:00' and ts <= '2026-03-02T00:00:00'",
    "ts = '2026-01-01T10:00:00'",
    "ts != '2026-01-01T10:00:00'",
    "ts in ('2026-01-01T10:00:00', '2027-01-01T10:00:00')",
    "name like 'ab%'",
    "name like 'abcd%'",
    "name not like 'abcd%'",
    "name not like 'ab%'",
    "name < 'abcdef'",
    "name >= 'abcdef'",
    "name = 'abcdef'",
    "name in ('abcd', 'xyzw')",
    "d = '2017-11-15'",
    "d < '2017-01-01'",
    "d >= '2017-01-01'",
    "d > '2017-12-31'",
    "price < 10.65",
    "price >= 10.50",
    "price = 10.65",
    "n is null or n > 3",
    "not (id = 1 or ts is null)",
    "n not in (1, 2) and name is not null",
]


@pytest.mark.parametrize("text", ORACLE_FILTERS)
def test_projection_agrees_with_pyiceberg(text: str) -> None:
    expr = parse(text)
    ps, pspec = py_schema(ORACLE_SCHEMA), py_spec(ORACLE_SPEC)
    expected_inclusive = from_py(py_inclusive(ps, pspec)(to_py(expr)))
    expected_strict = from_py(py_strict(ps, pspec)(to_py(expr)))
    assert inclusive_projection(ORACLE_SPEC, ORACLE_SCHEMA, expr) == expected_inclusive
    assert strict_projection(ORACLE_SPEC, ORACLE_SCHEMA, expr) == expected_strict


def test_projection_of_pre_1970_values_differs_from_pyiceberg_only_by_widening() -> None:
    # pyiceberg: p <= -1; Java and icewright: p <= 0 (also reads 0.10-era partitions)
    expr = parse("ts < '1969-12-31T10:00:00'")
    schema = Schema(NestedField(2, "ts", TimestampType()))
    spec = build_partition_spec(schema, [("day", "ts", None, "p")])
    ours = inclusive_projection(spec, schema, expr)
    theirs = from_py(py_inclusive(py_schema(schema), py_spec(spec))(to_py(expr)))
    assert theirs == parse("p <= -1")
    assert ours == parse("p <= 0")


def test_projection_ignores_decimal_places_beyond_the_scale() -> None:
    schema = Schema(NestedField(1, "c", DecimalType(9, 2)))
    spec = build_partition_spec(schema, [("truncate", "c", 50, "p")])
    # c < 10.505 is c <= 10.50 on a scale-2 column
    assert inclusive_projection(spec, schema, parse("c < 10.505")) == parse("p <= 10.50")
    assert strict_projection(spec, schema, parse("c = 10.505")) is ALWAYS_FALSE
    assert inclusive_projection(spec, schema, parse("c = 10.505")) is ALWAYS_FALSE
    big = Schema(NestedField(1, "c", DecimalType(38, 0)))
    big_spec = build_partition_spec(big, [("truncate", "c", 10, "p")])
    # 37 digits: exact arithmetic, no 28-digit Decimal context rounding
    value = Decimal("1234567890123456789012345678901234567")
    assert inclusive_projection(big_spec, big, less_than("c", value)) == less_than_or_equal(
        "p", Decimal("1234567890123456789012345678901234560")
    )
