"""The ``create`` verb: a table from a schema, or from a source (schema and data)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from icewright.actions._common import (
    CatalogLike,
    TableLike,
    Timer,
    identifier,
    resolve_catalog,
    runner_or_default,
)
from icewright.actions.append import append
from icewright.actions.results import ActionResult
from icewright.errors import TableAlreadyExists, ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier, Table
    from icewright.commit.table_ops import OrderLike, SpecLike
    from icewright.runners.base import Runner
    from icewright.spark.write import Source
    from icewright.spec.schema import Schema

__all__ = ["create"]


def create(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    schema: Schema | None = None,
    source: Source | None = None,
    partition_by: SpecLike = None,
    sort_by: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int = 2,
    if_not_exists: bool = False,
    or_replace: bool = False,
    commit_key: str | None = None,
    runner: Runner | None = None,
) -> ActionResult:
    """Create a table from ``schema``, or from ``source`` (schema derived from its
    DataFrame, every column optional, then its rows appended).

    ``partition_by`` and ``sort_by`` take a spec/order or ``build_partition_spec`` /
    ``build_sort_order`` entries (``[("day", "ts"), ("bucket", "id", 16)]``,
    ``["id", ("ts", "desc")]``). With ``if_not_exists`` an existing table is left as it
    is (``committed`` False, no data written); with ``or_replace`` it is replaced
    (keeping its history). From a source there are two commits: the creation (or
    replacement), then an append of the source's rows (``commit_key`` goes to that
    append; the result describes it). If that write fails, a table this call created is
    dropped again; a replaced table stays replaced and empty.
    """
    if if_not_exists and or_replace:
        raise ValidationError("pass if_not_exists or or_replace, not both")
    if schema is None and source is None:
        raise ValidationError("create needs a schema or a source to derive it from")
    timer = Timer()
    cat = resolve_catalog(catalog)
    ident = identifier(table)
    jobs = runner_or_default(runner) if source is not None else None
    if schema is None:
        assert jobs is not None
        with timer.phase("plan"):
            schema = jobs.source_schema(source)  # type: ignore[arg-type]
    existed = cat.table_exists(ident)
    if existed and if_not_exists:
        current = cat.load_table(ident)
        return _result(current, committed=False, timer=timer)
    with timer.phase("commit"):
        created = _create(
            cat,
            ident,
            schema,
            spec=partition_by,
            order=sort_by,
            properties=properties,
            location=location,
            format_version=format_version,
            or_replace=or_replace,
        )
    if source is None:
        return _result(created, committed=True, timer=timer)
    try:
        appended = append(created, source, commit_key=commit_key, runner=jobs)
    except Exception:
        if not existed:
            from icewright.commit import drop_table

            drop_table(cat, ident, purge=True)
        raise
    timings = {**timer.done(), **{f"append.{k}": v for k, v in appended.timings.items()}}
    return dataclasses.replace(appended, timings=timings)


def _create(
    cat: Catalog,
    ident: Identifier,
    schema: Schema,
    *,
    spec: SpecLike,
    order: OrderLike,
    properties: Mapping[str, str] | None,
    location: str | None,
    format_version: int,
    or_replace: bool,
) -> Table:
    from icewright.commit import create_or_replace_table, create_table

    if or_replace:
        return create_or_replace_table(
            cat, ident, schema, spec, order, properties, location, format_version
        )
    try:
        return create_table(cat, ident, schema, spec, order, properties, location, format_version)
    except TableAlreadyExists as e:
        raise TableAlreadyExists(
            f"{e}; pass if_not_exists=True to keep it or or_replace=True to replace it"
        ) from None


def _result(table: Table, *, committed: bool, timer: Timer) -> ActionResult:
    snapshot = table.metadata.current_snapshot()
    return ActionResult(
        table=str(table.identifier),
        metadata_location=table.metadata_location,
        committed=committed,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        sequence_number=None if snapshot is None else snapshot.sequence_number,
        operation=None if snapshot is None else str(snapshot.operation),
        summary=dict(snapshot.summary or {}) if snapshot is not None else {},
        timings=timer.done(),
    )
