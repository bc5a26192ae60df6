"""The write-audit-publish, rollback, tag and incremental-read faces of the command, through
``main([...])`` on the shared SparkSession: a staged append published, a branch
fast-forwarded, a rollback and a roll forward, tags, ``read`` at refs, snapshots, times and
ranges; bad input as one line with exit code 1 and nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.cli import main
from tests.cli.support import pyiceberg_catalog


def _run(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, Any, str]:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    doc = json.loads(out) if "--json" in args and out else out
    return code, doc, err


def _ok(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> Any:
    code, doc, err = _run(capsys, home, *args, "--json")
    assert code == 0, err
    return doc


def _ids(home: Path, ref: str = "main") -> list[int]:
    table = pyiceberg_catalog(home).load_table("db.t")
    sid = table.metadata.refs[ref].snapshot_id
    return sorted(table.scan(snapshot_id=sid).to_arrow().column("id").to_pylist())


def _location(home: Path) -> str:
    return str(pyiceberg_catalog(home).load_table("db.t").metadata_location)


def _rows(n: int) -> str:
    return f"sql:SELECT CAST(id AS BIGINT) AS id FROM range({n}, {n + 2})"


@pytest.fixture
def table(home: Path, spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> list[int]:
    """db.t (WAP enabled) with ids 0-1 and 10-11 from two appends; their snapshot ids."""
    _ok(capsys, home, "create", "db.t", "--schema", "id long", "--property",
        "write.wap.enabled=true")  # fmt: skip
    return [
        _ok(capsys, home, "append", "db.t", "--source", _rows(n))["snapshot_id"] for n in (0, 10)
    ]


def test_stage_audit_publish(
    home: Path, table: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    staged = _ok(capsys, home, "append", "db.t", "--source", _rows(20), "--wap-id", "run-7")
    assert _ids(home) == [0, 1, 10, 11]
    audit = _ok(capsys, home, "read", "db.t", "--snapshot", str(staged["snapshot_id"]))
    assert sorted(r["id"] for r in audit["rows"]) == [0, 1, 10, 11, 20, 21]
    code, out, err = _run(capsys, home, "publish", "db.t", "--wap-id", "run-7")
    assert code == 0, err
    assert out.startswith("published to main of db.t")
    assert _ids(home) == [0, 1, 10, 11, 20, 21]
    again = _ok(capsys, home, "publish", "db.t", "--wap-id", "run-7")
    assert not again["committed"] and again["snapshot_id"] == staged["snapshot_id"]


def test_write_to_a_branch_then_fast_forward(
    home: Path, table: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    made = _ok(capsys, home, "branch", "db.t", "audit")
    assert made["snapshot_id"] == table[-1]
    _ok(capsys, home, "append", "db.t", "--source", _rows(30), "--branch", "audit")
    on_branch = _ok(capsys, home, "read", "db.t", "--ref", "audit")
    assert sorted(r["id"] for r in on_branch["rows"]) == [0, 1, 10, 11, 30, 31]
    assert _ids(home) == [0, 1, 10, 11]
    done = _ok(capsys, home, "publish", "db.t", "--branch", "audit")
    assert done["committed"] and _ids(home) == [0, 1, 10, 11, 30, 31]
    _ok(capsys, home, "drop-branch", "db.t", "audit")
    assert set(pyiceberg_catalog(home).load_table("db.t").metadata.refs) == {"main"}


def test_rollback_tag_and_read_back_in_time(
    home: Path, table: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    _ok(capsys, home, "tag", "db.t", "v1", "--snapshot", str(table[0]), "--retain", "30d")
    at_tag = _ok(capsys, home, "read", "db.t", "--ref", "v1")
    assert sorted(r["id"] for r in at_tag["rows"]) == [0, 1]
    back = _ok(capsys, home, "rollback", "db.t", "--to-snapshot", str(table[0]))
    assert (back["previous_snapshot_id"], back["snapshot_id"]) == (table[1], table[0])
    assert _ids(home) == [0, 1]
    _ok(capsys, home, "set-current", "db.t", "--snapshot", str(table[1]))
    assert _ids(home) == [0, 1, 10, 11]
    now = _ok(capsys, home, "read", "db.t", "--as-of", "now")
    assert len(now["rows"]) == 4
    _ok(capsys, home, "untag", "db.t", "v1")
    assert "v1" not in pyiceberg_catalog(home).load_table("db.t").metadata.refs


def test_read_only_what_a_range_appended(
    home: Path, table: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    _ok(capsys, home, "append", "db.t", "--source", _rows(20))
    doc = _ok(capsys, home, "read", "db.t", "--since", str(table[0]), "--until", str(table[1]))
    assert sorted(r["id"] for r in doc["rows"]) == [10, 11]
    doc = _ok(capsys, home, "read", "db.t", "--since", str(table[1]))
    assert sorted(r["id"] for r in doc["rows"]) == [20, 21]
    _ok(capsys, home, "delete", "db.t", "--where", "id = 20")
    code, _, err = _run(capsys, home, "read", "db.t", "--since", str(table[1]))
    assert code == 1 and "in the range is a" in err and "--changelog" in err
    doc = _ok(capsys, home, "read", "db.t", "--since", str(table[1]), "--changelog")
    changes = sorted((r["_change_type"], r["id"]) for r in doc["rows"])
    assert ("DELETE", 20) in changes and ("INSERT", 21) in changes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["publish", "db.t", "--branch", "nope"], "no branch named 'nope'"),
        (["publish", "db.t", "--wap-id", "never"], "staged with wap.id 'never'"),
        (["rollback", "db.t", "--to-snapshot", "42"], "no snapshot 42"),
        (["rollback", "db.t", "--to-timestamp", "2000-01-01"], "has no snapshot before"),
        (["set-current", "db.t", "--snapshot", "42"], "no snapshot 42"),
        (["tag", "db.t", "v", "--retain", "soon"], "positive duration"),
        (["untag", "db.t", "nope"], "no tag named 'nope'"),
        (["drop-branch", "db.t", "main"], "main branch cannot be dropped"),
        (["read", "db.t", "--since", "42"], "snapshot 42, is not in the table"),
        (["read", "db.t", "--ref", "nope"], "nope"),
        (["read", "db.t", "--until", "1"], "give --since as well"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_changes_nothing(
    home: Path,
    table: list[int],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    before = _location(home)
    code, out, err = _run(capsys, home, *args)
    assert code == 1 and out == ""
    assert err.startswith("icewright: error:") and message in err, err
    assert err.count("\n") == 1
    assert _location(home) == before


def test_usage_errors_exit_2(home: Path, table: list[int], capsys: Any) -> None:
    code, _, err = _run(capsys, home, "publish", "db.t")
    assert code == 2 and "one of the arguments --branch --cherry-pick --wap-id" in err
    code, _, err = _run(capsys, home, "rollback", "db.t", "--to-snapshot", "x")
    assert code == 2 and "not a snapshot id" in err
