"""Glue-catalog specifics, on moto's in-process Glue (``mock_aws``).

``glue_mock`` (conftest) adds AWS Glue's ``VersionId`` check to moto;
``test_moto_alone_ignores_version_id`` shows why it is needed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import GlueCatalog, Identifier
from icewright.errors import (
    CommitFailed,
    CommitStateUnknown,
    MissingDependency,
    NoSuchTable,
    ValidationError,
)
from tests.catalog.helpers import SCHEMA, changed, metadata_files, view_metadata
from tests.support.catalogs import GLUE_PROPERTIES


@pytest.fixture
def glue(glue_mock: None, tmp_path: Path) -> Iterator[GlueCatalog]:
    cat = GlueCatalog("glue", str(tmp_path / "wh"), **GLUE_PROPERTIES)
    cat.create_namespace("db")
    yield cat


class _Interposer:
    """A boto3 Glue client whose ``update_table`` runs ``before``/``instead`` hooks."""

    def __init__(self, client: Any, update_table: Any) -> None:
        self._client = client
        self.update_table = update_table

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _client_error(code: str, status: int) -> Exception:
    from botocore.exceptions import ClientError

    response: Any = {
        "Error": {"Code": code, "Message": "injected"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, "UpdateTable")


def test_glue_entries_look_like_iceberg_java_writes_them(glue: GlueCatalog) -> None:
    table = glue.create_table("db.t", SCHEMA)
    assert table.location.endswith("/wh/db.db/t")  # Java's Glue default: <warehouse>/<db>.db/<t>
    entry = glue.client.get_table(DatabaseName="db", Name="t")["Table"]
    assert entry["TableType"] == "EXTERNAL_TABLE"
    assert entry["Parameters"]["table_type"] == "ICEBERG"
    assert entry["Parameters"]["metadata_location"] == table.metadata_location
    assert "previous_metadata_location" not in entry["Parameters"]
    assert entry["StorageDescriptor"]["Location"] == table.location
    assert [(c["Name"], c["Type"]) for c in entry["StorageDescriptor"]["Columns"]] == [
        ("id", "bigint"),
        ("name", "string"),
    ]
    new = glue.commit_table("db.t", table.metadata_location, changed(table.metadata))
    entry = glue.client.get_table(DatabaseName="db", Name="t")["Table"]
    assert entry["Parameters"]["metadata_location"] == new
    assert entry["Parameters"]["previous_metadata_location"] == table.metadata_location

    glue.create_view("db.v", view_metadata(glue.default_table_location("db.v"), "SELECT 1"))
    view = glue.client.get_table(DatabaseName="db", Name="v")["Table"]
    assert view["TableType"] == "VIRTUAL_VIEW"
    assert view["Parameters"]["table_type"] == "ICEBERG-VIEW"


def test_namespace_location_and_comment_map_to_database_fields(glue: GlueCatalog) -> None:
    glue.create_namespace("located", {"location": "/data/located", "comment": "hi", "x": "1"})
    database = glue.client.get_database(Name="located")["Database"]
    assert database["LocationUri"] == "/data/located"
    assert database["Description"] == "hi"
    assert database["Parameters"] == {"x": "1"}
    assert glue.default_table_location("located.t") == "/data/located/t"


def test_stale_version_id_is_a_failed_commit(glue: GlueCatalog, tmp_path: Path) -> None:
    table = glue.create_table("db.t", SCHEMA)
    rival = GlueCatalog("rival", str(tmp_path / "wh"), **GLUE_PROPERTIES)
    real_update = glue.client.update_table
    rival_won: list[str] = []

    def update_after_rival(**kwargs: Any) -> Any:
        # Another writer commits between our read (pointer + VersionId) and our update.
        rival_won.append(
            rival.commit_table("db.t", table.metadata_location, changed(table.metadata, w="r"))
        )
        return real_update(**kwargs)

    glue._client = _Interposer(glue.client, update_after_rival)
    with pytest.raises(CommitFailed, match="another writer"):
        glue.commit_table("db.t", table.metadata_location, changed(table.metadata, w="us"))
    loaded = rival.load_table("db.t")
    assert loaded.metadata_location == rival_won[0]
    assert loaded.metadata.properties["w"] == "r"
    assert metadata_files(rival, table.location) == sorted([table.metadata_location, rival_won[0]])


def test_moto_alone_ignores_version_id(tmp_path: Path) -> None:
    # Why glue_mock exists: moto 5.2 applies an UpdateTable with a stale VersionId.
    from moto import mock_aws

    with mock_aws():
        cat = GlueCatalog("plain", str(tmp_path / "wh"), **GLUE_PROPERTIES)
        cat.create_namespace("db")
        table = cat.create_table("db.t", SCHEMA)
        entry = cat.client.get_table(DatabaseName="db", Name="t")["Table"]
        cat.commit_table("db.t", table.metadata_location, changed(table.metadata))
        cat.client.update_table(
            DatabaseName="db",
            TableInput={"Name": "t", "Parameters": entry["Parameters"]},
            VersionId=entry["VersionId"],
        )
        after = cat.client.get_table(DatabaseName="db", Name="t")["Table"]
        assert after["Parameters"]["metadata_location"] == table.metadata_location


def test_update_applied_but_answered_with_an_error_is_a_success(glue: GlueCatalog) -> None:
    table = glue.create_table("db.t", SCHEMA)
    real_update = glue.client.update_table

    def applied_then_error(**kwargs: Any) -> Any:
        real_update(**kwargs)
        raise _client_error("InternalServiceException", 500)

    glue._client = _Interposer(glue.client, applied_then_error)
    new = glue.commit_table("db.t", table.metadata_location, changed(table.metadata))
    assert glue.load_table("db.t").metadata_location == new


def test_update_failing_without_an_answer_is_unknown_and_keeps_the_file(
    glue: GlueCatalog,
) -> None:
    table = glue.create_table("db.t", SCHEMA)

    def unanswered(**kwargs: Any) -> Any:
        raise _client_error("InternalServiceException", 500)

    glue._client = _Interposer(glue.client, unanswered)
    with pytest.raises(CommitStateUnknown):
        glue.commit_table("db.t", table.metadata_location, changed(table.metadata))
    assert glue.load_table("db.t").metadata_location == table.metadata_location
    assert len(metadata_files(glue, table.location)) == 2


def test_refused_update_is_definite_and_cleans_up(glue: GlueCatalog) -> None:
    table = glue.create_table("db.t", SCHEMA)

    def denied(**kwargs: Any) -> Any:
        raise _client_error("AccessDeniedException", 400)

    glue._client = _Interposer(glue.client, denied)
    with pytest.raises(ValidationError, match="refused"):
        glue.commit_table("db.t", table.metadata_location, changed(table.metadata))
    assert metadata_files(glue, table.location) == [table.metadata_location]


def test_other_glue_tables_are_not_iceberg_tables(glue: GlueCatalog) -> None:
    glue.client.create_table(
        DatabaseName="db",
        TableInput={"Name": "hive_t", "TableType": "EXTERNAL_TABLE", "Parameters": {}},
    )
    glue.create_table("db.t", SCHEMA)
    assert glue.list_tables("db") == [Identifier(("db",), "t")]
    with pytest.raises(NoSuchTable, match="not an Iceberg"):
        glue.load_table("db.hive_t")


@pytest.mark.parametrize("name", ["Upper", "with-hyphen", "ümlaut"])
def test_glue_name_rules(glue: GlueCatalog, name: str) -> None:
    with pytest.raises(ValidationError, match="lower case"):
        glue.create_table(("db", name), SCHEMA)
    with pytest.raises(ValidationError, match="lower case"):
        glue.create_namespace(name)
    assert glue.list_namespaces() == [("db",)]


def test_pyiceberg_glue_catalog_reads_icewright_tables_and_back(glue: GlueCatalog) -> None:
    from pyiceberg.catalog.glue import GlueCatalog as PyIcebergGlueCatalog

    theirs = PyIcebergGlueCatalog("glue", **GLUE_PROPERTIES)
    table = glue.create_table("db.t", SCHEMA)
    loaded = theirs.load_table("db.t")
    assert loaded.metadata_location == table.metadata_location
    assert [f.name for f in loaded.schema().fields] == ["id", "name"]
    assert loaded.current_snapshot() is None

    theirs.create_table("db.p", schema=loaded.schema(), location=glue.warehouse + "/p")
    mine = glue.load_table("db.p")
    assert mine.metadata_location == theirs.load_table("db.p").metadata_location
    new = glue.commit_table("db.p", mine.metadata_location, changed(mine.metadata, z="1"))
    assert theirs.load_table("db.p").metadata_location == new


def test_missing_boto3_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(MissingDependency, match=r"icewright\[aws\]"):
        GlueCatalog("x", "/tmp/wh")
