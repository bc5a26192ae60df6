"""A SQL-like filter language, read by a hand-written recursive-descent parser.

Grammar (keywords are case-insensitive)::

    filter     := or_expr END
    or_expr    := and_expr (OR and_expr)*
    and_expr   := not_expr (AND not_expr)*
    not_expr   := NOT not_expr | primary
    primary    := '(' or_expr ')' | TRUE | FALSE | predicate
    predicate  := column cmp_op literal
                | literal cmp_op column
                | column IS [NOT] (NULL | NAN)
                | column [NOT] IN '(' literal (',' literal)* ')'
                | column [NOT] LIKE string          -- 'abc%' only: starts with
                | column [NOT] BETWEEN literal AND literal
    cmp_op     := '=' | '==' | '!=' | '<>' | '<' | '<=' | '>' | '>='
    column     := name ('.' name)*                  -- name: bare, `back-quoted` or "double-quoted"
    literal    := ['-' | '+'] number | string | TRUE | FALSE

Numbers: ``12`` is an int, ``1.5`` a :class:`~decimal.Decimal`, ``1.5e3`` a float.
Strings are single-quoted, with ``''`` for a quote. ``NOT`` binds tighter than ``AND``,
which binds tighter than ``OR``. Comparisons with ``NULL`` are rejected (use ``IS NULL``).
Errors are :class:`ValidationError` with the position (0-based character offset) and what
was expected there.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Expression,
    Reference,
    UnboundPredicate,
    and_,
    not_,
    or_,
)

__all__ = ["parse"]

_CMP = {
    "=": Operation.EQ,
    "==": Operation.EQ,
    "!=": Operation.NOT_EQ,
    "<>": Operation.NOT_EQ,
    "<": Operation.LT,
    "<=": Operation.LT_EQ,
    ">": Operation.GT,
    ">=": Operation.GT_EQ,
}
_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "is", "null", "nan", "like", "true", "false", "between"}
)
_CMP_TEXT = "a comparison (=, !=, <>, <, <=, >, >=), IS, IN, LIKE or BETWEEN"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # name, qname, string, number, op, punct, end
    text: str  # source text (names and strings unquoted)
    pos: int

    def is_keyword(self, *words: str) -> bool:
        return self.kind == "name" and self.text.lower() in words

    def describe(self) -> str:
        if self.kind == "end":
            return "the end of the filter"
        if self.kind == "string":
            return f"the string '{self.text}'"
        return repr(self.text)


def _error(text: str, pos: int, message: str) -> ValidationError:
    line = text.replace("\n", " ").replace("\t", " ")
    return ValidationError(
        f"cannot parse filter at position {pos}: {message}\n  {line}\n  {' ' * pos}^"
    )


def _is_name_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _is_name_char(c: str) -> bool:
    return c.isalnum() or c in "_$"


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        start = i
        if c in "'\"`":
            chars, i = _quoted(text, i, c)
            kind = "string" if c == "'" else "qname"
            if kind == "qname" and not chars:
                raise _error(text, start, "a quoted column name cannot be empty")
            tokens.append(_Token(kind, chars, start))
            continue
        after_name = bool(tokens) and tokens[-1].kind in ("name", "qname")
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit() and not after_name):
            i = _number_end(text, i)
            if i < n and _is_name_char(text[i]):
                raise _error(text, start, "a number must not run into a name; quote the column")
            tokens.append(_Token("number", text[start:i], start))
            continue
        if _is_name_start(c):
            while i < n and _is_name_char(text[i]):
                i += 1
            tokens.append(_Token("name", text[start:i], start))
            continue
        two = text[i : i + 2]
        if two in ("<=", ">=", "!=", "<>", "=="):
            tokens.append(_Token("op", two, start))
            i += 2
            continue
        if c in "=<>":
            tokens.append(_Token("op", c, start))
            i += 1
            continue
        if c in "(),.-+":
            tokens.append(_Token("punct", c, start))
            i += 1
            continue
        raise _error(text, start, f"unexpected character {c!r}")
    tokens.append(_Token("end", "", n))
    return tokens


def _quoted(text: str, start: int, quote: str) -> tuple[str, int]:
    """The unescaped content of a quoted string or name (doubled quote = one quote)."""
    out = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == quote:
            if text[i + 1 : i + 2] == quote:
                out.append(quote)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(c)
        i += 1
    what = "string" if quote == "'" else "quoted name"
    raise _error(text, start, f"this {what} is never closed: expected a closing {quote}")


def _number_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i].isdigit():
        i += 1
    if i < n and text[i] == ".":
        i += 1
        while i < n and text[i].isdigit():
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j].isdigit():
            i = j
            while i < n and text[i].isdigit():
                i += 1
    return i


def _number_value(text: str) -> int | Decimal | float:
    if "e" in text or "E" in text:
        return float(text)
    if "." in text:
        return Decimal(text)
    return int(text)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    # --- helpers ------------------------------------------------------------

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> _Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        t = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return t

    def fail(self, expected: str, tok: _Token | None = None) -> ValidationError:
        t = tok or self.tok
        return _error(self.text, t.pos, f"expected {expected}, found {t.describe()}")

    def expect_punct(self, c: str, expected: str) -> None:
        if self.tok.kind == "punct" and self.tok.text == c:
            self.advance()
            return
        raise self.fail(expected)

    # --- grammar ------------------------------------------------------------

    def parse(self) -> Expression:
        expr = self.or_expr()
        if self.tok.kind != "end":
            raise self.fail("AND, OR or the end of the filter")
        return expr

    def or_expr(self) -> Expression:
        parts = [self.and_expr()]
        while self.tok.is_keyword("or"):
            self.advance()
            parts.append(self.and_expr())
        return or_(*parts)

    def and_expr(self) -> Expression:
        parts = [self.not_expr()]
        while self.tok.is_keyword("and"):
            self.advance()
            parts.append(self.not_expr())
        return and_(*parts)

    def not_expr(self) -> Expression:
        if self.tok.is_keyword("not"):
            self.advance()
            return not_(self.not_expr())
        return self.primary()

    def primary(self) -> Expression:
        t = self.tok
        if t.kind == "punct" and t.text == "(":
            self.advance()
            expr = self.or_expr()
            self.expect_punct(")", "')' to close the '(' at position " + str(t.pos))
            return expr
        if self.starts_literal():
            return self.reversed_comparison()
        if t.is_keyword("true"):
            self.advance()
            return ALWAYS_TRUE
        if t.is_keyword("false"):
            self.advance()
            return ALWAYS_FALSE
        if t.kind == "qname" or (t.kind == "name" and t.text.lower() not in _KEYWORDS):
            return self.predicate(self.column())
        raise self.fail("a column name, NOT, TRUE, FALSE or '('")

    def starts_literal(self) -> bool:
        t = self.tok
        if t.kind in ("number", "string"):
            return True
        if t.kind == "punct" and t.text in "-+":
            return True
        # TRUE = col: a boolean literal only when a comparison follows (NULL = col and
        # NAN = col are read as literals too, to be rejected with a hint)
        return t.is_keyword("true", "false", "null", "nan") and self.peek().kind == "op"

    def column(self) -> Reference:
        parts = []
        while True:
            t = self.tok
            if t.kind == "qname" or (t.kind == "name" and t.text.lower() not in _KEYWORDS):
                parts.append(self.advance().text)
            else:
                raise self.fail("a column name (quote names that are keywords)")
            if self.tok.kind == "punct" and self.tok.text == ".":
                self.advance()
                continue
            return Reference(".".join(parts))

    def literal(self, context: str) -> Any:
        t = self.tok
        if t.kind == "punct" and t.text in "-+":
            self.advance()
            if self.tok.kind != "number":
                raise self.fail(f"a number after '{t.text}'")
            value = _number_value(self.advance().text)
            return -value if t.text == "-" else value
        if t.kind == "number":
            return _number_value(self.advance().text)
        if t.kind == "string":
            return self.advance().text
        if t.is_keyword("true", "false"):
            return self.advance().text.lower() == "true"
        if t.is_keyword("null"):
            raise _error(
                self.text,
                t.pos,
                f"{context} cannot be null: a comparison with null is never true; "
                "use IS NULL or IS NOT NULL",
            )
        if t.is_keyword("nan") or (t.kind == "name" and t.text.lower() in ("infinity", "inf")):
            raise _error(
                self.text, t.pos, f"{context} cannot be {t.text}: use IS NAN or IS NOT NAN"
            )
        raise self.fail(f"{context}: a number, a 'quoted string', TRUE or FALSE")

    def predicate(self, ref: Reference) -> Expression:
        t = self.tok
        if t.kind == "op":
            self.advance()
            value = self.literal(f"the value compared with {ref.name!r}")
            return UnboundPredicate(_CMP[t.text], ref, (value,))
        if t.is_keyword("is"):
            self.advance()
            negated = self.tok.is_keyword("not")
            if negated:
                self.advance()
            if self.tok.is_keyword("null"):
                self.advance()
                return UnboundPredicate(Operation.NOT_NULL if negated else Operation.IS_NULL, ref)
            if self.tok.is_keyword("nan"):
                self.advance()
                return UnboundPredicate(Operation.NOT_NAN if negated else Operation.IS_NAN, ref)
            raise self.fail("NULL or NAN after IS" + (" NOT" if negated else ""))
        negated = t.is_keyword("not")
        if negated:
            self.advance()
        t = self.tok
        if t.is_keyword("in"):
            self.advance()
            return self.in_list(ref, negated)
        if t.is_keyword("like"):
            self.advance()
            return self.like(ref, negated)
        if t.is_keyword("between"):
            self.advance()
            low = self.literal(f"the lower bound of BETWEEN for {ref.name!r}")
            if not self.tok.is_keyword("and"):
                raise self.fail("AND between the two bounds of BETWEEN")
            self.advance()
            high = self.literal(f"the upper bound of BETWEEN for {ref.name!r}")
            inside = and_(
                UnboundPredicate(Operation.GT_EQ, ref, (low,)),
                UnboundPredicate(Operation.LT_EQ, ref, (high,)),
            )
            return not_(inside) if negated else inside
        if negated:
            raise self.fail("IN, LIKE or BETWEEN after NOT")
        raise self.fail(f"{_CMP_TEXT} after column {ref.name!r}")

    def in_list(self, ref: Reference, negated: bool) -> Expression:
        self.expect_punct("(", "'(' to open the IN list")
        values = [self.literal(f"a value of the IN list for {ref.name!r}")]
        while self.tok.kind == "punct" and self.tok.text == ",":
            self.advance()
            values.append(self.literal(f"a value of the IN list for {ref.name!r}"))
        self.expect_punct(")", "',' or ')' in the IN list")
        return UnboundPredicate(Operation.NOT_IN if negated else Operation.IN, ref, tuple(values))

    def like(self, ref: Reference, negated: bool) -> Expression:
        t = self.tok
        if t.kind != "string":
            raise self.fail("a 'quoted pattern' after LIKE")
        self.advance()
        prefix, wildcard = _like_prefix(self.text, t)
        if wildcard:
            op = Operation.NOT_STARTS_WITH if negated else Operation.STARTS_WITH
        else:
            op = Operation.NOT_EQ if negated else Operation.EQ
        return UnboundPredicate(op, ref, (prefix,))

    def reversed_comparison(self) -> Expression:
        start = self.tok
        value = self.literal("the value of the comparison")
        t = self.tok
        if t.kind != "op":
            raise self.fail(f"a comparison operator after the value at position {start.pos}")
        self.advance()
        ref = self.column()
        return UnboundPredicate(_CMP[t.text].flip(), ref, (value,))


def _like_prefix(text: str, tok: _Token) -> tuple[str, bool]:
    """The prefix of a LIKE pattern and whether it ends with ``%``.

    Only ``'prefix%'`` and patterns without wildcards are supported; ``\\`` escapes
    ``%``, ``_`` and itself.
    """
    pattern = tok.text
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "%_\\":
            out.append(pattern[i + 1])
            i += 2
            continue
        if c == "%" and i == len(pattern) - 1:
            return "".join(out), True
        if c in "%_":
            raise _error(
                text,
                tok.pos,
                f"LIKE {tok.describe()} is not supported: only a prefix pattern such as "
                "'abc%' (starts with) or a pattern without wildcards; escape a literal % or _ "
                "with a backslash",
            )
        out.append(c)
        i += 1
    return "".join(out), False


def parse(text: str) -> Expression:
    """Parse a SQL-like filter into an unbound expression (see the module docstring).

    >>> str(parse("ts >= '2026-01-01T00:00:00' and region in ('eu', 'us')"))
    "ts >= '2026-01-01T00:00:00' AND region IN ('eu', 'us')"
    """
    if not isinstance(text, str):
        raise ValidationError(f"a filter must be a string, got {type(text).__name__}")
    return _Parser(text).parse()
