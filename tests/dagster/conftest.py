"""A real Dagster instance (temporary ``DAGSTER_HOME``), the shared SparkSession and an
icewright lake (SQLite catalog and local warehouse) for the Dagster tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergResource


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    """A Dagster instance in a temporary ``DAGSTER_HOME``."""
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture
def lake(tmp_path: Path) -> IcebergResource:
    """The resource of an empty lake with namespace ``sales``."""
    resource = IcebergResource(
        catalog_uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "warehouse")
    )
    resource.get_catalog().create_namespace("sales")
    return resource


@pytest.fixture
def catalog(lake: IcebergResource) -> SqlCatalog:
    """The lake's catalog (a handle of its own)."""
    props = lake.catalog_properties()
    return SqlCatalog("icewright", props["uri"], props["warehouse"])
