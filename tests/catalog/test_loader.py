"""load_catalog and the embedded default catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import (
    FileSystemCatalog,
    GlueCatalog,
    SqlCatalog,
    default_catalog,
    load_catalog,
)
from icewright.errors import ValidationError
from tests.catalog.helpers import SCHEMA
from tests.support.catalogs import GLUE_PROPERTIES


def test_default_catalog_lives_in_icewright_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ICEWRIGHT_HOME", str(home))
    catalog = default_catalog()
    assert isinstance(catalog, SqlCatalog)
    assert catalog.name == "icewright"
    assert catalog.warehouse == str(home / "warehouse")
    assert (home / "catalog.db").is_file()
    assert (home / "warehouse").is_dir()
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    assert Path(table.metadata_location).is_relative_to(home / "warehouse" / "db" / "t")
    catalog.close()

    again = load_catalog()  # nothing configured: the same embedded catalog
    assert again.load_table("db.t").metadata_location == table.metadata_location
    again.close()


def test_icewright_home_defaults_to_dot_icewright(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ICEWRIGHT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    catalog = default_catalog()
    assert catalog.warehouse == str(tmp_path / ".icewright" / "warehouse")
    assert (tmp_path / ".icewright" / "catalog.db").is_file()
    catalog.close()


def test_uris(tmp_path: Path) -> None:
    sqlite = load_catalog(f"sqlite:///{tmp_path}/c.db")
    assert isinstance(sqlite, SqlCatalog)
    assert sqlite.warehouse == str(tmp_path / "warehouse")
    sqlite.close()
    with_warehouse = load_catalog(f"sqlite:///{tmp_path}/d.db", warehouse=str(tmp_path / "w"))
    assert with_warehouse.warehouse == str(tmp_path / "w")
    with_warehouse.close()

    path = load_catalog(str(tmp_path / "lake"))
    assert isinstance(path, FileSystemCatalog)
    assert path.warehouse == str(tmp_path / "lake")
    file_uri = load_catalog(f"file://{tmp_path}/lake")
    assert isinstance(file_uri, FileSystemCatalog)
    s3 = load_catalog("s3://bucket/prefix", **{"s3.region": "us-east-1"})
    assert isinstance(s3, FileSystemCatalog)
    assert s3.warehouse == "s3://bucket/prefix"
    assert s3.properties["s3.region"] == "us-east-1"


def test_glue_uri(glue_mock: None) -> None:
    catalog = load_catalog("glue://123456789012?warehouse=s3://bucket/wh", **GLUE_PROPERTIES)
    assert isinstance(catalog, GlueCatalog)
    assert catalog.properties["glue.id"] == "123456789012"
    assert catalog.warehouse == "s3://bucket/wh"


def test_property_mappings(tmp_path: Path, glue_mock: None) -> None:
    sql = load_catalog(
        {
            "type": "sql",
            "uri": f"sqlite:///{tmp_path}/c.db",
            "warehouse": str(tmp_path / "w"),
            "name": "prod",
        }
    )
    assert isinstance(sql, SqlCatalog)
    assert sql.name == "prod"
    sql.close()
    implied = load_catalog({"uri": f"sqlite:///{tmp_path}/c.db"})
    assert isinstance(implied, SqlCatalog)
    assert implied.name == "icewright"
    implied.close()
    fs = load_catalog({"type": "filesystem", "warehouse": str(tmp_path / "lake")})
    assert isinstance(fs, FileSystemCatalog)
    glue = load_catalog({"type": "glue", **GLUE_PROPERTIES})
    assert isinstance(glue, GlueCatalog)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"type": "hive", "uri": "thrift://x"}, "not known"),
        ({"type": "sql"}, "needs 'uri'"),
        ({"type": "sql", "uri": "postgresql+psycopg://u@h/db"}, "needs 'warehouse'"),
        ({"type": "filesystem"}, "needs 'warehouse'"),
        ({"name": "x"}, "not known"),
        ("ftp://host/dir", "cannot tell"),
    ],
)
def test_bad_configuration(config: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        load_catalog(config)
