"""The commit tests' ``make_table``: a partitioned table in the shared SQLite ``catalog``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import SCHEMA


@pytest.fixture
def make_table(catalog: SqlCatalog) -> Callable[..., Table]:
    def make(name: str = "db.orders", format_version: int = 2, **properties: str) -> Table:
        spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
        return catalog.create_table(
            name, SCHEMA, spec, format_version=format_version, properties=properties
        )

    return make
