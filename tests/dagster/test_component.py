"""The component: tables, checks and maintenance declared in ``defs.yaml`` become
assets, asset checks, a job and a schedule that materialize for real."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster.components.testing.utils import component_defs

from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergResource, IcewrightComponent
from icewright.errors import ValidationError

DEFS_YAML = """\
type: icewright.dagster.IcewrightComponent
attributes:
  catalog:
    kind: sql
    uri: "sqlite:///{home}/catalog.db"
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


def _load(attributes: str) -> dg.Definitions:
    """The definitions of a component whose ``attributes`` are this YAML."""
    return component_defs(component=IcewrightComponent.resolve_from_yaml(attributes))


TABLE = """
tables:
  - name: sales.orders
    schema: "id long not null, region string, ts timestamptz not null"
    source: "sql:SELECT 1"
"""


def test_every_partitions_kind_and_the_asset_attributes() -> None:
    defs = _load(
        """
catalog: {}
tables:
  - name: sales.orders
    schema: "id long not null, region string, ts timestamptz not null"
    source: "sql:SELECT 1"
    partitions:
      type: multi
      dimensions:
        date: {type: daily, start_date: "2026-01-01"}
        region: {type: static, keys: [emea, us]}
    partition_columns: {date: ts, region: region}
    key: lake/orders
    deps: [landing/orders, sales.customers]
    owners: ["team:sales"]
    tags: {tier: gold}
    automation_condition: "{{ dg.AutomationCondition.eager() }}"
    freshness_policy: {fail_window: 26h, warn_window: 24h}
    checks: {max_snapshots: 5}
  - name: sales.hourly
    schema: "id long not null, ts timestamp"
    source: "sql:SELECT 1"
    partitions: {type: hourly, start_date: "2026-01-01-00:00"}
    partition_column: ts
    freshness_policy: {deadline_cron: "0 9 * * *", lower_bound_delta: 6h}
  - name: sales.by_region
    schema: "id long not null, region string"
    source: "sql:SELECT 1"
    mode: replace
    partitions: {type: static, keys: [emea, us]}
    partition_column: region
  - name: sales.batches
    schema: "id long not null, batch string"
    source: "sql:SELECT 1"
    partitions: {type: dynamic, name: batches}
    partition_column: batch
"""
    )
    graph = defs.get_repository_def().asset_graph
    orders = graph.get(dg.AssetKey(["lake", "orders"]))
    assert isinstance(orders.partitions_def, dg.MultiPartitionsDefinition)
    assert orders.owners == ["team:sales"] and orders.tags["tier"] == "gold"
    assert set(orders.parent_keys) == {
        dg.AssetKey(["landing", "orders"]),
        dg.AssetKey(["sales", "customers"]),
    }
    assert orders.automation_condition is not None
    assert orders.automation_condition.get_label() == "eager"
    assert orders.freshness_policy == dg.FreshnessPolicy.time_window(
        fail_window=dt.timedelta(hours=26), warn_window=dt.timedelta(hours=24)
    )
    checks = {k.name for k in graph.asset_check_keys if k.asset_key == orders.key}
    assert checks == {"iceberg_snapshot_count"}
    hourly = graph.get(dg.AssetKey(["sales", "hourly"]))
    assert isinstance(hourly.partitions_def, dg.HourlyPartitionsDefinition)
    assert hourly.freshness_policy == dg.FreshnessPolicy.cron(
        deadline_cron="0 9 * * *", lower_bound_delta=dt.timedelta(hours=6)
    )
    by_region = graph.get(dg.AssetKey(["sales", "by_region"]))
    assert isinstance(by_region.partitions_def, dg.StaticPartitionsDefinition)
    batches = graph.get(dg.AssetKey(["sales", "batches"]))
    assert isinstance(batches.partitions_def, dg.DynamicPartitionsDefinition)
    assert batches.partitions_def.name == "batches"


BAD_BLOCKS = [
    ("no schema or source", "tables: [{name: sales.t}]", "give a schema (mode table) or a source"),
    (
        "append without source",
        "tables: [{name: sales.t, schema: 'id long'}]",
        "mode append writes a source",
    ),
    (
        "unmapped dimension",
        TABLE
        + """    partitions:
      type: multi
      dimensions:
        date: {type: daily, start_date: "2026-01-01"}
        region: {type: static, keys: [emea, us]}
    partition_columns: {date: ts}
""",
        "partition_columns names ['date'] but the dimensions are",
    ),
    (
        "static without keys",
        TABLE + "    partitions: {type: static}\n    partition_column: region\n",
        "static partitions need keys",
    ),
    (
        "one dimension of a multi",
        TABLE + "    partitions: {type: multi, dimensions: {d: {type: static, keys: [a]}}}\n",
        "multi partitions take two dimensions",
    ),
    (
        "freshness without a window",
        TABLE + "    freshness_policy: {warn_window: 1h}\n",
        "give fail_window",
    ),
    ("freshness duration", TABLE + "    freshness_policy: {fail_window: soon}\n", "30m, 26h"),
    ("window under a minute", TABLE + "    freshness_policy: {fail_window: 10s}\n", "1 minute"),
    ("rest without uri", "catalog: {kind: rest}", "catalog kind rest needs a uri"),
    (
        "rest block, sql kind",
        "catalog: {kind: sql, uri: 'sqlite:///x.db', rest: {token: t}}",
        "set kind: rest",
    ),
    ("resource key", "resource_key: my-lake", "resource_key names"),
    ("spark without catalog", "spark_master: 'local[2]'", "give a catalog block too"),
]


@pytest.mark.parametrize(
    ("attributes", "message"),
    [pytest.param(a, m, id=name) for name, a, m in BAD_BLOCKS],
)
def test_a_bad_block_fails_at_load_in_one_line(attributes: str, message: str) -> None:
    with pytest.raises(ValidationError) as e:
        _load(attributes)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_two_instances_and_the_projects_resource_merge(tmp_path: Path) -> None:
    """Each component brings the resource of its own key (or none): they merge with each
    other and with the project's own ``iceberg`` resource; two bringing one key do not."""
    sales = _load(
        f"""
resource_key: sales_lake
catalog: {{kind: sql, uri: "sqlite:///{tmp_path}/sales.db", warehouse: "{tmp_path}/sales"}}
tables: [{{name: sales.orders, mode: table, schema: "id long"}}]
maintenance: {{}}
"""
    )
    finance = _load(
        f"""
resource_key: finance_lake
catalog: {{kind: sql, uri: "sqlite:///{tmp_path}/fin.db", warehouse: "{tmp_path}/fin"}}
tables: [{{name: finance.ledger, mode: table, schema: "id long"}}]
maintenance: {{}}
"""
    )
    shared = _load('tables: [{name: shared.pages, mode: table, schema: "page string"}]')
    assert not shared.resources
    project = dg.Definitions(resources={"iceberg": IcebergResource()})
    merged = dg.Definitions.merge(sales, finance, shared, project)
    repo = merged.get_repository_def()
    assert sorted(merged.resources or {}) == ["finance_lake", "iceberg", "sales_lake"]
    assert {j.name for j in repo.get_all_jobs()} >= {
        "iceberg_maintenance_sales_lake",
        "iceberg_maintenance_finance_lake",
    }
    ledger = repo.assets_defs_by_key[dg.AssetKey(["finance", "ledger"])]
    assert "finance_lake" in ledger.required_resource_keys
    pages = repo.assets_defs_by_key[dg.AssetKey(["shared", "pages"])]
    assert "iceberg" in pages.required_resource_keys

    again = _load(
        f"""
resource_key: sales_lake
catalog: {{uri: "sqlite:///{tmp_path}/other.db"}}
tables: [{{name: sales.more, mode: table, schema: "id long"}}]
"""
    )
    with pytest.raises(dg.DagsterInvariantViolationError, match="sales_lake"):
        dg.Definitions.merge(sales, again)
