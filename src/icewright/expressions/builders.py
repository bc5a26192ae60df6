"""Functions that build unbound predicates: ``equal("x", 5)``, ``is_in("r", ["eu"])`` ...

:func:`~icewright.expressions.predicates.and_`, ``or_`` and ``not_`` combine them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    AlwaysFalse,
    AlwaysTrue,
    Reference,
    UnboundPredicate,
)

__all__ = [
    "always_false",
    "always_true",
    "equal",
    "greater_than",
    "greater_than_or_equal",
    "is_in",
    "is_nan",
    "is_null",
    "less_than",
    "less_than_or_equal",
    "not_equal",
    "not_in",
    "not_nan",
    "not_null",
    "not_starts_with",
    "predicate",
    "starts_with",
]


def _ref(term: str | Reference) -> Reference:
    return term if isinstance(term, Reference) else Reference(term)


def predicate(op: Operation, term: str | Reference, *values: Any) -> UnboundPredicate:
    """A predicate from its operation: ``predicate(Operation.LT, "x", 5)``."""
    return UnboundPredicate(op, _ref(term), values)


def is_null(term: str | Reference) -> UnboundPredicate:
    """``term IS NULL``."""
    return UnboundPredicate(Operation.IS_NULL, _ref(term))


def not_null(term: str | Reference) -> UnboundPredicate:
    """``term IS NOT NULL``."""
    return UnboundPredicate(Operation.NOT_NULL, _ref(term))


def is_nan(term: str | Reference) -> UnboundPredicate:
    """``term IS NAN`` (float and double columns only)."""
    return UnboundPredicate(Operation.IS_NAN, _ref(term))


def not_nan(term: str | Reference) -> UnboundPredicate:
    """``term IS NOT NAN`` (float and double columns only)."""
    return UnboundPredicate(Operation.NOT_NAN, _ref(term))


def less_than(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term < value``."""
    return UnboundPredicate(Operation.LT, _ref(term), (value,))


def less_than_or_equal(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term <= value``."""
    return UnboundPredicate(Operation.LT_EQ, _ref(term), (value,))


def greater_than(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term > value``."""
    return UnboundPredicate(Operation.GT, _ref(term), (value,))


def greater_than_or_equal(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term >= value``."""
    return UnboundPredicate(Operation.GT_EQ, _ref(term), (value,))


def equal(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term = value``."""
    return UnboundPredicate(Operation.EQ, _ref(term), (value,))


def not_equal(term: str | Reference, value: Any) -> UnboundPredicate:
    """``term != value`` (true for null values)."""
    return UnboundPredicate(Operation.NOT_EQ, _ref(term), (value,))


def starts_with(term: str | Reference, prefix: str) -> UnboundPredicate:
    """``term LIKE 'prefix%'`` (string columns only)."""
    return UnboundPredicate(Operation.STARTS_WITH, _ref(term), (prefix,))


def not_starts_with(term: str | Reference, prefix: str) -> UnboundPredicate:
    """``term NOT LIKE 'prefix%'`` (true for null values)."""
    return UnboundPredicate(Operation.NOT_STARTS_WITH, _ref(term), (prefix,))


def _values(values: Iterable[Any]) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(f"IN / NOT IN need a list of values, got {values!r}")
    return tuple(values)


def is_in(term: str | Reference, values: Iterable[Any]) -> UnboundPredicate:
    """``term IN (values...)``."""
    return UnboundPredicate(Operation.IN, _ref(term), _values(values))


def not_in(term: str | Reference, values: Iterable[Any]) -> UnboundPredicate:
    """``term NOT IN (values...)`` (true for null values)."""
    return UnboundPredicate(Operation.NOT_IN, _ref(term), _values(values))


def always_true() -> AlwaysTrue:
    """:data:`ALWAYS_TRUE`."""
    return ALWAYS_TRUE


def always_false() -> AlwaysFalse:
    """:data:`ALWAYS_FALSE`."""
    return ALWAYS_FALSE
