"""The SQL-like filter parser: operators, precedence, quoting, literals and errors."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from pyiceberg.expressions.parser import parse as py_parse

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Expression,
    and_,
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
    starts_with,
)
from tests.expressions.oracle import from_py

OPERATORS: list[tuple[str, Expression]] = [
    ("x = 3", equal("x", 3)),
    ("x == 3", equal("x", 3)),
    ("x != 3", not_equal("x", 3)),
    ("x <> 3", not_equal("x", 3)),
    ("x < 3", less_than("x", 3)),
    ("x <= 3", less_than_or_equal("x", 3)),
    ("x > 3", greater_than("x", 3)),
    ("x >= 3", greater_than_or_equal("x", 3)),
    ("x IN (1, 2, 3)", is_in("x", [1, 2, 3])),
    ("x in (1)", is_in("x", [1])),
    ("x NOT IN (1, 2)", not_in("x", [1, 2])),
    ("x IS NULL", is_null("x")),
    ("x is not null", not_null("x")),
    ("x is nan", is_nan("x")),
    ("x IS NOT NaN", not_nan("x")),
    ("name LIKE 'abc%'", starts_with("name", "abc")),
    ("name not like 'abc%'", not_starts_with("name", "abc")),
    ("name like 'abc'", equal("name", "abc")),
    ("name not like 'abc'", not_equal("name", "abc")),
    ("name like '50\\%\\_%'", starts_with("name", "50%_")),
    ("x BETWEEN 1 AND 5", and_(greater_than_or_equal("x", 1), less_than_or_equal("x", 5))),
    (
        "x not between 1 and 5",
        not_(and_(greater_than_or_equal("x", 1), less_than_or_equal("x", 5))),
    ),
    ("3 < x", greater_than("x", 3)),
    ("'a' = x", equal("x", "a")),
    ("-2 >= x", less_than_or_equal("x", -2)),
    ("TRUE", ALWAYS_TRUE),
    ("false", ALWAYS_FALSE),
    ("flag = true", equal("flag", True)),
    ("flag != FALSE", not_equal("flag", False)),
    ("true = flag", equal("flag", True)),
]


@pytest.mark.parametrize(("text", "expected"), OPERATORS)
def test_every_operator(text: str, expected: Expression) -> None:
    assert parse(text) == expected


def test_precedence_not_and_or() -> None:
    a, b, c = equal("a", 1), equal("b", 2), equal("c", 3)
    assert parse("a = 1 or b = 2 and c = 3") == or_(a, and_(b, c))
    assert parse("a = 1 and b = 2 or c = 3") == or_(and_(a, b), c)
    assert parse("not a = 1 and b = 2") == and_(not_(a), b)
    assert parse("not not a = 1") == a
    assert parse("(a = 1 or b = 2) and c = 3") == and_(or_(a, b), c)
    assert parse("not (a = 1 or b is null)") == not_(or_(a, is_null("b")))
    assert parse("((a = 1))") == a
    assert parse("a = 1 and true") == a
    assert parse("a = 1 or true") is ALWAYS_TRUE
    assert parse("a = 1 and x between 1 and 2 or c = 3") == or_(
        and_(a, and_(greater_than_or_equal("x", 1), less_than_or_equal("x", 2))), c
    )


def test_brief_example() -> None:
    assert parse("ts >= '2026-01-01T00:00:00' and region in ('eu', 'us')") == and_(
        greater_than_or_equal("ts", "2026-01-01T00:00:00"), is_in("region", ["eu", "us"])
    )


def test_column_names() -> None:
    assert parse("a.b.c = 1") == equal("a.b.c", 1)
    assert parse("`my col` = 1") == equal("my col", 1)
    assert parse('"my col" = 1') == equal("my col", 1)
    assert parse("`a``b` = 1") == equal("a`b", 1)
    assert parse('"a""b" = 1') == equal('a"b', 1)
    assert parse("`order`.`in` = 1") == equal("order.in", 1)
    assert parse("loc . lat > 1") == greater_than("loc.lat", 1)
    assert parse("_x1$ = 1") == equal("_x1$", 1)
    assert parse("prénom = 'é'") == equal("prénom", "é")


def test_numbers() -> None:
    def value(text: str) -> object:
        return parse(f"x = {text}").literal  # type: ignore[attr-defined]

    assert value("42") == 42 and isinstance(value("42"), int)
    assert value("-42") == -42
    assert value("+7") == 7
    assert value("1.50") == Decimal("1.50") and isinstance(value("1.50"), Decimal)
    assert str(value("1.50")) == "1.50"  # the scale is kept
    assert value("-0.5") == Decimal("-0.5")
    assert value(".5") == Decimal("0.5")
    assert value("2.") == Decimal("2")
    assert value("1e3") == 1000.0 and isinstance(value("1e3"), float)
    assert value("-2.5E-2") == -0.025
    assert value("12345678901234567890123") == 12345678901234567890123


def test_strings() -> None:
    assert parse("x = 'it''s'").literal == "it's"  # type: ignore[attr-defined]
    assert parse("x = ''").literal == ""  # type: ignore[attr-defined]
    assert parse("x = 'a and b or (c)'").literal == "a and b or (c)"  # type: ignore[attr-defined]
    assert parse("x = 'ünï ☃'").literal == "ünï ☃"  # type: ignore[attr-defined]
    assert parse("x in ('a', 'b''c')") == is_in("x", ["a", "b'c"])


def test_keywords_are_case_insensitive() -> None:
    assert parse("A = 1 AnD b Is NoT nUlL oR c In (1, 2)") == or_(
        and_(equal("A", 1), not_null("b")), is_in("c", [1, 2])
    )


def _error(text: str) -> tuple[int, str]:
    with pytest.raises(ValidationError) as info:
        parse(text)
    message = str(info.value)
    m = re.search(r"at position (\d+)", message)
    assert m, message
    return int(m.group(1)), message


ERRORS = [
    # (text, position, words the message must contain)
    ("x = null", 4, "IS NULL"),
    ("null = x", 0, "IS NULL"),
    ("x != NULL", 5, "IS NOT NULL"),
    ("x = nan", 4, "IS NAN"),
    ("x =", 3, "a number, a 'quoted string'"),
    ("x foo 3", 2, "IS, IN, LIKE or BETWEEN"),
    ("x", 1, "comparison"),
    ("", 0, "a column name"),
    ("x = 1 y = 2", 6, "AND, OR or the end"),
    ("(x = 1", 6, "')' to close the '(' at position 0"),
    ("x = 1)", 5, "AND, OR or the end"),
    ("x = 'abc", 4, "never closed"),
    ("`abc = 1", 0, "never closed"),
    ("x in ()", 6, "a value of the IN list"),
    ("x in (1 2)", 8, "',' or ')'"),
    ("x in 1", 5, "'(' to open the IN list"),
    ("x like '%abc'", 7, "prefix pattern"),
    ("x like 'a_c%'", 7, "prefix pattern"),
    ("x like 3", 7, "quoted pattern"),
    ("x is 3", 5, "NULL or NAN after IS"),
    ("x is not 3", 9, "NULL or NAN after IS NOT"),
    ("x not = 3", 6, "IN, LIKE or BETWEEN after NOT"),
    ("x between 1 5", 12, "AND between the two bounds"),
    ("and = 1", 0, "a column name"),
    ("x = 1 and", 9, "a column name"),
    ("x = - 'a'", 6, "a number after '-'"),
    ("x # 1", 2, "unexpected character '#'"),
    ("x = 12abc", 4, "quote the column"),
    ("a. = 1", 3, "a column name"),
    ("`` = 1", 0, "cannot be empty"),
    ("3 + x", 2, "a comparison operator after the value"),
    ("3 x", 2, "a comparison operator"),
]


@pytest.mark.parametrize(("text", "position", "words"), ERRORS)
def test_errors_say_where_and_what(text: str, position: int, words: str) -> None:
    pos, message = _error(text)
    assert pos == position, message
    assert words in message, message
    # the message shows the filter with a caret under the position
    lines = message.splitlines()
    assert lines[-1].index("^") - 2 == position


def test_not_a_string() -> None:
    with pytest.raises(ValidationError, match="must be a string"):
        parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "x = 1.5",
        "x = -3 and y <> 'a''b'",
        "not (a = 1 or b is null)",
        "a = 1 or b = 2 and c = 3",
        "x in (1, 2, 3) and y not in ('a', 'b')",
        "name like 'abc%'",
        "x is nan or y is not null",
        '"a".b >= 10',
    ],
)
def test_agrees_with_pyiceberg_parser(text: str) -> None:
    assert parse(text) == from_py(py_parse(text))
