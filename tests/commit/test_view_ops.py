"""Views: create, replace and drop on the SQLite and file-system catalogs.

Expectations come from the view spec and Iceberg Java's ``ViewMetadata.Builder`` /
``ViewVersionReplace``; the metadata files round-trip through icewright's and
pyiceberg's ``ViewMetadata`` parsers and Iceberg Java's ``ViewMetadataParser``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import FileSystemCatalog, SqlCatalog
from icewright.commit.view_ops import create_view, drop_view, replace_view
from icewright.errors import (
    CommitFailed,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
    ViewAlreadyExists,
)
from icewright.spec.schema import Schema
from icewright.spec.types import IntegerType, LongType, NestedField, StringType
from icewright.spec.view_metadata import ViewMetadata
from tests.commit.support import SCHEMA

VIEW_SCHEMA = Schema(NestedField(1, "region", StringType()), NestedField(2, "n", LongType()))
OTHER_SCHEMA = Schema(NestedField(1, "region", StringType()), NestedField(2, "n", IntegerType()))
SQL = "SELECT region, count(*) AS n FROM db.orders GROUP BY region"


class RacingViews:
    """Real catalogs whose next view swap first lets another writer commit (a real lost
    race), or fails as if one had."""

    before_commit: Callable[[], object] | None = None
    fail_next = 0

    def commit_view(self, identifier: Any, base: str, new: ViewMetadata) -> str:
        hook, self.before_commit = self.before_commit, None
        if hook is not None:
            hook()
        if self.fail_next:
            self.fail_next -= 1
            raise CommitFailed("injected: the pointer moved")
        return super().commit_view(identifier, base, new)  # type: ignore[misc, no-any-return]


class RacingSql(RacingViews, SqlCatalog):
    pass


class RacingFs(RacingViews, FileSystemCatalog):
    pass


@pytest.fixture(params=["sql", "fs"])
def cat(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sql":
        c: Any = RacingSql("test", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "w"))
    else:
        c = RacingFs("test", str(tmp_path / "fswh"))
    c.create_namespace("db")
    yield c
    c.close()


def read_json(view: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(view.io.read(view.metadata_location))
    return doc


def test_create_writes_spec_metadata(cat: Any) -> None:
    view = create_view(cat, "db.v", SQL, VIEW_SCHEMA, comment="counts", properties={"p": "1"})
    doc = read_json(view)
    assert doc["format-version"] == 1 and doc["current-version-id"] == 1
    assert doc["location"] == cat.default_table_location("db.v")
    assert doc["properties"] == {"p": "1", "comment": "counts"}
    assert [s["schema-id"] for s in doc["schemas"]] == [0]
    (version,) = doc["versions"]
    assert version["version-id"] == 1 and version["schema-id"] == 0
    assert version["default-namespace"] == ["db"] and "default-catalog" not in version
    assert version["summary"]["engine-name"] == "icewright"
    assert version["representations"] == [{"type": "sql", "sql": SQL, "dialect": "spark"}]
    assert doc["version-log"] == [{"timestamp-ms": version["timestamp-ms"], "version-id": 1}]
    # icewright's and pyiceberg's parsers both read the file back.
    assert ViewMetadata.from_json(view.io.read(view.metadata_location)) == view.metadata
    from pyiceberg.view.metadata import ViewMetadata as PyViewMetadata

    theirs = PyViewMetadata.model_validate_json(view.io.read(view.metadata_location))
    assert theirs.current_version_id == 1 and str(theirs.view_uuid) == str(view.metadata.view_uuid)
    assert cat.load_view("db.v").metadata == view.metadata


def test_create_conflicts(cat: Any) -> None:
    view = create_view(cat, "db.v", SQL, VIEW_SCHEMA)
    with pytest.raises(ViewAlreadyExists):
        create_view(cat, "db.v", SQL, VIEW_SCHEMA)
    same = create_view(cat, "db.v", "SELECT 1", VIEW_SCHEMA, if_not_exists=True)
    assert same.metadata_location == view.metadata_location
    replaced = create_view(cat, "db.v", "SELECT 2 AS n", VIEW_SCHEMA, or_replace=True)
    assert replaced.metadata.current_version_id == 2
    cat.create_table("db.t", SCHEMA)
    with pytest.raises((ViewAlreadyExists, TableAlreadyExists)):
        create_view(cat, "db.t", SQL, VIEW_SCHEMA, or_replace=True)
    with pytest.raises(ValidationError, match="at most one"):
        create_view(cat, "db.x", SQL, VIEW_SCHEMA, if_not_exists=True, or_replace=True)
    with pytest.raises(NoSuchView):
        replace_view(cat, "db.missing", SQL, VIEW_SCHEMA)


def test_replace_adds_versions_reusing_schemas(cat: Any) -> None:
    create_view(cat, "db.v", SQL, VIEW_SCHEMA, default_catalog="prod")
    v2 = replace_view(cat, "db.v", SQL + " HAVING n > 1", VIEW_SCHEMA, properties={"q": "2"})
    m = v2.metadata
    assert m.current_version_id == 2 and [v.version_id for v in m.versions] == [1, 2]
    assert m.current_version().schema_id == 0 and len(m.schemas) == 1  # identical schema
    assert m.properties["q"] == "2"
    v3 = replace_view(cat, "db.v", SQL, OTHER_SCHEMA, default_namespace=("db", "x"))
    m3 = v3.metadata
    assert m3.current_version_id == 3 and m3.current_version().schema_id == 1
    assert m3.current_version().default_namespace == ("db", "x")
    assert [e.version_id for e in m3.version_log] == [1, 2, 3]
    # Replacing with exactly the current definition changes nothing and commits nothing.
    again = replace_view(cat, "db.v", SQL, OTHER_SCHEMA, default_namespace=("db", "x"))
    assert again.metadata_location == v3.metadata_location
    # An identical older version is made current again rather than duplicated (Java).
    back = replace_view(cat, "db.v", SQL + " HAVING n > 1", VIEW_SCHEMA)
    assert back.metadata.current_version_id == 2 and len(back.metadata.versions) == 3
    assert [e.version_id for e in back.metadata.version_log] == [1, 2, 3, 2]
    assert ViewMetadata.from_json(back.io.read(back.metadata_location)) == back.metadata


def test_version_history_is_bounded(cat: Any) -> None:
    create_view(
        cat, "db.v", "SELECT 0", VIEW_SCHEMA, properties={"version.history.num-entries": "2"}
    )
    for i in range(1, 4):
        view = replace_view(cat, "db.v", f"SELECT {i}", VIEW_SCHEMA)
    m = view.metadata
    assert [v.version_id for v in m.versions] == [3, 4]
    assert [e.version_id for e in m.version_log] == [3, 4]
    with pytest.raises(ValidationError, match="must be a positive integer"):
        replace_view(
            cat, "db.v", "SELECT 9", VIEW_SCHEMA, properties={"version.history.num-entries": "0"}
        )


def test_dialects_cannot_be_dropped_unless_allowed(cat: Any) -> None:
    create_view(cat, "db.v", {"spark": SQL, "trino": SQL}, VIEW_SCHEMA)
    with pytest.raises(ValidationError, match=r"dialect\(s\) \['trino'\]"):
        replace_view(cat, "db.v", SQL, VIEW_SCHEMA)
    assert cat.load_view("db.v").metadata.current_version_id == 1
    both = replace_view(cat, "db.v", {"Spark": "SELECT 1", "trino": "SELECT 1"}, VIEW_SCHEMA)
    assert both.metadata.current_version().sql_for("spark") is not None
    dropped = replace_view(
        cat, "db.v", "SELECT 2", VIEW_SCHEMA, properties={"replace.drop-dialect.allowed": "true"}
    )
    assert [r.to_json()["dialect"] for r in dropped.metadata.current_version().representations] == [
        "spark"
    ]
    with pytest.raises(ValidationError, match="one SQL representation"):
        replace_view(cat, "db.v", {"spark": "SELECT 1", "SPARK": "SELECT 2"}, VIEW_SCHEMA)


def test_drop_view(cat: Any) -> None:
    create_view(cat, "db.v", SQL, VIEW_SCHEMA)
    drop_view(cat, "db.v")
    assert not cat.view_exists("db.v")
    with pytest.raises(NoSuchView):
        drop_view(cat, "db.v")


def test_replace_retries_with_a_new_version_on_the_refreshed_view(cat: Any) -> None:
    create_view(cat, "db.v", SQL, VIEW_SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    # Another writer replaces the view between our load and our swap.
    cat.before_commit = lambda: replace_view(cat, "db.v", "SELECT 'x' AS region", VIEW_SCHEMA)
    result = replace_view(cat, "db.v", "SELECT 3", OTHER_SCHEMA)
    m = result.metadata
    assert m.current_version_id == 3  # max + 1 on the refreshed view, not 2
    assert [v.version_id for v in m.versions] == [1, 2, 3]
    assert [e.version_id for e in m.version_log] == [1, 2, 3]
    assert m.version_by_id(2).sql_for("spark").sql == "SELECT 'x' AS region"  # type: ignore[union-attr]
    assert cat.load_view("db.v").metadata == m


def test_retries_give_up_after_num_retries(tmp_path: Path) -> None:
    c = RacingSql("test", uri=f"sqlite:///{tmp_path}/f.db", warehouse=str(tmp_path / "wh"))
    c.create_namespace("db")
    props = {"commit.retry.min-wait-ms": "1", "commit.retry.num-retries": "1"}
    view = create_view(c, "db.v", SQL, VIEW_SCHEMA, properties=props)
    c.fail_next = 5
    with pytest.raises(CommitFailed):
        replace_view(c, "db.v", "SELECT 1", VIEW_SCHEMA)
    assert c.load_view("db.v").metadata_location == view.metadata_location
    assert c.fail_next == 3  # two attempts: the first and one retry
    c.fail_next = 1
    ok = replace_view(c, "db.v", "SELECT 1", VIEW_SCHEMA)
    assert ok.metadata.current_version_id == 2


@pytest.mark.interop
def test_iceberg_java_parses_the_view_files(
    sqlite_catalog: SqlCatalog,
    iceberg_java: Any,
) -> None:
    c = sqlite_catalog
    first = create_view(c, "db.v", {"spark": SQL, "trino": SQL}, VIEW_SCHEMA, comment="c")
    second = replace_view(
        c, "db.v", {"spark": "SELECT 1", "trino": "SELECT 1"}, OTHER_SCHEMA, default_catalog="prod"
    )
    with iceberg_java.batch() as batch:
        one = batch.parse_view_metadata(first.metadata_location)
        two = batch.parse_view_metadata(second.metadata_location)
    assert one.value["current_version_id"] == 1 and one.value["properties"] == {"comment": "c"}
    parsed = two.value
    assert parsed["uuid"] == str(first.metadata.view_uuid)
    assert parsed["current_version_id"] == 2 and parsed["current_schema_id"] == 1
    assert [v["version-id"] for v in parsed["versions"]] == [1, 2]
    assert [e["version_id"] for e in parsed["version_log"]] == [1, 2]
    assert parsed["versions"][1]["default-catalog"] == "prod"
