"""The scan tests' tables: ``make_table`` in the shared SQLite ``catalog``, and pyiceberg on
the same database as the independent oracle (``py_catalog``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from tests.scan.support import SCHEMA


@pytest.fixture
def py_catalog(pyiceberg_catalog: Any) -> Any:
    """pyiceberg 0.12's SqlCatalog on the same database: the independent oracle."""
    return pyiceberg_catalog


@pytest.fixture
def make_table(catalog: SqlCatalog) -> Callable[..., Table]:
    def make(
        name: str = "db.t",
        fields: Sequence[tuple[Any, ...]] = (),
        format_version: int = 2,
        schema: Schema = SCHEMA,
    ) -> Table:
        spec = build_partition_spec(schema, list(fields))
        return catalog.create_table(name, schema, spec, format_version=format_version)

    return make
