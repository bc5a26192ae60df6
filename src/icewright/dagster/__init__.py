"""icewright for Dagster: Iceberg tables written by Spark, committed by icewright.

>>> # import dagster as dg
>>> # from icewright.dagster import IcebergResource, iceberg_append_asset
>>> # orders = iceberg_append_asset(
>>> #     "sales.orders", "parquet:/landing/orders/{partition_key}/",
>>> #     partitions_def=dg.DailyPartitionsDefinition("2026-01-01"), partition_column="ts")
>>> # defs = dg.Definitions(assets=[orders], resources={"iceberg": IcebergResource()})

* :class:`IcebergResource`: the catalog and where Spark runs (the same configuration as
  the Airflow connection and the command's config file);
* asset factories, one per verb (:mod:`icewright.dagster.assets`), with exactly-once
  commits across step retries and re-executions (:mod:`icewright.dagster.execution`)
  and partitions mapped onto the table (:mod:`icewright.dagster.partitions`);
* :class:`IcebergIOManager`: assets that return a DataFrame or Arrow table, committed
  by icewright, and inputs loaded from their tables (:mod:`icewright.dagster.io_manager`);
* :func:`iceberg_snapshot_sensor` (:mod:`icewright.dagster.sensors`);
* :func:`iceberg_table_checks` (:mod:`icewright.dagster.checks`);
* write-audit-publish: :func:`iceberg_branch_checks` and :func:`iceberg_publish_asset`,
  and :func:`iceberg_refs_job` for rollback, tags and branches by run config
  (:mod:`icewright.dagster.references`);
* :func:`iceberg_maintenance_job` and its schedule (:mod:`icewright.dagster.maintenance`),
  and :func:`iceberg_maintain_job` (policy-driven: :func:`icewright.actions.maintain`);
* :class:`IcewrightComponent`, the same declared in ``defs.yaml``
  (:mod:`icewright.dagster.component`).

Needs the ``dagster`` extra (``pip install 'icewright[dagster]'``).
"""

from __future__ import annotations

try:
    import dagster  # noqa: F401
except ImportError as e:  # pragma: no cover - the extra is missing
    from icewright.errors import MissingDependency

    raise MissingDependency(
        "icewright.dagster needs Dagster: pip install 'icewright[dagster]'"
    ) from e

from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    iceberg_append_asset,
    iceberg_replace_asset,
    iceberg_table_asset,
    iceberg_view_asset,
    table_asset_key,
)
from icewright.dagster.checks import iceberg_table_checks
from icewright.dagster.component import IcewrightComponent
from icewright.dagster.execution import commit_key_for
from icewright.dagster.io_manager import IcebergIOManager, iceberg_io_asset
from icewright.dagster.maintenance import (
    MaintenancePlan,
    iceberg_maintain_job,
    iceberg_maintenance_job,
    iceberg_maintenance_op,
    iceberg_maintenance_schedule,
)
from icewright.dagster.maintenance_assets import (
    iceberg_expire_asset,
    iceberg_remove_orphans_asset,
    iceberg_rewrite_asset,
    iceberg_rewrite_manifests_asset,
)
from icewright.dagster.references import (
    ReferenceChange,
    iceberg_branch_checks,
    iceberg_publish_asset,
    iceberg_refs_job,
)
from icewright.dagster.resource import IcebergResource, SparkConfig
from icewright.dagster.row_assets import iceberg_delete_asset, iceberg_merge_asset
from icewright.dagster.sensors import iceberg_snapshot_sensor

__all__ = [
    "DEFAULT_RESOURCE_KEY",
    "IcebergIOManager",
    "IcebergResource",
    "IcewrightComponent",
    "MaintenancePlan",
    "ReferenceChange",
    "SparkConfig",
    "commit_key_for",
    "iceberg_append_asset",
    "iceberg_branch_checks",
    "iceberg_delete_asset",
    "iceberg_expire_asset",
    "iceberg_io_asset",
    "iceberg_maintain_job",
    "iceberg_maintenance_job",
    "iceberg_maintenance_op",
    "iceberg_maintenance_schedule",
    "iceberg_merge_asset",
    "iceberg_publish_asset",
    "iceberg_refs_job",
    "iceberg_remove_orphans_asset",
    "iceberg_replace_asset",
    "iceberg_rewrite_asset",
    "iceberg_rewrite_manifests_asset",
    "iceberg_snapshot_sensor",
    "iceberg_table_asset",
    "iceberg_table_checks",
    "iceberg_view_asset",
    "table_asset_key",
]
