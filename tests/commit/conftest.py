"""A real SQLite catalog with a partitioned table for commit tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType, TimestamptzType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "region", StringType()),
)


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    cat = SqlCatalog("test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


@pytest.fixture
def make_table(catalog: SqlCatalog) -> Callable[..., Table]:
    def make(name: str = "db.orders", format_version: int = 2, **properties: str) -> Table:
        spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
        return catalog.create_table(
            name, SCHEMA, spec, format_version=format_version, properties=properties
        )

    return make
