"""Policy-driven maintenance in Dagster (``iceberg_maintain_job`` on a real instance) and
the health figures the table checks carry (the names ``icewright health`` prints)."""

from __future__ import annotations

import dagster as dg
import pytest

from icewright.actions import health_figures, table_health
from icewright.catalog import SqlCatalog
from icewright.dagster import (
    IcebergResource,
    iceberg_maintain_job,
    iceberg_maintenance_schedule,
    iceberg_table_checks,
)
from icewright.errors import ValidationError
from tests.actions.test_maintain_plan import NEVER_COMPACT, _appends, _table


def test_the_maintain_job_decides_per_table_and_reports(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _appends(_table(catalog, "sales.orders", **NEVER_COMPACT), 12, days=2)
    _appends(_table(catalog, "sales.few", **NEVER_COMPACT), 2)
    job = iceberg_maintain_job(["sales.orders", "sales.few"])
    schedule = iceberg_maintenance_schedule(job, cron_schedule="0 4 * * *")
    assert schedule.job_name == "iceberg_maintain" and schedule.cron_schedule == "0 4 * * *"
    result = job.execute_in_process(resources={"iceberg": lake}, instance=instance)
    assert result.success
    output = next(
        e
        for e in result.all_events
        if e.is_successful_output and e.step_key == "maintain_sales_orders"
    )
    meta = output.event_specific_data.metadata  # type: ignore[union-attr]
    assert meta["rewrite_manifests/manifests_replaced"].value == 12
    assert meta["before/data_manifests"].value == 12 and meta["after/data_manifests"].value == 1
    assert meta["rewrite_manifests"].value.startswith("ran: small-manifest share 100.0%")
    few = result.output_for_node("maintain_sales_few")["tables"][0]
    assert "fewer than 10" in few["steps"][1]["reason"]
    again = job.execute_in_process(resources={"iceberg": lake}, instance=instance)
    docs = [
        again.output_for_node(n)["tables"][0]
        for n in ("maintain_sales_orders", "maintain_sales_few")
    ]
    assert not any(d["changed"] for d in docs)
    over_namespace = iceberg_maintain_job(namespace="sales", name="ns", dry_run=True)
    out = over_namespace.execute_in_process(resources={"iceberg": lake}, instance=instance)
    assert [d["table"] for d in out.output_for_node("maintain_sales")["tables"]] == [
        "sales.few",
        "sales.orders",
    ]
    with pytest.raises(ValidationError):
        iceberg_maintain_job(["a.b"], namespace="a")


@dg.asset(key=["sales", "orders"])
def orders() -> None:
    """Stands for the table's asset."""


def test_checks_carry_the_health_figures(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _appends(_table(catalog, "sales.orders", **NEVER_COMPACT), 3)
    checks = iceberg_table_checks("sales.orders", max_snapshots=10)
    result = dg.materialize(
        [orders, *checks],
        resources={"iceberg": lake},
        instance=instance,
        selection=dg.AssetSelection.checks(*checks),
    )
    (evaluation,) = result.get_asset_check_evaluations()
    expected = health_figures(table_health("sales.orders", catalog=catalog))
    for name in ("data_files", "data_manifests", "manifests_per_partition", "snapshots"):
        assert evaluation.metadata[f"icewright/{name}"].value == expected[name], name
