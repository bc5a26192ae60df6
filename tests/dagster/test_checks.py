"""The table checks on a real instance: each passes within its bound and fails beyond
it, with its severity and the figures as metadata."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pyarrow as pa

from icewright.catalog import SqlCatalog
from icewright.commit import append, create_table
from icewright.dagster import IcebergResource, iceberg_table_checks
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

TABLE = "sales.orders"


@dg.asset(key=["sales", "orders"])
def orders() -> None:
    """Stands for the table's asset (written elsewhere)."""


def _table(catalog: SqlCatalog, *batches: int) -> None:
    from icewright.arrow import write_data_files

    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType())
    )
    table = create_table(catalog, TABLE, schema)
    for rows in batches:
        table = table.refresh()
        data = pa.table({"id": pa.array(range(rows), pa.int64())})
        append(table, write_data_files(table.io, table.metadata, data))


def _run_checks(
    checks: list[dg.AssetChecksDefinition], lake: IcebergResource, instance: dg.DagsterInstance
) -> dict[str, Any]:
    result = dg.materialize(
        [orders, *checks],
        resources={"iceberg": lake},
        instance=instance,
        selection=dg.AssetSelection.checks(*checks),
    )
    assert result.success
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_checks_pass_within_their_bounds(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _table(catalog, 100, 110)
    checks = iceberg_table_checks(
        TABLE,
        max_age_seconds=3600,
        max_small_file_share=1.0,
        max_snapshots=5,
        schema="id long not null, name string",
        max_row_change=2.0,
    )
    found = _run_checks(checks, lake, instance)
    assert sorted(found) == [
        "iceberg_freshness",
        "iceberg_row_count_change",
        "iceberg_schema",
        "iceberg_small_files",
        "iceberg_snapshot_count",
    ]
    assert all(e.passed for e in found.values()), {k: e.description for k, e in found.items()}
    assert found["iceberg_row_count_change"].metadata["change"].value == 1.1  # 100 -> 210
    assert found["iceberg_small_files"].metadata["data_files"].value == 2


def test_checks_fail_beyond_their_bounds(
    lake: IcebergResource, catalog: SqlCatalog, instance: dg.DagsterInstance
) -> None:
    _table(catalog, 100, 300)
    checks = iceberg_table_checks(
        TABLE,
        max_age_seconds=0,
        max_small_file_share=0.1,
        max_snapshots=1,
        schema="id long not null, name string not null, amount double",
        max_row_change=0.5,
        severities={"iceberg_snapshot_count": dg.AssetCheckSeverity.ERROR},
    )
    found = _run_checks(checks, lake, instance)
    assert not any(e.passed for e in found.values())
    assert found["iceberg_small_files"].severity == dg.AssetCheckSeverity.WARN
    assert "run a rewrite" in found["iceberg_small_files"].description
    assert found["iceberg_snapshot_count"].severity == dg.AssetCheckSeverity.ERROR
    assert "expire" in found["iceberg_snapshot_count"].description
    schema = found["iceberg_schema"].description
    assert "'name' is not required" in schema and "'amount' is missing" in schema
    assert found["iceberg_row_count_change"].metadata["change"].value == 3.0
