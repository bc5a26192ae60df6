"""Predicate operations (expressions spec: "Tests", "Comparisons"; JSON names per
Appendix B)."""

from __future__ import annotations

from enum import Enum

__all__ = ["COMPARISONS", "ORDERINGS", "SET_OPERATIONS", "UNARY_OPERATIONS", "Operation"]


class Operation(Enum):
    """What a predicate tests; the value is the expressions spec's JSON name."""

    IS_NULL = "is-null"
    NOT_NULL = "not-null"
    IS_NAN = "is-nan"
    NOT_NAN = "not-nan"
    LT = "lt"
    LT_EQ = "lt-eq"
    GT = "gt"
    GT_EQ = "gt-eq"
    EQ = "eq"
    NOT_EQ = "not-eq"
    STARTS_WITH = "starts-with"
    NOT_STARTS_WITH = "not-starts-with"
    IN = "in"
    NOT_IN = "not-in"

    def negate(self) -> Operation:
        """The operation that is true exactly when this one is false."""
        return _NEGATIONS[self]

    def flip(self) -> Operation:
        """The operation with its operands swapped (``5 < x`` is ``x > 5``)."""
        return _FLIPS.get(self, self)

    @property
    def is_unary(self) -> bool:
        """True for the tests without a literal (null and NaN tests)."""
        return self in UNARY_OPERATIONS

    @property
    def is_set(self) -> bool:
        """True for ``IN`` and ``NOT IN``."""
        return self in SET_OPERATIONS

    @property
    def is_literal(self) -> bool:
        """True for the tests with exactly one literal (comparisons, starts-with)."""
        return not self.is_unary and not self.is_set


_NEGATIONS = {
    Operation.IS_NULL: Operation.NOT_NULL,
    Operation.NOT_NULL: Operation.IS_NULL,
    Operation.IS_NAN: Operation.NOT_NAN,
    Operation.NOT_NAN: Operation.IS_NAN,
    Operation.LT: Operation.GT_EQ,
    Operation.LT_EQ: Operation.GT,
    Operation.GT: Operation.LT_EQ,
    Operation.GT_EQ: Operation.LT,
    Operation.EQ: Operation.NOT_EQ,
    Operation.NOT_EQ: Operation.EQ,
    Operation.STARTS_WITH: Operation.NOT_STARTS_WITH,
    Operation.NOT_STARTS_WITH: Operation.STARTS_WITH,
    Operation.IN: Operation.NOT_IN,
    Operation.NOT_IN: Operation.IN,
}
_FLIPS = {
    Operation.LT: Operation.GT,
    Operation.LT_EQ: Operation.GT_EQ,
    Operation.GT: Operation.LT,
    Operation.GT_EQ: Operation.LT_EQ,
}
UNARY_OPERATIONS = frozenset(
    {Operation.IS_NULL, Operation.NOT_NULL, Operation.IS_NAN, Operation.NOT_NAN}
)
SET_OPERATIONS = frozenset({Operation.IN, Operation.NOT_IN})
ORDERINGS = frozenset({Operation.LT, Operation.LT_EQ, Operation.GT, Operation.GT_EQ})
COMPARISONS = ORDERINGS | {Operation.EQ, Operation.NOT_EQ}
