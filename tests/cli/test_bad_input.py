"""The sweep of bad inputs (issue 12 item 4) through the command, in-process: numbers out
of range, empty strings, files where directories belong and the reverse, missing paths,
unknown snapshot ids, refs and times. Each ends in exit 1 with one line, or 2 with
argparse's usage and one error line; nothing is created."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.cli import main

CASES = [
    (["expire", "db.t", "--retain-last", "-1"], 2, "--retain-last"),
    (["expire", "db.t", "--retain-last", "0"], 2, "--retain-last"),
    (["expire", "db.t", "--older-than", "abc"], 2, "--older-than"),
    (["expire", "db.t", "--older-than", "-5d"], 2, "--older-than"),
    (["expire", "db.t", "--older-than", "99999999999d"], 2, "--older-than"),
    (["expire", "db.t", "--older-than", "-5"], 2, "--older-than"),
    (["remove-orphans", "db.t", "--older-than", "1x"], 2, "--older-than"),
    (["snapshots", ""], 1, "name is empty"),
    (["snapshots", "db."], 1, "name is empty"),
    (["snapshots", "db.nothing"], 1, "table 'db.nothing' does not exist"),
    (["wait", "db.t", "--after", "123"], 1, "123"),
    (["wait", "db.t", "--after", "current", "--timeout", "-1"], 2, "--timeout"),
    (["wait", "db.t", "--after", "current", "--timeout", "abc"], 2, "--timeout"),
    (["read", "db.t", "--limit", "-1"], 1, "--limit must be >= 0"),
    (["rewrite", "db.t", "--target-file-size", "0"], 2, "--target-file-size"),
    (["rewrite", "db.t", "--target-file-size", "1Q"], 2, "--target-file-size"),
    (["rewrite", "db.t", "--min-input-files", "0"], 2, "--min-input-files"),
    (["rewrite", "db.t", "--deletes-only", "--sort"], 1, "sort do(es) not apply"),
    (["create", "db.u", "--schema", ""], 1, "the schema is empty"),
    (["create", "", "--schema", "id long"], 1, "name is empty"),
    (["create", "db.u", "--schema", "id long", "--property", "a"], 2, "--property"),
    (
        ["create", "db.u", "--schema", "id long", "--property", "commit.retry.num-retries=-5"],
        1,
        "commit.retry.num-retries",
    ),
    (["--config", "{dir}", "describe", "db.t"], 1, "is a directory"),
    (["--config", "{missing}", "describe", "db.t"], 1, "no such file"),
    (["--home", "{file}", "describe", "db.t"], 1, "is not a directory"),
    (["append", "db.t", "--source", ""], 1, "a source must be a non-empty string"),
    (["append", "db.t", "--source", "sql:"], 1, "no query"),
    (["append", "db.t", "--source", "parquet:"], 1, "no path"),
    (["append", "db.t", "--source", "{missing}"], 1, "does not exist"),
    (["replace", "db.t", "--source", "sql:SELECT 1 AS id", "--where", ""], 1, "filter"),
    (["view", "publish", "db.v", "--sql", ""], 1, "needs its SQL query"),
    (["--spark-conf", "=x", "describe", "db.t"], 2, "KEY=VALUE"),
    (["--master", "", "describe", "db.t"], 1, "--master is empty"),
    (["--master", " ", "append", "db.t", "--source", "sql:SELECT 1L AS id"], 1, "--master is"),
    (["--catalog", "", "describe", "db.t"], 1, "--catalog is empty"),
    (["--config", "", "describe", "db.t"], 1, "--config is empty"),
    (["--config", "{empty}", "describe", "db.t"], 1, "is empty: give catalog properties"),
    (["--config", "{comments}", "describe", "db.t"], 1, "is empty: give catalog properties"),
]


@pytest.mark.parametrize(("argv", "code", "words"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    words: str,
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ICEWRIGHT_HOME", str(home))
    assert main(["create", "db.t", "--schema", "id long"]) == 0
    capsys.readouterr()
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    (tmp_path / "empty.toml").write_text("")
    (tmp_path / "comments.toml").write_text("# nothing yet\n")
    paths = {
        "dir": tmp_path / "adir",
        "missing": tmp_path / "missing",
        "file": tmp_path / "afile",
        "empty": tmp_path / "empty.toml",
        "comments": tmp_path / "comments.toml",
    }
    args = [a.format(**paths) for a in argv]
    before = sorted(p.relative_to(home) for p in home.rglob("*") if p.is_file())
    assert main(args) == code
    out, err = capsys.readouterr()
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("icewright") and ": error: " in last  # "icewright expire: error:"
    assert words.lower() in last.lower(), err
    if code == 1:
        assert err.count("\n") == 1, err
    assert sorted(p.relative_to(home) for p in home.rglob("*") if p.is_file()) == before


@pytest.mark.parametrize("value", ["-5", "99999999999d", -1])
def test_an_instant_before_1970_is_refused(value: object) -> None:
    from icewright.actions.instants import instant_ms
    from icewright.errors import ValidationError

    with pytest.raises(ValidationError, match="before 1970-01-01"):
        instant_ms(value, "older_than")
