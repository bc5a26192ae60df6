"""Boolean expressions over table rows (expressions spec: "Predicates").

Every expression is an immutable, hashable value:

* :data:`ALWAYS_TRUE` / :data:`ALWAYS_FALSE` -- the constant predicates;
* :class:`And`, :class:`Or`, :class:`Not` -- logical combinations;
* :class:`UnboundPredicate` -- a test of a named :class:`Reference` (``"a.b"``), with the
  literal values as the caller gave them;
* :class:`BoundPredicate` -- the same test of a :class:`BoundReference` (a field id and
  type of one schema), with literals converted to the field's Python value convention.

Build expressions with the functions of :mod:`icewright.expressions.builders`
(:func:`equal`, :func:`is_in` ...) and :func:`and_`, :func:`or_`, :func:`not_` here, with
:func:`icewright.expressions.parse`, or with the operators ``&``, ``|`` and ``~``.
:func:`and_`, :func:`or_` and :func:`not_` simplify constants away as Iceberg Java's
``Expressions`` does.

Comparisons follow the expressions spec's two-valued, null-safe rules: a comparison of a
null or NaN value with a literal is false, except ``!=`` (and ``NOT IN``, ``NOT STARTS
WITH``), which are the negations of ``=`` (``IN``, ``STARTS WITH``) and therefore true.

Negation is exact under those rules. ``NOT (x < 5)`` is true for a null ``x``, so the
negation of ``x < 5`` is ``x >= 5 OR x IS NULL`` (``OR x IS NAN`` too for a float column):
a bound predicate negates to that, and an unbound ordering comparison, whose column type
is not known yet, negates to ``NOT (x < 5)`` until it is bound. (Iceberg Java flips
``<`` to ``>=``, which drops the null and NaN rows.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar

from icewright.errors import ValidationError
from icewright.expressions.operations import ORDERINGS, Operation
from icewright.expressions.text import predicate_sql
from icewright.spec.types import DoubleType, FloatType, IcebergType

# --- expressions -----------------------------------------------------------------


class Expression:
    """Base class of every boolean expression."""

    __slots__ = ()

    def negate(self) -> Expression:
        """The expression that is true exactly when this one is false, with the negation
        pushed into the predicates where that is exact (see the module docstring)."""
        raise NotImplementedError

    @property
    def is_bound(self) -> bool:
        """Whether every predicate in the expression is bound to a schema."""
        return True

    def __and__(self, other: Expression) -> Expression:
        return and_(self, other)

    def __or__(self, other: Expression) -> Expression:
        return or_(self, other)

    def __invert__(self) -> Expression:
        return not_(self)

    def __str__(self) -> str:
        return to_sql(self)


BoundExpression = Expression
"""An expression whose predicates are all :class:`BoundPredicate` (see :func:`bind`)."""


class AlwaysTrue(Expression):
    """The predicate that is true for every row; use the singleton :data:`ALWAYS_TRUE`."""

    __slots__ = ()
    _instance: ClassVar[AlwaysTrue | None] = None

    def __new__(cls) -> AlwaysTrue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> Expression:
        return ALWAYS_FALSE

    def __repr__(self) -> str:
        return "ALWAYS_TRUE"

    def __reduce__(self) -> str:
        return "ALWAYS_TRUE"


class AlwaysFalse(Expression):
    """The predicate that is false for every row; use the singleton :data:`ALWAYS_FALSE`."""

    __slots__ = ()
    _instance: ClassVar[AlwaysFalse | None] = None

    def __new__(cls) -> AlwaysFalse:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def negate(self) -> Expression:
        return ALWAYS_TRUE

    def __repr__(self) -> str:
        return "ALWAYS_FALSE"

    def __reduce__(self) -> str:
        return "ALWAYS_FALSE"


ALWAYS_TRUE = AlwaysTrue()
ALWAYS_FALSE = AlwaysFalse()


@dataclass(frozen=True, slots=True, repr=False)
class And(Expression):
    """Both children are true. Prefer :func:`and_`, which simplifies constants."""

    left: Expression
    right: Expression

    def negate(self) -> Expression:
        return or_(self.left.negate(), self.right.negate())

    @property
    def is_bound(self) -> bool:
        return self.left.is_bound and self.right.is_bound

    def __repr__(self) -> str:
        return f"And({self.left!r}, {self.right!r})"


@dataclass(frozen=True, slots=True, repr=False)
class Or(Expression):
    """Either child is true. Prefer :func:`or_`, which simplifies constants."""

    left: Expression
    right: Expression

    def negate(self) -> Expression:
        return and_(self.left.negate(), self.right.negate())

    @property
    def is_bound(self) -> bool:
        return self.left.is_bound and self.right.is_bound

    def __repr__(self) -> str:
        return f"Or({self.left!r}, {self.right!r})"


@dataclass(frozen=True, slots=True, repr=False)
class Not(Expression):
    """The child is false. Prefer :func:`not_`, which simplifies constants and ``not not``."""

    child: Expression

    def negate(self) -> Expression:
        return self.child

    @property
    def is_bound(self) -> bool:
        return self.child.is_bound

    def __repr__(self) -> str:
        return f"Not({self.child!r})"


# --- terms -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reference:
    """A column by name; nested fields use dotted names such as ``"location.lat"``."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError(f"a column reference needs a non-empty name, got {self.name!r}")


@dataclass(frozen=True, slots=True)
class BoundReference:
    """A field of one struct: its id, full dotted name, type and how to reach it in a row.

    ``accessor`` holds the position of the field in each enclosing struct (row tuples nest
    struct values as tuples), or is None for a field inside a list or map, whose value a
    row does not hold once. ``required`` is True when the field and all its ancestors are
    required; ``nested`` is True for a field that is not a top-level column.
    """

    field_id: int
    name: str
    field_type: IcebergType
    accessor: tuple[int, ...] | None
    required: bool = False
    nested: bool = False

    @property
    def in_list_or_map(self) -> bool:
        """Whether the field is (inside) a list element or a map key or value."""
        return self.accessor is None

    def eval(self, row: Sequence[Any] | None) -> Any:
        """The field's value in ``row`` (a tuple in struct field order); None if null."""
        if self.accessor is None:
            raise ValidationError(
                f"column {self.name!r} is inside a list or map: a row holds many values of "
                "it, so a predicate on it cannot be evaluated per row"
            )
        value: Any = row
        for pos in self.accessor:
            if value is None:
                return None
            value = value[pos]
        return value


# --- predicates --------------------------------------------------------------------


def _check_literal(op: Operation, value: Any) -> Any:
    if value is None:
        raise ValidationError(
            f"a {op.value} predicate cannot compare with null: a comparison with null is never "
            "true; use is_null / IS NULL (or not_null / IS NOT NULL) instead"
        )
    if isinstance(value, float) and math.isnan(value):
        raise ValidationError(
            f"a {op.value} predicate cannot compare with NaN: use is_nan / IS NAN "
            "(or not_nan / IS NOT NAN) instead"
        )
    if isinstance(value, Decimal) and not value.is_finite():
        raise ValidationError(f"a {op.value} predicate needs a finite decimal, got {value}")
    if isinstance(value, Expression | Reference):
        raise ValidationError(
            f"a {op.value} predicate compares a column with a constant, got {value!r}"
        )
    if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(value, str):
        raise ValidationError(f"{op.value} needs a string prefix, got {value!r}")
    return value


def _set_key(value: Any) -> tuple[str, Any]:
    # bool and int (and 1 and 1.0) are equal in Python; keep values of different kinds apart.
    return (type(value).__name__, value)


def canonical_values(values: Iterable[Any]) -> tuple[Any, ...]:
    """Deduplicated literal values in a stable (sorted where possible) order."""
    unique = {_set_key(v): v for v in values}
    try:
        keys = sorted(unique)
    except TypeError:
        keys = list(unique)
    return tuple(unique[k] for k in keys)


def _check_literals(op: Operation, values: tuple[Any, ...]) -> tuple[Any, ...]:
    if op.is_unary:
        if values:
            raise ValidationError(f"{op.value} takes no value, got {list(values)!r}")
        return ()
    if op.is_set:
        return canonical_values(_check_literal(op, v) for v in values)
    if len(values) != 1:
        raise ValidationError(f"{op.value} takes exactly one value, got {list(values)!r}")
    return (_check_literal(op, values[0]),)


@dataclass(frozen=True, slots=True, repr=False)
class UnboundPredicate(Expression):
    """A test of a named column; ``literals`` are the values as given (sets deduplicated).

    An ``IN`` with no values is allowed and binds to :data:`ALWAYS_FALSE` (``NOT IN`` to
    :data:`ALWAYS_TRUE`).
    """

    op: Operation
    term: Reference
    literals: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.op, Operation):
            raise ValidationError(f"{self.op!r} is not a predicate Operation")
        if not isinstance(self.term, Reference):
            raise ValidationError(f"a predicate needs a column Reference, got {self.term!r}")
        object.__setattr__(self, "literals", _check_literals(self.op, tuple(self.literals)))

    @property
    def is_bound(self) -> bool:
        return False

    @property
    def literal(self) -> Any:
        """The single literal of a comparison or starts-with predicate."""
        if not self.op.is_literal:
            raise ValidationError(f"a {self.op.value} predicate has no single literal")
        return self.literals[0]

    def negate(self) -> Expression:
        if self.op in ORDERINGS:
            # exact only with the column type (null and NaN handling): bind, then rewrite
            return Not(self)
        return UnboundPredicate(self.op.negate(), self.term, self.literals)

    def __repr__(self) -> str:
        return f"UnboundPredicate({self.op.name}, {self.term.name!r}, {self.literals!r})"


@dataclass(frozen=True, slots=True, repr=False)
class BoundPredicate(Expression):
    """A test of a bound field; literals are in the field type's Python value convention.

    Made by :func:`icewright.expressions.bind`, which converts and checks the literals.
    """

    op: Operation
    term: BoundReference
    literals: tuple[Any, ...] = ()
    literal_set: frozenset[Any] = field(
        default=frozenset(), init=False, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "literals", _check_literals(self.op, tuple(self.literals)))
        object.__setattr__(self, "literal_set", frozenset(self.literals))

    @property
    def literal(self) -> Any:
        """The single literal of a comparison or starts-with predicate."""
        if not self.op.is_literal:
            raise ValidationError(f"a {self.op.value} predicate has no single literal")
        return self.literals[0]

    @property
    def ref(self) -> BoundReference:
        """The bound field (same as ``term``)."""
        return self.term

    def negate(self) -> Expression:
        flipped = BoundPredicate(self.op.negate(), self.term, self.literals)
        if self.op not in ORDERINGS:
            return flipped
        # NOT (x < 5) also holds for null and NaN values, which x >= 5 does not cover
        extra: list[Expression] = []
        if not self.term.required:
            extra.append(BoundPredicate(Operation.IS_NULL, self.term))
        if isinstance(self.term.field_type, FloatType | DoubleType):
            extra.append(BoundPredicate(Operation.IS_NAN, self.term))
        return or_(flipped, *extra)

    def test(self, value: Any) -> bool:
        """Whether ``value`` (the field's value in one row; None for null) satisfies the test."""
        return test_value(self.op, value, self.literals, self.literal_set)

    def __repr__(self) -> str:
        return (
            f"BoundPredicate({self.op.name}, {self.term.name!r}#{self.term.field_id}, "
            f"{self.literals!r})"
        )


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def test_value(
    op: Operation, value: Any, literals: tuple[Any, ...], value_set: frozenset[Any]
) -> bool:
    """The two-valued result of one test on one value (expressions spec: "Comparisons")."""
    if op is Operation.IS_NULL:
        return value is None
    if op is Operation.NOT_NULL:
        return value is not None
    if op is Operation.IS_NAN:
        return _is_nan(value)
    if op is Operation.NOT_NAN:
        return not _is_nan(value)
    if op.negate() in (Operation.EQ, Operation.IN, Operation.STARTS_WITH):
        # != , NOT IN and NOT STARTS WITH are the negations of their positive forms.
        return not test_value(op.negate(), value, literals, value_set)
    if value is None or _is_nan(value):
        return False
    if op is Operation.IN:
        return value in value_set
    lit = literals[0]
    if op is Operation.STARTS_WITH:
        return isinstance(value, str) and value.startswith(lit)
    if op is Operation.EQ:
        return bool(value == lit)
    if op is Operation.LT:
        return bool(value < lit)
    if op is Operation.LT_EQ:
        return bool(value <= lit)
    if op is Operation.GT:
        return bool(value > lit)
    return bool(value >= lit)


def _check_expression(e: Any) -> Expression:
    if not isinstance(e, Expression):
        raise ValidationError(f"{e!r} is not an expression")
    return e


def and_(*exprs: Expression) -> Expression:
    """All of ``exprs`` (``ALWAYS_TRUE`` when empty); constants are simplified away."""
    result: Expression = ALWAYS_TRUE
    for e in map(_check_expression, exprs):
        if e is ALWAYS_FALSE or result is ALWAYS_FALSE:
            return ALWAYS_FALSE
        if e is ALWAYS_TRUE:
            continue
        result = e if result is ALWAYS_TRUE else And(result, e)
    return result


def or_(*exprs: Expression) -> Expression:
    """Any of ``exprs`` (``ALWAYS_FALSE`` when empty); constants are simplified away."""
    result: Expression = ALWAYS_FALSE
    for e in map(_check_expression, exprs):
        if e is ALWAYS_TRUE or result is ALWAYS_TRUE:
            return ALWAYS_TRUE
        if e is ALWAYS_FALSE:
            continue
        result = e if result is ALWAYS_FALSE else Or(result, e)
    return result


def not_(expr: Expression) -> Expression:
    """The negation of ``expr``: constants flip, ``not not x`` is ``x``, else :class:`Not`."""
    e = _check_expression(expr)
    if e is ALWAYS_TRUE:
        return ALWAYS_FALSE
    if e is ALWAYS_FALSE:
        return ALWAYS_TRUE
    if isinstance(e, Not):
        return e.child
    return Not(e)


def rewrite_not(expr: Expression) -> Expression:
    """An equivalent expression with negations pushed into the predicates.

    A bound expression comes back without :class:`Not` nodes. In an unbound one, ``NOT``
    stays around ``<``, ``<=``, ``>`` and ``>=`` (see the module docstring): bind first.
    """
    if isinstance(expr, Not):
        return rewrite_not(expr.child).negate()
    if isinstance(expr, And):
        return and_(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return or_(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def to_sql(expr: Expression, _parent: int = 0) -> str:
    """SQL-like text of ``expr`` that :func:`icewright.expressions.parse` reads back.

    Bound predicates render with their full column names.
    """
    # precedence: OR 1, AND 2, NOT 3; a child of lower precedence than its parent gets parens
    if expr is ALWAYS_TRUE:
        return "TRUE"
    if expr is ALWAYS_FALSE:
        return "FALSE"
    if isinstance(expr, Or):
        text = f"{to_sql(expr.left, 1)} OR {to_sql(expr.right, 1)}"
        return f"({text})" if _parent > 1 else text
    if isinstance(expr, And):
        text = f"{to_sql(expr.left, 2)} AND {to_sql(expr.right, 2)}"
        return f"({text})" if _parent > 2 else text
    if isinstance(expr, Not):
        return f"NOT ({to_sql(expr.child, 0)})"
    if isinstance(expr, UnboundPredicate):
        return predicate_sql(expr.op, expr.term.name, expr.literals)
    if isinstance(expr, BoundPredicate):
        return predicate_sql(expr.op, expr.term.name, expr.literals)
    raise ValidationError(f"{expr!r} is not an expression")
