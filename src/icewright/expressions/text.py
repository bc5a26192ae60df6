"""SQL-like text of expressions, as :func:`icewright.expressions.parse` reads it back: the
names, literals and single predicates; :func:`icewright.expressions.predicates.to_sql`
puts them together for a whole expression."""

from __future__ import annotations

import datetime
import math
import re
import uuid
from decimal import Decimal
from typing import Any

from icewright.expressions.operations import Operation

__all__ = ["literal_to_sql", "predicate_sql", "quote_name"]

_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "is", "null", "nan", "like", "true", "false", "between"}
)
_BARE_NAME = re.compile(r"^[^\W\d]\w*$")
_OPERATOR_TEXT = {
    Operation.LT: "<",
    Operation.LT_EQ: "<=",
    Operation.GT: ">",
    Operation.GT_EQ: ">=",
    Operation.EQ: "=",
    Operation.NOT_EQ: "!=",
}


def quote_name(name: str) -> str:
    """A column name as the parser reads it: dotted parts, back-quoted where needed."""
    parts = []
    for part in name.split("."):
        if _BARE_NAME.match(part) and part.lower() not in _KEYWORDS:
            parts.append(part)
        else:
            parts.append("`" + part.replace("`", "``") + "`")
    return ".".join(parts)


def _quote_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def literal_to_sql(value: Any) -> str:
    """A literal as the parser reads it (strings quoted, floats with an exponent)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if math.isinf(value):
            return _quote_string(text)
        return text if "e" in text else text + "e0"
    if isinstance(value, Decimal):
        text = f"{value:f}"
        return text if "." in text else text + "."  # a point keeps it a decimal
    if isinstance(value, str):
        return _quote_string(value)
    if isinstance(value, bytes):
        return _quote_string(value.hex())
    if isinstance(value, datetime.date | datetime.time):
        return _quote_string(value.isoformat())
    if isinstance(value, uuid.UUID):
        return _quote_string(str(value))
    return _quote_string(str(value))


def _like_pattern(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _quote_string(escaped + "%")


def predicate_sql(op: Operation, name: str, literals: tuple[Any, ...]) -> str:
    """One predicate (``op`` on column ``name`` with ``literals``) as the parser reads it."""
    col = quote_name(name)
    if op is Operation.IS_NULL:
        return f"{col} IS NULL"
    if op is Operation.NOT_NULL:
        return f"{col} IS NOT NULL"
    if op is Operation.IS_NAN:
        return f"{col} IS NAN"
    if op is Operation.NOT_NAN:
        return f"{col} IS NOT NAN"
    if op is Operation.STARTS_WITH:
        return f"{col} LIKE {_like_pattern(literals[0])}"
    if op is Operation.NOT_STARTS_WITH:
        return f"{col} NOT LIKE {_like_pattern(literals[0])}"
    if op.is_set:
        if not literals:
            return "FALSE" if op is Operation.IN else "TRUE"
        keyword = "IN" if op is Operation.IN else "NOT IN"
        return f"{col} {keyword} ({', '.join(literal_to_sql(v) for v in literals)})"
    return f"{col} {_OPERATOR_TEXT[op]} {literal_to_sql(literals[0])}"
