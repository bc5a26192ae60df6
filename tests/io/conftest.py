"""Fixtures for the FileIO tests: one FileIO per backend, each with a fresh root."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from icewright.io import LocalFileIO, S3FileIO
from tests.io.support import Backend
from tests.support.s3 import S3TestServer


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each shared-behaviour test runs on local disk and on S3 (moto server)."""
    if request.param == "local":
        yield Backend("local", LocalFileIO(), str(tmp_path / "root"))
    else:
        server: S3TestServer = request.getfixturevalue("s3_server")
        bucket = server.new_bucket()
        yield Backend("s3", S3FileIO(server.properties), f"s3://{bucket}/root")
