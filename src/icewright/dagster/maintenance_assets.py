"""Maintenance of a table as assets keyed ``<table key>/<verb>`` of kind ``maintenance``
that depend on the table's asset (operations on the table, not tables: their
materialization metadata name the table as ``icewright/table``):
:func:`iceberg_rewrite_asset`, :func:`iceberg_rewrite_manifests_asset`,
:func:`iceberg_expire_asset`, :func:`iceberg_remove_orphans_asset`. Each step calls one
:mod:`icewright.actions` function, as the table assets do
(:mod:`icewright.dagster.assets`). The usual shape for maintenance is a job on a schedule
(:func:`~icewright.dagster.iceberg_maintenance_job`,
:func:`~icewright.dagster.iceberg_maintain_job`) or its ops in a job of one's own
(:func:`~icewright.dagster.iceberg_maintenance_op`): :mod:`icewright.dagster.maintenance`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import (
    check_expire,
    check_orphans,
    check_rewrite,
    check_rewrite_manifests,
)
from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    AssetStep,
    asset_key_of,
    make_asset,
    table_asset_key,
)

if TYPE_CHECKING:
    from icewright.dagster.resource import IcebergResource

MAINTENANCE_KINDS = frozenset({"maintenance"})
"""The kind of a maintenance asset: the lineage graph shows it as an operation, and only
the table's own asset as an Iceberg table."""

__all__ = [
    "iceberg_expire_asset",
    "iceberg_remove_orphans_asset",
    "iceberg_rewrite_asset",
    "iceberg_rewrite_manifests_asset",
]


def _maintenance_asset(
    verb: str,
    table: str,
    act: Callable[[AssetStep, str | None], Any],
    *,
    commits_snapshot: bool,
    key: dg.AssetKey | str | Sequence[str] | None,
    resource_key: str,
    description: str,
    asset_options: dict[str, Any],
) -> dg.AssetsDefinition:
    table_key = table_asset_key(table)

    def maintain(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions.results import to_jsonable

        step = AssetStep(context, resource)
        commit_key = step.commit_key() if commits_snapshot else None
        result = step.run(lambda: act(step, commit_key))
        payload = to_jsonable(result)
        meta = {
            f"icewright/{k}": v
            for k, v in payload.items()
            if isinstance(v, int | float | str | bool) and k != "table"
        }
        # not dagster/table_name: this asset is an operation on the table, not the table
        meta["icewright/table"] = table
        context.log.info(f"{table}: {verb} done: {meta}")
        return dg.MaterializeResult(metadata=meta)

    options = dict(asset_options)
    deps = [table_key, *list(options.pop("deps", None) or ())]
    return make_asset(
        key=asset_key_of(key, dg.AssetKey([*table_key.path, verb])),
        fn=maintain,
        resource_key=resource_key,
        default_description=f"Maintenance of {table}, not a table: {description}",
        deps=deps,
        kinds=options.pop("kinds", None) or MAINTENANCE_KINDS,
        **options,
    )


def iceberg_rewrite_asset(
    table: str,
    *,
    where: str | None = None,
    target_file_size: int | None = None,
    min_input_files: int = 5,
    sort: bool = False,
    partial_progress_max_commits: int | None = None,
    distributed: bool | None = None,
    deletes_only: bool = False,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset (``<table key>/rewrite``) that compacts ``table``'s data files, or with
    ``deletes_only`` its position delete files (:func:`icewright.actions.rewrite`;
    arguments as there)."""
    check_rewrite(min_input_files, target_file_size, partial_progress_max_commits, where)

    def act(step: AssetStep, commit_key: str | None) -> Any:
        from icewright.actions import rewrite

        return rewrite(
            table,
            catalog=step.catalog,
            where=where,
            target_file_size=target_file_size,
            min_input_files=min_input_files,
            sort=sort,
            partial_progress_max_commits=partial_progress_max_commits,
            commit_key=commit_key,
            runner=step.runner,
            distributed=distributed,
            deletes_only=deletes_only,
        )

    return _maintenance_asset(
        "rewrite",
        table,
        act,
        commits_snapshot=True,
        key=key,
        resource_key=resource_key,
        description=f"compaction of {table}'s small "
        f"{'position delete' if deletes_only else 'data'} files.",
        asset_options=asset_options,
    )


def iceberg_rewrite_manifests_asset(
    table: str,
    *,
    spec_id: int | None = None,
    target_size_bytes: int | None = None,
    distributed: bool | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset (``<table key>/rewrite_manifests``) that clusters ``table``'s data
    manifests by partition (:func:`icewright.actions.rewrite_manifests`; arguments as
    there), committed once per run like the other snapshot-producing assets."""
    check_rewrite_manifests(spec_id, target_size_bytes)

    def act(step: AssetStep, commit_key: str | None) -> Any:
        from icewright.actions import rewrite_manifests

        return rewrite_manifests(
            table,
            catalog=step.catalog,
            spec_id=spec_id,
            target_size_bytes=target_size_bytes,
            commit_key=commit_key,
            distributed=distributed,
            runner=step.runner,
        )

    return _maintenance_asset(
        "rewrite_manifests",
        table,
        act,
        commits_snapshot=True,
        key=key,
        resource_key=resource_key,
        description=f"manifest rewrite of {table} (clustered by partition).",
        asset_options=asset_options,
    )


def iceberg_expire_asset(
    table: str,
    *,
    older_than: str | int | None = None,
    retain_last: int | None = None,
    distributed: bool | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset (``<table key>/expire``) that expires ``table``'s old snapshots and deletes
    the files only they reached (:func:`icewright.actions.expire`; ``distributed`` as
    there)."""
    check_expire(older_than, retain_last)

    def act(step: AssetStep, commit_key: str | None) -> Any:
        from icewright.actions import expire

        return expire(
            table,
            catalog=step.catalog,
            older_than=older_than,
            retain_last=retain_last,
            distributed=distributed,
            runner=step.runner,
        )

    return _maintenance_asset(
        "expire",
        table,
        act,
        commits_snapshot=False,
        key=key,
        resource_key=resource_key,
        description=f"snapshot expiry of {table}.",
        asset_options=asset_options,
    )


def iceberg_remove_orphans_asset(
    table: str,
    *,
    older_than: str | int | None = None,
    distributed: bool | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset (``<table key>/remove_orphans``) that deletes files under ``table``'s
    location that no metadata references (:func:`icewright.actions.remove_orphan_files`;
    ``older_than`` defaults to three days ago; ``distributed`` as there)."""
    check_orphans(older_than)

    def act(step: AssetStep, commit_key: str | None) -> Any:
        from icewright.actions import remove_orphan_files

        return remove_orphan_files(
            table,
            catalog=step.catalog,
            older_than=older_than,
            distributed=distributed,
            runner=step.runner,
        )

    return _maintenance_asset(
        "remove_orphans",
        table,
        act,
        commits_snapshot=False,
        key=key,
        resource_key=resource_key,
        description=f"orphan file removal under {table}'s location.",
        asset_options=asset_options,
    )
