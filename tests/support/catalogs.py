"""The catalogs tests run on, as fixtures of the root ``tests/conftest.py``.

* ``sqlite_catalog`` (also ``catalog``, unless a test folder's ``conftest.py`` gives
  ``catalog`` a meaning of its own): an empty SQLite catalog named ``test`` with
  namespace ``db``, its warehouse under ``tmp_path/wh``;
* ``pyiceberg_catalog``: pyiceberg 0.12's SQL catalog on the same database, the
  independent reader;
* :func:`make_catalog`: a fresh, empty catalog of each kind in :data:`CATALOG_KINDS`
  (SQLite, PostgreSQL, the file system on local disk and on moto's S3 server, and moto's
  in-process Glue with the ``glue_mock`` fixture), for tests parametrized over kinds.

moto's Glue ignores ``UpdateTable``'s ``VersionId`` (moto 5.2: the parameter is
never read), while AWS Glue refuses a stale one with
``ConcurrentModificationException``. ``glue_mock`` therefore adds that one
check to moto's handler, under a lock so that racing updates are applied one
at a time as AWS applies them; everything else is moto's own behaviour.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Catalog, FileSystemCatalog, GlueCatalog, SqlCatalog

CATALOG_NAME = "test"
CATALOG_KINDS = ("sqlite", "postgres", "filesystem-local", "filesystem-s3", "glue", "rest")

GLUE_PROPERTIES = {
    "glue.region": "us-east-1",
    "glue.access-key-id": "testing",
    "glue.secret-access-key": "testing",
}


@pytest.fixture
def sqlite_catalog(tmp_path: Path) -> Iterator[SqlCatalog]:
    """An empty SQLite catalog (``test``) with namespace ``db``."""
    cat = SqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    cat.create_namespace("db")
    yield cat
    cat.close()


@pytest.fixture
def catalog(sqlite_catalog: SqlCatalog) -> SqlCatalog:
    """The SQLite catalog of ``sqlite_catalog``, by the name most tests use."""
    return sqlite_catalog


@pytest.fixture
def pyiceberg_catalog(tmp_path: Path, sqlite_catalog: SqlCatalog) -> Any:
    """pyiceberg 0.12's SQL catalog on the same database file and catalog name."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    return PySqlCatalog(
        CATALOG_NAME, uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )


@pytest.fixture
def glue_mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto's in-process AWS, with Glue's ``VersionId`` check on ``UpdateTable``."""
    from moto import mock_aws
    from moto.core.exceptions import JsonRESTError
    from moto.glue.responses import GlueResponse

    lock = threading.Lock()
    original = GlueResponse.update_table

    def update_table(self: Any) -> Any:
        params = self.parameters
        with lock:
            expected = params.get("VersionId")
            if expected is not None:
                table = self.glue_backend.get_table(
                    params["DatabaseName"], params["TableInput"]["Name"]
                )
                if str(table._current_version) != str(expected):
                    raise JsonRESTError(
                        "ConcurrentModificationException",
                        f"Update table failed due to concurrent modifications "
                        f"(version {expected} is not current)",
                    )
            return original(self)

    monkeypatch.setattr(GlueResponse, "update_table", update_table)
    with mock_aws():
        yield


def make_catalog(kind: str, request: pytest.FixtureRequest, tmp_path: Any) -> Catalog:
    """A fresh, empty catalog of ``kind`` (the servers it needs come from their
    fixtures: ``postgres_url``, ``s3_server``, ``glue_mock``, ``rest_server``)."""
    if kind == "sqlite":
        return SqlCatalog("test", f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "wh"))
    if kind == "postgres":
        url = request.getfixturevalue("postgres_url")
        # One database for the session; a fresh catalog_name keeps tests apart.
        return SqlCatalog(f"test_{uuid.uuid4().hex[:12]}", url, str(tmp_path / "wh"))
    if kind == "filesystem-local":
        return FileSystemCatalog("test", str(tmp_path / "wh"))
    if kind == "filesystem-s3":
        s3 = request.getfixturevalue("s3_server")
        bucket = s3.new_bucket()
        return FileSystemCatalog("test", f"s3://{bucket}/wh", **s3.properties)
    if kind == "glue":
        request.getfixturevalue("glue_mock")
        return GlueCatalog("test", str(tmp_path / "wh"), **GLUE_PROPERTIES)
    if kind == "rest":
        # Iceberg Java's REST server (one per session); a fresh warehouse name is a fresh
        # catalog on it.
        server = request.getfixturevalue("rest_server")
        return server.catalog(warehouse=f"t{uuid.uuid4().hex[:12]}")
    raise AssertionError(kind)
