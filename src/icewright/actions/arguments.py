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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from icewright.actions.instants import instant_ms
from icewright.commit.table_ops import OrderLike, SpecLike, order_of, spec_of
from icewright.errors import ValidationError
from icewright.expressions import Expression
from icewright.expressions.sql import sql_filter
from icewright.io.base import uri_scheme
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
    "check_branch",
    "check_column_aliases",
    "check_commit_key",
    "check_declaration",
    "check_expire",
    "check_format_version",
    "check_location",
    "check_optional_seconds",
    "check_orphans",
    "check_replace",
    "check_rewrite",
    "check_seconds",
    "check_source",
    "check_source_argument",
    "check_view",
    "check_view_sql",
    "check_where",
    "check_where_columns",
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


def check_source(source: object, *, paths_exist: bool = True) -> None:
    """A source text (``sql:...``, ``<format>:<path>``, a path, ``pkg.module:function``)
    that can be read as one; with ``paths_exist``, a path on this machine (no scheme, or
    ``file:``) must exist and hold files. Checked before any Spark job starts (a path of
    another file system is checked by the job, which sees it). Definitions loaded before
    their data lands (Dagster's) check the form only: ``paths_exist=False``."""
    from icewright.spark.sources import PathSource, check_path, parse_source

    if not isinstance(source, str):
        raise ValidationError(
            f"unsupported source {source!r}: pass a DataFrame, 'sql:<query>', "
            "'<format>:<path>', a path, or 'pkg.module:function'"
        )
    parsed = parse_source(source)
    if paths_exist and isinstance(parsed, PathSource) and uri_scheme(parsed.path) in (None, "file"):
        check_path(parsed)


def check_source_argument(source: object) -> None:
    """:func:`check_source` for a source given as text; a Spark DataFrame or a
    ``pyarrow.Table`` (:class:`~icewright.runners.arrow.ArrowRunner` writes it) is left to
    the runner (checked by name: pyspark is not imported for this)."""
    from icewright.runners.arrow import is_arrow_table

    if type(source).__name__ not in ("DataFrame", "TableSource") and not is_arrow_table(source):
        check_source(source)


def check_branch(branch: object, what: str = "branch") -> None:
    """A branch name: non-empty text (a branch the table lacks is created by a write, as
    Iceberg Java's ``toBranch`` does; reads and maintenance refuse it)."""
    if not isinstance(branch, str) or not branch.strip():
        raise ValidationError(f"{what} must be a branch name such as 'main', got {branch!r}")


def check_commit_key(commit_key: object) -> str | None:
    """A commit key as text: None (none), an integer, or non-empty text without
    surrounding spaces (a key that renders empty would otherwise silently mean *no key*,
    and a re-run commits twice)."""
    if commit_key is None:
        return None
    if isinstance(commit_key, int) and not isinstance(commit_key, bool):
        return str(commit_key)  # e.g. a date as 20260131
    if not isinstance(commit_key, str) or not commit_key or commit_key != commit_key.strip():
        raise ValidationError(
            f"commit_key must be non-empty text without surrounding spaces, got {commit_key!r}; "
            "leave it None for the default key"
        )
    return commit_key


def check_location(location: object) -> None:
    """A table location: None (the catalog's default) or a non-empty URI or path; a path
    on this machine that is a file cannot hold a table."""
    if location is None:
        return
    if not isinstance(location, str) or not location.strip():
        raise ValidationError(
            f"location must be a URI or path, got {location!r}; leave it None for the "
            "catalog's default location"
        )
    scheme = uri_scheme(location)
    if scheme in (None, "file"):
        path = Path(location.removeprefix("file://") if scheme else location)
        if path.is_file():
            raise ValidationError(
                f"location {location!r} is a file: give a directory for the table"
            )


def check_format_version(format_version: object) -> None:
    """A format version as a number (the versions a table can be created with are checked
    when it is created)."""
    if isinstance(format_version, bool) or not isinstance(format_version, int):
        raise ValidationError(
            f"format_version must be an integer such as 2, got {format_version!r}"
        )


def check_optional_seconds(value: object, name: str) -> float | None:
    """:func:`check_seconds`, or None (no limit)."""
    return None if value is None else check_seconds(value, name)


def check_seconds(value: object, name: str) -> float:
    """A positive, finite number of seconds (a number or its text)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValidationError(f"{name} must be a number of seconds, got {value!r}")
    try:
        seconds = float(value)
    except ValueError:
        raise ValidationError(f"{name} must be a number of seconds, got {value!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise ValidationError(f"{name} must be a positive number of seconds, got {value!r}")
    return seconds


def check_where(where: object, what: str = "where") -> None:
    """A predicate in Spark SQL's syntax, or an :class:`~icewright.expressions.Expression`
    (None: none). Text holding template placeholders (``{start}``) is checked once they
    are filled, when the action runs."""
    if where is None or isinstance(where, Expression):
        return
    if not isinstance(where, str) or not where.strip():
        raise ValidationError(f"{what} must be a non-empty SQL predicate, got {where!r}")
    if "{" not in where:
        try:
            sql_filter(where)
        except ValidationError as e:
            raise ValidationError(f"{what} {where!r}: {e}") from None


def check_where_columns(where: object, schema: Schema, what: str = "where") -> None:
    """:func:`check_where`, and every column the predicate names is in ``schema`` (the
    table's, once loaded)."""
    from icewright.expressions import bind

    check_where(where, what)
    if where is None:
        return
    condition = sql_filter(where) if isinstance(where, str) else where
    try:
        bind(condition, schema)  # type: ignore[arg-type]
    except ValidationError as e:
        raise ValidationError(f"{what} {where!r}: {e}") from None


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
    delete_file_threshold: object = None,
) -> None:
    """The options of :func:`icewright.actions.rewrite`."""
    for name, value in (
        ("min_input_files", min_input_files),
        ("target_file_size", target_file_size),
        ("partial_progress_max_commits", partial_progress_max_commits),
        ("delete_file_threshold", delete_file_threshold),
    ):
        if value is None and name != "min_input_files":
            continue
        _check_count(value, name)
    check_where(where)


def check_rewrite_manifests(spec_id: object = None, target_size_bytes: object = None) -> None:
    """The options of :func:`icewright.actions.rewrite_manifests`."""
    if spec_id is not None and (isinstance(spec_id, bool) or not isinstance(spec_id, int)):
        raise ValidationError(f"spec_id must be a partition spec id (an integer), got {spec_id!r}")
    if target_size_bytes is not None:
        _check_count(target_size_bytes, "target_size_bytes")


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


def check_view(
    sql: object,
    column_comments: object = None,
    column_aliases: object = None,
    properties: object = None,
) -> None:
    """The arguments of :func:`icewright.actions.publish_view`."""
    check_view_sql(sql)
    for name, value in (("column_comments", column_comments), ("properties", properties)):
        if value is not None and not isinstance(value, Mapping):
            raise ValidationError(f"{name} must be a mapping of name to text, got {value!r}")
    check_column_aliases(column_aliases)


def check_column_aliases(column_aliases: object) -> None:
    """A view's column aliases: None or a list of names (one per query column)."""
    if column_aliases is not None and (
        isinstance(column_aliases, str)
        or not isinstance(column_aliases, Sequence)
        or not all(isinstance(a, str) and a.strip() for a in column_aliases)
    ):
        raise ValidationError(
            f"column_aliases must be a list of column names, got {column_aliases!r}"
        )


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be an integer >= 1, got {value!r}")
