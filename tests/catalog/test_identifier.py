"""Identifier parsing and the name rules."""

from __future__ import annotations

import pytest

from icewright.catalog import Identifier
from icewright.catalog.identifier import parse_namespace
from icewright.errors import ValidationError


def test_parse_forms_agree() -> None:
    from_string = Identifier.parse("a.b.t")
    assert from_string == Identifier(("a", "b"), "t")
    assert Identifier.parse(("a", "b", "t")) == from_string
    assert Identifier.parse(["a", "b", "t"]) == from_string
    assert Identifier.parse(from_string) is from_string
    assert str(from_string) == "a.b.t"
    assert from_string.levels == ("a", "b", "t")
    assert from_string.namespace_str == "a.b"


def test_unicode_letters_digits_underscore_hyphen_are_allowed() -> None:
    ident = Identifier.parse("verkäufe_2024.bestellungen-eu")
    assert ident.namespace == ("verkäufe_2024",)
    assert ident.name == "bestellungen-eu"
    assert parse_namespace("") == ()
    assert parse_namespace(()) == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("t", "no namespace"),
        ("a..t", "empty"),
        ("a./t", "'/'"),
        ("a.b\\c", "'\\\\\\\\'"),
        ("a.it's", '"\'"'),
        ('a.say"hi"', "'\"'"),
        ("a.x;y", "';'"),
        ("a.x y", "' '"),
        ("a.x\ny", "'\\\\n'"),
        ("a.nul\x00", "'\\\\x00'"),
        ("a.é\u200b", "'\\\\u200b'"),
        ("a." + "x" * 256, "256 characters"),
    ],
)
def test_bad_names_say_what_is_wrong(value: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as raised:
        Identifier.parse(value)
    if "contains" in str(raised.value):
        assert "letters, digits" in str(raised.value)


def test_non_strings_are_refused() -> None:
    with pytest.raises(ValidationError):
        Identifier.parse(("a", 3))  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Identifier.parse(42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="joined"):
        parse_namespace(tuple("x" * 200 for _ in range(2)))
