"""The sensor tests' ``catalog`` is the embedded default catalog of ``home`` (a temporary
``ICEWRIGHT_HOME``), with ``sales.orders``: ``embedded_catalog`` of
``tests.support.embedded``.

The sensor and the triggers are given ``iceberg_conn_id=None`` (the embedded default
catalog, no Airflow connection lookup), so ``ICEWRIGHT_HOME`` decides which catalog they
open, exactly as it does in a deployed task.
"""

from __future__ import annotations

import pytest

from icewright.catalog import Catalog


@pytest.fixture
def catalog(embedded_catalog: Catalog) -> Catalog:
    return embedded_catalog
