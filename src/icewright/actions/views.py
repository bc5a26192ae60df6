"""The ``publish_view`` verb: Spark analyses the view SQL, then a view version is committed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, Timer, resolve_catalog, runner_or_default
from icewright.actions.arguments import check_view
from icewright.actions.results import ViewResult
from icewright.errors import NoSuchTable, ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier
    from icewright.io.base import FileIO
    from icewright.runners.base import Runner, TableResolver
    from icewright.spec.schema import Schema
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["publish_view"]


def publish_view(
    view: str | tuple[str, ...] | Identifier,
    sql: str,
    *,
    catalog: CatalogLike = None,
    comment: str | None = None,
    column_comments: Mapping[str, str] | None = None,
    column_aliases: Sequence[str] | None = None,
    properties: Mapping[str, str] | None = None,
    runner: Runner | None = None,
) -> ViewResult:
    """Create the view, or give it a new version, with the schema Spark derives for ``sql``.

    Tables of the catalog the SQL references (unqualified names resolve in the view's
    namespace) are registered for the analysis with the columns the read path gives them
    (their files are not planned: the analysis needs no rows); the SQL is stored
    as written (dialect ``spark``), with the catalog's name and the view's namespace as
    default catalog and namespace. ``column_aliases`` renames the query's columns (one
    name per column); ``column_comments`` (by final column name) become their docs;
    ``comment`` is the view's ``comment`` property. SQL Spark cannot analyse raises
    :class:`ValidationError` and commits nothing.
    """
    from icewright.catalog import Identifier

    check_view(sql, column_comments, column_aliases, properties)
    timer = Timer()
    cat = resolve_catalog(catalog)
    ident = Identifier.parse(view)
    jobs = runner_or_default(runner)
    with timer.phase("analyse"):
        derived, referenced = jobs.analyze_view(sql, _resolver(cat, ident))
    schema = _shaped(derived, column_aliases, column_comments)
    with timer.phase("commit"):
        from icewright.commit import create_view

        committed = create_view(
            cat,
            ident,
            sql,
            schema,
            dialect="spark",
            default_catalog=cat.name,
            default_namespace=tuple(ident.namespace),
            properties=properties,
            comment=comment,
            or_replace=True,
        )
    return ViewResult(
        view=str(ident),
        metadata_location=committed.metadata_location,
        version_id=committed.metadata.current_version_id,
        schema=schema,
        referenced_tables=tuple(".".join(n) for n in referenced),
        timings=timer.done(),
    )


def _resolver(cat: Catalog, view: Identifier) -> TableResolver:
    def resolve(parts: tuple[str, ...]) -> tuple[TableMetadata, FileIO] | None:
        candidates: list[tuple[str, ...]] = []
        if len(parts) == 1:
            candidates.append((*view.namespace, parts[0]))
        else:
            candidates.append(parts)
            if parts[0] == cat.name and len(parts) > 2:
                candidates.append(parts[1:])
        for candidate in candidates:
            try:
                table = cat.load_table(candidate)
            except (NoSuchTable, ValidationError):
                continue
            return table.metadata, table.io
        return None

    return resolve


def _shaped(
    schema: Schema, aliases: Sequence[str] | None, comments: Mapping[str, str] | None
) -> Schema:
    from icewright.spec.schema import Schema
    from icewright.spec.types import NestedField

    fields = list(schema.fields)
    if aliases is not None:
        if isinstance(aliases, str) or len(aliases) != len(fields):
            raise ValidationError(
                f"column_aliases has {len(aliases)} names but the query returns "
                f"{len(fields)} columns ({', '.join(f.name for f in fields)})"
            )
        fields = [
            NestedField(f.field_id, str(a), f.field_type, f.required, f.doc)
            for f, a in zip(fields, aliases, strict=True)
        ]
    names = {f.name for f in fields}
    if len(names) != len(fields):
        raise ValidationError(
            "the view's columns need distinct names: " + ", ".join(f.name for f in fields)
        )
    if comments:
        unknown = sorted(set(comments) - names)
        if unknown:
            raise ValidationError(
                f"column_comments names unknown columns {unknown}; the columns are "
                + ", ".join(sorted(names))
            )
        fields = [
            NestedField(f.field_id, f.name, f.field_type, f.required, comments.get(f.name, f.doc))
            for f in fields
        ]
    return Schema(*fields)
