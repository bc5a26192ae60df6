"""One identity per table (:func:`icewright.actions.lineage.table_identity`): the
``iceberg://`` asset's OpenLineage dataset, an operator's output dataset and the
Dagster materialization metadata name the same table the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.actions import create
from icewright.catalog import load_catalog
from icewright.dagster.execution import lineage_metadata
from icewright.operators import IcebergRewriteDataFilesOperator, iceberg_asset
from icewright.providers.assets import convert_asset_to_openlineage
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField
from tests.support.airflow import connection_env


def test_asset_operator_and_dagster_share_the_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"sqlite:///{tmp_path}/lake.db"
    props = {"type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")}
    extra = {"catalog_type": "sql", "uri": uri, "warehouse": props["warehouse"]}
    for key, value in connection_env("lake", "icewright", extra=extra).items():
        monkeypatch.setenv(key, value)
    catalog = load_catalog(props)
    catalog.create_namespace("sales")
    create("sales.orders", catalog=catalog, schema=Schema(NestedField(1, "id", LongType())))
    table = catalog.load_table("sales.orders")

    asset = convert_asset_to_openlineage(iceberg_asset("sales.orders", "lake"), None)
    op = IcebergRewriteDataFilesOperator(task_id="w", table="sales.orders", iceberg_conn_id="lake")
    (output,) = op.get_openlineage_facets_on_start().outputs
    dagster = lineage_metadata(table)

    expected = ("file", table.metadata.location)
    assert (asset.namespace, asset.name) == expected
    assert (output.namespace, output.name) == expected
    assert (dagster["namespace"], dagster["name"]) == expected
    link = {"namespace": uri, "name": f"{catalog.name}.sales.orders", "type": "TABLE"}
    assert dagster["symlink"] == link
    for dataset in (asset, output):
        (identifier,) = dataset.facets["symlinks"].identifiers
        assert (identifier.namespace, identifier.name, identifier.type) == tuple(link.values())

    # A table that is not there: the asset keeps its connection's name.
    missing = convert_asset_to_openlineage(iceberg_asset("sales.nothing", "lake"), None)
    assert (missing.namespace, missing.name) == ("iceberg://lake", "sales.nothing")
