"""Expression construction, simplification, negation and text form."""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal

import pytest

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    Evaluator,
    Not,
    Operation,
    Or,
    Reference,
    UnboundPredicate,
    and_,
    bind,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    or_,
    parse,
    predicate,
    rewrite_not,
    starts_with,
)
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField

A = equal("a", 1)
B = less_than("b", 2)
C = is_null("c")


def test_builders_make_predicates_of_each_operation() -> None:
    cases = [
        (is_null("x"), Operation.IS_NULL, ()),
        (not_null("x"), Operation.NOT_NULL, ()),
        (is_nan("x"), Operation.IS_NAN, ()),
        (not_nan("x"), Operation.NOT_NAN, ()),
        (less_than("x", 1), Operation.LT, (1,)),
        (less_than_or_equal("x", 1), Operation.LT_EQ, (1,)),
        (greater_than("x", 1), Operation.GT, (1,)),
        (greater_than_or_equal("x", 1), Operation.GT_EQ, (1,)),
        (equal("x", 1), Operation.EQ, (1,)),
        (not_equal("x", 1), Operation.NOT_EQ, (1,)),
        (starts_with("x", "ab"), Operation.STARTS_WITH, ("ab",)),
        (not_starts_with("x", "ab"), Operation.NOT_STARTS_WITH, ("ab",)),
        (is_in("x", [3, 1, 3]), Operation.IN, (1, 3)),
        (not_in("x", (2, 1)), Operation.NOT_IN, (1, 2)),
    ]
    for expr, op, literals in cases:
        assert expr == UnboundPredicate(op, Reference("x"), literals)
        assert expr.op is op
        assert expr.term.name == "x"
        assert expr.literals == literals
        assert not expr.is_bound


@pytest.mark.parametrize("build", [equal, not_equal, less_than, greater_than_or_equal])
def test_null_literal_is_rejected_with_a_hint(build: object) -> None:
    with pytest.raises(ValidationError, match="is_null"):
        build("x", None)  # type: ignore[operator]


def test_nan_literal_is_rejected_with_a_hint() -> None:
    with pytest.raises(ValidationError, match="is_nan"):
        equal("x", math.nan)
    with pytest.raises(ValidationError, match="is_nan"):
        is_in("x", [1.0, math.nan])
    with pytest.raises(ValidationError, match="finite"):
        less_than("x", Decimal("NaN"))


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValidationError, match="non-empty"):
        equal("", 1)
    with pytest.raises(ValidationError, match="string prefix"):
        starts_with("x", 3)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="list of values"):
        is_in("x", "abc")
    with pytest.raises(ValidationError, match="exactly one value"):
        predicate(Operation.EQ, "x", 1, 2)
    with pytest.raises(ValidationError, match="takes no value"):
        predicate(Operation.IS_NULL, "x", 1)
    with pytest.raises(ValidationError, match="not an expression"):
        and_(A, "b = 1")  # type: ignore[arg-type]


def test_expressions_are_immutable_and_hashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        A.op = Operation.LT  # type: ignore[misc]
    assert {A, equal("a", 1)} == {A}
    assert hash(and_(A, B)) == hash(And(A, B))
    assert is_in("x", [2, 1]) == is_in("x", [1, 2, 2])


def test_set_literals_keep_kinds_apart() -> None:
    # 1, 1.0 and True are equal in Python but are different literals
    assert is_in("x", [1, True, 1.0]).literals == (True, 1.0, 1)


def test_and_or_not_simplify_constants() -> None:
    assert and_(A, ALWAYS_FALSE) is ALWAYS_FALSE
    assert and_(ALWAYS_FALSE, A) is ALWAYS_FALSE
    assert and_(A, ALWAYS_TRUE) == A
    assert and_(ALWAYS_TRUE, A) == A
    assert and_() is ALWAYS_TRUE
    assert and_(A, B, C) == And(And(A, B), C)
    assert or_(A, ALWAYS_TRUE) is ALWAYS_TRUE
    assert or_(ALWAYS_TRUE, A) is ALWAYS_TRUE
    assert or_(A, ALWAYS_FALSE) == A
    assert or_() is ALWAYS_FALSE
    assert or_(A, B) == Or(A, B)
    assert not_(ALWAYS_TRUE) is ALWAYS_FALSE
    assert not_(ALWAYS_FALSE) is ALWAYS_TRUE
    assert not_(not_(A)) == A
    assert not_(A) == Not(A)


def test_operators() -> None:
    assert And(A, B) == (A & B)
    assert Or(A, B) == (A | B)
    assert Not(A) == ~A
    assert (A & ALWAYS_TRUE) == A


def test_negate_flips_each_operation() -> None:
    pairs = [
        (is_null("x"), not_null("x")),
        (is_nan("x"), not_nan("x")),
        (equal("x", 1), not_equal("x", 1)),
        (starts_with("x", "a"), not_starts_with("x", "a")),
        (is_in("x", [1, 2]), not_in("x", [1, 2])),
    ]
    for positive, negative in pairs:
        assert positive.negate() == negative
        assert negative.negate() == positive
    # an unbound ordering comparison cannot be flipped without its column type: NOT (x < 1)
    # also holds for null (and NaN) values, which x >= 1 does not
    assert less_than("x", 1).negate() == Not(less_than("x", 1))
    assert greater_than("x", 1).negate().negate() == greater_than("x", 1)
    assert and_(A, B).negate() == or_(A.negate(), B.negate())
    assert or_(A, B).negate() == and_(A.negate(), B.negate())
    assert not_(A).negate() == A
    assert ALWAYS_TRUE.negate() is ALWAYS_FALSE


def _has_not(e: object) -> bool:
    if isinstance(e, Not):
        return True
    if isinstance(e, And | Or):
        return _has_not(e.left) or _has_not(e.right)
    return False


def test_rewrite_not_pushes_negation_to_the_leaves() -> None:
    expr = not_(and_(A, not_(or_(B, not_(C)))))
    rewritten = rewrite_not(expr)
    assert not _has_not(rewritten)
    # not (A and not (B or not C)) = not A or (B or not C) = a != 1 or b < 2 or c is not null
    assert rewritten == or_(not_equal("a", 1), or_(B, not_null("c")))
    # unbound, NOT stays around an ordering comparison
    assert rewrite_not(not_(and_(A, B))) == or_(not_equal("a", 1), Not(B))


def test_bound_negation_is_exact_for_nulls_and_nans() -> None:
    schema = Schema(
        NestedField(1, "req", LongType(), required=True),
        NestedField(2, "opt", LongType()),
        NestedField(3, "f", DoubleType()),
    )
    assert rewrite_not(bind(parse("not (req < 5)"), schema)) == bind(parse("req >= 5"), schema)
    assert rewrite_not(bind(parse("not (opt < 5)"), schema)) == bind(
        parse("opt >= 5 or opt is null"), schema
    )
    assert rewrite_not(bind(parse("not (f >= 1.5)"), schema)) == bind(
        parse("f < 1.5 or f is null or f is nan"), schema
    )
    # the rewritten form agrees with NOT on every value, null and NaN included
    for text in ("not (opt < 5)", "not (f > 1.5 and opt <= 2)", "not (f = 1 or opt in (1, 2))"):
        expr = parse(text)
        plain = Evaluator(schema, expr)
        pushed = Evaluator(schema, rewrite_not(bind(expr, schema)))
        for opt in (None, 1, 5, 9):
            for f in (None, math.nan, 1.0, 1.5, 2.0):
                row = (1, opt, f)
                assert plain.eval(row) == pushed.eval(row), (text, row)


def test_text_form_reads_back() -> None:
    exprs = [
        and_(A, or_(B, C)),
        or_(and_(A, B), C),
        not_(or_(A, B)),
        is_in("region", ["eu", "it's"]),
        not_in("n", [Decimal("1.50"), Decimal("-2")]),
        starts_with("s", "50%_off\\"),
        not_starts_with("s", "x"),
        equal("weird name", 1.5),
        equal("a.`b", -3),
        equal("and", True),
        greater_than_or_equal("ts", "2026-01-01T00:00:00"),
        not_nan("f"),
        is_nan("f"),
        not_null("n.m"),
        ALWAYS_TRUE,
        ALWAYS_FALSE,
    ]
    for e in exprs:
        assert parse(str(e)) == e, str(e)


def test_text_form_examples() -> None:
    assert str(and_(A, or_(B, C))) == "a = 1 AND (b < 2 OR c IS NULL)"
    assert str(is_in("region", ["us", "eu"])) == "region IN ('eu', 'us')"
    assert str(starts_with("s", "ab")) == "s LIKE 'ab%'"
    assert str(equal("my col", "it's")) == "`my col` = 'it''s'"
