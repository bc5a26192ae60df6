"""The argument checks every adapter shares (``icewright.actions.arguments``): what each
accepts, and a one-line ValidationError naming the parameter for what it refuses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from icewright.actions import arguments as a
from icewright.errors import ValidationError


def test_commit_keys() -> None:
    assert a.check_commit_key(None) is None
    assert a.check_commit_key("orders/2026-01-31") == "orders/2026-01-31"
    assert a.check_commit_key(20260131) == "20260131"
    for bad in ("", " ", " k", "k\n", True, 1.5):
        with pytest.raises(ValidationError, match="commit_key must be non-empty"):
            a.check_commit_key(bad)


def test_seconds() -> None:
    assert a.check_seconds(1, "poll_interval") == 1.0
    assert a.check_seconds("2.5", "poll_interval") == 2.5
    assert a.check_optional_seconds(None, "timeout") is None
    for bad in (0, -1, "abc", float("inf"), float("nan"), True, [1]):
        with pytest.raises(ValidationError, match=r"^poll_interval must be a"):
            a.check_seconds(bad, "poll_interval")


def test_sources_locations_and_branches(tmp_path: Path) -> None:
    (tmp_path / "f.parquet").write_bytes(b"PAR1")
    (tmp_path / "empty").mkdir()
    a.check_source(f"parquet:{tmp_path / 'f.parquet'}")
    a.check_source("s3://bucket/not/checked/here.parquet")  # the job checks other stores
    a.check_source("sql:SELECT 1")
    cases: list[tuple[Callable[[], None], str]] = [
        (lambda: a.check_source(str(tmp_path / "missing")), "does not exist"),
        (lambda: a.check_source(f"csv:{tmp_path / 'empty'}"), "holds no files"),
        (lambda: a.check_source_argument(5), "unsupported source 5"),
        (lambda: a.check_source_argument(None), "unsupported source None"),
        (lambda: a.check_location(""), "location must be a URI or path"),
        (lambda: a.check_location(str(tmp_path / "f.parquet")), "is a file"),
        (lambda: a.check_branch(""), "branch must be a branch name"),
        (lambda: a.check_format_version("2"), "format_version must be an integer"),
        (lambda: a.check_view("SELECT 1", column_comments=["a"]), "column_comments must"),
        (lambda: a.check_view("SELECT 1", properties="x"), "properties must be a mapping"),
        (lambda: a.check_column_aliases("ab"), "column_aliases must be a list"),
        (lambda: a.check_column_aliases(["a", ""]), "column_aliases must be a list"),
    ]
    for call, words in cases:
        with pytest.raises(ValidationError, match=words):
            call()
    a.check_location(str(tmp_path / "new-table"))
    a.check_column_aliases(["a", "b"])
