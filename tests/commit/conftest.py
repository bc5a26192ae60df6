"""A real SQLite catalog with a partitioned table for commit tests.

The fixtures behind ``tests.catalog.conftest.make_catalog`` (a PostgreSQL server, moto's
S3 server, moto's Glue with the ``VersionId`` check) are imported here so that commit
tests can run on every catalog kind.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType, TimestamptzType
from tests.catalog.conftest import glue_mock  # noqa: F401
from tests.support.postgres import postgres_url  # noqa: F401
from tests.support.rest import rest_server  # noqa: F401
from tests.support.s3 import s3_server  # noqa: F401

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
