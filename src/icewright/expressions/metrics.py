"""File pruning with column metrics (table spec: "Scan Planning", "Field-level Metrics").

* :class:`InclusiveMetricsEvaluator` -- whether a data (or delete) file *might* hold rows
  that match, from its value, null and NaN counts and lower/upper bounds;
* :class:`StrictMetricsEvaluator` -- whether *every* row of a file must match.

Semantics follow Iceberg Java's evaluators of the same names: a missing metric restricts
nothing; NaN bounds are unreliable; bounds may be truncated (a string lower bound is a
prefix of the real minimum, an upper bound is rounded up), which is safe because they
remain bounds; ``IN`` with more than :data:`IN_PREDICATE_LIMIT` values is not checked;
columns inside lists or maps are never used to prune (their metrics count elements, not
rows), and the strict evaluator only decides top-level columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from icewright.errors import ValidationError
from icewright.expressions.binding import bind
from icewright.expressions.evaluators import IN_PREDICATE_LIMIT, visit
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    Expression,
    Or,
    rewrite_not,
)
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    PrimitiveType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
)
from icewright.spec.values import from_bytes

__all__ = ["InclusiveMetricsEvaluator", "StrictMetricsEvaluator"]


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


class _Metrics:
    """The metrics of one file, with bounds decoded on demand."""

    __slots__ = ("file",)

    def __init__(self, file: DataFile) -> None:
        self.file = file

    @staticmethod
    def _get(m: Mapping[int, Any] | None, field_id: int) -> Any:
        return None if m is None else m.get(field_id)

    def value_count(self, fid: int) -> int | None:
        return self._get(self.file.value_counts, fid)  # type: ignore[no-any-return]

    def null_count(self, fid: int) -> int | None:
        return self._get(self.file.null_value_counts, fid)  # type: ignore[no-any-return]

    def nan_count(self, fid: int) -> int | None:
        return self._get(self.file.nan_value_counts, fid)  # type: ignore[no-any-return]

    def may_contain_null(self, fid: int) -> bool:
        n = self.null_count(fid)
        return n is None or n != 0

    def can_contain_nulls(self, fid: int) -> bool:
        # Java's strict check: a missing null-count map means "maybe", a missing entry not
        n = self.null_count(fid)
        return self.file.null_value_counts is None or (n is not None and n > 0)

    def contains_nulls_only(self, fid: int) -> bool:
        v, n = self.value_count(fid), self.null_count(fid)
        return v is not None and n is not None and v - n == 0

    def may_contain_nan(self, fid: int) -> bool:
        n = self.nan_count(fid)
        return n is None or n != 0

    def can_contain_nans(self, fid: int) -> bool:
        n = self.nan_count(fid)
        return n is not None and n > 0

    def contains_nans_only(self, fid: int) -> bool:
        n, v = self.nan_count(fid), self.value_count(fid)
        return n is not None and v is not None and n == v

    def _bound(self, m: Mapping[int, bytes] | None, pred: BoundPredicate) -> Any:
        data = self._get(m, pred.term.field_id)
        t = pred.term.field_type
        if data is None or not isinstance(t, PrimitiveType):
            return None
        try:
            # from_bytes also reads bounds written before a type promotion (int -> long ...)
            return from_bytes(t, data)
        except ValidationError:
            return None  # an unreadable bound restricts nothing

    def lower(self, pred: BoundPredicate) -> Any:
        return self._bound(self.file.lower_bounds, pred)

    def upper(self, pred: BoundPredicate) -> Any:
        return self._bound(self.file.upper_bounds, pred)

    def unique_value(self, pred: BoundPredicate) -> Any:
        """The single value of a column without nulls or NaNs whose bounds are equal."""
        fid = pred.term.field_id
        if self.may_contain_null(fid):
            return None
        lower, upper = self.lower(pred), self.upper(pred)
        if lower is None or upper is None or _nan(lower) or _nan(upper):
            return None
        if isinstance(pred.term.field_type, FloatType | DoubleType) and self.may_contain_nan(fid):
            return None
        return lower if lower == upper else None


class InclusiveMetricsEvaluator:
    """Whether a file might hold rows matching ``expr`` (False means: skip the file)."""

    __slots__ = ("_check", "expr")

    def __init__(self, schema: Schema, expr: Expression, case_sensitive: bool = True) -> None:
        self.expr = rewrite_not(bind(expr, schema, case_sensitive))
        self._check = _compiled(self.expr)

    def eval(self, data_file: DataFile) -> bool:
        """False only when the file's metrics prove that no row matches."""
        if data_file.record_count == 0:
            return False
        return self._check(data_file)

    def bound_limits(self) -> tuple[BoundLimit, ...]:
        """Limits on integer bounds that every file able to match keeps: each comes from a
        range predicate of the filter's top-level AND, and a file whose stored bound breaks
        one fails :meth:`eval` too (a reader may refuse it before building it)."""
        limits = []
        for pred in _conjuncts(self.expr):
            t = pred.term.field_type
            if (
                pred.op not in _RANGE_OPS
                or pred.term.in_list_or_map
                or not isinstance(t, PrimitiveType)
                or not _fixed_width_ints(t)
                or not isinstance(pred.literal, int)
            ):
                continue
            lit = pred.literal
            op = pred.op
            max_lower = {Operation.LT: lit - 1, Operation.LT_EQ: lit, Operation.EQ: lit}.get(op)
            min_upper = {Operation.GT: lit + 1, Operation.GT_EQ: lit, Operation.EQ: lit}.get(op)
            if not all(v is None or _LONG_MIN <= v <= _LONG_MAX for v in (max_lower, min_upper)):
                continue
            limits.append(
                BoundLimit(pred.term.field_id, _fixed_width_ints(t), max_lower, min_upper)
            )
        return tuple(limits)


class BoundLimit(NamedTuple):
    """A file can match only if its lower bound for ``field_id`` is at most ``max_lower``
    and its upper bound at least ``min_upper`` (None: no limit), where a bound of one of
    the byte ``widths`` is a little-endian signed integer (Appendix D)."""

    field_id: int
    widths: tuple[int, ...]
    max_lower: int | None
    min_upper: int | None


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _conjuncts(expr: Expression) -> list[BoundPredicate]:
    if isinstance(expr, And):
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr] if isinstance(expr, BoundPredicate) else []


_Check = Callable[[DataFile], bool]
_RANGE_OPS = (Operation.LT, Operation.LT_EQ, Operation.GT, Operation.GT_EQ, Operation.EQ)


def _compiled(expr: Expression) -> _Check:
    """``expr`` as nested closures deciding a file: planning evaluates one filter for every
    entry of every manifest, and walking the expression each time cost as much as reading
    the entry. Range predicates (the common case) are decided inline, exactly as
    :func:`_might_match` decides them; every other predicate calls it."""
    if expr is ALWAYS_TRUE:
        return lambda f: True
    if expr is ALWAYS_FALSE:
        return lambda f: False
    if isinstance(expr, And):
        left, right = _compiled(expr.left), _compiled(expr.right)
        return lambda f: left(f) and right(f)
    if isinstance(expr, Or):
        left, right = _compiled(expr.left), _compiled(expr.right)
        return lambda f: left(f) or right(f)
    if isinstance(expr, BoundPredicate):
        t = expr.term.field_type
        if (
            expr.op in _RANGE_OPS
            and not expr.term.in_list_or_map
            and isinstance(t, PrimitiveType)
            and not isinstance(t, FloatType | DoubleType)
        ):
            return _range_check(expr, t)
        pred = expr
        return lambda f: _might_match(_Metrics(f), pred)
    # anything else (a Not left by rewrite_not cannot be): the general walk decides
    whole = expr
    return lambda f: visit(whole, lambda p: _might_match(_Metrics(f), p))


def _range_check(pred: BoundPredicate, t: PrimitiveType) -> _Check:
    fid, op, lit = pred.term.field_id, pred.op, pred.literal
    check_lower = op in (Operation.LT, Operation.LT_EQ, Operation.EQ)
    check_upper = op in (Operation.GT, Operation.GT_EQ, Operation.EQ)
    strict = op in (Operation.LT, Operation.GT)

    exact = _fixed_width_ints(t)

    def bound(m: Mapping[int, bytes] | None) -> Any:
        data = None if m is None else m.get(fid)
        if data is None:
            return None
        if len(data) in exact:  # the common case, without from_bytes's dispatch
            return int.from_bytes(data, "little", signed=True)
        try:
            return from_bytes(t, data)
        except ValidationError:
            return None  # an unreadable bound restricts nothing

    def check(f: DataFile) -> bool:
        values, nulls = f.value_counts, f.null_value_counts
        v = None if values is None else values.get(fid)
        if v is not None:
            n = None if nulls is None else nulls.get(fid)
            if n is not None and v - n == 0:
                return False  # only nulls
            nans = f.nan_value_counts
            nan = None if nans is None else nans.get(fid)
            if nan is not None and nan == v:
                return False  # only NaNs
        if check_lower:
            lower = bound(f.lower_bounds)
            if lower is not None and not (lower < lit if strict else lower <= lit):
                return False
        if check_upper:
            upper = bound(f.upper_bounds)
            if upper is not None and not (upper > lit if strict else upper >= lit):
                return False
        return True

    return check


def _fixed_width_ints(t: PrimitiveType) -> tuple[int, ...]:
    """The bound lengths that are plain little-endian signed integers of type ``t``
    (Appendix D), which :func:`from_bytes` reads the same way; others go through it."""
    if isinstance(t, IntegerType | DateType):
        return (4,)
    if isinstance(t, LongType):
        return (4, 8)  # 4 bytes: a bound written when the column was an int
    if isinstance(
        t, TimeType | TimestampType | TimestamptzType | TimestampNsType | TimestamptzNsType
    ):
        return (8,)  # 4 bytes would be a date's days, converted by from_bytes
    return ()


def _might_match(m: _Metrics, pred: BoundPredicate) -> bool:
    ref, op = pred.term, pred.op
    fid = ref.field_id
    if ref.in_list_or_map:
        return True  # element metrics say nothing about whole rows
    if op is Operation.IS_NULL:
        return m.may_contain_null(fid)
    if op is Operation.NOT_NULL:
        return not m.contains_nulls_only(fid)
    if op is Operation.IS_NAN:
        return not m.contains_nulls_only(fid) and m.may_contain_nan(fid)
    if op is Operation.NOT_NAN:
        return not m.contains_nans_only(fid)
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        unique = m.unique_value(pred)
        return unique is None or pred.test(unique)
    if op is Operation.NOT_STARTS_WITH:
        return _not_starts_with_might_match(m, pred)
    if m.contains_nulls_only(fid):
        return False
    if op is Operation.STARTS_WITH:
        return _starts_with_might_match(m, pred)
    if m.contains_nans_only(fid):
        return False
    lower, upper = m.lower(pred), m.upper(pred)
    if _nan(lower):
        lower = None  # a NaN bound is unreliable
    if _nan(upper):
        upper = None
    if op is Operation.IN:
        if len(pred.literals) > IN_PREDICATE_LIMIT or lower is None:
            return True
        return any(lower <= v and (upper is None or v <= upper) for v in pred.literals)
    lit = pred.literal
    if op in (Operation.LT, Operation.LT_EQ, Operation.EQ) and lower is not None:
        if op is Operation.LT and not lower < lit:
            return False
        if op in (Operation.LT_EQ, Operation.EQ) and not lower <= lit:
            return False
    if op in (Operation.GT, Operation.GT_EQ, Operation.EQ) and upper is not None:
        if op is Operation.GT and not upper > lit:
            return False
        if op in (Operation.GT_EQ, Operation.EQ) and not upper >= lit:
            return False
    return True


def _starts_with_might_match(m: _Metrics, pred: BoundPredicate) -> bool:
    prefix: str = pred.literal
    lower = m.lower(pred)
    if lower is None:
        return True
    # a bound cut to the prefix's length still bounds the values' prefixes
    if lower[: len(prefix)] > prefix:
        return False
    upper = m.upper(pred)
    return upper is None or upper[: len(prefix)] >= prefix


def _not_starts_with_might_match(m: _Metrics, pred: BoundPredicate) -> bool:
    if m.may_contain_null(pred.term.field_id):
        return True  # a null value does not start with the prefix
    prefix: str = pred.literal
    lower, upper = m.lower(pred), m.upper(pred)
    if lower is None or upper is None:
        return True
    # only when both bounds start with the prefix must every value start with it
    return not (lower.startswith(prefix) and upper.startswith(prefix))


class StrictMetricsEvaluator:
    """Whether every row of a file must match ``expr`` (True: no row-level filter needed)."""

    __slots__ = ("expr",)

    def __init__(self, schema: Schema, expr: Expression, case_sensitive: bool = True) -> None:
        self.expr = rewrite_not(bind(expr, schema, case_sensitive))

    def eval(self, data_file: DataFile) -> bool:
        """True only when the file's metrics prove that every row matches."""
        if data_file.record_count == 0:
            return True
        m = _Metrics(data_file)
        return visit(self.expr, lambda pred: _must_match(m, pred))


def _must_match(m: _Metrics, pred: BoundPredicate) -> bool:
    ref, op = pred.term, pred.op
    fid = ref.field_id
    if ref.in_list_or_map:
        return False
    if op is Operation.IS_NAN:
        return m.contains_nans_only(fid)
    if op is Operation.NOT_NAN:
        return not m.may_contain_nan(fid) or m.contains_nulls_only(fid)
    if ref.nested:
        # Java decides only top-level columns strictly.
        return False
    if op is Operation.IS_NULL:
        return m.contains_nulls_only(fid)
    if op is Operation.NOT_NULL:
        return not m.may_contain_null(fid)
    if op in (Operation.NOT_EQ, Operation.NOT_IN, Operation.NOT_STARTS_WITH):
        return _negative_must_match(m, pred)
    # The positive tests are false for null and NaN values.
    if m.can_contain_nulls(fid) or (op is not Operation.STARTS_WITH and m.can_contain_nans(fid)):
        return False
    lower, upper = m.lower(pred), m.upper(pred)
    if op is Operation.STARTS_WITH:
        prefix: str = pred.literal
        return (
            lower is not None
            and upper is not None
            and lower.startswith(prefix)
            and upper.startswith(prefix)
        )
    if op is Operation.IN:
        return lower is not None and lower == upper and pred.test(lower)
    lit = pred.literal
    if op in (Operation.LT, Operation.LT_EQ):
        return upper is not None and not _nan(upper) and pred.test(upper)
    if op in (Operation.GT, Operation.GT_EQ):
        return lower is not None and not _nan(lower) and pred.test(lower)
    # EQ: lower == lit == upper
    return lower is not None and upper is not None and lower == lit and upper == lit


def _negative_must_match(m: _Metrics, pred: BoundPredicate) -> bool:
    """``!=``, ``NOT IN`` and ``NOT STARTS WITH``: true for null and NaN values too."""
    fid, op = pred.term.field_id, pred.op
    if m.contains_nulls_only(fid) or (
        op is not Operation.NOT_STARTS_WITH and m.contains_nans_only(fid)
    ):
        return True
    lower, upper = m.lower(pred), m.upper(pred)
    if op is Operation.NOT_STARTS_WITH:
        prefix: str = pred.literal
        if lower is not None and lower[: len(prefix)] > prefix:
            return True
        return upper is not None and upper[: len(prefix)] < prefix
    if _nan(lower):
        return False  # unreliable bounds
    if _nan(upper):
        upper = None
    if lower is None and upper is None:
        return False
    # every value lies outside the literals when no literal is within [lower, upper]
    return not any(
        (lower is None or lower <= v) and (upper is None or v <= upper) for v in pred.literals
    )
