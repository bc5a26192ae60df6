"""Every verb of the ``icewright`` command through a REST catalog (Iceberg Java's server
handlers, ``tests/support/rest.py``), in-process on the shared SparkSession; each table
is read back with pyiceberg's REST catalog through the same server."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.cli import main
from tests.support.rest import RestServer

SOURCE = (
    "sql:SELECT id, CAST(id AS STRING) AS name, "
    "CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END AS region FROM range({lo}, {hi})"
)


def _pyiceberg(server: RestServer, warehouse: str) -> Any:
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("rest", uri=server.uri, warehouse=warehouse)


@pytest.mark.slow
@pytest.mark.interop
def test_every_verb_over_rest(
    rest_server: RestServer,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    warehouse = f"cli{uuid.uuid4().hex[:10]}"
    catalog = f"rest+{rest_server.uri}?warehouse={warehouse}"

    def run(*args: str) -> Any:
        code = main(["--home", str(tmp_path), "--catalog", catalog, *args, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    def ids() -> list[int]:
        table = _pyiceberg(rest_server, warehouse).load_table("db.people")
        return sorted(table.scan().to_arrow().column("id").to_pylist())

    rest_server.catalog(warehouse=warehouse).create_namespace("db")
    run("create", "db.people", "--schema", "id long not null, name string, region string",
        "--partition-by", "region")  # fmt: skip
    first = run("append", "db.people", "--source", SOURCE.format(lo=0, hi=10), "--commit-key", "a")
    assert first["records_added"] == 10 and first["committed"]
    again = run("append", "db.people", "--source", SOURCE.format(lo=0, hi=10), "--commit-key", "a")
    assert again["committed"] is False and again["snapshot_id"] == first["snapshot_id"]
    assert ids() == list(range(10))

    doc = run("replace", "db.people", "--source", SOURCE.format(lo=100, hi=102),
              "--where", "id < 3")  # fmt: skip
    assert doc["operation"] == "overwrite"
    assert ids() == [3, 4, 5, 6, 7, 8, 9, 100, 101]
    run("replace", "db.people", "--source", "sql:SELECT 200L AS id, 'x' AS name, 'eu' AS region",
        "--dynamic-partitions")  # fmt: skip
    assert ids() == [3, 5, 7, 9, 101, 200]

    run("append", "db.people", "--source", SOURCE.format(lo=20, hi=25))
    doc = run("rewrite", "db.people", "--min-input-files", "2", "--target-file-size", "64M")
    assert doc["operation"] == "replace"
    assert ids() == [3, 5, 7, 9, 20, 21, 22, 23, 24, 101, 200]

    head = run("append", "db.people", "--source", SOURCE.format(lo=30, hi=31))
    doc = run("expire", "db.people", "--older-than", "now", "--retain-last", "1")
    assert first["snapshot_id"] in doc["expired_snapshot_ids"]
    snapshots = _pyiceberg(rest_server, warehouse).load_table("db.people").snapshots()
    assert [s.snapshot_id for s in snapshots] == [head["snapshot_id"]]

    doc = run("wait", "db.people", "--timeout", "0")
    assert doc["timed_out"] is False

    doc = run("view", "publish", "db.by_region",
              "--sql", "SELECT region, count(*) AS n FROM db.people GROUP BY region")  # fmt: skip
    assert doc["version_id"] == 1
    doc = run("view", "publish", "db.by_region",
              "--sql", "SELECT region, count(*) AS c FROM db.people GROUP BY region")  # fmt: skip
    view = _pyiceberg(rest_server, warehouse).load_view("db.by_region")
    assert view.metadata.current_version_id == doc["version_id"] == 2
    current = [v for v in view.metadata.versions if v.version_id == 2]
    assert "AS c FROM" in json.dumps(current[0].model_dump(mode="json"))
