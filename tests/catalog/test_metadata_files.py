"""Metadata file names, gzip detection and error messages."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from icewright.catalog import SqlCatalog
from icewright.catalog.metadata_files import (
    hadoop_metadata_version,
    metadata_version,
    next_pointer_metadata_location,
    read_table_metadata,
    read_view_metadata,
)
from icewright.errors import InvalidMetadata, NoSuchFile, UnsupportedFormatVersion
from icewright.io import LocalFileIO
from icewright.spec.new_table import new_table_metadata
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC
from icewright.spec.sorting import UNSORTED_SORT_ORDER
from tests.catalog.helpers import SCHEMA, changed

UUID = "4f1c0bd2-9f3e-4a4c-8d3b-0f6e1e9b2a11"


@pytest.mark.parametrize(
    ("name", "version"),
    [
        (f"s3://b/t/metadata/00007-{UUID}.metadata.json", 7),
        (f"/t/metadata/00123-{UUID}.gz.metadata.json", 123),
        (f"/t/metadata/100000-{UUID}.metadata.json.gz", 100000),
        ("/t/metadata/v12.metadata.json", 12),
        ("file:/t/metadata/v3.gz.metadata.json", 3),
        ("/t/metadata/version-hint.text", None),
        ("/t/metadata/snap-1-1-abc.avro", None),
        ("/t/metadata/v1.json", None),
    ],
)
def test_metadata_version(name: str, version: int | None) -> None:
    assert metadata_version(name) == version


def test_hadoop_version_only_reads_v_names() -> None:
    assert hadoop_metadata_version("/t/metadata/v9.metadata.json") == 9
    assert hadoop_metadata_version(f"/t/metadata/00009-{UUID}.metadata.json") is None


def test_next_pointer_location() -> None:
    first = next_pointer_metadata_location("/t/metadata", {}, None)
    assert re.fullmatch(r"/t/metadata/00000-[0-9a-f-]{36}\.metadata\.json", first)
    previous = f"/t/metadata/00041-{UUID}.metadata.json"
    after = next_pointer_metadata_location("/t/metadata", {}, previous)
    assert after.startswith("/t/metadata/00042-")
    # Java counts an unparsable previous name as -1: the successor is 00000.
    assert next_pointer_metadata_location("/t/m", {}, "/x/v3.json").startswith("/t/m/00000-")
    gz = next_pointer_metadata_location(
        "/t/metadata", {"write.metadata.compression-codec": "gzip"}, None
    )
    assert gz.endswith(".gz.metadata.json")
    # an unknown codec (another engine wrote it) means the default, uncompressed
    odd = next_pointer_metadata_location("/t", {"write.metadata.compression-codec": "zstd"}, None)
    assert odd.endswith(".metadata.json") and not odd.endswith(".gz.metadata.json")


def test_gzip_is_detected_by_magic_bytes_not_name(tmp_path: Path) -> None:
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, str(tmp_path)
    )
    io = LocalFileIO()
    plain_name_gz_content = tmp_path / "v1.metadata.json"
    plain_name_gz_content.write_bytes(gzip.compress(metadata.to_json()))
    gz_name_plain_content = tmp_path / "v2.gz.metadata.json"
    gz_name_plain_content.write_bytes(metadata.to_json())
    for path in (plain_name_gz_content, gz_name_plain_content):
        assert read_table_metadata(io, str(path)).table_uuid == metadata.table_uuid


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
        (b"not json", "not valid JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"format-version": 2}', "invalid"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_corrupt_files_name_the_path(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "v1.metadata.json"
    path.write_bytes(content)
    with pytest.raises(InvalidMetadata, match=message) as raised:
        read_table_metadata(LocalFileIO(), str(path))
    assert str(path) in str(raised.value)


def test_table_and_view_files_are_told_apart(tmp_path: Path) -> None:
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, str(tmp_path)
    )
    path = tmp_path / "v1.metadata.json"
    path.write_bytes(metadata.to_json())
    with pytest.raises(InvalidMetadata, match="table metadata, not view"):
        read_view_metadata(LocalFileIO(), str(path))
    with pytest.raises(NoSuchFile):
        read_table_metadata(LocalFileIO(), str(tmp_path / "missing.metadata.json"))


def test_unsupported_version_keeps_its_type(tmp_path: Path) -> None:
    path = tmp_path / "v1.metadata.json"
    path.write_bytes(b'{"format-version": 9, "table-uuid": "' + UUID.encode() + b'"}')
    with pytest.raises(UnsupportedFormatVersion) as raised:
        read_table_metadata(LocalFileIO(), str(path))
    assert str(path) in str(raised.value)


def test_write_metadata_path_is_honoured(tmp_path: Path, sqlite_catalog: SqlCatalog) -> None:
    catalog = sqlite_catalog
    elsewhere = str(tmp_path / "meta")
    table = catalog.create_table("db.t", SCHEMA, properties={"write.metadata.path": elsewhere})
    assert table.metadata_location.startswith(elsewhere + "/00000-")
    new = catalog.commit_table("db.t", table.metadata_location, changed(table.metadata))
    assert new.startswith(elsewhere + "/00001-")
    catalog.close()
