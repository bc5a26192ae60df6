"""Partition specs and sort orders written as text, parsed into the entries
:func:`~icewright.spec.partitioning.build_partition_spec` and
:func:`~icewright.spec.sorting.build_sort_order` take.

Partition spec (``--partition-by``)::

    spec   := field (',' field)*
    field  := term [AS name]
    term   := column                                  -- identity
            | identity(column) | year(column) | month(column) | day(column) | hour(column)
            | bucket(N, column) | truncate(W, column) | void(column)

``years``/``months``/``days``/``hours`` are accepted for the time transforms (Spark's
names), and ``bucket(column, N)`` / ``truncate(column, W)`` in either order. Example:
``"day(ts), bucket(16, id), truncate(4, region), identity(region) AS r"``.

Sort order (``--sort-by``)::

    order  := key (',' key)*
    key    := term [ASC | DESC] [NULLS FIRST | NULLS LAST]

Example: ``"ts desc nulls last, id"``. The null order defaults as in Iceberg Java: nulls
first when ascending, last when descending.
"""

from __future__ import annotations

from typing import Any

from icewright.errors import ValidationError
from icewright.text.tokens import TokenStream

__all__ = ["parse_partition_spec", "parse_sort_order"]

_TIME = {
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "day": "day",
    "days": "day",
    "date": "day",
    "hour": "hour",
    "hours": "hour",
    "identity": "identity",
    "void": "void",
}
_WIDTH = ("bucket", "truncate")


def parse_partition_spec(text: str) -> list[tuple[Any, ...]]:
    """``build_partition_spec`` entries for ``text``: ``(transform, column)``,
    ``(transform, column, arg)`` or, with ``AS name``, ``(transform, column, arg, name)``.
    An empty text is the unpartitioned spec (no entries)."""
    if not text.strip():
        return []
    stream = TokenStream(text, "partition spec")
    out: list[tuple[Any, ...]] = []
    while True:
        transform, column, arg = _term(stream)
        if stream.accept_word("as"):
            name = stream.expect_name("after AS")
            out.append((transform, column, arg, name))
        elif arg is None:
            out.append((transform, column))
        else:
            out.append((transform, column, arg))
        if not stream.accept_punct(","):
            break
    stream.expect_end("after a partition field")
    return out


def parse_sort_order(text: str) -> list[str | tuple[str, ...]]:
    """``build_sort_order`` entries for ``text``: ``"col"``, ``(col, direction,
    null_order)`` or ``(col, direction, null_order, transform)``. An empty text is the
    unsorted order."""
    if not text.strip():
        return []
    stream = TokenStream(text, "sort order")
    out: list[str | tuple[str, ...]] = []
    while True:
        transform, column, arg = _term(stream)
        direction = "asc"
        explicit = False
        if stream.at_word("asc", "desc"):
            direction = stream.next().value.lower()
            explicit = True
        nulls = "nulls-first" if direction == "asc" else "nulls-last"
        if stream.accept_word("nulls"):
            if not stream.at_word("first", "last"):
                stream.fail("expected FIRST or LAST after NULLS")
            nulls = "nulls-" + stream.next().value.lower()
            explicit = True
        if transform != "identity":
            spelled = transform if arg is None else f"{transform}[{arg}]"
            out.append((column, direction, nulls, spelled))
        elif explicit:
            out.append((column, direction, nulls))
        else:
            out.append(column)
        if not stream.accept_punct(","):
            break
    stream.expect_end("after a sort key")
    return out


def _term(stream: TokenStream) -> tuple[str, str, int | None]:
    """``(transform, column, arg)`` of ``column`` or ``transform(...)``."""
    first = stream.peek
    name = stream.expect_name("(a column or a transform such as day(ts))")
    if not stream.accept_punct("("):
        return "identity", name, None
    word = name.lower()
    if first.kind == "name" and word in _TIME:
        column = stream.expect_name(f"inside {word}(...)")
        stream.expect_punct(")", f"to close {word}(...)")
        return _TIME[word], column, None
    if first.kind == "name" and word in _WIDTH:
        what = "the number of buckets" if word == "bucket" else "the truncation width"
        if stream.peek.kind == "number":
            arg = stream.expect_int(f"for {what}")
            stream.expect_punct(",", f"after {what} in {word}(N, column)")
            column = stream.expect_name(f"inside {word}(N, column)")
        else:
            column = stream.expect_name(f"inside {word}(N, column)")
            stream.expect_punct(",", f"after the column in {word}(column, N)")
            arg = stream.expect_int(f"for {what}")
        stream.expect_punct(")", f"to close {word}(...)")
        if arg <= 0:
            raise ValidationError(f"{stream.what}: {word}({arg}, {column}): {what} must be >= 1")
        return word, column, arg
    stream.fail(
        "unknown transform: use identity, year, month, day, hour, bucket(N, col), "
        "truncate(W, col) or void",
        first,
    )
