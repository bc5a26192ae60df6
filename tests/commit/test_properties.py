"""Table properties, location and format version updates on real catalogs."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import FileSystemCatalog, SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.commit.properties import SetLocation, UpdateProperties, UpgradeFormatVersion
from icewright.errors import UnsupportedFormatVersion, ValidationError
from icewright.manifest.data_file import DataFile
from tests.commit.support import SCHEMA

UTC = dt.UTC


def some_files(table: Table, n: int = 3, start: int = 0) -> list[DataFile]:
    ts = dt.datetime(2026, 3, 1, tzinfo=UTC)
    data = [{"id": start + i, "ts": ts, "region": "eu"} for i in range(n)]
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    cat = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    yield cat
    cat.engine.dispose()


def test_set_and_remove_keep_other_keys(make_table: Callable[..., Table], pyi: Any) -> None:
    table = make_table(owner="a", drop_me="x")
    result = UpdateProperties(table).set("owner", "b").set("new", "1").remove("drop_me").commit()
    props = dict(result.table.refresh().metadata.properties)
    assert props == {"owner": "b", "new": "1"}
    assert result.table.metadata.last_updated_ms >= table.metadata.last_updated_ms
    assert dict(pyi.load_table("db.orders").properties) == props
    # Removing a key the table does not have is not an error.
    again = UpdateProperties(result.table).remove("never-there").commit()
    assert dict(again.table.metadata.properties) == props


@pytest.mark.parametrize("key", ["format-version", "uuid", "current-snapshot-id"])
def test_reserved_keys_are_refused(make_table: Callable[..., Table], key: str) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match="reserved"):
        UpdateProperties(table).set(key, "2")
    with pytest.raises(ValidationError, match="reserved"):
        UpdateProperties(table).remove(key)


def test_bad_requests_are_refused(make_table: Callable[..., Table]) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match="must be a string"):
        UpdateProperties(table).set("n", 8)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="both set and remove"):
        UpdateProperties(table).set("k", "v").remove("k")
    with pytest.raises(ValidationError, match="both remove and set"):
        UpdateProperties(table).remove("k").set("k", "v")
    with pytest.raises(ValidationError, match="not in the schema"):
        UpdateProperties(table).set("write.metadata.metrics.column.nope", "full").commit()
    with pytest.raises(ValidationError, match=r"metrics.default='most' is invalid"):
        UpdateProperties(table).set("write.metadata.metrics.default", "most").commit()
    assert table.refresh().metadata_location == table.metadata_location
    ok = UpdateProperties(table).set("write.metadata.metrics.column.region", "counts").commit()
    assert ok.table.metadata.properties["write.metadata.metrics.column.region"] == "counts"


def test_concurrent_updates_reapply_last_writer_wins_per_key(
    make_table: Callable[..., Table],
) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    stale = table
    UpdateProperties(table).set("shared", "first").set("theirs", "1").commit()
    # The stale update loses the race, re-applies on the refreshed table, and wins its keys.
    result = UpdateProperties(stale).set("shared", "second").set("mine", "2").commit()
    props = dict(result.table.refresh().metadata.properties)
    assert props["shared"] == "second"
    assert props["theirs"] == "1" and props["mine"] == "2"
    # Three metadata files: the create, the winner, then the re-applied update.
    assert len(result.table.refresh().metadata.metadata_log) == 2


def test_set_location_moves_new_files(
    make_table: Callable[..., Table], tmp_path: Path, pyi: Any
) -> None:
    table = make_table()
    first = fast_append(table, some_files(table))
    new_location = str(tmp_path / "elsewhere" / "orders")
    moved = SetLocation(first.table, new_location + "/").commit().table
    assert moved.metadata.location == new_location
    assert moved.metadata_location.startswith(new_location + "/metadata/")
    second = fast_append(moved, some_files(moved, 2, 10))
    snap = second.table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    assert snap.manifest_list.startswith(new_location + "/metadata/")
    loaded = pyi.load_table("db.orders")
    assert loaded.location() == new_location
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 10, 11]


def test_file_system_catalog_refuses_a_new_location(tmp_path: Path) -> None:
    cat = FileSystemCatalog("fs", str(tmp_path / "fswh"))
    cat.create_namespace("db")
    table = cat.create_table("db.t", SCHEMA)
    with pytest.raises(ValidationError, match="file-system catalog"):
        SetLocation(table, str(tmp_path / "other")).commit()
    assert cat.load_table("db.t").metadata.location == table.metadata.location


def test_upgrade_v1_to_v2_keeps_data_readable(make_table: Callable[..., Table], pyi: Any) -> None:
    table = make_table(format_version=1)
    old = fast_append(table, some_files(table))
    upgraded = UpgradeFormatVersion(old.table, 2).commit().table
    assert upgraded.metadata.format_version == 2
    doc = json.loads(upgraded.io.read(upgraded.metadata_location))
    assert doc["format-version"] == 2 and doc["last-sequence-number"] == 0
    assert doc["table-uuid"] == str(table.metadata.table_uuid)
    new = fast_append(upgraded, some_files(upgraded, 2, 10))
    assert new.sequence_number == 1
    loaded = pyi.load_table("db.orders")
    assert loaded.format_version == 2
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 10, 11]


def test_format_version_never_goes_down_and_v3_is_refused(
    make_table: Callable[..., Table],
) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match="cannot downgrade"):
        UpgradeFormatVersion(table, 1).commit()
    with pytest.raises(UnsupportedFormatVersion, match="format version 3"):
        UpgradeFormatVersion(table, 3)
    same = UpgradeFormatVersion(table, 2).commit()
    assert same.table.metadata.format_version == 2
    assert table.refresh().metadata.format_version == 2
