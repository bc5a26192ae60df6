"""``icewright merge`` and ``icewright delete`` in-process, through ``main([...])`` on the
shared SparkSession: a change feed merged both ways, a delete by predicate, bad input as
one line with exit code 1 and nothing committed; every table read back with pyiceberg."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.cli import main
from tests.cli.support import pyiceberg_catalog

FEED = (
    "sql:SELECT * FROM VALUES (1L, 'x1', 'U', 1), (1L, 'x2', 'U', 2), (2L, NULL, 'D', 1), "
    "(20L, 'new', 'I', 1), (21L, 'gone', 'D', 1) AS s(id, name, op, seq)"
)


def _run(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, Any, str]:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    doc = json.loads(out) if "--json" in args and out else out
    return code, doc, err


def _rows(home: Path, name: str) -> list[tuple[Any, ...]]:
    tbl = pyiceberg_catalog(home).load_table(name)
    return sorted(tuple(r.values()) for r in tbl.scan().to_arrow().to_pylist())


@pytest.fixture
def people(home: Path, spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> Path:
    """db.people by region (ids 0..5), and db.mor the same with merge-on-read writes."""
    for name, extra in (
        ("db.people", []),
        ("db.mor", ["--property", "write.merge.mode=merge-on-read"]),
    ):
        code, _, err = _run(
            capsys, home, "create", name, "--schema", "id long not null, name string", *extra
        )
        assert code == 0, err
        source = "sql:SELECT id, CAST(id AS STRING) AS name FROM range(6)"
        code, _, err = _run(capsys, home, "append", name, "--source", source)
        assert code == 0, err
    return home


@pytest.mark.parametrize("name", ["db.people", "db.mor"])
def test_merge_a_change_feed(people: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, doc, err = _run(
        capsys, people, "merge", name, "--source", FEED, "--on", "id",
        "--delete-when", "op = 'D'", "--dedupe-by", "seq", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert (doc["rows_inserted"], doc["rows_updated"], doc["rows_deleted"]) == (1, 1, 1)
    assert doc["mode"] == ("merge-on-read" if name == "db.mor" else "copy-on-write")
    assert (doc["delete_files_added"] > 0) == (name == "db.mor")
    assert _rows(people, name) == [(0, "0"), (1, "x2"), (3, "3"), (4, "4"), (5, "5"), (20, "new")]


def test_merge_prints_the_row_counts(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = "sql:SELECT 3L AS id, 'three' AS name"
    code, out, err = _run(capsys, people, "merge", "db.people", "--source", source, "--on", "id")
    assert code == 0, err
    assert out.startswith("merged into db.people: snapshot ")
    assert "0 inserted, 1 updated, 0 deleted" in out


def test_delete_where_both_modes(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = "id IN (1, 3, 5) OR name IS NULL"
    code, doc, err = _run(capsys, people, "delete", "db.people", "--where", where, "--json")
    assert code == 0, err
    assert doc["rows_deleted"] == 3 and doc["operation"] == "overwrite"
    assert _rows(people, "db.people") == [(0, "0"), (2, "2"), (4, "4")]
    code, doc, err = _run(
        capsys,
        people,
        "delete",
        "db.mor",
        "--where",
        "id >= 4",
        "--mode",
        "merge-on-read",
        "--json",
    )
    assert code == 0, err
    assert doc["operation"] == "delete" and doc["delete_files_added"] == 1
    assert _rows(people, "db.mor") == [(0, "0"), (1, "1"), (2, "2"), (3, "3")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["merge", "db.people", "--source", FEED, "--on", "nope"],
            "key column nope is not a column",
        ),
        (["merge", "db.people", "--source", FEED, "--on", " "], "on must name at least one column"),
        (
            ["merge", "db.people", "--source", FEED, "--on", "id"],
            "source rows match the same target row",
        ),
        (["delete", "db.people", "--where", "id >"], "cannot parse filter"),
        (["delete", "db.people", "--where", "nope = 1"], "nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(
    people: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    before = _rows(people, "db.people")
    code, out, err = _run(capsys, people, *args)
    assert code == 1 and not out
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert _rows(people, "db.people") == before
