"""Metadata cleanup after commit (``write.metadata.delete-after-commit.enabled``).

Every catalog kind that writes metadata files commits past
``write.metadata.previous-versions-max`` through the commit engine, and the metadata
directory is counted: exactly the files the new log lists and the current one remain.
An unknown outcome, a lost race and the property left false delete nothing.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from icewright.catalog import Catalog, SqlCatalog, Table
from icewright.catalog.metadata_log import removed_metadata_files
from icewright.commit.properties import UpdateProperties
from icewright.errors import CommitFailed, CommitStateUnknown
from icewright.spec.snapshots import MetadataLogEntry
from tests.catalog.helpers import SCHEMA, metadata_files
from tests.support.catalogs import make_catalog

KINDS = ("sqlite", "filesystem-local", "filesystem-s3", "glue")
CLEANUP = {
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "3",
}


@pytest.fixture(params=KINDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Catalog]:
    """An empty catalog with namespace ``db``, of each kind that writes metadata files."""
    cat = make_catalog(request.param, request, tmp_path)
    cat.create_namespace("db")
    try:
        yield cat
    finally:
        cat.close()


def commit(table: Table, n: int) -> Table:
    """``table`` after ``n`` property commits through the commit engine."""
    for i in range(n):
        table = UpdateProperties(table).set("n", str(i)).commit().table
    return table


def expected_files(table: Table) -> list[str]:
    """The files a cleaned-up table keeps: its log's and its current one."""
    logged = [e.metadata_file for e in table.metadata.metadata_log]
    return sorted([*logged, table.metadata_location])


def test_commits_past_the_maximum_keep_only_the_logged_files(catalog: Catalog) -> None:
    table = commit(catalog.create_table("db.t", SCHEMA, properties=CLEANUP), 8)
    assert len(table.metadata.metadata_log) == 3
    assert metadata_files(catalog, table.location) == expected_files(table)
    assert len(metadata_files(catalog, table.location)) == 4  # 3 previous + the current one
    # The table still loads, and each commit went on deleting one file.
    table = commit(catalog.load_table("db.t"), 2)
    assert metadata_files(catalog, table.location) == expected_files(table)


def test_without_the_property_nothing_is_deleted(catalog: Catalog) -> None:
    props = {"write.metadata.previous-versions-max": "3"}
    table = commit(catalog.create_table("db.t", SCHEMA, properties=props), 8)
    assert len(table.metadata.metadata_log) == 3  # the log is trimmed all the same
    assert len(metadata_files(catalog, table.location)) == 9


def test_lowering_the_maximum_deletes_every_dropped_file(catalog: Catalog) -> None:
    props = {**CLEANUP, "write.metadata.previous-versions-max": "6"}
    table = commit(catalog.create_table("db.t", SCHEMA, properties=props), 8)
    assert len(metadata_files(catalog, table.location)) == 7
    table = UpdateProperties(table).set("write.metadata.previous-versions-max", "2").commit().table
    assert len(table.metadata.metadata_log) == 2
    assert metadata_files(catalog, table.location) == expected_files(table)


def test_a_lost_race_deletes_nothing(catalog: Catalog) -> None:
    table = commit(catalog.create_table("db.t", SCHEMA, properties=CLEANUP), 5)
    before = metadata_files(catalog, table.location)
    commit(catalog.load_table("db.t"), 1)  # another writer moves the table on
    after_rival = metadata_files(catalog, table.location)
    stale = UpdateProperties(table).set("x", "1").apply(table.metadata)
    stale = stale.with_previous_metadata(table.metadata_location, table.metadata.last_updated_ms)
    with pytest.raises(CommitFailed):
        catalog.commit_table("db.t", table.metadata_location, stale)
    assert metadata_files(catalog, table.location) == after_rival
    assert len(after_rival) == len(before)  # the rival's commit dropped one, added one


def test_only_the_files_dropped_from_the_log_are_named() -> None:
    def log(*names: str) -> Any:
        return tuple(MetadataLogEntry(i, n) for i, n in enumerate(names))

    class M:
        def __init__(self, *names: str) -> None:
            self.metadata_log = log(*names)

    base, new = M("a", "b", "c"), M("c", "d")
    assert removed_metadata_files(base, new, "e") == ["a", "b"]  # type: ignore[arg-type]
    # a log entry that names the new file (a registered table's odd history) stays
    assert removed_metadata_files(M("e", "a"), M("a"), "e") == []  # type: ignore[arg-type]


def test_a_failed_delete_is_logged_and_the_commit_stands(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sql = SqlCatalog("test", f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh"))
    sql.create_namespace("db")
    table = commit(sql.create_table("db.t", SCHEMA, properties=CLEANUP), 4)
    before = metadata_files(sql, table.location)
    assert len(before) == 4  # the log is full: the next commit drops its oldest entry
    io = sql.file_io(table.location)

    def refuse(paths: Any) -> list[tuple[str, Exception]]:
        return [(p, PermissionError("read-only storage")) for p in paths]

    monkeypatch.setattr(io, "delete_many", refuse)
    with caplog.at_level(logging.WARNING, logger="icewright.catalog.metadata_log"):
        table = commit(table, 1)
    assert sql.load_table("db.t").metadata_location == table.metadata_location
    assert "could not delete previous metadata file" in caplog.text
    # The dropped file stays (orphan removal takes it later); no error was raised.
    assert metadata_files(sql, table.location) == sorted([*before, table.metadata_location])


# --- unknown outcomes: nothing is deleted --------------------------------------------------


def _full_log(catalog: Catalog) -> tuple[Table, list[str]]:
    """A table whose log is full, so that a successful commit would delete a file."""
    table = commit(catalog.create_table("db.t", SCHEMA, properties=CLEANUP), 5)
    files = metadata_files(catalog, table.location)
    assert len(files) == 4
    return table, files


def _unknown_commit_keeps_everything(catalog: Catalog, table: Table, before: list[str]) -> None:
    with pytest.raises(CommitStateUnknown):
        UpdateProperties(table).set("x", "1").commit()
    after = metadata_files(catalog, table.location)
    assert set(before) <= set(after)  # every previous file is still there
    assert len(after) == len(before) + 1  # and the attempt's file too


def test_sql_unknown_outcome_deletes_nothing(tmp_path: Any) -> None:
    sql = SqlCatalog("test", f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh"))
    sql.create_namespace("db")
    table, before = _full_log(sql)

    def connection_lost(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE ICEBERG_TABLES SET METADATA_LOCATION"):
            raise sqlite3.OperationalError("unable to open database file")

    sa.event.listen(sql.engine, "before_cursor_execute", connection_lost)
    try:
        _unknown_commit_keeps_everything(sql, table, before)
    finally:
        sa.event.remove(sql.engine, "before_cursor_execute", connection_lost)
    assert sql.load_table("db.t").metadata_location == table.metadata_location


def test_glue_unknown_outcome_deletes_nothing(glue_mock: None, tmp_path: Any) -> None:
    from icewright.catalog import GlueCatalog
    from tests.catalog.test_glue_catalog import _client_error, _Interposer
    from tests.support.catalogs import GLUE_PROPERTIES

    glue = GlueCatalog("glue", str(tmp_path / "wh"), **GLUE_PROPERTIES)
    glue.create_namespace("db")
    table, before = _full_log(glue)

    def unanswered(**kwargs: Any) -> Any:
        raise _client_error("InternalServiceException", 500)

    glue._client = _Interposer(glue.client, unanswered)
    _unknown_commit_keeps_everything(glue, table, before)


def test_object_store_unknown_outcome_deletes_nothing(
    s3_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from icewright.catalog import FileSystemCatalog

    catalog = FileSystemCatalog("test", f"s3://{s3_server.new_bucket()}/wh", **s3_server.properties)
    catalog.create_namespace("db")
    table, before = _full_log(catalog)
    io = catalog.file_io(table.location)

    def connection_reset(path: str, data: bytes) -> None:
        raise ConnectionResetError("connection reset by peer")  # may or may not have landed

    monkeypatch.setattr(io, "create", connection_reset)
    with pytest.raises(CommitStateUnknown):
        UpdateProperties(table).set("x", "1").commit()
    monkeypatch.undo()
    assert metadata_files(catalog, table.location) == before


# --- Iceberg Java reads what is left ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.interop
def test_iceberg_java_reads_a_cleaned_up_table(tmp_path: Any, iceberg_java: Any) -> None:
    """A file-system table (Iceberg Java's Hadoop layout) appended to past the maximum:
    Java's Hadoop catalog finds its current version, reads every row and parses a log
    whose files all exist."""
    from icewright.arrow import rows_to_arrow, write_data_files
    from icewright.catalog import FileSystemCatalog
    from icewright.commit.append import fast_append

    catalog = FileSystemCatalog("test", str(tmp_path / "wh"))
    catalog.create_namespace("db")
    props = {**CLEANUP, "write.metadata.previous-versions-max": "2"}
    table = catalog.create_table("db.t", SCHEMA, properties=props)
    expected = []
    for i in range(6):
        batch = [{"id": 10 * i + j, "name": f"r{i}"} for j in range(3)]
        expected += [(r["id"], r["name"]) for r in batch]
        files = write_data_files(table.io, table.metadata, rows_to_arrow(SCHEMA, batch))
        table = fast_append(table, files).table
    left = metadata_files(catalog, table.location)
    assert left == expected_files(table) and len(left) == 3
    with iceberg_java.batch() as batch:
        by_name = batch.scan(warehouse=tmp_path / "wh", table="db.t")
        by_file = batch.scan(table.metadata_location)
        parsed = batch.parse_table_metadata(table.metadata_location)
    assert by_name.value.rows == sorted(expected)
    assert by_file.value.rows == sorted(expected)
    logged = [e["metadata_file"] for e in parsed.value["metadata_log"]]
    assert sorted([*logged, table.metadata_location]) == left
