"""The Airflow side of watching a table for new snapshots: the catalog a connection names.

The orchestrator-neutral core (:class:`~icewright.actions.watch.SnapshotWatch`,
:class:`~icewright.actions.watch.SnapshotFilter`, :class:`~icewright.actions.watch.Watermark`,
:func:`~icewright.actions.watch.new_snapshots`, :func:`~icewright.actions.watch.snapshot_record`)
lives in :mod:`icewright.actions.watch`; the sensor and the triggers import it from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from icewright.catalog import Catalog

__all__ = ["catalog_for"]


def catalog_for(iceberg_conn_id: str | None) -> Catalog:
    """The catalog an Airflow connection id names; None: the embedded default catalog.

    The connection is read through :class:`icewright.providers.hooks.IcebergHook` (which
    also gives the embedded default for the default connection id when no such
    connection exists).
    """
    if iceberg_conn_id is None:
        from icewright.catalog import default_catalog

        return default_catalog()
    from icewright.providers.hooks import IcebergHook

    return IcebergHook(iceberg_conn_id=iceberg_conn_id).get_catalog()
