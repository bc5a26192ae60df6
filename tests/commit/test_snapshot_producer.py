"""The options every snapshot-producing operation takes (:class:`SnapshotOptions`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

import pytest

from icewright.catalog import Table
from icewright.commit.append import FastAppend
from icewright.commit.delete import DeleteFiles
from icewright.commit.merge_append import MergeAppend
from icewright.commit.snapshot_producer import SnapshotOptions
from icewright.errors import ValidationError
from tests.commit.test_fast_append import files_for

ROW = {"id": 1, "ts": dt.datetime(2025, 1, 1, tzinfo=dt.UTC), "region": "eu"}


def test_options_and_keywords_are_the_same_thing(make_table: Callable[..., Table]) -> None:
    table = make_table()
    opts = SnapshotOptions(branch="audit", commit_key="k1", snapshot_properties={"a": "1"})
    by_object = FastAppend(table, options=opts)
    by_keywords = FastAppend(table, branch="audit", commit_key="k1", snapshot_properties={"a": "1"})
    assert by_object.options == by_keywords.options == opts
    assert (by_object.branch, by_object.commit_key) == ("audit", "k1")
    # a keyword overrides the options object's field; the rest stay
    merged = DeleteFiles(table, options=opts, case_sensitive=False)
    assert merged.options == dataclasses.replace(opts, case_sensitive=False)
    assert not merged.case_sensitive and merged.branch == "audit"
    assert FastAppend(table, snapshot_properties=None).options == SnapshotOptions()


def test_options_are_immutable_and_hold_strings_only() -> None:
    source = {"a": "1"}
    opts = SnapshotOptions(snapshot_properties=source)
    source["a"] = "2"
    assert opts.snapshot_properties == {"a": "1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.branch = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="string"):
        SnapshotOptions(snapshot_properties={"n": 1})  # type: ignore[dict-item]


def test_the_options_reach_the_snapshot(make_table: Callable[..., Table]) -> None:
    table = make_table()
    opts = SnapshotOptions(commit_key="load-1", snapshot_properties={"source": "test"})
    result = MergeAppend(table, files_for(table, [ROW]), options=opts).commit()
    snapshot = result.table.metadata.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["source"] == "test"
    assert snapshot.summary["icewright.commit-key"] == "load-1"
    again = MergeAppend(result.table, files_for(result.table, [ROW]), options=opts).commit()
    assert not again.committed
