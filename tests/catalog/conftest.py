"""Fixtures for the catalog tests: one ``catalog`` fixture over every catalog kind.

Every kind runs on real local parts: SQLite files, a PostgreSQL server started
for the session, the local file system, moto's S3 server on 127.0.0.1, and
moto's in-process Glue (``mock_aws``), and a REST catalog server built from Iceberg
Java's own server classes (``tests/support/rest.py``).

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
from typing import Any

import pytest

from icewright.catalog import Catalog, FileSystemCatalog, GlueCatalog, SqlCatalog
from tests.support.postgres import postgres_url  # noqa: F401
from tests.support.rest import rest_server  # noqa: F401
from tests.support.s3 import s3_server  # noqa: F401

CATALOG_KINDS = ("sqlite", "postgres", "filesystem-local", "filesystem-s3", "glue", "rest")

GLUE_PROPERTIES = {
    "glue.region": "us-east-1",
    "glue.access-key-id": "testing",
    "glue.secret-access-key": "testing",
}


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
    """A fresh, empty catalog of ``kind``."""
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
        # Iceberg Java's REST server (one per session); a fresh warehouse is a fresh
        # catalog on it.
        server = request.getfixturevalue("rest_server")
        return server.catalog(warehouse=f"t{uuid.uuid4().hex[:12]}")
    raise AssertionError(kind)


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
