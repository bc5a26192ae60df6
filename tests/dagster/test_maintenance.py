"""Manifest rewriting in Dagster: the ``<table>/rewrite_manifests`` asset and the
maintenance job's step, on a real instance; what they commit read back by pyiceberg."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.dagster import (
    IcebergResource,
    MaintenancePlan,
    iceberg_maintenance_job,
    iceberg_maintenance_op,
    iceberg_rewrite_manifests_asset,
)
from icewright.errors import ValidationError
from icewright.manifest.manifest_list import read_manifest_list
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

TABLE = "sales.events"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "tag", StringType())
)


def _pyiceberg_ids(lake: IcebergResource) -> list[int]:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    props = lake.catalog_properties()
    warehouse = f"file://{Path(props['warehouse']).resolve()}"
    table = PySqlCatalog("icewright", uri=props["uri"], warehouse=warehouse).load_table(TABLE)
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _appended(lake: IcebergResource, appends: int) -> Table:
    """``appends`` pyiceberg appends of three rows each (a manifest each)."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    lake.get_catalog().create_table(
        TABLE, SCHEMA, build_partition_spec(SCHEMA, [("identity", "tag")])
    )
    props = lake.catalog_properties()
    warehouse = f"file://{Path(props['warehouse']).resolve()}"
    theirs = PySqlCatalog("icewright", uri=props["uri"], warehouse=warehouse).load_table(TABLE)
    for k in range(appends):
        rows = [{"id": 3 * k + i, "tag": ("a", "b", "c")[i]} for i in range(3)]
        theirs.append(pa.Table.from_pylist(rows, schema=theirs.schema().as_arrow()))
    return lake.get_catalog().load_table(TABLE)


def _manifest_count(table: Table) -> int:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return len(read_manifest_list(table.io.read(snap.manifest_list)))


def test_the_asset_rewrites_manifests(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    table = _appended(lake, 4)
    ids = _pyiceberg_ids(lake)
    assert _manifest_count(table) == 4
    asset = iceberg_rewrite_manifests_asset(TABLE)
    assert asset.key.to_user_string() == "sales/events/rewrite_manifests"

    result = dg.materialize([asset], resources={"iceberg": lake}, instance=instance)

    assert result.success
    (event,) = result.asset_materializations_for_node("sales__events__rewrite_manifests")
    meta = event.metadata
    assert meta["icewright/manifests_replaced"].value == 4
    assert meta["icewright/manifests_created"].value == 1
    assert meta["icewright/committed"].value is True
    after = catalog.load_table(TABLE)
    assert _manifest_count(after) == 1
    current = after.metadata.current_snapshot()
    assert current is not None and current.operation.value == "replace"
    assert _pyiceberg_ids(lake) == ids


def test_the_maintenance_job_step(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _appended(lake, 3)
    plan = MaintenancePlan(
        rewrite_min_input_files=None, rewrite_manifests=True, expire=False, remove_orphans=False
    )
    job = iceberg_maintenance_job([TABLE], plan=plan)
    result = job.execute_in_process(resources={"iceberg": lake}, instance=instance)
    assert result.success
    done = result.output_for_node("maintain_sales_events")
    assert done["rewrite_manifests"]["manifests_replaced"] == 3
    assert _manifest_count(catalog.load_table(TABLE)) == 1
    with pytest.raises(ValidationError, match="target_size_bytes"):
        MaintenancePlan(rewrite_manifests=True, manifest_target_size_bytes=0)


def test_maintenance_ops_in_a_job_of_ones_own(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    """The ops the maintenance job is made of, one verb each, in a user's job with the
    resource under the user's key (a typed parameter of the op, not a lookup)."""
    _appended(lake, 3)
    only: dict[str, Any] = {"rewrite_min_input_files": None, "remove_orphans": False}
    expire = iceberg_maintenance_op(
        TABLE,
        plan=MaintenancePlan(**only, expire_older_than="0s", expire_retain_last=1),
        name="expire_events",
        resource_key="lake",
    )
    orphans = iceberg_maintenance_op(
        TABLE,
        plan=MaintenancePlan(rewrite_min_input_files=None, expire=False, orphans_older_than="0s"),
        name="orphans_of_events",
        resource_key="lake",
    )
    assert expire.description == f"Maintenance of {TABLE}: snapshot expiry."
    assert "lake" in expire.required_resource_keys

    @dg.job
    def nightly() -> None:
        expire()
        orphans()

    result = nightly.execute_in_process(resources={"lake": lake}, instance=instance)
    assert result.success
    assert result.output_for_node("expire_events")["expire"]["expired_snapshot_ids_count"] == 2
    assert len(catalog.load_table(TABLE).metadata.snapshots) == 1
    assert "rewrite" not in result.output_for_node("orphans_of_events")
    assert _pyiceberg_ids(lake) == list(range(9))


def test_the_maintenance_job_removes_dangling_deletes(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    """``rewrite_deletes``: a position delete file whose data file is gone is removed,
    metadata only (no Spark job: nothing to compact)."""
    from icewright.commit import RowDelta, delete_files
    from icewright.scan import plan_files
    from icewright.scan.delete_files import live_delete_files
    from tests.commit.support import position_delete_file

    table = _appended(lake, 2)
    victim = plan_files(table)[0].data_file
    table = RowDelta(table).add_deletes(position_delete_file(table, victim, [0])).commit().table
    table = delete_files(table, paths=[victim]).table
    ids = _pyiceberg_ids(lake)
    plan = MaintenancePlan(
        rewrite_min_input_files=None, rewrite_deletes=True, expire=False, remove_orphans=False
    )
    job = iceberg_maintenance_job([TABLE], plan=plan)
    result = job.execute_in_process(resources={"iceberg": lake}, instance=instance)
    assert result.success
    done = result.output_for_node("maintain_sales_events")
    assert done["rewrite_deletes"]["committed"] is True
    after = catalog.load_table(TABLE)
    assert live_delete_files(after.io, after.metadata.current_snapshot()) == []
    assert _pyiceberg_ids(lake) == ids
