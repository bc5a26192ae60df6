"""Iceberg values and filters as Spark columns: literals typed as Spark reads the column, and
bound expressions as Spark filters with Iceberg's two-valued semantics (expressions spec:
"Comparisons").
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Operation,
    Or,
    rewrite_not,
)
from icewright.spark.projection import _spark_type, _supported
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    PrimitiveType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = ["spark_literal"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _timestamp_text(micros: int) -> str:
    try:
        moment = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise ValidationError(
            f"timestamp {micros} us is outside the years 1-9999 Spark literals cover"
        ) from None
    return moment.isoformat(sep=" ", timespec="microseconds")


def spark_literal(value: Any, t: IcebergType) -> Column:
    """A Spark literal of icewright value ``value`` of Iceberg type ``t``, typed as Spark reads
    the column (a uuid as its 16 bytes, dates and timestamps exact, without time zone games)."""
    if value is None:
        return F.lit(None).cast(_spark_type(t))
    if isinstance(t, DateType):
        return F.lit(_EPOCH_DATE + dt.timedelta(days=int(value)))
    if isinstance(t, TimestamptzType):
        return F.expr(f"timestamp_micros({int(value)}L)")
    if isinstance(t, TimestampType):
        return F.expr(f"TIMESTAMP_NTZ '{_timestamp_text(int(value))}'")
    if isinstance(t, TimeType):
        clock = (_EPOCH + dt.timedelta(microseconds=int(value))).time()
        return F.expr(f"TIME '{clock.isoformat(timespec='microseconds')}'")
    if isinstance(t, UUIDType):
        raw = value.bytes if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).bytes
        return F.lit(bytearray(raw))
    if isinstance(t, BinaryType | FixedType):
        return F.lit(bytearray(value))
    if isinstance(t, DecimalType):
        return F.lit(Decimal(value)).cast(_spark_type(t))
    if isinstance(t, PrimitiveType) and _supported(t):
        return F.lit(value).cast(_spark_type(t))
    raise ValidationError(f"a {t} value has no Spark literal here")


def _filter_column(expr: Expression, column: Callable[[BoundReference], Column]) -> Column:
    """``expr`` (bound) as a Spark filter that keeps exactly the rows Iceberg's does.

    Iceberg's tests are two-valued (expressions spec: "Comparisons"): a null or NaN value
    fails every comparison with a literal, and ``!=``, ``NOT IN`` and ``NOT STARTS WITH``
    are the exact negations of their positive forms, true for null. Spark's are
    three-valued, a filter drops rows whose predicate is null, and NaN sorts above every
    number. With the negations pushed into the tests first (:func:`rewrite_not`), AND and
    OR of tests that are null where Iceberg says false keep the same rows, so only the
    negated tests and float orderings need adjusting; the plain comparisons stay plain, so
    Spark can still push them down to Parquet row-group statistics.
    """
    return _positive(rewrite_not(expr), column)


def _positive(expr: Expression, column: Callable[[BoundReference], Column]) -> Column:
    if expr is ALWAYS_TRUE:
        return F.lit(True)
    if expr is ALWAYS_FALSE:
        return F.lit(False)
    if isinstance(expr, And):
        return _positive(expr.left, column) & _positive(expr.right, column)
    if isinstance(expr, Or):
        return _positive(expr.left, column) | _positive(expr.right, column)
    if isinstance(expr, Not):  # not left by rewrite_not on a bound expression; exact anyway
        return ~F.coalesce(_positive(expr.child, column), F.lit(False))
    if not isinstance(expr, BoundPredicate):
        raise ValidationError(f"cannot apply the unbound or unknown expression {expr!r}")
    return _test(expr, column(expr.term))


def _test(pred: BoundPredicate, c: Column) -> Column:
    """One test; null (dropping the row) where Iceberg's is false."""
    op, t = pred.op, pred.term.field_type
    if isinstance(t, FloatType | DoubleType) and any(v == 0 for v in pred.literals):
        # -0.0 equals 0.0 (IEEE 754, Spark SQL, Python), but Parquet row-group statistics
        # compare them as different, so a pushed-down `x = 0.0` skips a group of -0.0.
        # Adding 0.0 turns -0.0 into 0.0 and keeps this test out of the pushdown.
        c = c + F.lit(0.0)
    if op is Operation.IS_NULL:
        return c.isNull()
    if op is Operation.NOT_NULL:
        return c.isNotNull()
    if op is Operation.IS_NAN:
        return F.isnan(c)
    if op is Operation.NOT_NAN:
        return ~F.isnan(c)  # isnan(null) is false: a null is "not NaN"
    if op in (Operation.IN, Operation.NOT_IN):
        test = c.isin([spark_literal(v, t) for v in pred.literals])
    elif op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
        test = c.startswith(F.lit(str(pred.literal)))
    else:
        lit = spark_literal(pred.literal, t)
        tests = {
            Operation.EQ: lambda: c == lit,
            Operation.NOT_EQ: lambda: c == lit,
            Operation.LT: lambda: c < lit,
            Operation.LT_EQ: lambda: c <= lit,
            Operation.GT: lambda: c > lit,
            Operation.GT_EQ: lambda: c >= lit,
        }
        test = tests[op]()
    if op in (Operation.NOT_EQ, Operation.NOT_IN, Operation.NOT_STARTS_WITH):
        return ~test | c.isNull()  # the negation, true for null (and for NaN already)
    if op in (Operation.GT, Operation.GT_EQ) and isinstance(t, FloatType | DoubleType):
        return test & ~F.isnan(c)  # Spark orders NaN above every number
    return test


def _references(expr: Expression) -> Iterator[BoundReference]:
    if isinstance(expr, And | Or):
        yield from _references(expr.left)
        yield from _references(expr.right)
    elif isinstance(expr, Not):
        yield from _references(expr.child)
    elif isinstance(expr, BoundPredicate):
        yield expr.term
