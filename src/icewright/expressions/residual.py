"""Residual filters: what remains to check per row once a file's partition is known.

For each predicate of the row filter and each partition field on its column, the strict
projection decides "every row of this partition matches" (the predicate becomes true) and
the inclusive projection decides "no row of this partition matches" (it becomes false);
otherwise the predicate stays (Iceberg Java ``ResidualEvaluator``; table spec: "Scan
Planning", note 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions.binding import StructIndex, bind
from icewright.expressions.evaluators import visit
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    Expression,
    Or,
    and_,
    or_,
    rewrite_not,
)
from icewright.expressions.projection import project, project_strict
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema

__all__ = ["ResidualEvaluator"]


@dataclass(frozen=True, slots=True)
class _Decider:
    """The bound strict and inclusive projections of one predicate onto one partition field."""

    strict: Expression | None
    inclusive: Expression | None


def _eval(expr: Expression, partition: Sequence[Any]) -> bool:
    return visit(expr, lambda pred: pred.test(pred.term.eval(partition)))


class ResidualEvaluator:
    """Computes the residual of a row filter for partition tuples of one spec.

    ``residual_for(partition)`` returns a bound expression (over ``schema``) that is
    equivalent to the filter for every row of that partition: :data:`ALWAYS_TRUE` when the
    partition's rows all match, :data:`ALWAYS_FALSE` when none can.
    """

    __slots__ = ("_deciders", "expr", "spec")

    def __init__(
        self, spec: PartitionSpec, schema: Schema, expr: Expression, case_sensitive: bool = True
    ) -> None:
        self.spec = spec
        self.expr = rewrite_not(bind(expr, schema, case_sensitive))
        partition_index = StructIndex(spec.partition_type(schema))
        self._deciders: dict[BoundPredicate, list[_Decider]] = {}
        for pred in _predicates(self.expr):
            deciders = []
            for f in spec.fields_by_source_id(pred.term.field_id):
                if len(f.source_ids) != 1:
                    continue
                source = pred.term.field_type
                strict = project_strict(f.transform, source, f.name, pred)
                inclusive = project(f.transform, source, f.name, pred)
                deciders.append(
                    _Decider(
                        None if strict is None else bind(strict, partition_index),
                        None if inclusive is None else bind(inclusive, partition_index),
                    )
                )
            self._deciders[pred] = deciders

    def residual_for(self, partition: Sequence[Any]) -> Expression:
        """The filter left to apply to the rows of ``partition`` (a partition tuple)."""
        if len(partition) != len(self.spec.fields):
            raise ValidationError(
                f"partition tuple {tuple(partition)!r} has {len(partition)} values but spec "
                f"{self.spec.spec_id} has {len(self.spec.fields)} fields"
            )
        return self._residual(self.expr, partition)

    def _residual(self, expr: Expression, partition: Sequence[Any]) -> Expression:
        if isinstance(expr, And):
            return and_(self._residual(expr.left, partition), self._residual(expr.right, partition))
        if isinstance(expr, Or):
            return or_(self._residual(expr.left, partition), self._residual(expr.right, partition))
        if isinstance(expr, BoundPredicate):
            for d in self._deciders.get(expr, ()):
                if d.strict is not None and _eval(d.strict, partition):
                    return ALWAYS_TRUE
                if d.inclusive is not None and not _eval(d.inclusive, partition):
                    return ALWAYS_FALSE
        return expr


def _predicates(expr: Expression) -> list[BoundPredicate]:
    if isinstance(expr, And | Or):
        return _predicates(expr.left) + _predicates(expr.right)
    if isinstance(expr, BoundPredicate):
        return [expr]
    return []
