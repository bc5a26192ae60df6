"""Predicates users write as SQL, with Spark SQL's meaning, as two-valued expressions.

A ``--where``, an operator's ``where=``, a rewrite filter or a scan filter given as text
is SQL: a row matches iff the predicate is TRUE, and SQL's predicates are three-valued
(a comparison with NULL is NULL, and NOT NULL is NULL). In Spark SQL, NaN equals NaN
and sorts above every number. Iceberg's expressions are two-valued and null-safe
(expressions spec, "Comparisons" and "Boolean logic"): ``x != 1`` is true for a null
``x``, and ``NOT (x < 3)`` is true for null and NaN. The spec asks engines with
three-valued logic to add ``IS NULL`` / ``IS NOT NULL`` to get the two-valued
equivalent, with negation pushed through that translation.

:func:`sql_filter` does that once, for every consumer: manifest and metrics pruning, the
decision to drop a whole file, the copy-on-write rewrite in Spark and the residual all
receive the same two-valued expression, so the metadata side and the Spark side agree.

For every SQL predicate ``P`` it builds two expressions: ``T(P)``, the rows where ``P`` is
TRUE, and ``F(P)``, the rows where it is FALSE (the rest are the rows where it is NULL).
``T(NOT P) = F(P)``, ``T(P AND Q) = T(P) AND T(Q)``, ``F(P AND Q) = F(P) OR F(Q)``, and
dually for OR. For a test of column ``x`` against a literal (never NULL or NaN: the parser
refuses those):

=================  =====================================  ===================================
SQL                T (TRUE)                               F (FALSE)
=================  =====================================  ===================================
``x < v``          ``x < v``                              ``NOT (x < v) AND x IS NOT NULL``
``x <= v``         ``x <= v``                             ``NOT (x <= v) AND x IS NOT NULL``
``x > v``          ``NOT (x <= v) AND x IS NOT NULL``     ``x <= v``
``x >= v``         ``NOT (x < v) AND x IS NOT NULL``      ``x < v``
``x = v``          ``x = v``                              ``x != v AND x IS NOT NULL``
``x != v``         ``x != v AND x IS NOT NULL``           ``x = v``
``x IN (...)``     ``x IN (...)``                         ``x NOT IN (...) AND x IS NOT NULL``
``x LIKE 'a%'``    starts with                            not starts with, ``x`` not null
``x IS [NOT] ...`` itself (never NULL)                    its negation
=================  =====================================  ===================================

``NOT (x <= v)`` is true for NaN in two-valued logic, which is exactly Spark's "NaN sorts
above every number"; and Iceberg's ``x != v`` is true for NaN as Spark's is. The T column
of ``x > v`` and ``x >= v`` (and F of ``x <= v``, ``x < v``) is built as a
:class:`NaNAboveComparison`, which binds to that same set of rows written as ``x > v``
(``OR x IS NAN`` for a float or double column): the plain comparison keeps min/max
pruning of files that hold nulls, which ``NOT (x <= v) AND x IS NOT NULL`` loses.
"""

from __future__ import annotations

from dataclasses import dataclass

from icewright.errors import ValidationError
from icewright.expressions.operations import Operation
from icewright.expressions.parser import parse
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    Expression,
    Not,
    Or,
    UnboundPredicate,
    and_,
    not_,
    or_,
)

__all__ = ["NaNAboveComparison", "sql_filter", "true_rows"]

_TWO_VALUED = frozenset(
    {Operation.IS_NULL, Operation.NOT_NULL, Operation.IS_NAN, Operation.NOT_NAN}
)


@dataclass(frozen=True, slots=True, repr=False)
class NaNAboveComparison(UnboundPredicate):
    """``x > v`` or ``x >= v`` as Spark SQL means it: also true where ``x`` is NaN.

    The rows of ``NOT (x <= v) AND x IS NOT NULL`` (resp. ``NOT (x < v) AND ...``).
    Whether the column can hold NaN is known only with its type, so binding gives
    ``x > v OR x IS NAN`` for a float or double column and ``x > v`` otherwise
    (:func:`icewright.expressions.bind`). It prints as the plain comparison, which
    :func:`sql_filter` reads back as this class; bind it before handing it to anything
    that reads the two-valued form (a job file's JSON, :func:`parse`).
    """

    def __repr__(self) -> str:
        return f"NaNAboveComparison({self.op.name}, {self.term.name!r}, {self.literals!r})"


def sql_filter(text: str) -> Expression:
    """The rows where SQL predicate ``text`` is TRUE in Spark SQL, as an Iceberg expression.

    >>> str(sql_filter("region != 'emea'"))
    "region != 'emea' AND region IS NOT NULL"
    """
    return true_rows(parse(text))


def true_rows(expr: Expression) -> Expression:
    """``expr`` read as SQL (three-valued): the two-valued expression of its TRUE rows."""
    return _translate(expr, want=True)


def _not_null(pred: UnboundPredicate) -> Expression:
    return UnboundPredicate(Operation.NOT_NULL, pred.term)


def _translate(expr: Expression, *, want: bool) -> Expression:
    """``T(expr)`` when ``want`` is True, else ``F(expr)`` (see the module docstring)."""
    if expr is ALWAYS_TRUE:
        return ALWAYS_TRUE if want else ALWAYS_FALSE
    if expr is ALWAYS_FALSE:
        return ALWAYS_FALSE if want else ALWAYS_TRUE
    if isinstance(expr, Not):
        return _translate(expr.child, want=not want)
    if isinstance(expr, And):
        parts = (_translate(expr.left, want=want), _translate(expr.right, want=want))
        return and_(*parts) if want else or_(*parts)
    if isinstance(expr, Or):
        parts = (_translate(expr.left, want=want), _translate(expr.right, want=want))
        return or_(*parts) if want else and_(*parts)
    if isinstance(expr, UnboundPredicate):
        return _test(expr, want)
    raise ValidationError(f"a SQL filter reads as unbound predicates, got {expr!r}")


def _test(pred: UnboundPredicate, want: bool) -> Expression:
    op = pred.op
    if op in _TWO_VALUED:
        return pred if want else UnboundPredicate(op.negate(), pred.term)
    # The positive form of each pair, and whether the SQL test is that form.
    positive = {
        Operation.LT: Operation.LT,
        Operation.LT_EQ: Operation.LT_EQ,
        Operation.GT: Operation.LT_EQ,
        Operation.GT_EQ: Operation.LT,
        Operation.EQ: Operation.EQ,
        Operation.NOT_EQ: Operation.EQ,
        Operation.IN: Operation.IN,
        Operation.NOT_IN: Operation.IN,
        Operation.STARTS_WITH: Operation.STARTS_WITH,
        Operation.NOT_STARTS_WITH: Operation.STARTS_WITH,
    }
    if op not in positive:
        raise ValidationError(f"no SQL meaning for a {op.value} predicate")
    base = UnboundPredicate(positive[op], pred.term, pred.literals)
    is_positive = op is positive[op]
    if want == is_positive:
        # The rows where the positive test holds: null and NaN never do, as in SQL.
        return base
    if base.op in (Operation.LT, Operation.LT_EQ):
        # x >= v / x > v in SQL: the same rows as below, as a plain comparison for pruning
        return NaNAboveComparison(base.op.negate(), pred.term, pred.literals)
    # The rows where the positive test is FALSE in SQL: its two-valued negation (true
    # for null and NaN) less the null rows. NaN stays: in Spark NaN > v and NaN != v.
    return and_(not_(base), _not_null(pred))
