"""Projection of row predicates onto partition predicates (table spec: "Scan Planning").

* The *inclusive* projection of a row predicate ``p`` is a partition predicate that is
  true for the partition of every row where ``p`` is true: it selects the partitions
  (files, manifests) that might hold matching rows.
* The *strict* projection is true for a partition only if ``p`` is true for every row that
  can be in it: those partitions need no row-level filtering.

Per transform, the rules and their edge cases follow Iceberg Java (``Transform.project``
and ``projectStrict``, ``ProjectionUtil``): ``<`` becomes ``<=`` of the value one below
before an order-preserving transform is applied, bucket projects only ``=``/``IN``
(inclusive) and ``!=``/``NOT IN`` (strict), truncated strings project starts-with, the
year/month/day/hour projections are widened (inclusive) or narrowed (strict) to also be
right for data written by Iceberg 0.10 and earlier, whose temporal transforms gave
pre-1970 values one too large. ``void`` projects to true (inclusive) and false (strict);
a transform icewright does not know is ignored (true / false).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from icewright.expressions.binding import bind
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    And,
    BoundPredicate,
    Expression,
    Or,
    Reference,
    UnboundPredicate,
    and_,
    or_,
    rewrite_not,
)
from icewright.spec.partitioning import PartitionField, PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.transforms import (
    BucketTransform,
    DayTransform,
    IdentityTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
)
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
)
from icewright.spec.values import decimal_from_unscaled, decimal_to_unscaled

__all__ = ["inclusive_projection", "project", "project_strict", "strict_projection"]

Projected = UnboundPredicate | None
_Fn = Callable[[Any], Any]

_LT, _LT_EQ, _GT, _GT_EQ = Operation.LT, Operation.LT_EQ, Operation.GT, Operation.GT_EQ
_EQ, _NOT_EQ, _IN, _NOT_IN = Operation.EQ, Operation.NOT_EQ, Operation.IN, Operation.NOT_IN
_STARTS, _NOT_STARTS = Operation.STARTS_WITH, Operation.NOT_STARTS_WITH


def _pred(op: Operation, name: str, *values: Any) -> UnboundPredicate:
    pred = UnboundPredicate(op, Reference(name), values)
    if op.is_set and len(pred.literals) == 1:
        # transformed values often coincide: IN of one value is =, NOT IN is !=
        return UnboundPredicate(_EQ if op is _IN else _NOT_EQ, pred.term, pred.literals)
    return pred


def _unary(name: str, pred: BoundPredicate) -> UnboundPredicate:
    # Every transform maps null to null (and NaN tests only reach identity of floats).
    return _pred(pred.op, name)


def _set(name: str, pred: BoundPredicate, fn: _Fn) -> UnboundPredicate:
    return _pred(pred.op, name, *(fn(v) for v in pred.literals))


# --- ordered, discrete sources: ints, longs, decimals, dates, timestamps ---------------


def _plus(value: Any, t: IcebergType, units: int) -> Any:
    """The source value ``units`` steps away (one step is one unscaled unit of a decimal)."""
    if isinstance(t, DecimalType):
        # exact integer arithmetic: Decimal arithmetic would round beyond 28 digits
        return decimal_from_unscaled(decimal_to_unscaled(t, value) + units, t.scale)
    return value + units


def _ordered(name: str, pred: BoundPredicate, fn: _Fn, t: IcebergType) -> Projected:
    """Inclusive projection through an order-preserving transform of a discrete type."""
    v, op = pred.literal, pred.op
    if op is _LT:  # close the bound first: x < v is x <= v - 1
        return _pred(_LT_EQ, name, fn(_plus(v, t, -1)))
    if op is _LT_EQ:
        return _pred(_LT_EQ, name, fn(v))
    if op is _GT:
        return _pred(_GT_EQ, name, fn(_plus(v, t, 1)))
    if op is _GT_EQ:
        return _pred(_GT_EQ, name, fn(v))
    if op is _EQ:
        return _pred(_EQ, name, fn(v))
    return None


def _ordered_strict(name: str, pred: BoundPredicate, fn: _Fn, t: IcebergType) -> Projected:
    """Strict projection through an order-preserving transform of a discrete type."""
    v, op = pred.literal, pred.op
    if op is _LT:
        return _pred(_LT, name, fn(v))
    if op is _LT_EQ:
        return _pred(_LT, name, fn(_plus(v, t, 1)))
    if op is _GT:
        return _pred(_GT, name, fn(v))
    if op is _GT_EQ:
        return _pred(_GT, name, fn(_plus(v, t, -1)))
    if op is _NOT_EQ:
        return _pred(_NOT_EQ, name, fn(v))
    return None  # adjacent values share a partition, so nothing guarantees equality


# --- strings and binary (truncate) ------------------------------------------------------


def _array(name: str, pred: BoundPredicate, fn: _Fn) -> Projected:
    v, op = pred.literal, pred.op
    if op in (_LT, _LT_EQ):
        return _pred(_LT_EQ, name, fn(v))
    if op in (_GT, _GT_EQ):
        return _pred(_GT_EQ, name, fn(v))
    if op in (_EQ, _STARTS):
        return _pred(op, name, fn(v))
    return None


def _array_strict(name: str, pred: BoundPredicate, fn: _Fn) -> Projected:
    v, op = pred.literal, pred.op
    if op in (_LT, _LT_EQ):
        return _pred(_LT, name, fn(v))
    if op in (_GT, _GT_EQ):
        return _pred(_GT, name, fn(v))
    if op is _NOT_EQ:
        return _pred(_NOT_EQ, name, fn(v))
    return None


def _truncate_string(
    name: str, pred: BoundPredicate, fn: _Fn, width: int, strict: bool
) -> Projected:
    prefix: str = pred.literal
    if pred.op in (_STARTS, _NOT_STARTS):
        if len(prefix) < width:
            return _pred(pred.op, name, prefix)
        if len(prefix) == width:
            return _pred(_EQ if pred.op is _STARTS else _NOT_EQ, name, prefix)
        if pred.op is _STARTS:
            return None if strict else _pred(_STARTS, name, fn(prefix))
        # not starts with a longer prefix: strictly, a partition that does not start with
        # the truncated prefix holds no value starting with the prefix
        return _pred(_NOT_STARTS, name, fn(prefix)) if strict else None
    return _array_strict(name, pred, fn) if strict else _array(name, pred, fn)


# --- temporal transforms: compatibility with Iceberg 0.10 and earlier -------------------


def _fix_inclusive_time(p: Projected) -> Projected:
    """Also match pre-1970 partition values that old writers made one too large."""
    if p is None:
        return None
    if p.op in (_LT, _LT_EQ, _EQ):
        v = p.literal
        if v >= 0:
            return p
        if p.op is _EQ:
            return _pred(_IN, p.term.name, v, v + 1)
        return _pred(p.op, p.term.name, v + 1)
    if p.op is _IN:
        values = set(p.literals) | {v + 1 for v in p.literals if v < 0}
        return _pred(_IN, p.term.name, *values)
    if p.op in (_NOT_EQ, _NOT_IN):
        return None
    return p


def _fix_strict_time(p: Projected) -> Projected:
    """Exclude partition values that old writers may have made one too large."""
    if p is None:
        return None
    if p.op in (_LT, _LT_EQ):
        return p
    if p.op in (_GT, _GT_EQ):
        v = p.literal
        return _pred(p.op, p.term.name, v + 1) if v <= 0 else p
    if p.op is _NOT_EQ:
        v = p.literal
        return _pred(_NOT_IN, p.term.name, v, v + 1) if v < 0 else p
    if p.op is _NOT_IN:
        values = set(p.literals) | {v + 1 for v in p.literals if v < 0}
        return _pred(_NOT_IN, p.term.name, *values)
    return None  # EQ and IN have no strict projection


# --- per transform -------------------------------------------------------------------


def _apply_fn(transform: Transform, source: IcebergType) -> _Fn:
    def fn(value: Any) -> Any:
        return transform.apply(source, value)

    return fn


def project(
    transform: Transform, source: IcebergType, name: str, pred: BoundPredicate
) -> Projected:
    """Inclusive projection of one bound predicate through ``transform`` onto the partition
    field ``name``; None when the transform cannot restrict the partitions."""
    return _project(transform, source, name, pred, strict=False)


def project_strict(
    transform: Transform, source: IcebergType, name: str, pred: BoundPredicate
) -> Projected:
    """Strict projection of one bound predicate through ``transform`` onto the partition
    field ``name``; None when no partition predicate guarantees the row predicate."""
    return _project(transform, source, name, pred, strict=True)


def _project(
    transform: Transform, source: IcebergType, name: str, pred: BoundPredicate, strict: bool
) -> Projected:
    if transform.is_void or transform.is_unknown or not transform.can_transform(source):
        return None
    op = pred.op
    if isinstance(transform, IdentityTransform):
        # The partition value is the row value: the predicate itself, on the partition name.
        return _pred(op, name, *pred.literals)
    if op.is_unary:
        return _unary(name, pred)
    fn = _apply_fn(transform, source)
    if isinstance(transform, BucketTransform):
        if strict:
            return _set(name, pred, fn) if op in (_NOT_EQ, _NOT_IN) else None
        return _set(name, pred, fn) if op in (_EQ, _IN) else None
    if op.is_set:
        # IN projects inclusively and NOT IN strictly, value by value.
        projected = _set(name, pred, fn) if op is (_NOT_IN if strict else _IN) else None
        if isinstance(transform, TimeTransform):
            return _fix_time(transform, source, projected, strict)
        return projected
    if isinstance(transform, TruncateTransform):
        if isinstance(source, StringType):
            return _truncate_string(name, pred, fn, transform.width, strict)
        if isinstance(source, BinaryType | FixedType):
            return _array_strict(name, pred, fn) if strict else _array(name, pred, fn)
        if isinstance(source, IntegerType | LongType | DecimalType):
            if op in (_STARTS, _NOT_STARTS):
                return None
            return (_ordered_strict if strict else _ordered)(name, pred, fn, source)
        return None
    if isinstance(transform, TimeTransform):
        projected = (_ordered_strict if strict else _ordered)(name, pred, fn, source)
        return _fix_time(transform, source, projected, strict)
    return None


def _fix_time(transform: Transform, source: IcebergType, p: Projected, strict: bool) -> Projected:
    if isinstance(source, DateType) and isinstance(transform, DayTransform):
        return p  # day of a date is the date itself: old writers had no bug here
    return _fix_strict_time(p) if strict else _fix_inclusive_time(p)


# --- whole expressions ---------------------------------------------------------------------


def _fields_for(spec: PartitionSpec, field_id: int) -> tuple[PartitionField, ...]:
    # Multi-argument (v3) transforms are not projected.
    return tuple(f for f in spec.fields_by_source_id(field_id) if len(f.source_ids) == 1)


def _visit(expr: Expression, leaf: Callable[[BoundPredicate], Expression]) -> Expression:
    if isinstance(expr, And):
        return and_(_visit(expr.left, leaf), _visit(expr.right, leaf))
    if isinstance(expr, Or):
        return or_(_visit(expr.left, leaf), _visit(expr.right, leaf))
    if isinstance(expr, BoundPredicate):
        return leaf(expr)
    return expr  # ALWAYS_TRUE / ALWAYS_FALSE


def inclusive_projection(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """The partition predicate (over partition field names) that every partition holding a
    row matching ``expr`` satisfies."""
    bound = rewrite_not(bind(expr, schema, case_sensitive))

    def leaf(pred: BoundPredicate) -> Expression:
        # Every partition field on the column restricts (bucket and day of one column: both).
        parts = [
            project(f.transform, pred.term.field_type, f.name, pred)
            for f in _fields_for(spec, pred.term.field_id)
        ]
        return and_(*(p for p in parts if p is not None))

    return _visit(bound, leaf)


def strict_projection(
    spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
) -> Expression:
    """The partition predicate (over partition field names) that only partitions whose rows
    all match ``expr`` satisfy."""
    bound = rewrite_not(bind(expr, schema, case_sensitive))

    def leaf(pred: BoundPredicate) -> Expression:
        # Any partition field whose strict projection holds guarantees the predicate.
        parts = [
            project_strict(f.transform, pred.term.field_type, f.name, pred)
            for f in _fields_for(spec, pred.term.field_id)
        ]
        return or_(*(p for p in parts if p is not None))

    return _visit(bound, leaf)
