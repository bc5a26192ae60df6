"""Property: inclusive projection never drops a partition that holds a matching row, and
strict projection never accepts a partition that holds a non-matching row.

For random predicates and random rows (including nulls and values on transform
boundaries, before and after 1970), the row's partition tuple is computed with the spec's
transform and both projections are evaluated on it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icewright.expressions import (
    Evaluator,
    Operation,
    inclusive_projection,
    not_,
    predicate,
    strict_projection,
)
from icewright.spec.partitioning import PartitionField, PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.transforms import parse_transform
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampNsType,
    TimestampType,
)

HOUR = 3_600_000_000
DAY = 24 * HOUR
EPOCH = dt.date(1970, 1, 1)


def _month_starts() -> list[int]:
    days = []
    for year in range(1967, 1973):
        for month in range(1, 13):
            days.append((dt.date(year, month, 1) - EPOCH).days)
    return days


MONTH_START_DAYS = _month_starts()

ORDERED = [
    Operation.LT,
    Operation.LT_EQ,
    Operation.GT,
    Operation.GT_EQ,
    Operation.EQ,
    Operation.NOT_EQ,
    Operation.IN,
    Operation.NOT_IN,
    Operation.IS_NULL,
    Operation.NOT_NULL,
]
STRINGS = [*ORDERED, Operation.STARTS_WITH, Operation.NOT_STARTS_WITH]


def _near(points: list[int], jitter: int) -> st.SearchStrategy[int]:
    return st.builds(lambda p, j: p + j, st.sampled_from(points), st.integers(-jitter, jitter))


small_ints = st.integers(-40, 40)
decimals = st.integers(-3000, 3000).map(lambda n: Decimal(n).scaleb(-2))
decimal_literals = st.one_of(
    decimals, st.integers(-30000, 30000).map(lambda n: Decimal(n).scaleb(-3))
)
strings = st.text(alphabet="abé", max_size=4)
binaries = st.binary(max_size=4).map(lambda b: bytes(x % 3 for x in b))
dates = st.one_of(st.integers(-800, 800), _near(MONTH_START_DAYS, 2))
timestamps = st.one_of(
    st.integers(-40 * DAY, 40 * DAY),
    _near([k * HOUR for k in range(-60, 60)], 2),
    _near([d * DAY for d in MONTH_START_DAYS], 2),
)
nanos = timestamps.map(lambda us: us * 1000).flatmap(lambda ns: st.integers(ns - 2, ns + 2))

# (column type, transforms, ops, row values, literal values)
CASES: list[tuple[IcebergType, list[str], list[Operation], Any, Any]] = [
    (LongType(), ["identity"], ORDERED, small_ints, small_ints),
    (LongType(), ["bucket[4]"], ORDERED, small_ints, small_ints),
    (IntegerType(), ["truncate[10]"], ORDERED, small_ints, small_ints),
    (LongType(), ["truncate[3]", "bucket[3]"], ORDERED, small_ints, small_ints),
    (DecimalType(9, 2), ["truncate[50]"], ORDERED, decimals, decimal_literals),
    (StringType(), ["truncate[2]"], STRINGS, strings, strings),
    (StringType(), ["identity", "bucket[2]"], STRINGS, strings, strings),
    (BinaryType(), ["truncate[2]"], ORDERED, binaries, binaries),
    (DateType(), ["day"], ORDERED, dates, dates),
    (DateType(), ["month"], ORDERED, dates, dates),
    (DateType(), ["year"], ORDERED, dates, dates),
    (TimestampType(), ["hour"], ORDERED, timestamps, timestamps),
    (TimestampType(), ["day", "hour"], ORDERED, timestamps, timestamps),
    (TimestampType(), ["month"], ORDERED, timestamps, timestamps),
    (TimestampType(), ["year"], ORDERED, timestamps, timestamps),
    (TimestampNsType(), ["day"], ORDERED, nanos, nanos),
]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[IcebergType, list[str], Any, list[Any]]:
    column_type, transforms, ops, values, literals = draw(st.sampled_from(CASES))
    op = draw(st.sampled_from(ops))
    if op.is_unary:
        expr = predicate(op, "c")
    elif op.is_set:
        expr = predicate(op, "c", *draw(st.lists(literals, min_size=1, max_size=4)))
    elif op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
        expr = predicate(op, "c", draw(strings))
    else:
        expr = predicate(op, "c", draw(literals))
    if draw(st.booleans()):
        expr = not_(expr)  # NOT is exact: it also holds for null values
    rows = draw(st.lists(st.one_of(st.none(), values), min_size=1, max_size=12))
    return column_type, transforms, expr, rows


@settings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios())
def test_projections_are_sound(scenario: tuple[IcebergType, list[str], Any, list[Any]]) -> None:
    column_type, transforms, expr, rows = scenario
    schema = Schema(NestedField(1, "c", column_type))
    spec = PartitionSpec(
        *(
            PartitionField(1, 1000 + i, parse_transform(t), f"p{i}")
            for i, t in enumerate(transforms)
        )
    )
    partition_type = spec.partition_type(schema)
    row_filter = Evaluator(schema, expr)
    inclusive = Evaluator(partition_type, inclusive_projection(spec, schema, expr))
    strict = Evaluator(partition_type, strict_projection(spec, schema, expr))
    for value in rows:
        partition = tuple(f.transform.apply(column_type, value) for f in spec.fields)
        matches = row_filter.eval((value,))
        if matches:
            assert inclusive.eval(partition), (expr, value, partition)
        if strict.eval(partition):
            assert matches, (expr, value, partition)
