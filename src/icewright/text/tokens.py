"""The lexer shared by the command's small text languages (column lists, partition specs,
sort orders): names, numbers, quoted strings and punctuation, each with its position.

Errors are :class:`~icewright.errors.ValidationError` naming the token and its 0-based
character offset, so that a bad ``--schema`` or ``--partition-by`` says where it went wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from icewright.errors import ValidationError

__all__ = ["Token", "TokenStream", "tokenize"]

_PUNCT = "(),<>:[]"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*")
_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` is ``name``, ``quoted`` (a back-quoted or double-quoted name),
    ``string`` (single-quoted text), ``number``, ``punct`` or ``end``."""

    kind: str
    value: str
    pos: int

    def describe(self) -> str:
        """How an error message names this token."""
        if self.kind == "end":
            return "the end of the text"
        if self.kind == "string":
            return f"'{self.value}'"
        return repr(self.value)


def tokenize(text: str, what: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``end`` token; ``what`` names the text in
    errors (for example ``"schema"``)."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in _PUNCT:
            tokens.append(Token("punct", c, i))
            i += 1
        elif c in "`\"'":
            end = i + 1
            buf: list[str] = []
            while True:
                if end >= n:
                    raise ValidationError(f"{what}: the quote {c} at position {i} is never closed")
                if text[end] == c:
                    if end + 1 < n and text[end + 1] == c:  # doubled quote: a literal one
                        buf.append(c)
                        end += 2
                        continue
                    break
                buf.append(text[end])
                end += 1
            kind = "string" if c == "'" else "quoted"
            tokens.append(Token(kind, "".join(buf), i))
            i = end + 1
        elif m := _NUMBER.match(text, i):
            tokens.append(Token("number", m.group(), i))
            i = m.end()
        elif m := _NAME.match(text, i):
            tokens.append(Token("name", m.group(), i))
            i = m.end()
        else:
            raise ValidationError(f"{what}: unexpected character {c!r} at position {i}")
    tokens.append(Token("end", "", n))
    return tokens


class TokenStream:
    """A cursor over tokens with the helpers a recursive-descent parser needs."""

    def __init__(self, text: str, what: str) -> None:
        self.text = text
        self.what = what
        self._tokens = tokenize(text, what)
        self._i = 0

    @property
    def peek(self) -> Token:
        """The next token, not consumed."""
        return self._tokens[self._i]

    def next(self) -> Token:
        """Consume and return the next token."""
        tok = self._tokens[self._i]
        if tok.kind != "end":
            self._i += 1
        return tok

    def at_punct(self, value: str) -> bool:
        """Whether the next token is the punctuation ``value``."""
        return self.peek.kind == "punct" and self.peek.value == value

    def at_word(self, *words: str) -> bool:
        """Whether the next token is a bare name equal (case-insensitively) to one of
        ``words``."""
        return self.peek.kind == "name" and self.peek.value.lower() in words

    def accept_punct(self, value: str) -> bool:
        """Consume the punctuation ``value`` if it is next."""
        if self.at_punct(value):
            self.next()
            return True
        return False

    def accept_word(self, *words: str) -> bool:
        """Consume a bare name among ``words`` if it is next."""
        if self.at_word(*words):
            self.next()
            return True
        return False

    def expect_punct(self, value: str, context: str) -> Token:
        """Consume the punctuation ``value`` or fail naming what was found instead."""
        if not self.at_punct(value):
            self.fail(f"expected {value!r} {context}")
        return self.next()

    def expect_word(self, word: str, context: str) -> Token:
        """Consume the bare name ``word`` or fail."""
        if not self.at_word(word):
            self.fail(f"expected {word.upper()} {context}")
        return self.next()

    def expect_name(self, context: str) -> str:
        """Consume a (possibly quoted) name."""
        tok = self.peek
        if tok.kind not in ("name", "quoted") or (tok.kind == "quoted" and not tok.value):
            self.fail(f"expected a name {context}")
        return self.next().value

    def expect_int(self, context: str) -> int:
        """Consume a whole number."""
        if self.peek.kind != "number":
            self.fail(f"expected a whole number {context}")
        return int(self.next().value)

    def expect_end(self, context: str) -> None:
        """Fail unless every token was consumed."""
        if self.peek.kind != "end":
            self.fail(f"expected ',' or the end {context}")

    def fail(self, message: str, token: Token | None = None) -> NoReturn:
        """Raise a ValidationError: ``message``, the token found and its position."""
        tok = token or self.peek
        raise ValidationError(
            f"{self.what}: {message}, found {tok.describe()} at position {tok.pos} in {self.text!r}"
        )
