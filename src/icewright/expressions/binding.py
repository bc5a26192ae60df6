"""Binding expressions to a schema (Iceberg Java ``Binder`` / ``UnboundPredicate.bind``).

Binding resolves each column name to a field id, converts each literal to the column's
type (:mod:`icewright.expressions.literals`) and simplifies what the schema decides
alone: ``IS NULL`` of a required column is always false, ``IN`` of one value is ``=``,
``x = 2.5`` on an int column is always false, and so on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions.literals import Between, convert_literal
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Or,
    UnboundPredicate,
    and_,
    not_,
    or_,
)
from icewright.expressions.sql import NaNAboveComparison
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DoubleType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    NestedType,
    PrimitiveType,
    StringType,
    StructType,
    UnknownType,
)

__all__ = ["StructIndex", "bind"]

_MAX_LISTED = 60


class StructIndex:
    """Every field of a struct by full dotted name, with its :class:`BoundReference`.

    List elements and map keys/values are named as in :class:`Schema` (``"tags.element"``,
    ``"attrs.key"``, ``"attrs.value"``).
    """

    __slots__ = ("_by_lower", "_by_name", "struct")

    def __init__(self, struct: StructType) -> None:
        self.struct = struct
        self._by_name: dict[str, BoundReference] = {}
        for name, ref in _walk(struct, (), (), True, False):
            self._by_name.setdefault(name, ref)
        self._by_lower: dict[str, list[BoundReference]] = {}
        for name, ref in self._by_name.items():
            self._by_lower.setdefault(name.lower(), []).append(ref)

    def names(self) -> list[str]:
        """Every dotted field name, in schema order."""
        return list(self._by_name)

    def find(self, name: str, case_sensitive: bool = True) -> BoundReference:
        """The reference for ``name``; :class:`ValidationError` listing the columns if none."""
        ref = self._by_name.get(name)
        if ref is None and not case_sensitive:
            matches = self._by_lower.get(name.lower(), [])
            if len(matches) > 1:
                raise ValidationError(
                    f"column name {name!r} is ambiguous without case sensitivity: it matches "
                    f"{', '.join(repr(m.name) for m in matches)}; bind case-sensitively"
                )
            ref = matches[0] if matches else None
        if ref is None:
            names = self.names()
            listed = ", ".join(names[:_MAX_LISTED])
            more = f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else ""
            raise ValidationError(
                f"cannot find column {name!r} in the schema; the columns are: {listed}{more}"
            )
        return ref


def _walk(
    t: NestedType,
    prefix: tuple[str, ...],
    accessor: tuple[int, ...] | None,
    required: bool,
    nested: bool,
) -> Iterator[tuple[str, BoundReference]]:
    in_repeated = isinstance(t, ListType | MapType)
    for pos, f in enumerate(t.fields):
        path = (*prefix, f.name)
        acc = None if accessor is None or in_repeated else (*accessor, pos)
        req = required and f.required
        ref = BoundReference(f.field_id, ".".join(path), f.field_type, acc, req, nested)
        yield ref.name, ref
        if isinstance(f.field_type, NestedType):
            yield from _walk(f.field_type, path, acc, req, True)


def _struct_of(schema: Schema | StructType) -> StructType:
    if isinstance(schema, Schema):
        return schema.as_struct()
    if isinstance(schema, StructType):
        return schema
    raise ValidationError(f"bind needs a Schema or StructType, got {type(schema).__name__}")


def bind(
    expr: Expression, schema: Schema | StructType | StructIndex, case_sensitive: bool = True
) -> Expression:
    """``expr`` with every predicate bound to ``schema`` (see the module docstring).

    Already-bound predicates are kept as they are. Raises :class:`ValidationError` for an
    unknown column (listing the columns), a literal that does not fit its column, a NaN
    test of a non-float column or a starts-with test of a non-string column.
    """
    index = schema if isinstance(schema, StructIndex) else StructIndex(_struct_of(schema))
    return _bind(expr, index, case_sensitive)


def _bind(expr: Expression, index: StructIndex, case_sensitive: bool) -> Expression:
    if isinstance(expr, And):
        return and_(
            _bind(expr.left, index, case_sensitive), _bind(expr.right, index, case_sensitive)
        )
    if isinstance(expr, Or):
        return or_(
            _bind(expr.left, index, case_sensitive), _bind(expr.right, index, case_sensitive)
        )
    if isinstance(expr, Not):
        return not_(_bind(expr.child, index, case_sensitive))
    if isinstance(expr, UnboundPredicate):
        return bind_predicate(expr, index.find(expr.term.name, case_sensitive))
    if isinstance(expr, Expression):
        return expr  # constants and bound predicates
    raise ValidationError(f"{expr!r} is not an expression")


def _is_float(t: IcebergType) -> bool:
    return isinstance(t, FloatType | DoubleType)


def bind_predicate(pred: UnboundPredicate, ref: BoundReference) -> Expression:
    """Bind one predicate to a resolved field."""
    op, t, name = pred.op, ref.field_type, ref.name
    if op in (Operation.IS_NULL, Operation.NOT_NULL):
        if ref.required:
            # A required field (with required ancestors) is never null.
            return ALWAYS_FALSE if op is Operation.IS_NULL else ALWAYS_TRUE
        if isinstance(t, UnknownType):
            # The v3 unknown type is always null.
            return ALWAYS_TRUE if op is Operation.IS_NULL else ALWAYS_FALSE
        return BoundPredicate(op, ref)
    if op in (Operation.IS_NAN, Operation.NOT_NAN):
        if not _is_float(t):
            raise ValidationError(
                f"{'IS NAN' if op is Operation.IS_NAN else 'IS NOT NAN'} needs a float or "
                f"double column, but {name!r} has type {t}"
            )
        return BoundPredicate(op, ref)
    if not isinstance(t, PrimitiveType):
        raise ValidationError(
            f"column {name!r} has type {t}: only IS NULL / IS NOT NULL can test a struct, "
            "list or map"
        )
    if op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH) and not isinstance(t, StringType):
        raise ValidationError(
            f"{'LIKE' if op is Operation.STARTS_WITH else 'NOT LIKE'} (starts with) needs a "
            f"string column, but {name!r} has type {t}"
        )
    if op.is_set:
        return _bind_set(op, ref, pred.literals)
    value = convert_literal(pred.literal, t, name)
    if isinstance(value, Between):
        bound = _between(op, ref, value)
    else:
        bound = BoundPredicate(op, ref, (value,))
    if isinstance(pred, NaNAboveComparison) and _is_float(t):
        # Spark SQL orders NaN above every number (icewright.expressions.sql)
        return or_(bound, BoundPredicate(Operation.IS_NAN, ref))
    return bound


def _between(op: Operation, ref: BoundReference, value: Between) -> Expression:
    """A comparison with a literal that falls between two adjacent column values."""
    if op is Operation.EQ:
        return ALWAYS_FALSE
    if op is Operation.NOT_EQ:
        return ALWAYS_TRUE
    if op in (Operation.LT, Operation.LT_EQ):
        # x < 2.5 and x <= 2.5 are x <= 2 on an integer column
        if value.below is None:
            return ALWAYS_FALSE
        return BoundPredicate(Operation.LT_EQ, ref, (value.below,))
    # x > 2.5 and x >= 2.5 are x >= 3
    if value.above is None:
        return ALWAYS_FALSE
    return BoundPredicate(Operation.GT_EQ, ref, (value.above,))


def _bind_set(op: Operation, ref: BoundReference, literals: tuple[Any, ...]) -> Expression:
    values = []
    for lit in literals:
        v = convert_literal(lit, ref.field_type, ref.name)
        if not isinstance(v, Between):  # a value between two column values never matches
            values.append(v)
    probe = BoundPredicate(op, ref, tuple(values))  # deduplicates
    if not probe.literals:
        return ALWAYS_FALSE if op is Operation.IN else ALWAYS_TRUE
    if len(probe.literals) == 1:
        single = Operation.EQ if op is Operation.IN else Operation.NOT_EQ
        return BoundPredicate(single, ref, probe.literals)
    return probe
