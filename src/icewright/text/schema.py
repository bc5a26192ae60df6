"""Schemas written as text: a column list, or Iceberg schema JSON (inline or ``@file``).

Column-list grammar (keywords and type names are case-insensitive)::

    schema   := column (',' column)* [',']
    column   := name type [NOT NULL | NULL] [COMMENT 'text']
    type     := primitive | decimal '(' P ',' S ')' | fixed '[' L ']' | fixed '(' L ')'
              | list '<' type [NOT NULL] '>'
              | map '<' type ',' type [NOT NULL] '>'
              | struct '<' name [':'] type [NOT NULL] [COMMENT 'text'] (',' ...)* '>'
    name     := bare name | `back-quoted` | "double-quoted"

Columns, list elements and map values are optional unless ``NOT NULL`` follows their
type (as in SQL DDL); map keys are always required (spec: "Nested Types"). Primitive
names are Iceberg's (``boolean int long float double date time timestamp timestamptz
timestamp_ns timestamptz_ns string uuid binary``) plus the SQL spellings ``bool``,
``integer``, ``bigint``, ``real``, ``text`` and ``varchar``.

Field ids are assigned fresh, the way Iceberg Java's ``TypeUtil.assignFreshIds`` does:
the fields of a struct take consecutive ids, then the types nested in them, in order
(:func:`icewright.spec.schema.assign_fresh_ids`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.schema import Schema, assign_fresh_ids
from icewright.spec.types import (
    DecimalType,
    FixedType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    parse_primitive,
)
from icewright.text.tokens import TokenStream

__all__ = ["load_schema", "parse_schema", "read_text_argument"]

_ALIASES = {
    "bool": "boolean",
    "integer": "int",
    "bigint": "long",
    "real": "float",
    "text": "string",
    "varchar": "string",
}


def read_text_argument(value: str, what: str) -> str:
    """``value``, or the contents of the file it names when it starts with ``@``."""
    if not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValidationError(f"cannot read the {what} file {str(path)!r}: {e.strerror}") from None


def load_schema(value: str) -> Schema:
    """The schema ``value`` gives: Iceberg schema JSON or a column list, inline or in the
    file ``@path``. JSON schemas keep their field ids; column lists get fresh ones."""
    text = read_text_argument(value, "schema").strip()
    if not text:
        raise ValidationError("the schema is empty: give a column list such as 'id long'")
    if text.startswith("{"):
        try:
            obj: Any = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValidationError(
                f"the schema looks like JSON but does not parse: {e.msg} at position {e.pos}"
            ) from None
        if not isinstance(obj, dict) or obj.get("type") != "struct":
            raise ValidationError(
                'Iceberg schema JSON must be an object with "type": "struct" and "fields"'
            )
        return Schema.from_json(obj)
    return parse_schema(text)


def parse_schema(text: str) -> Schema:
    """The :class:`Schema` of a column list such as
    ``"id long not null, ts timestamptz, tags list<string>"`` (fresh field ids from 1)."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("the schema is empty: give a column list such as 'id long'")
    stream = TokenStream(text, "schema")
    columns: list[_Field] = []
    while True:
        columns.append(_column(stream, top_level=True))
        if not stream.accept_punct(","):
            break
        if stream.peek.kind == "end":  # a trailing comma is allowed
            break
    stream.expect_end("after a column")
    names = [c.name for c in columns]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValidationError(f"schema: column {name!r} is defined more than once")
    # built with placeholder ids, then numbered once in Java's order
    placeholders = itertools.count(1)
    fresh, _ = assign_fresh_ids(Schema(*_fields(columns, placeholders)))
    return fresh


# --- the parse tree before ids are assigned -------------------------------------------------


class _Field:
    __slots__ = ("doc", "name", "required", "type")

    def __init__(self, name: str, type_: _Type, required: bool, doc: str | None) -> None:
        self.name = name
        self.type = type_
        self.required = required
        self.doc = doc


class _Type:
    """A primitive, or a nested type whose children still need ids."""

    __slots__ = ("children", "kind", "primitive")

    def __init__(
        self,
        kind: str,
        primitive: PrimitiveType | None = None,
        children: list[_Field] | None = None,
    ) -> None:
        self.kind = kind
        self.primitive = primitive
        self.children = children or []


def _column(stream: TokenStream, *, top_level: bool) -> _Field:
    context = "for a column" if top_level else "for a struct field"
    name = stream.expect_name(context)
    if not top_level:
        stream.accept_punct(":")
    if stream.peek.kind == "end" or stream.at_punct(","):
        stream.fail(f"column {name!r} needs a type")
    type_ = _type(stream)
    required = _nullability(stream)
    doc = None
    if stream.accept_word("comment"):
        if stream.peek.kind != "string":
            stream.fail("expected a single-quoted comment after COMMENT")
        doc = stream.next().value
    return _Field(name, type_, required, doc)


def _nullability(stream: TokenStream) -> bool:
    if stream.at_word("not"):
        stream.next()
        stream.expect_word("null", "after NOT")
        return True
    stream.accept_word("null")
    return False


def _type(stream: TokenStream) -> _Type:
    tok = stream.peek
    if tok.kind != "name":
        stream.fail("expected a type")
    word = stream.next().value.lower()
    if word in ("list", "array"):
        stream.expect_punct("<", f"after {word}")
        element = _type(stream)
        required = _nullability(stream)
        stream.expect_punct(">", "to close the list type")
        return _Type("list", children=[_Field("element", element, required, None)])
    if word == "map":
        stream.expect_punct("<", "after map")
        key = _type(stream)
        if stream.at_word("not"):
            _nullability(stream)  # keys are required anyway
        stream.expect_punct(",", "between the map's key and value types")
        value = _type(stream)
        required = _nullability(stream)
        stream.expect_punct(">", "to close the map type")
        return _Type(
            "map",
            children=[_Field("key", key, True, None), _Field("value", value, required, None)],
        )
    if word == "struct":
        stream.expect_punct("<", "after struct")
        fields: list[_Field] = []
        while True:
            fields.append(_column(stream, top_level=False))
            if not stream.accept_punct(","):
                break
        stream.expect_punct(">", "to close the struct type")
        names = [f.name for f in fields]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise ValidationError(f"schema: struct field {n!r} is defined more than once")
        return _Type("struct", children=fields)
    if word == "decimal":
        stream.expect_punct("(", "after decimal: decimal(precision, scale)")
        precision = stream.expect_int("for the decimal precision")
        stream.expect_punct(",", "between the decimal precision and scale")
        scale = stream.expect_int("for the decimal scale")
        stream.expect_punct(")", "to close decimal(precision, scale)")
        return _Type("primitive", DecimalType(precision, scale))
    if word == "fixed":
        close = "]" if stream.accept_punct("[") else ")"
        if close == ")":
            stream.expect_punct("(", "after fixed: fixed[length]")
        length = stream.expect_int("for the fixed length")
        stream.expect_punct(close, "to close fixed[length]")
        return _Type("primitive", FixedType(length))
    try:
        primitive = parse_primitive(_ALIASES.get(word, word))
    except ValidationError:
        stream.fail(
            "expected a type such as long, string, timestamptz, decimal(9, 2), "
            "list<...>, map<..., ...> or struct<...>",
            tok,
        )
    return _Type("primitive", primitive)


# --- building types (placeholder ids; assign_fresh_ids numbers them) ---------------------------


def _fields(fields: list[_Field], ids: Iterator[int]) -> list[NestedField]:
    return [NestedField(next(ids), f.name, _build(f.type, ids), f.required, f.doc) for f in fields]


def _build(t: _Type, ids: Iterator[int]) -> IcebergType:
    if t.kind == "primitive":
        assert t.primitive is not None
        return t.primitive
    if t.kind == "struct":
        return StructType(*_fields(t.children, ids))
    if t.kind == "list":
        (element,) = _fields(t.children, ids)
        return ListType(element.field_id, element.field_type, element.required)
    key, value = _fields(t.children, ids)
    return MapType(key.field_id, key.field_type, value.field_id, value.field_type, value.required)
