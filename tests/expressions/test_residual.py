"""Residual filters per partition."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pyiceberg.expressions.visitors import residual_evaluator_of
from pyiceberg.typedef import Record

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Evaluator,
    ResidualEvaluator,
    bind,
    parse,
)
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC, build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType, TimestampType
from tests.expressions.oracle import from_py, py_schema, py_spec, to_py

HOUR = 3_600_000_000
DAY_2026_01_01 = 20454

SCHEMA = Schema(
    NestedField(1, "ts", TimestampType()),
    NestedField(2, "region", StringType()),
    NestedField(3, "id", LongType()),
)
SPEC = build_partition_spec(
    SCHEMA, [("day", "ts"), ("identity", "region"), ("bucket", "id", 4), ("truncate", "id", 10)]
)
FILTER = "ts >= '2026-01-01T10:00:00' and region = 'eu'"


def test_residuals_of_the_example() -> None:
    residuals = ResidualEvaluator(SPEC, SCHEMA, parse(FILTER))
    ts_part = bind(parse("ts >= '2026-01-01T10:00:00'"), SCHEMA)
    # the day holds rows before and after 10:00: the timestamp test stays; region is decided
    assert residuals.residual_for((DAY_2026_01_01, "eu", 0, 0)) == ts_part
    assert residuals.residual_for((DAY_2026_01_01 + 1, "eu", 0, 0)) is ALWAYS_TRUE
    assert residuals.residual_for((DAY_2026_01_01 - 1, "eu", 0, 0)) is ALWAYS_FALSE
    assert residuals.residual_for((DAY_2026_01_01 + 1, "us", 0, 0)) is ALWAYS_FALSE
    assert residuals.residual_for((DAY_2026_01_01 + 1, None, 0, 0)) is ALWAYS_FALSE


def test_residual_keeps_predicates_on_unpartitioned_columns() -> None:
    expr = parse("region = 'eu' and id < 25 or ts is null")
    residuals = ResidualEvaluator(SPEC, SCHEMA, expr)
    # truncate[10] of id: partition 10 holds 10..19 (all < 25), 20 holds 20..29 (some)
    assert residuals.residual_for((1, "eu", 0, 10)) is ALWAYS_TRUE
    # a null day partition means every ts is null
    assert residuals.residual_for((None, "us", 0, 10)) is ALWAYS_TRUE
    # ts is partitioned by day: a non-null day decides "ts is null" (false)
    assert residuals.residual_for((1, "eu", 0, 20)) == bind(parse("id < 25"), SCHEMA)
    assert residuals.residual_for((1, "us", 0, 20)) is ALWAYS_FALSE
    assert residuals.residual_for((1, "eu", 0, 30)) is ALWAYS_FALSE


def test_unpartitioned_residual_is_the_bound_filter() -> None:
    residuals = ResidualEvaluator(UNPARTITIONED_PARTITION_SPEC, SCHEMA, parse(FILTER))
    assert residuals.residual_for(()) == bind(parse(FILTER), SCHEMA)
    with pytest.raises(ValidationError, match="has 1 values but spec 0 has 0 fields"):
        residuals.residual_for((1,))


def test_residual_pushes_not_down() -> None:
    residuals = ResidualEvaluator(SPEC, SCHEMA, parse("not (region = 'eu' or id = 5)"))
    assert residuals.residual_for((1, "eu", 0, 0)) is ALWAYS_FALSE
    # id != 5: bucket 0 may hold 5 or not (strict: only buckets other than bucket(5))
    assert residuals.residual_for((1, "us", 0, 10)) is ALWAYS_TRUE  # truncate 10..19 != 5


FILTERS = [
    FILTER,
    "ts < '2026-01-02T00:00:00' or region in ('eu', 'us')",
    "id = 5",
    "id != 5",
    "id in (5, 15, 27) and region != 'eu'",
    "id >= 12 and id <= 27",
    "region like 'e%'",
    "not (id < 20) and ts is not null",
    "region is null or id is null",
]
ROWS = list(
    itertools.product(
        [None, *((DAY_2026_01_01 * 24 + h) * HOUR for h in (-1, 0, 9, 10, 23, 24, 30))],
        [None, "eu", "us", "apac"],
        [None, 3, 5, 12, 15, 20, 27, 40],
    )
)


def _partition(row: tuple[Any, ...]) -> tuple[Any, ...]:
    types = [f.field_type for f in SCHEMA.fields]
    return tuple(
        f.transform.apply(types[f.source_id - 1], row[f.source_id - 1]) for f in SPEC.fields
    )


@pytest.mark.parametrize("text", FILTERS)
def test_residual_is_equivalent_on_the_partition_rows(text: str) -> None:
    expr = parse(text)
    residuals = ResidualEvaluator(SPEC, SCHEMA, expr)
    full = Evaluator(SCHEMA, expr)
    for row in ROWS:
        residual = residuals.residual_for(_partition(row))
        assert Evaluator(SCHEMA, residual).eval(row) == full.eval(row), (text, row, residual)


@pytest.mark.parametrize("text", FILTERS)
def test_residual_agrees_with_pyiceberg(text: str) -> None:
    expr = parse(text)
    ours = ResidualEvaluator(SPEC, SCHEMA, expr)
    theirs = residual_evaluator_of(py_spec(SPEC), to_py(expr), True, py_schema(SCHEMA))
    for row in ROWS:
        partition = _partition(row)
        if None in partition:
            continue  # pyiceberg compares null partition values with Python operators
        expected = bind(from_py(theirs.residual_for(Record(*partition))), SCHEMA)
        assert ours.residual_for(partition) == expected, (text, partition)
