"""The Spark verbs' argument handling in-process, through ``main([...])`` on the shared
SparkSession (one JVM for the module): replace (where, dynamic partitions), rewrite,
view publish, describe of a view, read, commit keys; every table read back with pyiceberg.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.cli import main
from tests.cli.support import pyiceberg_catalog

SOURCE = (
    "sql:SELECT id, CAST(id AS STRING) AS name, "
    "CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END AS region FROM range({lo}, {hi})"
)


def _run(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, Any, str]:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    doc = json.loads(out) if "--json" in args and out else out
    return code, doc, err


def _ids(home: Path, name: str = "db.people") -> list[int]:
    tbl = pyiceberg_catalog(home).load_table(name)
    return sorted(tbl.scan().to_arrow().column("id").to_pylist())


@pytest.fixture
def people(home: Path, spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> Path:
    """db.people partitioned by region, 0..9 appended in one snapshot."""
    code, _, err = _run(
        capsys,
        home,
        "create",
        "db.people",
        "--schema",
        "id long not null, name string, region string",
        "--partition-by",
        "region",
    )
    assert code == 0, err
    code, doc, err = _run(
        capsys, home, "append", "db.people", "--source", SOURCE.format(lo=0, hi=10), "--json"
    )
    assert code == 0, err
    assert doc["records_added"] == 10
    return home


def test_replace_where_and_dynamic(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = _run(
        capsys,
        people,
        "replace",
        "db.people",
        "--source",
        SOURCE.format(lo=100, hi=102),
        "--where",
        "id < 3",
        "--json",
    )
    assert code == 0, err
    assert doc["operation"] == "overwrite" and doc["records_removed"] >= 3
    assert _ids(people) == [3, 4, 5, 6, 7, 8, 9, 100, 101]

    code, doc, err = _run(
        capsys,
        people,
        "replace",
        "db.people",
        "--source",
        "sql:SELECT 200L AS id, 'x' AS name, 'eu' AS region",
        "--dynamic-partitions",
        "--json",
    )
    assert code == 0, err
    # the eu partition (even ids) is replaced, us stays
    assert _ids(people) == [3, 5, 7, 9, 101, 200]

    # Unknown column: fails before any job, the table stays as it was.
    before = pyiceberg_catalog(people).load_table("db.people").metadata_location
    code, out, err = _run(
        capsys,
        people,
        "replace",
        "db.people",
        "--source",
        SOURCE.format(lo=0, hi=1),
        "--where",
        "nope = 1",
    )
    assert code == 1 and out == ""
    assert err.startswith("icewright: error:") and "nope" in err
    assert pyiceberg_catalog(people).load_table("db.people").metadata_location == before


def test_append_commit_key_and_rewrite(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for lo in (10, 20):
        code, doc, err = _run(
            capsys,
            people,
            "append",
            "db.people",
            "--source",
            SOURCE.format(lo=lo, hi=lo + 5),
            "--commit-key",
            f"k{lo}",
            "--json",
        )
        assert code == 0 and doc["committed"], err
    code, doc, err = _run(
        capsys,
        people,
        "append",
        "db.people",
        "--source",
        SOURCE.format(lo=10, hi=15),
        "--commit-key",
        "k10",
        "--json",
    )
    assert code == 0 and doc["committed"] is False, err
    assert _ids(people) == [*range(10), *range(10, 15), *range(20, 25)]

    tbl = pyiceberg_catalog(people).load_table("db.people")
    files_before = len(list(tbl.scan().plan_files()))
    code, doc, err = _run(
        capsys,
        people,
        "rewrite",
        "db.people",
        "--min-input-files",
        "2",
        "--target-file-size",
        "64M",
        "--json",
    )
    assert code == 0, err
    assert doc["operation"] == "replace" and doc["groups_rewritten"] == 2
    assert doc["failed_groups"] == [] and len(doc["commits"]) == 1
    tbl = pyiceberg_catalog(people).load_table("db.people")
    assert len(list(tbl.scan().plan_files())) < files_before
    assert _ids(people) == [*range(10), *range(10, 15), *range(20, 25)]

    code, out, err = _run(capsys, people, "rewrite", "db.people", "--min-input-files", "2")
    assert code == 0, err
    assert out.startswith("nothing to rewrite in db.people")
    code, out, err = _run(capsys, people, "rewrite", "db.people", "--deletes-only")
    assert code == 0, err
    assert out.startswith("nothing to rewrite in db.people")  # no delete file


def test_commit_key_survives_expire(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The sequence that once committed twice: a keyed append, three more appends,
    expire down to two snapshots, then the same keyed append again."""

    def append(lo: int, *key: str) -> Any:
        code, doc, err = _run(
            capsys,
            people,
            "append",
            "db.people",
            "--source",
            SOURCE.format(lo=lo, hi=lo + 3),
            *key,
            "--json",
        )
        assert code == 0, err
        return doc

    first = append(50, "--commit-key", "K1")
    assert first["committed"]
    for lo in (60, 70, 80):
        append(lo)
    code, doc, err = _run(
        capsys,
        people,
        "expire",
        "db.people",
        "--older-than",
        "now",
        "--retain-last",
        "2",
        "--json",
    )
    assert code == 0, err
    assert first["snapshot_id"] in doc["expired_snapshot_ids"]
    again = append(50, "--commit-key", "K1")
    assert again["committed"] is False
    assert again["snapshot_id"] == first["snapshot_id"]
    assert _ids(people) == [
        *range(10),
        *range(50, 53),
        *range(60, 63),
        *range(70, 73),
        *range(80, 83),
    ]


def test_view_publish_describe_and_read(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = _run(
        capsys,
        people,
        "view",
        "publish",
        "reports.by_region",
        "--json",
        "--sql",
        "SELECT region, count(*) AS n FROM db.people GROUP BY region",
        "--comment",
        "people per region",
    )
    assert code == 0, err
    assert doc["view"] == "reports.by_region" and doc["version_id"] == 1
    assert [f["name"] for f in doc["schema"]["fields"]] == ["region", "n"]
    assert doc["referenced_tables"] == ["db.people"]
    # pyiceberg's SQL catalog cannot load views; its view-metadata model parses the file.
    from pyiceberg.view.metadata import ViewMetadata

    view = ViewMetadata.model_validate_json(Path(doc["metadata_location"]).read_text())
    assert view.properties["comment"] == "people per region"
    assert view.current_version_id == 1
    assert [f.name for f in view.schemas[0].fields] == ["region", "n"]

    code, d, err = _run(capsys, people, "describe", "reports.by_region", "--json")
    assert code == 0, err
    assert d["kind"] == "view" and d["current_version_id"] == 1
    assert d["representations"][0]["sql"].startswith("SELECT region, count(*)")
    code, text, err = _run(capsys, people, "describe", "reports.by_region")
    assert code == 0 and "view reports.by_region" in text and "people per region" in text

    code, r, err = _run(
        capsys, people, "read", "db.people", "--where", "region = 'us'", "--limit", "0", "--json"
    )
    assert code == 0, err
    assert r["columns"] == ["id", "name", "region"] and r["truncated"] is False
    assert sorted(x["id"] for x in r["rows"]) == [1, 3, 5, 7, 9]
    code, text, err = _run(capsys, people, "read", "db.people", "--columns", "id", "--limit", "2")
    assert code == 0, err
    lines = text.splitlines()
    assert lines[0].strip() == "id" and len(lines) == 4  # header, rule, two rows
    assert "more rows were left out" in err


def test_bad_source_format_combination(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys, people, "append", "db.people", "--source", "sql:SELECT 1", "--format", "csv"
    )
    assert code == 1 and out == ""
    assert "--format csv applies to a path" in err
