"""File-system catalog specifics: the version hint, probing, Java's layout, gzip, S3 faults."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import FileSystemCatalog, Identifier, Table
from icewright.errors import NamespaceAlreadyExists, TableAlreadyExists, ValidationError
from icewright.spec.new_table import new_table_metadata
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC
from icewright.spec.sorting import UNSORTED_SORT_ORDER
from tests.catalog.helpers import SCHEMA, changed, run_threads


@pytest.fixture
def fs(tmp_path: Path) -> FileSystemCatalog:
    cat = FileSystemCatalog("fs", str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _three_versions(fs: FileSystemCatalog) -> tuple[Path, str]:
    table = fs.create_table("db.t", SCHEMA)
    v2 = fs.commit_table("db.t", table.metadata_location, changed(table.metadata, v="2"))
    v3 = fs.commit_table("db.t", v2, changed(fs.load_table("db.t").metadata, v="3"))
    return Path(table.location) / "metadata", v3


def test_layout_and_hint(fs: FileSystemCatalog) -> None:
    metadata_dir, v3 = _three_versions(fs)
    assert sorted(p.name for p in metadata_dir.iterdir()) == [
        "v1.metadata.json",
        "v2.metadata.json",
        "v3.metadata.json",
        "version-hint.text",
    ]
    assert (metadata_dir / "version-hint.text").read_text() == "3"
    assert v3 == str(metadata_dir / "v3.metadata.json")


@pytest.mark.parametrize(
    "hint",
    [b"1", None, b"not a number", b"9"],
    ids=["stale", "missing", "garbage", "ahead-of-files"],
)
def test_load_finds_newest_version_whatever_the_hint(fs: FileSystemCatalog, hint: Any) -> None:
    metadata_dir, v3 = _three_versions(fs)
    hint_file = metadata_dir / "version-hint.text"
    if hint is None:
        hint_file.unlink()
    else:
        hint_file.write_bytes(hint)
    table = fs.load_table("db.t")
    assert table.metadata_location == v3
    assert table.metadata.properties["v"] == "3"
    # A commit on top still gets the next number.
    v4 = fs.commit_table("db.t", v3, changed(table.metadata, v="4"))
    assert v4.endswith("/v4.metadata.json")


def test_failed_hint_write_is_not_a_failed_commit(fs: FileSystemCatalog) -> None:
    table = fs.create_table("db.t", SCHEMA)
    hint = Path(table.location) / "metadata" / "version-hint.text"
    hint.unlink()
    hint.mkdir()  # a directory where the hint goes: every hint write fails
    v2 = fs.commit_table("db.t", table.metadata_location, changed(table.metadata))
    assert v2.endswith("/v2.metadata.json")
    assert fs.load_table("db.t").metadata_location == v2


def test_table_written_in_java_hadoop_layout(tmp_path: Path) -> None:
    # What Iceberg Java's HadoopCatalog leaves: plain directories (no namespace
    # file), file:/ locations, v1.metadata.json and version-hint.text.
    warehouse = tmp_path / "wh"
    table_dir = warehouse / "db" / "events"
    (table_dir / "metadata").mkdir(parents=True)
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, f"file:{table_dir}"
    )
    (table_dir / "metadata" / "v1.metadata.json").write_bytes(metadata.to_json())
    (table_dir / "metadata" / "version-hint.text").write_text("1")

    cat = FileSystemCatalog("hadoop", f"file:{warehouse}")
    assert cat.list_namespaces() == [("db",)]
    assert cat.load_namespace_properties("db") == {}
    assert cat.list_tables("db") == [Identifier(("db",), "events")]
    table = cat.load_table("db.events")
    assert table.metadata.table_uuid == metadata.table_uuid
    assert table.metadata.location == f"file:{table_dir}"
    v2 = cat.commit_table("db.events", table.metadata_location, changed(table.metadata))
    assert Path(v2.removeprefix("file:")) == table_dir / "metadata" / "v2.metadata.json"
    assert (table_dir / "metadata" / "version-hint.text").read_text() == "2"
    log = cat.load_table("db.events").metadata.metadata_log
    assert [e.metadata_file for e in log] == [table.metadata_location]
    # Properties on a Java namespace go into a new .namespace.json.
    cat.update_namespace_properties("db", updates={"owner": "alice"})
    assert json.loads((warehouse / "db" / ".namespace.json").read_text()) == {
        "properties": {"owner": "alice"}
    }


def _gzip_v2(table: Table) -> bytes:
    """Version 2 of ``table`` in Java's gzip spelling, as another tool writes it (without
    updating the hint)."""
    v2 = changed(table.metadata, v="2").with_previous_metadata(
        table.metadata_location, table.metadata.last_updated_ms
    )
    return gzip.compress(v2.to_json())


def test_gzip_versions_are_probed_and_written(fs: FileSystemCatalog) -> None:
    table = fs.create_table("db.t", SCHEMA)
    metadata_dir = Path(table.location) / "metadata"
    (metadata_dir / "v2.gz.metadata.json").write_bytes(_gzip_v2(table))
    loaded = fs.load_table("db.t")
    assert loaded.metadata_location.endswith("/v2.gz.metadata.json")
    assert loaded.metadata.properties["v"] == "2"

    gz = changed(loaded.metadata, **{"write.metadata.compression-codec": "gzip"})
    v3 = fs.commit_table("db.t", loaded.metadata_location, gz)
    assert v3.endswith("/v3.gz.metadata.json")
    assert (metadata_dir / "v3.gz.metadata.json").read_bytes()[:2] == b"\x1f\x8b"
    assert fs.load_table("db.t").metadata_location == v3


def test_register_copies_metadata_as_v1(fs: FileSystemCatalog, tmp_path: Path) -> None:
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, str(tmp_path / "elsewhere")
    )
    source = tmp_path / "elsewhere" / "metadata" / "00003-abc.metadata.json.gz"
    source.parent.mkdir(parents=True)
    source.write_bytes(gzip.compress(metadata.to_json()))
    table = fs.register_table("db.reg", str(source))
    assert table.metadata_location == fs.default_table_location("db.reg") + (
        "/metadata/v1.metadata.json"
    )
    copied = Path(table.metadata_location).read_bytes()
    assert json.loads(copied)["table-uuid"] == str(metadata.table_uuid)
    assert source.exists()


def test_custom_location_and_rename_are_refused(fs: FileSystemCatalog, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="omit location"):
        fs.create_table("db.t", SCHEMA, location=str(tmp_path / "other"))
    assert fs.list_tables("db") == []
    # The same place in another spelling is fine.
    table = fs.create_table("db.t", SCHEMA, location=f"file://{fs.warehouse}/db/t/")
    assert table.location == fs.default_table_location("db.t")


def test_two_catalogs_racing_to_create(fs: FileSystemCatalog) -> None:
    other = FileSystemCatalog("fs2", fs.warehouse)
    results = run_threads(
        lambda: fs.create_table("db.t", SCHEMA), lambda: other.create_table("db.t", SCHEMA)
    )
    assert sum(isinstance(r, TableAlreadyExists) for r in results) == 1, results
    winner = next(r for r in results if not isinstance(r, Exception))
    assert fs.load_table("db.t").metadata.table_uuid == winner.metadata.table_uuid


def test_namespace_cannot_shadow_a_table(fs: FileSystemCatalog) -> None:
    fs.create_table("db.t", SCHEMA)
    with pytest.raises(NamespaceAlreadyExists, match="table or view"):
        fs.create_namespace("db.t")
    assert not fs.namespace_exists("db.t")
    assert fs.list_namespaces("db") == []


def test_drop_namespace_removes_the_directory(fs: FileSystemCatalog) -> None:
    directory = Path(fs.warehouse) / "db"
    assert (directory / ".namespace.json").exists()
    fs.drop_namespace("db")
    assert not directory.exists()


def test_lost_s3_response_on_create_is_settled(s3_server: Any) -> None:
    bucket = s3_server.new_bucket()
    cat = FileSystemCatalog("s3", f"s3://{bucket}/wh", **s3_server.properties)
    cat.create_namespace("db")
    table = cat.create_table("db.t", SCHEMA)
    # S3 applies the conditional PUT of v2 but the answer is lost: botocore
    # retries, the retry meets our own object, and the commit must succeed.
    s3_server.lose_next_response("PUT", bucket, "wh/db/t/metadata/v2.metadata.json")
    v2 = cat.commit_table("db.t", table.metadata_location, changed(table.metadata, s3="yes"))
    assert s3_server._app._faults == [], "the injected fault did not fire"
    assert v2 == f"s3://{bucket}/wh/db/t/metadata/v2.metadata.json"
    loaded = cat.load_table("db.t")
    assert loaded.metadata_location == v2
    assert loaded.metadata.properties["s3"] == "yes"


def test_a_load_on_s3_lists_each_probed_version_once(s3_server: Any) -> None:
    # Each probed version has three spellings (plain, .gz.metadata.json,
    # .metadata.json.gz): one LIST of "v<N>." answers for all three.
    bucket = s3_server.new_bucket()
    cat = FileSystemCatalog("s3", f"s3://{bucket}/wh", **s3_server.properties)
    cat.create_namespace("db")
    table = cat.create_table("db.t", SCHEMA)
    s3_server.client().put_object(
        Bucket=bucket, Key="wh/db/t/metadata/v2.gz.metadata.json", Body=_gzip_v2(table)
    )
    with s3_server.recording(bucket) as requests:
        loaded = cat.load_table("db.t")
    assert loaded.metadata_location == f"s3://{bucket}/wh/db/t/metadata/v2.gz.metadata.json"
    assert loaded.metadata.properties["v"] == "2"
    metadata = "wh/db/t/metadata"
    assert [r.kind for r in requests] == [
        f"GET {metadata}/version-hint.text",
        f"LIST {metadata}/v1.",
        f"LIST {metadata}/v2.",
        f"LIST {metadata}/v3.",
        f"GET {metadata}/v2.gz.metadata.json",
    ]


def test_relative_warehouse_is_made_absolute(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    cat = FileSystemCatalog("rel", "warehouse")
    assert cat.warehouse == os.path.join(str(tmp_path), "warehouse")
