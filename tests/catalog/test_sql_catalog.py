"""SQL-catalog specifics: unknown outcomes, the JDBC schema, LIKE escaping, catalog names.

Faults are injected with SQLAlchemy event hooks on a real SQLite engine, so the
database really applies (or never sees) the UPDATE the hook interferes with.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from icewright.catalog import Identifier, SqlCatalog
from icewright.errors import CommitFailed, CommitStateUnknown, ValidationError
from icewright.spec.new_table import new_table_metadata
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC
from icewright.spec.sorting import UNSORTED_SORT_ORDER
from tests.catalog.helpers import SCHEMA, changed, metadata_files


@pytest.fixture
def sql(tmp_path: Path) -> Iterator[SqlCatalog]:
    cat = SqlCatalog("test", f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "wh"))
    yield cat
    cat.close()


def _is_swap(statement: str) -> bool:
    return statement.lstrip().upper().startswith("UPDATE ICEBERG_TABLES SET METADATA_LOCATION")


def _pointer(sql: SqlCatalog, name: str) -> str:
    with sql.engine.connect() as conn:
        return str(
            conn.execute(
                sa.text("SELECT metadata_location FROM iceberg_tables WHERE table_name = :n"),
                {"n": name},
            ).scalar_one()
        )


def test_swap_applied_but_reported_as_failed_is_a_success(sql: SqlCatalog) -> None:
    sql.create_namespace("db")
    table = sql.create_table("db.t", SCHEMA)

    def applied_then_lost(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if _is_swap(statement):
            conn.connection.dbapi_connection.commit()  # the database has applied it
            raise sqlite3.OperationalError("disk I/O error")  # ... but the caller hears this

    sa.event.listen(sql.engine, "after_cursor_execute", applied_then_lost)
    try:
        location = sql.commit_table("db.t", table.metadata_location, changed(table.metadata))
    finally:
        sa.event.remove(sql.engine, "after_cursor_execute", applied_then_lost)
    assert _pointer(sql, "t") == location
    assert sql.load_table("db.t").metadata_location == location
    assert sql.file_io().exists(location)


def test_swap_failing_before_the_database_is_unknown_and_keeps_the_file(sql: SqlCatalog) -> None:
    sql.create_namespace("db")
    table = sql.create_table("db.t", SCHEMA)

    def connection_lost(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if _is_swap(statement):
            raise sqlite3.OperationalError("unable to open database file")

    sa.event.listen(sql.engine, "before_cursor_execute", connection_lost)
    try:
        with pytest.raises(CommitStateUnknown):
            sql.commit_table("db.t", table.metadata_location, changed(table.metadata))
    finally:
        sa.event.remove(sql.engine, "before_cursor_execute", connection_lost)
    assert _pointer(sql, "t") == table.metadata_location
    files = metadata_files(sql, table.location)
    assert len(files) == 2, "the attempt's metadata file must not be deleted"
    assert table.metadata_location in files


def test_swap_losing_to_a_concurrent_writer_deletes_its_file(sql: SqlCatalog) -> None:
    sql.create_namespace("db")
    table = sql.create_table("db.t", SCHEMA)
    winner = sql.commit_table("db.t", table.metadata_location, changed(table.metadata, w="1"))
    # Put the pointer back, then let another writer move it in between our
    # pre-check and our UPDATE: only the conditional UPDATE can notice.
    with sql.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE iceberg_tables SET metadata_location = :b"),
            {"b": table.metadata_location},
        )
    fired: list[bool] = []

    def concurrent_writer(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if _is_swap(statement) and not fired:
            fired.append(True)
            other = sqlite3.connect(sql.engine.url.database)
            other.execute("UPDATE iceberg_tables SET metadata_location = ?", (winner,))
            other.commit()
            other.close()

    sa.event.listen(sql.engine, "before_cursor_execute", concurrent_writer)
    try:
        with pytest.raises(CommitFailed):
            sql.commit_table("db.t", table.metadata_location, changed(table.metadata, w="2"))
    finally:
        sa.event.remove(sql.engine, "before_cursor_execute", concurrent_writer)
    assert fired
    assert _pointer(sql, "t") == winner
    assert metadata_files(sql, table.location) == sorted([table.metadata_location, winner])


def test_schema_matches_the_jdbc_catalog(sql: SqlCatalog) -> None:
    inspector = sa.inspect(sql.engine)
    tables = {c["name"]: c for c in inspector.get_columns("iceberg_tables")}
    assert list(tables) == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    assert tables["metadata_location"]["type"].length == 1000
    assert tables["iceberg_type"]["type"].length == 5
    assert inspector.get_pk_constraint("iceberg_tables")["constrained_columns"] == [
        "catalog_name",
        "table_namespace",
        "table_name",
    ]
    props = {c["name"]: c for c in inspector.get_columns("iceberg_namespace_properties")}
    assert list(props) == ["catalog_name", "namespace", "property_key", "property_value"]
    assert inspector.get_pk_constraint("iceberg_namespace_properties")["constrained_columns"] == [
        "catalog_name",
        "namespace",
        "property_key",
    ]


def test_rows_written_as_java_and_pyiceberg_expect(sql: SqlCatalog) -> None:
    sql.create_namespace("db", {"owner": "alice"})
    table = sql.create_table("db.t", SCHEMA)
    new = sql.commit_table("db.t", table.metadata_location, changed(table.metadata))
    with sql.engine.connect() as conn:
        row = conn.execute(sa.text("SELECT * FROM iceberg_tables")).mappings().one()
        props = conn.execute(
            sa.text("SELECT property_key, property_value FROM iceberg_namespace_properties")
        ).all()
    assert dict(row) == {
        "catalog_name": "test",
        "table_namespace": "db",
        "table_name": "t",
        "metadata_location": new,
        "previous_metadata_location": table.metadata_location,
        "iceberg_type": "TABLE",
    }
    assert sorted(props) == [("exists", "true"), ("owner", "alice")]
    # The marker is internal: hidden from properties, and reserved.
    assert sql.load_namespace_properties("db") == {"owner": "alice"}
    with pytest.raises(ValidationError, match="reserved"):
        sql.update_namespace_properties("db", updates={"exists": "false"})


def test_v0_database_gets_iceberg_type_and_null_rows_are_tables(tmp_path: Path) -> None:
    db = tmp_path / "v0.db"
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, str(tmp_path / "wh/db/old")
    )
    location = str(tmp_path / "wh/db/old/metadata/00000-legacy.metadata.json")
    Path(location).parent.mkdir(parents=True)
    Path(location).write_bytes(metadata.to_json())
    # The tables as Iceberg Java's V0 schema (and pyiceberg's v0 mode) create them.
    raw = sqlite3.connect(db)
    raw.execute(
        "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL, "
        "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
        "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
        "PRIMARY KEY (catalog_name, table_namespace, table_name))"
    )
    raw.execute(
        "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL, "
        "namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255), "
        "property_value VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))"
    )
    raw.execute("INSERT INTO iceberg_tables VALUES ('test', 'db', 'old', ?, NULL)", (location,))
    raw.commit()
    raw.close()

    cat = SqlCatalog("test", f"sqlite:///{db}", str(tmp_path / "wh"))
    columns = [c["name"] for c in sa.inspect(cat.engine).get_columns("iceberg_tables")]
    assert "iceberg_type" in columns
    assert cat.namespace_exists("db")  # through its table row
    assert cat.list_tables("db") == [Identifier(("db",), "old")]
    table = cat.load_table("db.old")
    assert table.metadata.table_uuid == metadata.table_uuid
    new = cat.commit_table("db.old", location, changed(table.metadata))
    assert cat.load_table("db.old").metadata_location == new
    assert cat.list_views("db") == []
    cat.close()


def test_catalog_names_keep_catalogs_apart(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/shared.db"
    a = SqlCatalog("a", uri, str(tmp_path / "wh_a"))
    b = SqlCatalog("b", uri, str(tmp_path / "wh_b"))
    a.create_namespace("db")
    a.create_table("db.t", SCHEMA)
    assert b.list_namespaces() == []
    assert not b.table_exists("db.t")
    b.create_namespace("db")
    tb = b.create_table("db.t", SCHEMA)
    assert a.load_table("db.t").metadata.table_uuid != tb.metadata.table_uuid
    b.drop_table("db.t")
    assert a.table_exists("db.t")
    a.close()
    b.close()


def test_like_wildcards_in_names_are_escaped(sql: SqlCatalog) -> None:
    sql.create_namespace("axb.c")
    # Unescaped, 'a_b' would match 'axb' ('_' is LIKE's any-character wildcard).
    assert not sql.namespace_exists("a_b")
    assert sql.namespace_exists("axb")
    sql.create_namespace("a_b")
    sql.create_table("a_b.t", SCHEMA)
    assert sql.list_tables("a_b") == [Identifier(("a_b",), "t")]
    assert sql.list_namespaces("axb") == [("axb", "c")]


def test_values_are_bound_not_spliced(sql: SqlCatalog) -> None:
    payload = "'; DROP TABLE iceberg_tables; --"
    sql.create_namespace("db", {"comment": payload})
    assert sql.load_namespace_properties("db") == {"comment": payload}
    assert sa.inspect(sql.engine).has_table("iceberg_tables")


def test_in_memory_database(tmp_path: Path) -> None:
    cat = SqlCatalog("mem", "sqlite://", str(tmp_path / "wh"))
    cat.create_namespace("db")
    table = cat.create_table("db.t", SCHEMA)
    assert cat.load_table("db.t").metadata_location == table.metadata_location
    cat.close()


def test_property_and_location_limits(sql: SqlCatalog) -> None:
    with pytest.raises(ValidationError, match="too long"):
        sql.create_namespace("db", {"k": "v" * 1001})
    assert sql.list_namespaces() == []
    sql.create_namespace("db")
    with pytest.raises(ValidationError, match="1000"):
        sql.create_table("db.t", SCHEMA, location=str(Path(sql.warehouse) / ("x" * 990)))
    assert sql.list_tables("db") == []


def test_bad_uri_and_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="database URL"):
        SqlCatalog("x", "not a url", str(tmp_path))
    with pytest.raises(ValidationError, match="does not exist"):
        SqlCatalog("x", f"sqlite:///{tmp_path}/missing/dir/c.db", str(tmp_path))


def test_namespace_location_property_places_tables(sql: SqlCatalog, tmp_path: Path) -> None:
    sql.create_namespace("db", {"location": str(tmp_path / "custom")})
    sql.create_namespace("plain")
    assert sql.create_table("db.t", SCHEMA).location == str(tmp_path / "custom" / "t")
    assert sql.create_table("plain.t", SCHEMA).location == f"{sql.warehouse}/plain/t"


def test_unsupported_location_scheme_is_refused(sql: SqlCatalog) -> None:
    sql.create_namespace("db")
    with pytest.raises(ValidationError, match="Unsupported location"):
        sql.create_table("db.t", SCHEMA, location="hdfs://nn/warehouse/t")
    assert sql.list_tables("db") == []
