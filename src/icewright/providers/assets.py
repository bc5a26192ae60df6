"""``iceberg://`` Airflow assets: how a DAG declares a table's asset.

One declaration per table (:mod:`icewright.providers.watchers` says why):
:func:`iceberg_asset` is the table's asset, named by its URI
(:func:`~icewright.providers.uris.iceberg_uri`: one per table and connection), carrying
the table's snapshot watcher; :func:`watched_iceberg_asset` is the same asset, or with
options a watched variant of its own.

Airflow reaches :func:`~icewright.providers.uris.sanitize_uri` (the scheme's URI
normalizer), :func:`create_asset` (the factory) and :func:`convert_asset_to_openlineage`
through ``get_provider_info``'s ``asset-uris``. Importing this module imports Airflow's
SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import Asset, AssetWatcher

from icewright.actions.watch import DEFAULT_OPERATIONS
from icewright.catalog.identifier import Identifier
from icewright.errors import ValidationError
from icewright.providers import DEFAULT_CONN_ID
from icewright.providers.uris import SCHEME, iceberg_uri, sanitize_uri, table_of
from icewright.providers.watchers import (
    default_watcher_name,
    table_watcher,
    variant_label,
    watching,
)

__all__ = [
    "DEFAULT_CONN_ID",
    "SCHEME",
    "convert_asset_to_openlineage",
    "create_asset",
    "iceberg_asset",
    "iceberg_uri",
    "sanitize_uri",
    "table_of",
    "watched_iceberg_asset",
]


def iceberg_asset(
    table: str | tuple[str, ...],
    iceberg_conn_id: str = DEFAULT_CONN_ID,
    *,
    extra: dict[str, Any] | None = None,
    watcher_name: str | None = None,
    **asset_kwargs: Any,
) -> Asset:
    """The Airflow ``Asset`` of ``table`` read through the connection ``iceberg_conn_id``
    (the operators' parameter of the same name; an operator refuses an outlet of another
    connection), for an operator's outlets and a DAG's schedule alike.

    Its name is the URI (unique per table and connection), and it carries the table's
    snapshot watcher (:mod:`icewright.providers.watchers`: every declaration of a
    table's asset must be the same, or Airflow drops the watcher's events), so a DAG
    scheduled on it runs once per commit, whoever made it. ``asset_kwargs`` go to
    ``Asset`` (``group``, ...); ``name`` and ``watchers`` are the table's own.
    """
    taken = sorted({"name", "watchers", "uri"} & set(asset_kwargs))
    if taken:
        raise ValidationError(
            f"iceberg_asset sets {', '.join(taken)} itself (one declaration per table); "
            "for a watcher with other options use watched_iceberg_asset(...)"
        )
    uri = iceberg_uri(table, iceberg_conn_id)
    watcher = table_watcher(str(Identifier.parse(table)), iceberg_conn_id, name=watcher_name)
    return Asset(name=uri, uri=uri, extra=extra, watchers=[watcher], **asset_kwargs)


def watched_iceberg_asset(
    table: str,
    iceberg_conn_id: str = DEFAULT_CONN_ID,
    *,
    watcher_name: str | None = None,
    branch: str = "main",
    operations: Sequence[str] | None = DEFAULT_OPERATIONS,
    summary_filters: Mapping[str, str] | None = None,
    min_added_records: int | None = None,
    poll_interval: float | None = None,
    start_from: str = "latest",
) -> Asset:
    """``table``'s asset, watched: a DAG with ``schedule=[watched_iceberg_asset(
    "sales.orders")]`` runs once per new snapshot batch, whoever committed it.

    Without options this is :func:`~icewright.providers.assets.iceberg_asset` itself (the
    table's asset carries the table's watcher everywhere it is declared); an icewright
    operator with it among its outlets announces its own commits and the watcher leaves
    them out, so each commit starts the DAG once. With options (``branch``,
    ``operations``, ``summary_filters``, ``min_added_records``, ``poll_interval`` in
    seconds, ``start_from``: see
    :class:`~icewright.providers.triggers.IcebergSnapshotEventTrigger`), a watched variant
    of its own, whose watcher announces every snapshot passing its filters (module
    docstring); it cannot be an operator's outlet.
    """
    trigger = watching(
        table,
        iceberg_conn_id,
        branch=branch,
        operations=operations,
        summary_filters=summary_filters,
        min_added_records=min_added_records,
        poll_interval=poll_interval,
        start_from=start_from,
    )
    label = variant_label(trigger.serialize()[1])
    if not label:
        return iceberg_asset(table, iceberg_conn_id, watcher_name=watcher_name)
    uri = iceberg_uri(table, iceberg_conn_id)
    watcher = AssetWatcher(
        name=watcher_name or default_watcher_name(table, branch), trigger=trigger
    )
    return Asset(name=f"{uri}#{label}", uri=uri, watchers=[watcher])


def create_asset(
    *,
    table: str | None = None,
    iceberg_conn_id: str = DEFAULT_CONN_ID,
    uri: str | None = None,
    **kw: Any,
) -> Asset:
    """The provider's asset factory: from ``table`` (and ``iceberg_conn_id``) or an
    ``iceberg://`` URI."""
    if uri is not None:
        iceberg_conn_id, table = table_of(uri)
    if table is None:
        raise ValidationError("create_asset needs table= or uri=")
    return iceberg_asset(table, iceberg_conn_id, **kw)


def convert_asset_to_openlineage(asset: Asset, lineage_context: Any) -> Any:
    """The OpenLineage dataset of an iceberg asset (a task's inlet or outlet that reports
    no datasets of its own): the table as the operators name it (its location, with the
    symlink naming it in its catalog: :mod:`icewright.actions.lineage`), read through the
    asset's connection; when the table cannot be read, namespace ``iceberg://<conn>``
    and name ``ns.table``."""
    from airflow.providers.common.compat.openlineage.facet import Dataset

    conn_id, table = table_of(asset)
    try:
        from icewright.providers.hooks import catalog_for
        from icewright.providers.lineage import table_dataset

        return table_dataset(catalog_for(conn_id), table)
    except Exception:  # the table is not there (yet), or its catalog does not answer
        return Dataset(namespace=f"{SCHEME}://{conn_id}", name=table)
