"""``IcewrightComponent``: Iceberg tables, their sources, checks and maintenance declared
in a ``defs.yaml`` (no Python), the way Dagster's own integrations are configured::

    type: icewright.dagster.IcewrightComponent
    attributes:
      catalog:
        catalog_uri: "{{ env.ICEBERG_CATALOG_URI }}"
        warehouse: s3://lake/warehouse
      spark_master: spark://spark-master:7077
      tables:
        - name: sales.orders
          schema: "order_id long not null, ts timestamptz not null, amount decimal(12,2)"
          partition_by: "day(ts)"
          source: "parquet:/landing/orders/{partition_key}/"
          mode: append                 # append | replace | table (ensure only)
          daily_partitions_start: "2026-01-01"
          partition_column: ts
          checks:
            max_age_seconds: 93600
            max_small_file_share: 0.5
            max_snapshots: 500
      maintenance:
        cron_schedule: "0 3 * * *"

Each table becomes an asset (:mod:`icewright.dagster.assets`; its schema is ensured
before each write), its checks asset checks (:mod:`icewright.dagster.checks`), and
``maintenance`` one job over every table with its schedule
(:mod:`icewright.dagster.maintenance`). The component brings its own
:class:`~icewright.dagster.IcebergResource` under the key ``iceberg``, built from
``catalog`` and ``spark_master``/``spark_conf``; secrets come from the environment
through ``{{ env.NAME }}`` templates.
"""

from __future__ import annotations

from typing import Any, Literal

import dagster as dg
from pydantic import Field

from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    iceberg_append_asset,
    iceberg_replace_asset,
    iceberg_table_asset,
)
from icewright.dagster.checks import iceberg_table_checks
from icewright.dagster.maintenance import iceberg_maintenance_job, iceberg_maintenance_schedule
from icewright.dagster.resource import IcebergResource, SparkConfig

__all__ = ["ChecksModel", "IcewrightComponent", "MaintenanceModel", "TableModel"]


class ChecksModel(dg.Model):
    """Bounds of a table's asset checks (each check only when its bound is given)."""

    max_age_seconds: float | None = None
    max_small_file_share: float | None = None
    small_file_bytes: int | None = None
    max_snapshots: int | None = None
    max_row_change: float | None = None
    schema_matches: bool = Field(default=False, description="check the declared schema")


class TableModel(dg.Model):
    """One table: its declaration, where its rows come from, its partitions and checks."""

    name: str
    table_schema: str | None = Field(default=None, alias="schema")
    partition_by: str | None = None
    sort_by: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    source: str | None = None
    mode: Literal["append", "replace", "table"] = "append"
    where: str | None = None
    daily_partitions_start: str | None = None
    partition_column: str | None = None
    group_name: str | None = None
    checks: ChecksModel | None = None


class MaintenanceModel(dg.Model):
    """The maintenance job over every declared table, and its schedule."""

    cron_schedule: str = "0 3 * * *"
    rewrite_min_input_files: int | None = 5
    expire_retain_last: int | None = None
    expire_older_than: str | None = None
    remove_orphans: bool = True
    running: bool = Field(default=False, description="start the schedule running")


class IcewrightComponent(dg.Component, dg.Model, dg.Resolvable):
    """Iceberg tables written by Spark through icewright, declared in YAML (see the
    module docstring)."""

    catalog: dict[str, Any] = Field(default_factory=dict)
    spark_master: str | None = None
    spark_conf: dict[str, str] = Field(default_factory=dict)
    tables: list[TableModel] = Field(default_factory=list)
    maintenance: MaintenanceModel | None = None

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        """The assets, checks, job and schedule the YAML declares."""
        assets: list[dg.AssetsDefinition] = []
        checks: list[dg.AssetChecksDefinition] = []
        for table in self.tables:
            assets.append(_table_asset(table))
            if table.checks is not None:
                c = table.checks
                checks.extend(
                    iceberg_table_checks(
                        table.name,
                        max_age_seconds=c.max_age_seconds,
                        max_small_file_share=c.max_small_file_share,
                        small_file_bytes=c.small_file_bytes,
                        max_snapshots=c.max_snapshots,
                        max_row_change=c.max_row_change,
                        schema=table.table_schema if c.schema_matches else None,
                    )
                )
        jobs: list[dg.JobDefinition] = []
        schedules: list[dg.ScheduleDefinition] = []
        if self.maintenance is not None and self.tables:
            from icewright.dagster.maintenance import MaintenancePlan

            m = self.maintenance
            plan = MaintenancePlan(
                rewrite_min_input_files=m.rewrite_min_input_files,
                expire_retain_last=m.expire_retain_last,
                expire_older_than=m.expire_older_than,
                remove_orphans=m.remove_orphans,
            )
            job = iceberg_maintenance_job([t.name for t in self.tables], plan=plan)
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
        resource = IcebergResource(
            **self.catalog,
            spark=SparkConfig(master=self.spark_master, conf=dict(self.spark_conf)),
        )
        return dg.Definitions(
            assets=assets,
            asset_checks=checks,
            jobs=jobs,
            schedules=schedules,
            resources={DEFAULT_RESOURCE_KEY: resource},
        )


def _table_asset(table: TableModel) -> dg.AssetsDefinition:
    partitions: dg.PartitionsDefinition[str] | None = None
    if table.daily_partitions_start:
        partitions = dg.DailyPartitionsDefinition(start_date=table.daily_partitions_start)
    options: dict[str, Any] = {"group_name": table.group_name}
    declared: dict[str, Any] = {
        "partition_by": table.partition_by,
        "sort_by": table.sort_by,
        "properties": table.properties or None,
    }
    if table.mode == "table" or table.source is None:
        if table.table_schema is None:
            raise dg.DagsterInvalidDefinitionError(
                f"table {table.name}: give a schema (mode 'table') or a source"
            )
        return iceberg_table_asset(table.name, table.table_schema, **declared, **options)
    factory = iceberg_append_asset if table.mode == "append" else iceberg_replace_asset
    extra: dict[str, Any] = {}
    if table.mode == "replace" and table.where is not None:
        extra["where"] = table.where
    return factory(
        table.name,
        table.source,
        partitions_def=partitions,
        partition_column=table.partition_column if partitions is not None else None,
        schema=table.table_schema,
        **({} if table.table_schema is None else declared),
        **extra,
        **options,
    )
