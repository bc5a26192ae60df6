"""The catalog contract, run against every catalog kind (see ``conftest.catalog``).

Where the kinds differ by design (Glue has no nested namespaces; a file-system
table cannot be renamed), the test asserts each kind's documented behaviour.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from icewright.catalog import Catalog, Identifier, PropertiesUpdate
from icewright.errors import (
    AlreadyExists,
    CommitFailed,
    InvalidMetadata,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchFile,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
)
from icewright.spec.new_table import new_table_metadata
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC
from icewright.spec.sorting import UNSORTED_SORT_ORDER
from tests.catalog.helpers import SCHEMA, changed, metadata_files, run_threads, view_metadata

UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
POINTER_NAME = re.compile(rf"(\d{{5}})-{UUID4}\.metadata\.json")
HADOOP_NAME = re.compile(r"v(\d+)\.metadata\.json")


def is_filesystem(kind: str) -> bool:
    return kind.startswith("filesystem")


def file_version(kind: str, location: str) -> int:
    """The version number in a metadata file name, checking the kind's naming scheme."""
    name = location.rsplit("/", 1)[-1]
    if kind == "rest":  # Java names a compressed file <n>-<uuid>.gz.metadata.json
        name = name.replace(".gz.metadata.json", ".metadata.json")
    match = (HADOOP_NAME if is_filesystem(kind) else POINTER_NAME).fullmatch(name)
    assert match is not None, f"{name} does not follow the {kind} naming scheme"
    return int(match.group(1))


# --- namespaces ------------------------------------------------------------------


def test_namespace_lifecycle(catalog: Catalog) -> None:
    assert catalog.list_namespaces() == []
    assert not catalog.namespace_exists("db")
    catalog.create_namespace("db", {"owner": "alice", "team": "data"})
    assert catalog.namespace_exists("db")
    assert catalog.namespace_exists(("db",))
    assert catalog.list_namespaces() == [("db",)]
    assert catalog.load_namespace_properties("db") == {"owner": "alice", "team": "data"}

    summary = catalog.update_namespace_properties(
        "db", removals=["team", "absent"], updates={"owner": "bob", "tier": "gold"}
    )
    assert summary == PropertiesUpdate(
        removed=("team",), updated=("owner", "tier"), missing=("absent",)
    )
    assert catalog.load_namespace_properties("db") == {"owner": "bob", "tier": "gold"}

    catalog.create_namespace("db2")
    assert catalog.list_namespaces() == [("db",), ("db2",)]
    assert catalog.load_namespace_properties("db2") == {}

    catalog.drop_namespace("db")
    assert not catalog.namespace_exists("db")
    assert catalog.list_namespaces() == [("db2",)]


def test_create_existing_namespace_is_refused(catalog: Catalog) -> None:
    catalog.create_namespace("db", {"owner": "alice"})
    with pytest.raises(NamespaceAlreadyExists):
        catalog.create_namespace("db", {"owner": "mallory"})
    assert catalog.load_namespace_properties("db") == {"owner": "alice"}


def test_missing_namespace(catalog: Catalog) -> None:
    with pytest.raises(NoSuchNamespace):
        catalog.load_namespace_properties("nope")
    with pytest.raises(NoSuchNamespace):
        catalog.update_namespace_properties("nope", updates={"a": "b"})
    with pytest.raises(NoSuchNamespace):
        catalog.drop_namespace("nope")
    with pytest.raises(NoSuchNamespace):
        catalog.list_tables("nope")
    with pytest.raises(NoSuchNamespace):
        catalog.create_table("nope.t", SCHEMA)
    assert catalog.list_namespaces() == []


def test_overlapping_property_update_is_refused(catalog: Catalog) -> None:
    catalog.create_namespace("db", {"a": "1"})
    with pytest.raises(ValidationError, match="both removed and updated"):
        catalog.update_namespace_properties("db", removals=["a"], updates={"a": "2"})
    assert catalog.load_namespace_properties("db") == {"a": "1"}


def test_drop_non_empty_namespace_is_refused(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(NamespaceNotEmpty):
        catalog.drop_namespace("db")
    assert catalog.namespace_exists("db")
    assert catalog.list_tables("db") == [Identifier(("db",), "t")]
    catalog.drop_table("db.t")

    location = catalog.default_table_location("db.v")
    catalog.create_view("db.v", view_metadata(location, "SELECT 1"))
    with pytest.raises(NamespaceNotEmpty):
        catalog.drop_namespace("db")
    catalog.drop_view("db.v")
    catalog.drop_namespace("db")
    assert not catalog.namespace_exists("db")


def test_nested_namespaces(catalog: Catalog, catalog_kind: str) -> None:
    if catalog_kind == "glue":
        # Glue databases cannot nest: refused with a clear error, nothing created.
        with pytest.raises(ValidationError, match="nested"):
            catalog.create_namespace(("a", "b"))
        assert catalog.list_namespaces() == []
        return
    if catalog_kind == "rest":
        catalog.create_namespace("a")  # Java's InMemoryCatalog does not infer parents
    catalog.create_namespace(("a", "b"), {"k": "v"})
    catalog.create_namespace("a.c")
    assert catalog.namespace_exists("a.b")
    assert catalog.namespace_exists("a")  # a parent exists through its children
    assert catalog.list_namespaces() == [("a",)]
    assert catalog.list_namespaces("a") == [("a", "b"), ("a", "c")]
    assert catalog.load_namespace_properties(("a", "b")) == {"k": "v"}
    table = catalog.create_table("a.b.t", SCHEMA)
    assert table.location.endswith("/a/b/t")
    assert catalog.list_tables("a.b") == [Identifier(("a", "b"), "t")]
    assert catalog.list_tables("a") == []
    if catalog_kind == "rest":
        # Java's InMemoryCatalog (the test server) drops a namespace with children;
        # whether a REST server allows that is its own rule.
        return
    with pytest.raises(NamespaceNotEmpty):
        catalog.drop_namespace("a")


# --- tables ------------------------------------------------------------------------


def test_create_and_load_table(catalog: Catalog, catalog_kind: str) -> None:
    catalog.create_namespace("db")
    created = catalog.create_table("db.t", SCHEMA, properties={"owner": "alice"})
    assert created.identifier == Identifier(("db",), "t")
    assert created.location == catalog.default_table_location("db.t")
    assert file_version(catalog_kind, created.metadata_location) == (
        1 if is_filesystem(catalog_kind) else 0
    )
    assert created.metadata_location.startswith(created.location + "/metadata/")

    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == created.metadata_location
    assert loaded.metadata.table_uuid == created.metadata.table_uuid
    assert loaded.metadata.schema().same_structure(SCHEMA)
    assert loaded.metadata.properties["owner"] == "alice"
    assert loaded.metadata.format_version == 2
    assert loaded.refresh().metadata_location == created.metadata_location

    assert catalog.table_exists("db.t")
    assert not catalog.table_exists("db.other")
    assert not catalog.view_exists("db.t")
    assert catalog.list_tables("db") == [Identifier(("db",), "t")]
    assert catalog.list_views("db") == []
    with pytest.raises(NoSuchView):
        catalog.load_view("db.t")


def test_create_existing_table_is_refused(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    first = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(TableAlreadyExists):
        catalog.create_table("db.t", SCHEMA, properties={"x": "y"})
    assert catalog.load_table("db.t").metadata_location == first.metadata_location


def test_missing_table(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    with pytest.raises(NoSuchTable):
        catalog.load_table("db.nope")
    with pytest.raises(NoSuchTable):
        catalog.drop_table("db.nope")
    with pytest.raises(NoSuchTable):
        catalog.load_table("other.nope")
    assert not catalog.table_exists("db.nope")


def test_rename_table(catalog: Catalog, catalog_kind: str) -> None:
    catalog.create_namespace("db")
    catalog.create_namespace("db2")
    table = catalog.create_table("db.t", SCHEMA)
    if is_filesystem(catalog_kind):
        with pytest.raises(ValidationError, match="rename"):
            catalog.rename_table("db.t", "db2.u")
        assert catalog.load_table("db.t").metadata_location == table.metadata_location
        assert not catalog.table_exists("db2.u")
        return
    renamed = catalog.rename_table("db.t", "db2.u")
    assert renamed.identifier == Identifier(("db2",), "u")
    assert renamed.metadata.table_uuid == table.metadata.table_uuid
    assert renamed.metadata_location == table.metadata_location
    assert not catalog.table_exists("db.t")
    assert catalog.list_tables("db2") == [Identifier(("db2",), "u")]

    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(TableAlreadyExists):
        catalog.rename_table("db.t", "db2.u")
    with pytest.raises(NoSuchTable):
        catalog.rename_table("db.missing", "db2.w")
    with pytest.raises(NoSuchNamespace):
        catalog.rename_table("db.t", "nowhere.w")
    assert catalog.load_table("db2.u").metadata.table_uuid == table.metadata.table_uuid


def test_drop_table_keeps_files_unless_purged(catalog: Catalog, catalog_kind: str) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    io = catalog.file_io(table.location)
    catalog.drop_table("db.t")
    assert not catalog.table_exists("db.t")
    with pytest.raises(NoSuchTable):
        catalog.load_table("db.t")
    # The directory is the catalog entry of a file-system table (as in Iceberg
    # Java's Hadoop catalog); a pointer catalog only forgets the pointer.
    assert io.exists(table.metadata_location) is not is_filesystem(catalog_kind)
    # The name is free again.
    again = catalog.create_table("db.t", SCHEMA)
    assert again.metadata.table_uuid != table.metadata.table_uuid


def test_purge_deletes_every_metadata_file(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    second = catalog.commit_table("db.t", table.metadata_location, changed(table.metadata, a="1"))
    third_md = changed(catalog.load_table("db.t").metadata, b="2")
    third = catalog.commit_table("db.t", second, third_md)
    assert len(metadata_files(catalog, table.location)) == 3
    catalog.drop_table("db.t", purge=True)
    io = catalog.file_io(table.location)
    for location in (table.metadata_location, second, third):
        assert not io.exists(location)
    assert metadata_files(catalog, table.location) == []
    assert not catalog.table_exists("db.t")


def test_register_table(catalog: Catalog, tmp_path: Path) -> None:
    catalog.create_namespace("db")
    warehouse = catalog.warehouse or str(tmp_path)  # a REST catalog's is the server's
    io = catalog.file_io(warehouse)
    location = warehouse + "_external/ext"
    metadata = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, location
    )
    path = location + "/metadata/v7.metadata.json"
    io.write(path, metadata.to_json())

    registered = catalog.register_table("db.ext", path)
    loaded = catalog.load_table("db.ext")
    assert registered.metadata.table_uuid == metadata.table_uuid
    assert loaded.metadata.table_uuid == metadata.table_uuid
    assert loaded.metadata.location == location
    assert catalog.list_tables("db") == [Identifier(("db",), "ext")]
    with pytest.raises(TableAlreadyExists):
        catalog.register_table("db.ext", path)
    with pytest.raises(NoSuchFile):
        catalog.register_table("db.other", location + "/metadata/v8.metadata.json")
    assert not catalog.table_exists("db.other")


def test_create_table_from_metadata(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    metadata = new_table_metadata(
        SCHEMA,
        UNPARTITIONED_PARTITION_SPEC,
        UNSORTED_SORT_ORDER,
        catalog.default_table_location("db.t"),
        {"k": "v"},
    )
    table = catalog.create_table_from_metadata("db.t", metadata)
    assert catalog.load_table("db.t").metadata.table_uuid == metadata.table_uuid
    assert table.metadata.properties["k"] == "v"


# --- views ---------------------------------------------------------------------------


def test_view_lifecycle(catalog: Catalog, catalog_kind: str) -> None:
    catalog.create_namespace("db")
    location = catalog.default_table_location("db.v")
    first = catalog.create_view("db.v", view_metadata(location, "SELECT 1 AS id"))
    assert file_version(catalog_kind, first.metadata_location) == (
        1 if is_filesystem(catalog_kind) else 0
    )
    loaded = catalog.load_view("db.v")
    assert loaded.metadata.view_uuid == first.metadata.view_uuid
    sql = loaded.metadata.current_version().sql_for("spark")
    assert sql is not None
    assert sql.sql == "SELECT 1 AS id"
    assert catalog.view_exists("db.v")
    assert not catalog.table_exists("db.v")
    assert catalog.list_views("db") == [Identifier(("db",), "v")]
    assert catalog.list_tables("db") == []
    with pytest.raises(NoSuchTable):
        catalog.load_table("db.v")

    # Replace: a new version through commit_view.
    replaced = view_metadata(location, "SELECT 2 AS id", previous=loaded.metadata)
    new_location = catalog.commit_view("db.v", loaded.metadata_location, replaced)
    assert (
        file_version(catalog_kind, new_location)
        == file_version(catalog_kind, first.metadata_location) + 1
    )
    now = catalog.load_view("db.v")
    assert now.metadata_location == new_location
    assert now.metadata.current_version_id == 2
    current_sql = now.metadata.current_version().sql_for("spark")
    assert current_sql is not None
    assert current_sql.sql == "SELECT 2 AS id"

    # A stale base loses.
    stale = view_metadata(location, "SELECT 3 AS id", previous=loaded.metadata)
    with pytest.raises(CommitFailed):
        catalog.commit_view("db.v", loaded.metadata_location, stale)
    assert catalog.load_view("db.v").metadata_location == new_location

    catalog.drop_view("db.v")
    assert not catalog.view_exists("db.v")
    with pytest.raises(NoSuchView):
        catalog.load_view("db.v")
    with pytest.raises(NoSuchView):
        catalog.drop_view("db.v")


def test_tables_and_views_share_names(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA)
    location = catalog.default_table_location("db.v")
    catalog.create_view("db.v", view_metadata(location, "SELECT 1"))
    with pytest.raises(AlreadyExists):
        catalog.create_view("db.t", view_metadata(catalog.default_table_location("db.t"), "x"))
    with pytest.raises(TableAlreadyExists):
        catalog.create_table("db.v", SCHEMA)
    with pytest.raises(NoSuchView):
        catalog.drop_view("db.t")
    with pytest.raises(NoSuchTable):
        catalog.drop_table("db.v")
    assert catalog.table_exists("db.t")
    assert catalog.view_exists("db.v")


# --- the commit contract --------------------------------------------------------------


def test_commit_success(catalog: Catalog, catalog_kind: str) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    new_location = catalog.commit_table(
        "db.t", table.metadata_location, changed(table.metadata, note="first")
    )
    assert file_version(catalog_kind, new_location) == (
        file_version(catalog_kind, table.metadata_location) + 1
    )
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == new_location
    assert loaded.metadata.properties["note"] == "first"
    # The previous file is appended to metadata-log (spec: "Table Metadata Fields").
    log = loaded.metadata.metadata_log
    assert [e.metadata_file for e in log] == [table.metadata_location]
    assert log[-1].timestamp_ms == table.metadata.last_updated_ms

    third = catalog.commit_table("db.t", new_location, changed(loaded.metadata, note="second"))
    final = catalog.load_table("db.t")
    assert final.metadata_location == third
    assert [e.metadata_file for e in final.metadata.metadata_log] == [
        table.metadata_location,
        new_location,
    ]


def test_table_metadata_location_follows_commits(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    assert catalog.table_metadata_location("db.t") == table.metadata_location
    new_location = catalog.commit_table(
        "db.t", table.metadata_location, changed(table.metadata, note="first")
    )
    assert catalog.table_metadata_location(("db", "t")) == new_location
    with pytest.raises(NoSuchTable):
        catalog.table_metadata_location("db.missing")


def test_metadata_log_honours_previous_versions_max(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.metadata.previous-versions-max": "2"}
    )
    locations = [table.metadata_location]
    for i in range(3):
        current = catalog.load_table("db.t")
        new_metadata = changed(current.metadata, i=str(i))
        locations.append(catalog.commit_table("db.t", current.metadata_location, new_metadata))
    log = catalog.load_table("db.t").metadata.metadata_log
    assert [e.metadata_file for e in log] == locations[1:3]


def test_stale_base_fails_and_leaves_no_file(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    base = table.metadata_location
    winner = catalog.commit_table("db.t", base, changed(table.metadata, who="winner"))
    with pytest.raises(CommitFailed):
        catalog.commit_table("db.t", base, changed(table.metadata, who="loser"))
    loaded = catalog.load_table("db.t")
    assert loaded.metadata_location == winner
    assert loaded.metadata.properties["who"] == "winner"
    assert metadata_files(catalog, table.location) == sorted([base, winner])


def test_racing_commits_have_one_winner(catalog: Catalog, catalog_kind: str) -> None:
    if catalog_kind == "rest":
        # REST guards a commit with requirements, not the base location: two property
        # changes both apply (as Iceberg Java's own client commits them). The engine's
        # races over REST are in tests/commit/test_conflict_matrix.py.
        return
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    expected_files = [table.metadata_location]
    for round_ in range(3):
        base = catalog.load_table("db.t")

        def commit(who: str, base=base) -> str:
            return catalog.commit_table(
                "db.t", base.metadata_location, changed(base.metadata, who=who)
            )

        results = run_threads(lambda: commit("a"), lambda: commit("b"))
        wins = [r for r in results if isinstance(r, str)]
        losses = [r for r in results if isinstance(r, CommitFailed)]
        assert len(wins) == 1, f"round {round_}: {results}"
        assert len(losses) == 1, f"round {round_}: {results}"
        loaded = catalog.load_table("db.t")
        assert loaded.metadata_location == wins[0]
        assert loaded.metadata.properties["who"] == ("a" if results[0] == wins[0] else "b")
        expected_files.append(wins[0])
        # The loser's metadata file was deleted, or never written.
        assert metadata_files(catalog, table.location) == sorted(expected_files)


def test_commit_to_missing_table(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    catalog.drop_table("db.t")
    with pytest.raises(NoSuchTable):
        catalog.commit_table("db.t", table.metadata_location, changed(table.metadata))


def test_commit_refuses_wrong_metadata(catalog: Catalog) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    location = catalog.default_table_location("db.v")
    view = view_metadata(location, "SELECT 1")
    with pytest.raises(ValidationError):
        catalog.commit_table("db.t", table.metadata_location, view)  # type: ignore[arg-type]
    other = new_table_metadata(
        SCHEMA, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, table.location
    )
    with pytest.raises(ValidationError, match="table-uuid"):
        catalog.commit_table("db.t", table.metadata_location, other)
    assert catalog.load_table("db.t").metadata_location == table.metadata_location
    assert metadata_files(catalog, table.location) == [table.metadata_location]


# --- names and damaged files -------------------------------------------------------------

BAD_NAMES = [
    "..",
    "a..b",
    "../escape",
    "a/b",
    "a\\b",
    "'; DROP TABLE iceberg_tables; --",
    'quo"te',
    "it's",
    "sp ace",
    "tab\tbed",
    "nul\x00l",
    "semi;colon",
    "",
]


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_bad_names_are_refused_and_change_nothing(catalog: Catalog, bad: str) -> None:
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(ValidationError):
        catalog.create_namespace(bad if bad else ("",))
    with pytest.raises(ValidationError):
        catalog.create_table(("db", bad), SCHEMA)
    with pytest.raises(ValidationError):
        catalog.load_table(f"db.{bad}")
    with pytest.raises(ValidationError):
        catalog.drop_table(("db", bad))
    with pytest.raises(ValidationError):
        catalog.list_tables(bad if bad else ("",))
    assert catalog.list_namespaces() == [("db",)]
    assert catalog.list_tables("db") == [Identifier(("db",), "t")]
    assert catalog.load_table("db.t").metadata_location == table.metadata_location


def test_corrupt_metadata_file(catalog: Catalog, catalog_kind: str) -> None:
    if catalog_kind == "rest":
        pytest.skip("a REST client never reads metadata files: the server does")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    io = catalog.file_io(table.location)
    io.write(table.metadata_location, b'{"format-version": 2, "location": ')
    with pytest.raises(InvalidMetadata) as raised:
        catalog.load_table("db.t")
    assert table.metadata_location in str(raised.value)


def test_gzip_metadata_file_is_read(catalog: Catalog, catalog_kind: str) -> None:
    if catalog_kind == "rest":
        pytest.skip("a REST client never reads metadata files: the server does")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    io = catalog.file_io(table.location)
    io.write(table.metadata_location, gzip.compress(table.metadata.to_json()))
    loaded = catalog.load_table("db.t")
    assert loaded.metadata.table_uuid == table.metadata.table_uuid


def test_missing_metadata_file(catalog: Catalog, catalog_kind: str) -> None:
    if catalog_kind == "rest":
        pytest.skip("a REST client never reads metadata files: the server does")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    catalog.file_io(table.location).delete(table.metadata_location)
    if is_filesystem(catalog_kind):
        # The version file is the whole table: without it there is no table.
        with pytest.raises(NoSuchTable):
            catalog.load_table("db.t")
    else:
        with pytest.raises(NoSuchFile) as raised:
            catalog.load_table("db.t")
        assert table.metadata_location in str(raised.value)
