"""load_file_io: choosing a FileIO by the location's URI scheme."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.errors import ValidationError
from icewright.io import FileIO, LocalFileIO, S3FileIO, load_file_io


@pytest.mark.parametrize("location", ["s3://b/wh", "s3a://b/wh/db/t", "s3n://b/x", "S3://b/upper"])
def test_s3_schemes(location: str) -> None:
    props = {"s3.region": "eu-central-1", "s3.path-style-access": "true"}
    fio = load_file_io(location, props)
    assert isinstance(fio, S3FileIO)
    assert dict(fio.properties) == props


@pytest.mark.parametrize("location", ["file:/tmp/wh", "file:///tmp/wh", "/tmp/wh"])
def test_local_locations(location: str) -> None:
    assert isinstance(load_file_io(location), LocalFileIO)
    assert dict(load_file_io(location).properties) == {}


@pytest.mark.parametrize(
    "location",
    [
        "gs://bucket/wh",
        "abfss://c@acct.dfs.core.windows.net/wh",
        "hdfs://nn/wh",
        "relative/warehouse",
        "",
        "http://example.com/x",
    ],
)
def test_unsupported_locations_name_the_supported_schemes(location: str) -> None:
    with pytest.raises(ValidationError) as err:
        load_file_io(location)
    message = str(err.value)
    for scheme in ("s3://", "s3a://", "s3n://", "file://", "absolute local paths"):
        assert scheme in message
    assert repr(location) in message


def test_load_file_io_round_trip(tmp_path: Path) -> None:
    location = f"file:{tmp_path}/t/metadata/v1.metadata.json"
    fio: FileIO = load_file_io(location)
    fio.create(location, b"{}")
    assert fio.read(location) == b"{}"


def test_properties_are_copied() -> None:
    props = {"s3.region": "us-east-1"}
    fio = load_file_io("s3://b/k", props)
    props["s3.region"] = "eu-west-1"
    assert fio.properties["s3.region"] == "us-east-1"
