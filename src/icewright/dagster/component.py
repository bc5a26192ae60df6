"""``IcewrightComponent``: Iceberg tables, their sources, checks and maintenance declared
in a ``defs.yaml`` (no Python), the way Dagster's own integrations are configured::

    type: icewright.dagster.IcewrightComponent
    attributes:
      resource_key: iceberg            # the resource the assets take (default iceberg)
      catalog:                         # omit it to use the project's own resource
        kind: sql                      # sql | filesystem | glue | rest (default: from uri)
        uri: "{{ env.ICEBERG_CATALOG_URI }}"
        warehouse: s3://lake/warehouse
        s3: {region: eu-west-1, access_key_id: "{{ env.AWS_ACCESS_KEY_ID }}"}
      spark_master: spark://spark-master:7077
      tables:
        - name: sales.orders
          schema: "order_id long not null, region string, ts timestamptz not null"
          partition_by: "day(ts)"
          source: "parquet:/landing/orders/{partition_key}/"
          mode: append                 # append | replace | table (ensure only)
          partitions:                  # hourly|daily|weekly|monthly, static, dynamic, multi
            type: multi
            dimensions:
              date: {type: daily, start_date: "2026-01-01"}
              region: {type: static, keys: [emea, us]}
          partition_columns: {date: ts, region: region}   # partition_column: one dimension
          key: sales/orders            # default: the name's parts
          deps: [landing/orders]
          owners: ["team:sales"]
          tags: {tier: gold}
          automation_condition: "{{ dg.AutomationCondition.eager() }}"
          freshness_policy: {fail_window: 26h, warn_window: 24h}
          checks:
            max_small_file_share: 0.5
            max_snapshots: 500
      maintenance:
        cron_schedule: "0 3 * * *"

Each table becomes an asset (:mod:`icewright.dagster.assets`; its schema is ensured
before each write), its checks asset checks (:mod:`icewright.dagster.checks`), and
``maintenance`` one job over every table with its schedule
(:mod:`icewright.dagster.maintenance`). The blocks are typed
(:mod:`icewright.dagster.component_models`).

With a ``catalog`` block the component brings its own
:class:`~icewright.dagster.IcebergResource` under ``resource_key``, built from it and
``spark_master``/``spark_conf`` (secrets from the environment through
``{{ env.NAME }}`` templates); without one it brings none, and the assets use the
project's resource of that key. Components merge into one ``Definitions`` when each
key is given by one of them only: two lakes under two keys, or one resource of the
project's and any number of components without a catalog block.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from pydantic import Field

from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    iceberg_append_asset,
    iceberg_replace_asset,
    iceberg_table_asset,
    table_asset_key,
)
from icewright.dagster.checks import iceberg_table_checks
from icewright.dagster.component_models import (
    CatalogModel,
    ChecksModel,
    FreshnessModel,
    MaintenanceModel,
    PartitionsModel,
    TableModel,
)
from icewright.dagster.execution import check_resource_key
from icewright.dagster.maintenance import (
    MaintenancePlan,
    iceberg_maintenance_job,
    iceberg_maintenance_schedule,
)
from icewright.dagster.resource import SparkConfig
from icewright.errors import ValidationError

__all__ = [
    "CatalogModel",
    "ChecksModel",
    "FreshnessModel",
    "IcewrightComponent",
    "MaintenanceModel",
    "PartitionsModel",
    "TableModel",
]


class IcewrightComponent(dg.Component, dg.Model, dg.Resolvable):
    """Iceberg tables written by Spark through icewright, declared in YAML (see the
    module docstring)."""

    resource_key: str = DEFAULT_RESOURCE_KEY
    catalog: CatalogModel | None = None
    spark_master: str | None = None
    spark_conf: dict[str, str] = Field(default_factory=dict)
    tables: list[TableModel] = Field(default_factory=list)
    maintenance: MaintenanceModel | None = None

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        """The assets, checks, job and schedule the YAML declares, and the resource of
        the catalog block."""
        check_resource_key(self.resource_key)
        key = self.resource_key
        assets: list[dg.AssetsDefinition] = []
        checks: list[dg.AssetChecksDefinition] = []
        for table in self.tables:
            asset = _table_asset(table, key)
            assets.append(asset)
            if table.checks is not None:
                checks.extend(_checks(table, table.checks, asset.key, key))
        jobs: list[dg.JobDefinition] = []
        schedules: list[dg.ScheduleDefinition] = []
        if self.maintenance is not None and self.tables:
            m = self.maintenance
            plan = MaintenancePlan(
                rewrite_min_input_files=m.rewrite_min_input_files,
                expire_retain_last=m.expire_retain_last,
                expire_older_than=m.expire_older_than,
                remove_orphans=m.remove_orphans,
            )
            default_name = "iceberg_maintenance" + (
                "" if key == DEFAULT_RESOURCE_KEY else f"_{key}"
            )
            job = iceberg_maintenance_job(
                [t.name for t in self.tables],
                plan=plan,
                name=m.name or default_name,
                resource_key=key,
            )
            jobs.append(job)
            schedules.append(
                iceberg_maintenance_schedule(
                    job,
                    cron_schedule=m.cron_schedule,
                    default_status=dg.DefaultScheduleStatus.RUNNING
                    if m.running
                    else dg.DefaultScheduleStatus.STOPPED,
                )
            )
        resources: dict[str, Any] = {}
        spark = SparkConfig(master=self.spark_master, conf=dict(self.spark_conf))
        if self.catalog is not None:
            resources[key] = self.catalog.resource(spark)
        elif self.spark_master or self.spark_conf:
            raise ValidationError(
                "spark_master and spark_conf configure the resource the component brings: "
                "give a catalog block too, or set them on the project's own resource"
            )
        return dg.Definitions(
            assets=assets,
            asset_checks=checks,
            jobs=jobs,
            schedules=schedules,
            resources=resources,
        )


def _checks(
    table: TableModel, c: ChecksModel, asset_key: dg.AssetKey, resource_key: str
) -> list[dg.AssetChecksDefinition]:
    return iceberg_table_checks(
        table.name,
        asset_key=asset_key,
        max_age_seconds=c.max_age_seconds,
        max_small_file_share=c.max_small_file_share,
        small_file_bytes=c.small_file_bytes,
        max_snapshots=c.max_snapshots,
        max_row_change=c.max_row_change,
        max_delete_file_ratio=c.max_delete_file_ratio,
        schema=table.table_schema if c.schema_matches else None,
        resource_key=resource_key,
    )


def _dep_key(dep: str) -> dg.AssetKey:
    """``a/b`` is an asset key, ``a.b`` a table's name (its asset key ``a/b``)."""
    return dg.AssetKey.from_user_string(dep) if "/" in dep else table_asset_key(dep)


def _table_asset(table: TableModel, resource_key: str) -> dg.AssetsDefinition:
    where = f"table {table.name}"
    if table.partitions is not None and table.daily_partitions_start:
        raise ValidationError(f"{where}: give partitions or daily_partitions_start, not both")
    partitions: dg.PartitionsDefinition[str] | None = None
    if table.partitions is not None:
        partitions = table.partitions.definition(f"{where}: partitions")
    elif table.daily_partitions_start:
        partitions = PartitionsModel(
            type="daily", start_date=table.daily_partitions_start
        ).definition(f"{where}: daily_partitions_start")
    options: dict[str, Any] = {
        "key": table.key,
        "resource_key": resource_key,
        "group_name": table.group_name,
        "description": table.description,
        "deps": [_dep_key(d) for d in table.deps] or None,
        "owners": list(table.owners) or None,
        "tags": dict(table.tags) or None,
        "automation_condition": table.automation_condition,
        "freshness_policy": None
        if table.freshness_policy is None
        else table.freshness_policy.policy(f"{where}: freshness_policy"),
    }
    declared: dict[str, Any] = {
        "partition_by": table.partition_by,
        "sort_by": table.sort_by,
        "properties": table.properties or None,
    }
    try:
        if table.mode == "table" or table.source is None:
            if table.table_schema is None:
                raise ValidationError("give a schema (mode table) or a source")
            if partitions is not None or table.mode != "table":
                raise ValidationError(
                    f"mode {table.mode} writes a source: give source (or mode: table, "
                    "without partitions, to only ensure the table)"
                )
            return iceberg_table_asset(table.name, table.table_schema, **declared, **options)
        factory = iceberg_append_asset if table.mode == "append" else iceberg_replace_asset
        extra: dict[str, Any] = {}
        if table.mode == "replace" and table.where is not None:
            extra["where"] = table.where
        elif table.where is not None:
            raise ValidationError("where is for mode replace")
        return factory(
            table.name,
            table.source,
            partitions_def=partitions,
            partition_column=table.partition_column,
            partition_columns=table.partition_columns,
            schema=table.table_schema,
            **({} if table.table_schema is None else declared),
            **extra,
            **options,
        )
    except ValidationError as e:
        raise ValidationError(f"{where}: {e}") from None
