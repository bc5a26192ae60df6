"""sql_filter: Spark SQL's meaning of a predicate as a two-valued Iceberg expression that
prunes as well as the plain comparison (issue 14)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from icewright.expressions import (
    And,
    BoundPredicate,
    Evaluator,
    Expression,
    InclusiveMetricsEvaluator,
    Or,
    bind,
    parse,
    sql_filter,
)
from icewright.expressions.sql import NaNAboveComparison
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType
from tests.expressions.test_metrics import FILE
from tests.expressions.test_metrics import SCHEMA as METRICS_SCHEMA

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "n", LongType()),
)
NAN = math.nan
# the issue 14 table; the ids Spark SQL keeps are the (tests/actions proves them)
ROWS: list[tuple[Any, ...]] = [
    (1, "emea", 1.0, 1),
    (2, "us", NAN, None),
    (3, None, None, 3),
    (4, "apac", 5.0, None),
    (5, "us", 2.0, 5),
    (6, None, 7.0, 6),
    (7, "emea", None, None),
]


def kept(text: str) -> list[int]:
    evaluator = Evaluator(SCHEMA, sql_filter(text))
    return [r[0] for r in ROWS if not evaluator.eval(r)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NOT (x < 3)", [1, 3, 5, 7]),
        ("x >= 3", [1, 3, 5, 7]),
        ("x > 4 OR region = 'us'", [1, 3, 7]),
        ("NOT (x <= 4)", [1, 3, 5, 7]),
        ("n > 3", [1, 2, 3, 4, 7]),
        ("NOT (n < 5)", [1, 2, 3, 4, 7]),
    ],
)
def test_nan_sorts_above_and_null_never_matches(text: str, expected: list[int]) -> None:
    assert kept(text) == expected


def _leaves(expr: Expression) -> list[Expression]:
    if isinstance(expr, And | Or):
        return _leaves(expr.left) + _leaves(expr.right)
    return [expr]


def test_nan_test_only_for_float_columns() -> None:
    bound = bind(sql_filter("n > 3 AND NOT (x < 3)"), SCHEMA)
    ops = [p.op for p in _leaves(bound) if isinstance(p, BoundPredicate)]
    assert sorted(op.name for op in ops) == ["GT", "GT_EQ", "IS_NAN"]
    assert isinstance(sql_filter("3 < x"), NaNAboveComparison)


@pytest.mark.parametrize("text", ["x > 4", "NOT (x <= 4)", "x >= 3 AND region = 'us'"])
def test_printed_form_reads_back_the_same_rows(text: str) -> None:
    assert kept(str(sql_filter(text))) == kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "some_nulls > 'abz'",  # bounds abc..abe, 10 nulls: no row can match
        "some_nulls >= 'abz'",
        "NOT (some_nulls <= 'abz')",
        "NOT (some_nulls < 'abz')",
        "no_nans > 3.5",  # upper bound 3.5, no NaN
    ],
)
def test_greater_than_still_prunes_files_with_nulls(text: str) -> None:
    assert not InclusiveMetricsEvaluator(METRICS_SCHEMA, sql_filter(text)).eval(FILE)


def test_greater_than_keeps_files_with_nans() -> None:
    # some_nans: bounds 1.0..2.0 and one NaN, which Spark SQL finds above 5
    assert InclusiveMetricsEvaluator(METRICS_SCHEMA, sql_filter("some_nans > 5")).eval(FILE)
    assert not InclusiveMetricsEvaluator(METRICS_SCHEMA, parse("some_nans > 5")).eval(FILE)
