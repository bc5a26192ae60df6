"""The catalog tests' ``catalog``: an empty catalog of every kind in turn.

Every kind runs on real local parts (:func:`tests.support.catalogs.make_catalog`):
SQLite files, a PostgreSQL server started for the session, the local file system,
moto's S3 server on 127.0.0.1, and moto's in-process Glue (``glue_mock``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from icewright.catalog import Catalog
from tests.support.catalogs import CATALOG_KINDS, make_catalog


@pytest.fixture(params=CATALOG_KINDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Catalog]:
    """An empty catalog of each kind in turn."""
    cat = make_catalog(request.param, request, tmp_path)
    try:
        yield cat
    finally:
        cat.close()


@pytest.fixture
def catalog_kind(catalog: Catalog, request: pytest.FixtureRequest) -> str:
    """The kind of the ``catalog`` fixture in this test."""
    return str(request.node.callspec.params["catalog"])
