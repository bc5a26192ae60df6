"""The arguments of the verbs that can be checked without a table.

An adapter that defines work ahead of its runs (a Dagster asset, sensor or job; a
component's ``defs.yaml``) calls these when the work is defined, so that bad input fails
``dagster definitions validate`` instead of a run at 3 a.m.; the actions call the same
functions when they run, so every caller gets one message for one mistake. Each raises
:class:`~icewright.errors.ValidationError` saying what was wrong and what to write.

What needs the table (a column a predicate names, a partition field of the current
spec) is checked by the actions when they load it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from icewright.actions.instants import instant_ms
from icewright.commit.table_ops import OrderLike, SpecLike, order_of, spec_of
from icewright.errors import ValidationError
from icewright.expressions import Expression
from icewright.expressions.sql import sql_filter
from icewright.spec.properties import check_properties
from icewright.spec.schema import Schema
from icewright.text.declaration import (
    parse_order,
    parse_partitioning,
    parse_properties,
    parse_schema,
)

__all__ = [
    "Declaration",
    "check_declaration",
    "check_expire",
    "check_orphans",
    "check_replace",
    "check_rewrite",
    "check_source",
    "check_view_sql",
    "check_where",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Declaration:
    """A table's declared shape, parsed and checked against its own schema: the
    arguments of :func:`icewright.actions.ensure_table`."""

    schema: Schema
    partition_by: SpecLike = None
    sort_by: OrderLike = None
    properties: Mapping[str, str] | None = None

    def as_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~icewright.actions.ensure_table`."""
        return {
            "schema": self.schema,
            "partition_by": self.partition_by,
            "sort_by": self.sort_by,
            "properties": self.properties,
        }


def check_declaration(
    schema: Any, partition_by: Any = None, sort_by: Any = None, properties: Any = None
) -> Declaration | None:
    """The declaration of a table (forms as :mod:`icewright.text.declaration` reads
    them), its partitioning and sort order bound to its schema (an unknown column or a
    transform that does not fit fails here); None without a schema."""
    if schema is None:
        if partition_by or sort_by or properties:
            raise ValidationError(
                "partition_by, sort_by and properties declare a table: give schema"
            )
        return None
    parsed = parse_schema(schema)
    props = parse_properties(properties)
    check_properties(props)
    declaration = Declaration(parsed, parse_partitioning(partition_by), parse_order(sort_by), props)
    spec_of(parsed, declaration.partition_by)
    order_of(parsed, declaration.sort_by)
    return declaration


def check_source(source: object) -> None:
    """A source text (``sql:...``, ``<format>:<path>``, a path, ``pkg.module:function``)
    that can be read as one."""
    from icewright.spark.sources import parse_source

    if not isinstance(source, str):
        raise ValidationError(f"source must be a string, got {type(source).__name__}")
    parse_source(source)


def check_where(where: object, what: str = "where") -> None:
    """A predicate in Spark SQL's syntax, or an :class:`~icewright.expressions.Expression`
    (None: none). Text holding template placeholders (``{start}``) is checked once they
    are filled, when the action runs."""
    if where is None or isinstance(where, Expression):
        return
    if not isinstance(where, str) or not where.strip():
        raise ValidationError(f"{what} must be a non-empty SQL predicate, got {where!r}")
    if "{" not in where:
        sql_filter(where)


def check_replace(
    where: object = None, dynamic_partitions: bool = False, rows_must_match: bool = False
) -> None:
    """The arguments of :func:`icewright.actions.replace` that choose what it replaces."""
    if where is not None and dynamic_partitions:
        raise ValidationError("pass where or dynamic_partitions=True, not both")
    if rows_must_match and where is None:
        raise ValidationError("rows_must_match needs where (the rows the new rows must match)")
    check_where(where)


def check_rewrite(
    min_input_files: object = 5,
    target_file_size: object = None,
    partial_progress_max_commits: object = None,
    where: object = None,
) -> None:
    """The options of :func:`icewright.actions.rewrite`."""
    for name, value in (
        ("min_input_files", min_input_files),
        ("target_file_size", target_file_size),
        ("partial_progress_max_commits", partial_progress_max_commits),
    ):
        if value is None and name != "min_input_files":
            continue
        _check_count(value, name)
    check_where(where)


def check_expire(older_than: object = None, retain_last: object = None) -> None:
    """The options of :func:`icewright.actions.expire`."""
    instant_ms(older_than, "older_than")
    if retain_last is not None:
        _check_count(retain_last, "retain_last")


def check_orphans(older_than: object = None) -> None:
    """The options of :func:`icewright.actions.remove_orphan_files`."""
    instant_ms(older_than, "older_than")


def check_view_sql(sql: object) -> None:
    """A view's query: non-empty text (Spark analyses it when the view is published)."""
    if not isinstance(sql, str) or not sql.strip():
        raise ValidationError("a view needs its SQL query, e.g. 'SELECT ... FROM orders'")


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be an integer >= 1, got {value!r}")
