"""The trigger tests open the same catalog the sensor tests do (see tests/sensors/conftest.py)."""

from __future__ import annotations

import pytest

from icewright.catalog import Catalog


@pytest.fixture
def catalog(embedded_catalog: Catalog) -> Catalog:
    return embedded_catalog
