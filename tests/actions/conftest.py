"""The shared SparkSession, and a real SQLite catalog that pyiceberg can open too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import SqlCatalog
from tests.spark.conftest import spark  # noqa: F401 - the one session of the process

CATALOG_NAME = "test"


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    """An empty SQLite catalog with namespace ``db``."""
    cat = SqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    cat.create_namespace("db")
    return cat


@pytest.fixture
def pyiceberg_catalog(tmp_path: Path, catalog: SqlCatalog) -> Any:
    """pyiceberg 0.12's SQL catalog on the same database file and catalog name."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    return PySqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
