"""The embedded default catalog in a temporary ``ICEWRIGHT_HOME``, with ``sales.orders``.

Fixtures of the root ``tests/conftest.py``: ``embedded_home`` points ``ICEWRIGHT_HOME``
at an empty directory for the test; ``embedded_catalog`` opens that home's default
catalog (what a deployed task given ``iceberg_conn_id=None`` opens) and creates
``sales.orders`` (:func:`tests.sensors.support.make_table`). ``home`` is
``embedded_home`` wherever a folder does not define it otherwise; the sensor and trigger
tests' ``conftest.py`` make ``catalog`` their ``embedded_catalog``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from icewright.catalog import Catalog, default_catalog
from tests.sensors.support import make_table


@pytest.fixture
def embedded_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``ICEWRIGHT_HOME`` for this test."""
    path = tmp_path / "icewright"
    monkeypatch.setenv("ICEWRIGHT_HOME", str(path))
    return path


@pytest.fixture
def home(embedded_home: Path) -> Path:
    """``embedded_home``, by the name the sensor and trigger tests use."""
    return embedded_home


@pytest.fixture
def embedded_catalog(embedded_home: Path) -> Iterator[Catalog]:
    """The home's default catalog, with the table ``sales.orders``."""
    cat = default_catalog()
    make_table(cat)
    yield cat
    cat.close()
