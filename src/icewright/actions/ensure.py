"""The ``ensure`` verb: a table exists and has the declared shape, whatever its state was.

Declarative orchestrators (a Dagster asset, a component's ``defs.yaml``) describe a
table and expect every materialization to leave it so. :func:`ensure_table` creates the
table when it is missing; otherwise it evolves it toward the declaration, never
destructively:

* schema: columns missing from the table are added (optional), types widened where a
  promotion allows, docs taken (``union_by_name``); columns the declaration lacks stay;
* partitioning: the default spec becomes the declared one (fields removed and added by
  partition evolution; old data keeps its spec);
* sort order: the default order becomes the declared one;
* properties: declared keys are set to the declared values; other keys stay (other
  engines and operators keep theirs).

Each of the three commits (schema; spec, order and properties in one transaction) is
made only when something differs, so running it again on an unchanged declaration
commits nothing. Format version and location are only used at creation.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, Timer, identifier, resolve_catalog
from icewright.actions.results import ActionResult
from icewright.errors import NamespaceAlreadyExists, TableAlreadyExists

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier, Table
    from icewright.commit import Transaction
    from icewright.commit.table_ops import OrderLike, SpecLike
    from icewright.spec.partitioning import PartitionSpec
    from icewright.spec.schema import Schema
    from icewright.spec.sorting import SortOrder

__all__ = ["EnsureResult", "ensure_table"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EnsureResult(ActionResult):
    """An ensured table: ``created`` when it did not exist, ``changes`` names what evolved
    (``schema``, ``partitioning``, ``sort-order``, ``properties``; empty when the table
    already had the declared shape). ``committed`` is True when anything changed."""

    created: bool = False
    changes: tuple[str, ...] = ()


def ensure_table(
    table: TableLike,
    schema: Schema,
    *,
    catalog: CatalogLike = None,
    partition_by: SpecLike = None,
    sort_by: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int = 2,
    create_namespace: bool = True,
) -> EnsureResult:
    """Create ``table`` with the declared shape, or evolve it to that shape (see the
    module docstring). ``create_namespace`` creates missing namespace levels first."""
    from icewright.commit import create_table

    timer = Timer()
    cat = resolve_catalog(catalog)
    ident = identifier(table)
    props = {str(k): str(v) for k, v in (properties or {}).items()}
    if not cat.table_exists(ident):
        if create_namespace:
            _create_namespace(cat, ident)
        with timer.phase("commit"):
            try:
                created = create_table(
                    cat, ident, schema, partition_by, sort_by, props, location, format_version
                )
            except TableAlreadyExists:  # created concurrently: evolve it like any other
                created = None
        if created is not None:
            return _result(created, timer, created=True, changes=())
    with timer.phase("commit"):
        current, changes = _evolve(cat.load_table(ident), schema, partition_by, sort_by, props)
    return _result(current, timer, created=False, changes=changes)


def _create_namespace(cat: Catalog, ident: Identifier) -> None:
    levels = tuple(ident.namespace)
    for depth in range(1, len(levels) + 1):
        if not cat.namespace_exists(levels[:depth]):
            with contextlib.suppress(NamespaceAlreadyExists):
                cat.create_namespace(levels[:depth])


def _evolve(
    table: Table,
    schema: Schema,
    partition_by: SpecLike,
    sort_by: OrderLike,
    properties: Mapping[str, str],
) -> tuple[Table, tuple[str, ...]]:
    from icewright.commit import Transaction
    from icewright.commit.schema_update import UpdateSchema
    from icewright.commit.table_ops import order_of, spec_of

    changes: list[str] = []
    update = UpdateSchema(table).union_by_name(schema)
    if not update.apply(table.metadata).schema().same_structure(table.metadata.schema()):
        table = UpdateSchema(table).union_by_name(schema).commit().table
        changes.append("schema")

    metadata = table.metadata
    tx = Transaction(table)
    spec = spec_of(metadata.schema(), partition_by)
    if _spec_terms(spec) != _spec_terms(metadata.spec()):
        _evolve_spec(tx, metadata.spec(), spec, metadata.schema())
        changes.append("partitioning")
    order = order_of(metadata.schema(), sort_by)
    if _order_terms(order) != _order_terms(metadata.sort_order()):
        replace = tx.replace_sort_order()
        for f in order.fields:
            column = metadata.schema().column_name(f.source_id)
            key = replace.asc if f.direction.value == "asc" else replace.desc
            key(column, f.null_order, transform=f.transform)
        changes.append("sort-order")
    stale = {k: v for k, v in properties.items() if metadata.properties.get(k) != v}
    if stale:
        tx.set_properties(stale)
        changes.append("properties")
    if tx.updates:
        table = tx.commit().table
    return table, tuple(changes)


def _spec_terms(spec: PartitionSpec) -> list[tuple[int, str]]:
    return sorted(
        (f.source_id, str(f.transform)) for f in spec.fields if str(f.transform) != "void"
    )


def _order_terms(order: SortOrder) -> list[tuple[int, str, str, str]]:
    return [
        (f.source_id, str(f.transform), f.direction.value, f.null_order.value) for f in order.fields
    ]


def _evolve_spec(
    tx: Transaction, current: PartitionSpec, declared: PartitionSpec, schema: Schema
) -> None:
    update = tx.update_spec()
    wanted = set(_spec_terms(declared))
    have = set(_spec_terms(current))
    for f in current.fields:
        if str(f.transform) != "void" and (f.source_id, str(f.transform)) not in wanted:
            update.remove_field(f.name)
    for f in declared.fields:
        if (f.source_id, str(f.transform)) not in have:
            update.add_field(schema.column_name(f.source_id), f.transform, f.name)


def _result(table: Table, timer: Timer, *, created: bool, changes: tuple[str, ...]) -> EnsureResult:
    return EnsureResult.describing(
        table,
        table.metadata.current_snapshot(),
        committed=created or bool(changes),
        timings=timer.done(),
        created=created,
        changes=changes,
    )
