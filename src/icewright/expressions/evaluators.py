"""Evaluators over rows, partition tuples and manifest-list partition summaries.

* :class:`Evaluator` -- the exact value of an expression for one row (a tuple);
* :class:`PartitionEvaluator` -- whether a partition tuple might hold matching rows
  (the inclusive projection, evaluated);
* :class:`ManifestEvaluator` -- whether a manifest might hold matching rows, from its
  partition field summaries (Iceberg Java ``ManifestEvaluator``; table spec: "Scan
  Planning": "Manifests that contain no matching files, determined using ... partition
  summaries, may be skipped").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions.binding import bind
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    Expression,
    Not,
    Or,
    UnboundPredicate,
    rewrite_not,
)
from icewright.expressions.projection import inclusive_projection
from icewright.manifest.data_file import ManifestFile, PartitionFieldSummary
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, FloatType, PrimitiveType, StructType
from icewright.spec.values import from_bytes

__all__ = ["IN_PREDICATE_LIMIT", "Evaluator", "ManifestEvaluator", "PartitionEvaluator", "visit"]

IN_PREDICATE_LIMIT = 200
"""Above this many values, ``IN`` is not checked against bounds (as in Iceberg Java)."""


def visit(expr: Expression, leaf: Callable[[BoundPredicate], bool]) -> bool:
    """Evaluate a bound expression with ``leaf`` deciding each predicate."""
    if expr is ALWAYS_TRUE:
        return True
    if expr is ALWAYS_FALSE:
        return False
    if isinstance(expr, And):
        return visit(expr.left, leaf) and visit(expr.right, leaf)
    if isinstance(expr, Or):
        return visit(expr.left, leaf) or visit(expr.right, leaf)
    if isinstance(expr, Not):
        return not visit(expr.child, leaf)
    if isinstance(expr, BoundPredicate):
        return leaf(expr)
    if isinstance(expr, UnboundPredicate):
        raise ValidationError(f"predicate {expr} is not bound; bind it to a schema first")
    raise ValidationError(f"{expr!r} is not an expression")


class Evaluator:
    """Evaluates an expression on rows of a struct type.

    A row is a tuple (or any sequence) in the struct's field order; nested struct values
    are nested tuples. ``expr`` may be unbound (it is bound to ``struct`` here) or bound to
    the same struct.
    """

    __slots__ = ("expr", "struct")

    def __init__(
        self, struct: StructType | Schema, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.struct = struct.as_struct() if isinstance(struct, Schema) else struct
        self.expr = bind(expr, self.struct, case_sensitive)

    def eval(self, row: Sequence[Any]) -> bool:
        """Whether ``row`` satisfies the expression."""

        def leaf(pred: BoundPredicate) -> bool:
            value = pred.term.eval(row)
            try:
                return pred.test(value)
            except TypeError:
                raise ValidationError(
                    f"column {pred.term.name!r} of type {pred.term.field_type} holds "
                    f"{value!r} ({type(value).__name__}), which is not a value of that type"
                ) from None

        return visit(self.expr, leaf)


class PartitionEvaluator:
    """Whether a partition tuple of ``spec`` might hold rows matching a row filter."""

    __slots__ = ("_evaluator", "_seen", "partition_expr", "spec")

    def __init__(
        self, spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.spec = spec
        self.partition_expr = inclusive_projection(spec, schema, expr, case_sensitive)
        struct = spec.partition_type(schema)
        self._evaluator = Evaluator(struct, self.partition_expr)
        # Answers by partition tuple: a manifest's thousands of entries share a few
        # partitions. Not for float partitions, whose equal tuples (0.0 and -0.0) may
        # evaluate differently.
        self._seen: dict[tuple[Any, ...], bool] | None = (
            None if any(_is_float(f.field_type) for f in struct.fields) else {}
        )

    def eval(self, partition: Sequence[Any]) -> bool:
        """False only when no row of this partition can match the row filter."""
        seen = self._seen
        if seen is not None and partition.__class__ is tuple:
            try:
                found = seen.get(partition)
            except TypeError:  # an unhashable value: evaluate without remembering
                return self._eval(partition)
            if found is None:
                found = seen[partition] = self._eval(partition)
                if len(seen) > _REMEMBERED_PARTITIONS:
                    seen.clear()
            return found
        return self._eval(partition)

    def _eval(self, partition: Sequence[Any]) -> bool:
        if len(partition) != len(self.spec.fields):
            raise ValidationError(
                f"partition tuple {tuple(partition)!r} has {len(partition)} values but spec "
                f"{self.spec.spec_id} has {len(self.spec.fields)} fields"
            )
        return self._evaluator.eval(partition)


_REMEMBERED_PARTITIONS = 100_000


def _is_float(t: Any) -> bool:
    return isinstance(t, FloatType | DoubleType)


class ManifestEvaluator:
    """Whether a manifest might hold rows matching a row filter, from its partition summaries.

    The filter is projected inclusively onto ``spec`` (the spec the manifest was written
    with) and tested against each field's ``contains_null``, ``contains_nan`` and bounds.
    A manifest without summaries might always match.
    """

    __slots__ = ("partition_expr", "spec", "struct")

    def __init__(
        self, spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.spec = spec
        self.struct = spec.partition_type(schema)
        projected = inclusive_projection(spec, schema, expr, case_sensitive)
        self.partition_expr = rewrite_not(bind(projected, self.struct))

    def eval(self, manifest: ManifestFile) -> bool:
        """False only when no file of ``manifest`` can hold a matching row."""
        summaries = manifest.partitions
        if summaries is None:
            return True

        def leaf(pred: BoundPredicate) -> bool:
            assert pred.term.accessor is not None  # partition fields are top-level
            pos = pred.term.accessor[0]
            if pos >= len(summaries):
                return True
            return _summary_might_match(pred, summaries[pos])

        return visit(self.partition_expr, leaf)


def _decode(t: Any, data: bytes | None) -> Any:
    if data is None or not isinstance(t, PrimitiveType):
        return None
    try:
        return from_bytes(t, data)
    except ValidationError:
        return None  # an unreadable bound restricts nothing


def _all_null(s: PartitionFieldSummary, t: Any) -> bool:
    # The lower bound is missing when every value is null (or NaN, for floats).
    all_null = s.contains_null and s.lower_bound is None
    if all_null and _is_float(t):
        all_null = s.contains_nan is not None and not s.contains_nan
    return all_null


def _summary_might_match(pred: BoundPredicate, s: PartitionFieldSummary) -> bool:
    op, t = pred.op, pred.term.field_type
    if op is Operation.IS_NULL:
        return bool(s.contains_null)
    if op is Operation.NOT_NULL:
        return not _all_null(s, t)
    if op is Operation.IS_NAN:
        if s.contains_nan is not None and not s.contains_nan:
            return False
        return not _all_null(s, t)
    if op is Operation.NOT_NAN:
        all_nan = bool(s.contains_nan) and not s.contains_null and s.lower_bound is None
        return not all_nan
    if op in (Operation.NOT_EQ, Operation.NOT_IN):
        # prunable only when every partition has one value, and it is excluded
        unique = _unique_value(s, t)
        return unique is None or pred.test(unique)
    if op is Operation.NOT_STARTS_WITH:
        return _not_starts_with_might_match(s, pred.literal)
    lower, upper = _decode(t, s.lower_bound), _decode(t, s.upper_bound)
    if s.lower_bound is None:
        return False  # no non-null, non-NaN value: comparisons and IN cannot match
    if op is Operation.STARTS_WITH:
        prefix = pred.literal.encode("utf-8")
        # bounds are compared as UTF-8 bytes cut to the prefix's length
        if s.lower_bound[: len(prefix)] > prefix:
            return False
        return s.upper_bound is None or s.upper_bound[: len(prefix)] >= prefix
    if lower is None:
        return True
    if op is Operation.IN:
        if len(pred.literals) > IN_PREDICATE_LIMIT:
            return True
        return any(lower <= v and (upper is None or v <= upper) for v in pred.literals)
    lit = pred.literal
    if op is Operation.LT:
        return bool(lower < lit)
    if op in (Operation.LT_EQ, Operation.EQ) and not lower <= lit:
        return False
    if op is Operation.LT_EQ or upper is None:
        return True
    if op is Operation.GT:
        return bool(upper > lit)
    return bool(upper >= lit)  # GT_EQ and EQ


def _unique_value(s: PartitionFieldSummary, t: Any) -> Any:
    """The one value every partition of the manifest has, if the summary proves it."""
    if s.contains_null:
        return None
    if _is_float(t) and (s.contains_nan is None or s.contains_nan):
        return None
    lower, upper = _decode(t, s.lower_bound), _decode(t, s.upper_bound)
    if lower is None or upper is None or lower != upper:
        return None
    return lower


def _not_starts_with_might_match(s: PartitionFieldSummary, prefix_text: str) -> bool:
    if s.contains_null or s.lower_bound is None or s.upper_bound is None:
        return True
    prefix = prefix_text.encode("utf-8")
    # only when both bounds start with the prefix must every value start with it
    return not (s.lower_bound.startswith(prefix) and s.upper_bound.startswith(prefix))
