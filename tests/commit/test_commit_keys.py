"""Commit keys outlive snapshot retention (icewright.commit.commit_keys).

The sequence a user hit from the command line: a keyed append, three more appends,
expire down to two snapshots, then the same keyed append again. It must commit
nothing, on every catalog kind, and after a rewrite as well. The rows are read back
by pyiceberg where the catalog is one it opens (SQLite).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import Catalog, Table
from icewright.commit import commit_keys
from icewright.commit.append import fast_append
from icewright.commit.commit_keys import (
    COMMIT_KEYS,
    MAX_AGE_MS,
    MAX_COUNT,
    RememberedCommit,
    find_commit_key,
    remember,
)
from icewright.commit.expire import expire_snapshots
from icewright.commit.properties import UpdateProperties
from icewright.commit.refs import ManageSnapshots
from icewright.commit.rewrite import rewrite_files
from icewright.commit.table_ops import create_table
from icewright.commit.update import PendingUpdate, commit_updates
from icewright.manifest.data_file import DataFile
from icewright.scan import plan_files
from icewright.spec.documents import StringMap
from icewright.spec.table_metadata import TableMetadata
from tests.commit.support import SCHEMA
from tests.support.catalogs import CATALOG_KINDS, make_catalog

DAY = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


def _files(table: Table, start: int, n: int = 3) -> list[DataFile]:
    rows = [{"id": start + i, "ts": DAY, "region": "eu"} for i in range(n)]
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), rows))


def _live_files(table: Table) -> list[DataFile]:
    return [task.data_file for task in plan_files(table.refresh())]


def _record_count(table: Table) -> int:
    return sum(f.record_count for f in _live_files(table))


def _append_expire_append(catalog: Catalog, *, rewrite: bool) -> tuple[Table, Any, Any]:
    catalog.create_namespace("db")
    table = create_table(catalog, "db.t", SCHEMA)
    first = fast_append(table, _files(table, 0), commit_key="K1")
    assert first.committed
    for n in (1, 2, 3):
        fast_append(table.refresh(), _files(table, 100 * n))
    if rewrite:
        live = _live_files(table)
        compacted = _files(table.refresh(), 1000, n=sum(f.record_count for f in live))
        rewrite_files(table.refresh(), live, compacted)
    now_ms = int(time.time() * 1000) + 1
    expired = expire_snapshots(table.refresh(), older_than_ms=now_ms, retain_last=2)
    assert first.snapshot_id in set(expired.expired_snapshot_ids)
    before = table.refresh()
    again = fast_append(before, _files(before, 0), commit_key="K1")
    return before, first, again


@pytest.mark.parametrize(
    "kind",
    [pytest.param(k, marks=pytest.mark.slow) if k == "filesystem-s3" else k for k in CATALOG_KINDS],
)
@pytest.mark.parametrize("rewrite", [False, True], ids=["appends", "after-rewrite"])
def test_key_still_known_after_its_snapshot_expired(
    kind: str, rewrite: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    catalog = make_catalog(kind, request, tmp_path)
    try:
        before, first, again = _append_expire_append(catalog, rewrite=rewrite)
        assert before.metadata.snapshot_by_id(first.snapshot_id) is None  # really expired
        assert not again.committed
        assert again.snapshot_id == first.snapshot_id
        after = before.refresh()
        assert after.metadata_location == before.metadata_location  # nothing written
        assert _record_count(after) == 12
    finally:
        catalog.close()


def test_pyiceberg_reads_each_row_once_and_keeps_the_property(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    catalog = make_catalog("sqlite", None, tmp_path)  # type: ignore[arg-type]
    _append_expire_append(catalog, rewrite=False)
    py = PySqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    py_table = py.load_table("db.t")
    ids = sorted(py_table.scan().to_arrow().column("id").to_pylist())
    assert ids == [0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302]
    assert COMMIT_KEYS in py_table.properties


def test_rollback_lets_the_key_commit_again(tmp_path: Path) -> None:
    """A snapshot that is still in the metadata but no longer on the branch (rolled
    back) does not hold its key: re-running the rolled-back work commits again."""
    catalog = make_catalog("sqlite", None, tmp_path)  # type: ignore[arg-type]
    catalog.create_namespace("db")
    table = create_table(catalog, "db.t", SCHEMA)
    base = fast_append(table, _files(table, 0))
    keyed = fast_append(table.refresh(), _files(table, 10), commit_key="K")
    ManageSnapshots(table.refresh()).rollback_to(base.snapshot_id).commit()
    again = fast_append(table.refresh(), _files(table, 10), commit_key="K")
    assert again.committed
    assert again.snapshot_id != keyed.snapshot_id


def test_remember_bounds_by_age_and_count() -> None:
    now = 10_000_000_000
    props = {MAX_AGE_MS: "1000", MAX_COUNT: "3"}
    props = remember(props, "old", 1, now - 5000)
    for i, key in enumerate(("a", "b", "c", "d")):
        props = remember(props, key, 10 + i, now + i)
    entries = props[COMMIT_KEYS].split()
    assert len(entries) == 3  # "old" aged out, then "a" fell to the count bound
    digests = {e.split(":")[0] for e in entries}
    assert digests == {commit_keys.digest(k) for k in ("b", "c", "d")}


def test_recording_a_key_again_moves_it_to_the_newest() -> None:
    props = remember({MAX_COUNT: "2"}, "a", 1, 1000)
    props = remember(props, "b", 2, 1001)
    props = remember(props, "a", 3, 1002)
    props = remember(props, "c", 4, 1003)
    digests = [e.split(":")[0] for e in props[COMMIT_KEYS].split()]
    assert digests == [commit_keys.digest("a"), commit_keys.digest("c")]


class _RawProperties(PendingUpdate):
    """Sets properties without icewright's checks, as another engine would."""

    def __init__(self, properties: dict[str, str]) -> None:
        self._properties = properties

    def apply(self, base: TableMetadata) -> TableMetadata:
        return dataclasses.replace(
            base, properties=StringMap({**base.properties, **self._properties})
        )


def test_malformed_record_and_settings_never_stop_a_commit(tmp_path: Path) -> None:
    catalog = make_catalog("sqlite", None, tmp_path)  # type: ignore[arg-type]
    catalog.create_namespace("db")
    table = create_table(catalog, "db.t", SCHEMA)
    UpdateProperties(table).set(COMMIT_KEYS, "garbage x:y:z ::").commit()
    # an invalid bound, written by an engine that does not check it (icewright refuses it)
    commit_updates(table.refresh(), [_RawProperties({MAX_COUNT: "abc"})])
    result = fast_append(table.refresh(), _files(table, 0), commit_key="K")
    assert result.committed
    meta = table.refresh().metadata
    found = find_commit_key(meta, "main", "K")
    assert found is not None and found.snapshot_id == result.snapshot_id
    assert meta.properties[COMMIT_KEYS].split() == [
        e for e in meta.properties[COMMIT_KEYS].split() if e.count(":") == 2
    ]


def test_remembered_commit_reported_without_the_expired_details(tmp_path: Path) -> None:
    catalog = make_catalog("sqlite", None, tmp_path)  # type: ignore[arg-type]
    before, first, _ = _append_expire_append(catalog, rewrite=False)
    found = find_commit_key(before.metadata, "main", "K1")
    assert isinstance(found, RememberedCommit)
    assert found.snapshot_id == first.snapshot_id
    assert found.sequence_number is None
