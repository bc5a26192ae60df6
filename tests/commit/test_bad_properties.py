"""A bad table property cannot poison a table (issue: ``--property
commit.retry.num-retries=-5`` used to make every later commit fail): bad values are
refused when icewright writes them, and tolerated (default, warning) when another engine
wrote them, so that the table stays writable and repairable."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pyarrow as pa
import pytest

from icewright.arrow import write_data_files
from icewright.catalog import SqlCatalog
from icewright.commit import append, create_table
from icewright.commit.properties import UpdateProperties
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField
from tests.cli.support import icewright

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True))


def _catalog(tmp_path: Path) -> SqlCatalog:
    cat = SqlCatalog("icewright", f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def test_bad_values_are_refused_on_create_and_update(tmp_path: Path) -> None:
    cat = _catalog(tmp_path)
    with pytest.raises(
        ValidationError, match=re.escape("commit.retry.num-retries='-5' is invalid")
    ):
        create_table(cat, "db.t", SCHEMA, properties={"commit.retry.num-retries": "-5"})
    assert not cat.table_exists("db.t")
    table = create_table(cat, "db.t", SCHEMA)
    with pytest.raises(ValidationError, match=re.escape("write.distribution-mode='random'")):
        UpdateProperties(table).set("write.distribution-mode", "random")
    assert cat.load_table("db.t").metadata_location == table.metadata_location


@pytest.mark.parametrize("value", ["-5", "abc"])
def test_the_command_refuses_a_bad_property_in_one_line(tmp_path: Path, value: str) -> None:
    run = icewright(
        tmp_path,
        "create",
        "db.t",
        "--schema",
        "id long",
        "--property",
        f"commit.retry.num-retries={value}",
    )
    assert run.code == 1 and run.stdout == ""
    assert run.stderr == (
        f"icewright: error: table property commit.retry.num-retries={value!r} is invalid: "
        "it must be a whole number >= 0 (default '4')\n"
    )


def test_a_table_another_engine_poisoned_stays_writable_and_repairable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    cat = _catalog(tmp_path)
    create_table(cat, "db.t", SCHEMA)
    py = PySqlCatalog(
        "icewright", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    with py.load_table("db.t").transaction() as tx:  # pyiceberg does not check them
        tx.set_properties(
            {
                "commit.retry.num-retries": "abc",
                "write.metadata.previous-versions-max": "-3",
                "write.metadata.compression-codec": "lzma",
            }
        )
    table = cat.load_table("db.t")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    with caplog.at_level(logging.WARNING, logger="icewright.spec.properties"):
        appended = append(table, write_data_files(table.io, table.metadata, data))
    assert appended.committed
    assert "commit.retry.num-retries='abc' is invalid" in caplog.text
    fixed = (
        UpdateProperties(cat.load_table("db.t"))
        .set("commit.retry.num-retries", "3")
        .set("write.metadata.previous-versions-max", "50")
        .remove("write.metadata.compression-codec")
        .commit()
    )
    props = fixed.table.metadata.properties
    assert props["commit.retry.num-retries"] == "3"
    assert "write.metadata.compression-codec" not in props
    assert py.load_table("db.t").scan().to_arrow().num_rows == 3
