"""Asset factories of the row-level verbs: :func:`iceberg_merge_asset` (upsert a change
feed by key) and :func:`iceberg_delete_asset` (delete rows by predicate).

As for the other write assets (:mod:`icewright.dagster.assets`): one action per step
with the resource's catalog and runner, the run's commit key (step retries and
re-executions commit at most once), the snapshot as materialization metadata. A
partitioned merge asset merges its partition's source: the source (and a delete's
``where``) takes the ``{partition_key}``-style placeholders of the run; the merge itself
is by key, over the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import check_declaration, check_source, check_where
from icewright.actions.merge import parse_assignments, parse_columns
from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    AssetStep,
    OnResult,
    asset_key_of,
    make_asset,
    table_asset_key,
)
from icewright.dagster.execution import definition_metadata
from icewright.dagster.partitions import PartitionMapping, fill_template
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.actions.results import RowChangeResult
    from icewright.commit.table_ops import OrderLike, SpecLike
    from icewright.dagster.resource import IcebergResource
    from icewright.spec.schema import Schema

__all__ = ["iceberg_delete_asset", "iceberg_merge_asset"]

_MODES = (None, "copy-on-write", "merge-on-read")


def iceberg_merge_asset(
    table: str,
    source: str,
    *,
    on: str | Sequence[str],
    delete_when: str | None = None,
    update_set: str | None = None,
    only_insert: bool = False,
    only_update: bool = False,
    dedupe_by: str | None = None,
    mode: str | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    branch: str = "main",
    schema: Schema | Mapping[str, Any] | str | None = None,
    partition_by: SpecLike | str = None,
    sort_by: OrderLike | str = None,
    properties: Mapping[str, str] | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    on_result: OnResult | None = None,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that merges ``source`` into ``table`` by the key columns ``on`` in one
    snapshot per run (:func:`icewright.actions.merge`: updates, inserts, and deletes
    where ``delete_when`` holds; ``dedupe_by`` for a change feed that repeats keys).
    With ``partitions_def`` a run merges the source its partition names (placeholders
    such as ``{partition_key}`` or ``{start}`` in ``source``). ``schema`` (with
    ``partition_by``, ``sort_by``, ``properties``, e.g. ``write.merge.mode``) declares the
    table, which is then created or evolved before the merge. The step's result metadata
    adds the rows inserted, updated and deleted."""
    keys = parse_columns(on, "on")
    declared = check_declaration(schema, partition_by, sort_by, properties)
    if update_set is not None:
        parse_assignments(update_set)
    if mode not in _MODES:
        raise ValidationError(f"mode must be copy-on-write or merge-on-read, got {mode!r}")
    check_source(source, paths_exist=False)
    partitions = PartitionMapping.for_templates(partitions_def)

    def run_merge(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import merge

        step = AssetStep(context, resource, partitions=partitions)
        values = step.template_values()
        commit_key = step.commit_key()

        def act() -> RowChangeResult:
            if declared is not None:
                from icewright.actions import ensure_table

                ensure_table(table, catalog=step.catalog, **declared.as_kwargs())
            return merge(
                table,
                str(fill_template(source, values)),
                on=keys,
                catalog=step.catalog,
                delete_when=delete_when,
                update_set=update_set,
                only_insert=only_insert,
                only_update=only_update,
                dedupe_by=dedupe_by,
                mode=mode,  # type: ignore[arg-type]
                branch=branch,
                commit_key=commit_key,
                runner=step.runner,
            )

        result = step.run(act)
        return _with_rows(step.materialized(result, table, on_result), result)

    return make_asset(
        key=asset_key_of(key, table_asset_key(table)),
        fn=run_merge,
        resource_key=resource_key,
        default_description=(
            f"The Iceberg table {table}, merged from {source} by {', '.join(keys)}."
        ),
        partitions_def=partitions_def,
        table_metadata=definition_metadata(table, None if declared is None else declared.schema),
        **asset_options,
    )


def iceberg_delete_asset(
    table: str,
    where: str,
    *,
    mode: str | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    branch: str = "main",
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    on_result: OnResult | None = None,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that deletes the rows of ``table`` for which ``where`` is true
    (:func:`icewright.actions.delete`), keyed ``<table key>/delete`` and depending on the
    table's asset. ``where`` may use the run's partition placeholders."""
    check_where(where)
    if mode not in _MODES:
        raise ValidationError(f"mode must be copy-on-write or merge-on-read, got {mode!r}")
    table_key = table_asset_key(table)
    partitions = PartitionMapping.for_templates(partitions_def)

    def run_delete(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import delete

        step = AssetStep(context, resource, partitions=partitions)
        values = step.template_values()
        commit_key = step.commit_key()

        def act() -> RowChangeResult:
            return delete(
                table,
                str(fill_template(where, values)),
                catalog=step.catalog,
                mode=mode,  # type: ignore[arg-type]
                branch=branch,
                commit_key=commit_key,
                runner=step.runner,
            )

        result = step.run(act)
        return _with_rows(step.materialized(result, table, on_result), result)

    options = dict(asset_options)
    options["deps"] = [table_key, *(options.get("deps") or ())]
    return make_asset(
        key=asset_key_of(key, dg.AssetKey([*table_key.path, "delete"])),
        fn=run_delete,
        resource_key=resource_key,
        default_description=f"Deletes the rows of the Iceberg table {table} where {where}.",
        partitions_def=partitions_def,
        **options,
    )


def _with_rows(
    materialized: dg.MaterializeResult[Any], result: RowChangeResult
) -> dg.MaterializeResult[Any]:
    rows: Mapping[str, Any] = {
        "icewright/mode": result.mode,
        "icewright/rows_inserted": result.rows_inserted,
        "icewright/rows_updated": result.rows_updated,
        "icewright/rows_deleted": result.rows_deleted,
        "icewright/delete_files_added": result.delete_files_added,
    }
    return dg.MaterializeResult(
        metadata={**(materialized.metadata or {}), **rows},
        data_version=materialized.data_version,
    )
