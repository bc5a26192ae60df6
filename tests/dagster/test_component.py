"""The component: tables, checks and maintenance declared in ``defs.yaml`` become
assets, asset checks, a job and a schedule that materialize for real."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import yaml
from dagster.components.testing.utils import component_defs

from icewright.catalog import SqlCatalog
from icewright.dagster import IcewrightComponent

DEFS_YAML = """\
type: icewright.dagster.IcewrightComponent
attributes:
  catalog:
    catalog_uri: "sqlite:///{home}/catalog.db"
    warehouse: "{home}/warehouse"
  tables:
    - name: sales.clicks
      schema: "id long not null, ts timestamptz not null, page string"
      partition_by: "day(ts)"
      source: >-
        sql:SELECT CAST(id AS BIGINT) AS id,
        timestamp_seconds(unix_seconds(TIMESTAMP '{{start}}') + id * 60) AS ts,
        'home' AS page FROM range(30)
      daily_partitions_start: "2026-01-01"
      partition_column: ts
      checks:
        max_snapshots: 10
        schema_matches: true
    - name: sales.pages
      mode: table
      schema: "page string not null, title string"
  maintenance:
    cron_schedule: "0 4 * * *"
    expire_retain_last: 3
"""


def _component(home: Path) -> IcewrightComponent:
    """The component ``defs.yaml`` declares, loaded the way Dagster loads it: the
    ``type`` imported by name, the ``attributes`` resolved by the component's model."""
    import importlib

    document = yaml.safe_load(DEFS_YAML.format(home=home))
    module, _, name = document["type"].rpartition(".")
    kind = getattr(importlib.import_module(module), name)
    assert kind is IcewrightComponent
    component = kind.from_attributes_dict(attributes=document["attributes"])
    assert isinstance(component, IcewrightComponent)
    return component


def test_component_builds_and_materializes(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    SqlCatalog(
        "icewright", f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "warehouse")
    ).create_namespace("sales")
    component = _component(tmp_path)
    defs = component_defs(component=component)
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert keys == {"sales/clicks", "sales/pages"}
    assert {s.name for s in repo.schedule_defs} == {"iceberg_maintenance_schedule"}
    assert repo.get_schedule_def("iceberg_maintenance_schedule").cron_schedule == "0 4 * * *"

    clicks = defs.resolve_job_def("__ASSET_JOB")
    result = clicks.execute_in_process(
        instance=instance,
        partition_key="2026-01-07",
        asset_selection=[dg.AssetKey(["sales", "clicks"])],
    )
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"iceberg_snapshot_count": True, "iceberg_schema": True}

    catalog = SqlCatalog("icewright", f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "wh"))
    snapshot = catalog.load_table("sales.clicks").metadata.current_snapshot()
    assert snapshot is not None and snapshot.summary["added-records"] == "30"

    pages = clicks.execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey(["sales", "pages"])]
    )
    assert pages.success
    assert catalog.load_table("sales.pages").metadata.current_snapshot() is None

    maintenance = defs.resolve_job_def("iceberg_maintenance")
    done = maintenance.execute_in_process(instance=instance)
    assert done.success
    out = done.output_for_node("maintain_sales_clicks")
    assert out["table"] == "sales.clicks" and "expire" in out and "remove_orphans" in out
    assert out["remove_orphans"]["listed"] > 0
