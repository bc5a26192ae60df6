"""publish, rollback, set_current, tag/untag, branch/drop_branch: the rules, the
repeat-safety of retried tasks, and staged (write-audit-publish) writes of every verb."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import (
    LocalRunner,
    append,
    branch,
    create,
    delete,
    drop_branch,
    merge,
    publish,
    replace,
    rollback,
    set_current,
    tag,
    untag,
)
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType())
)
DDL = "id long, region string"
WAP = {"write.wap.enabled": "true"}


@pytest.fixture
def write(spark: SparkSession, catalog: SqlCatalog) -> Callable[..., Any]:
    """Append rows ``ids`` (region eu) to db.t with the given keywords."""

    def write(ids: range, **kwargs: Any) -> Any:
        df = spark.createDataFrame([(i, "eu") for i in ids], DDL)
        return append("db.t", df, catalog=catalog, runner=LocalRunner(spark), **kwargs)

    return write


@pytest.fixture
def history(catalog: SqlCatalog, write: Callable[..., Any]) -> list[int]:
    """db.t (WAP enabled) with three appends: ids 0-1, 10-11, 20-21; their snapshot ids."""
    create("db.t", catalog=catalog, schema=SCHEMA, properties=WAP)
    return [write(range(n, n + 2)).snapshot_id for n in (0, 10, 20)]


def ids(pycat: Any, ref: str | None = None, snapshot_id: int | None = None) -> list[int]:
    table = pycat.load_table("db.t")
    if ref is not None:
        snapshot_id = table.metadata.refs[ref].snapshot_id
    scan = table.scan(snapshot_id=snapshot_id)
    return sorted(scan.to_arrow().column("id").to_pylist())


def location(catalog: SqlCatalog) -> str:
    return catalog.load_table("db.t").metadata_location


def test_write_audit_publish_with_a_wap_id(
    catalog: SqlCatalog, pyiceberg_catalog: Any, history: list[int], write: Callable[..., Any]
) -> None:
    staged = write(range(70, 72), wap_id="run-1", commit_key="load-1")
    assert staged.committed
    t = catalog.load_table("db.t")
    assert t.metadata.current_snapshot_id == history[-1]  # main did not move
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21]
    assert ids(pyiceberg_catalog, snapshot_id=staged.snapshot_id)[-2:] == [70, 71]
    # the retried write finds its staged snapshot by commit key
    again = write(range(70, 72), wap_id="run-1", commit_key="load-1")
    assert not again.committed and again.snapshot_id == staged.snapshot_id
    done = publish("db.t", catalog=catalog, wap_id="run-1")
    assert done.committed and done.ref == "main"
    assert (done.previous_snapshot_id, done.snapshot_id) == (history[-1], staged.snapshot_id)
    assert not done.created_snapshot  # main's head was its parent: a fast-forward
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21, 70, 71]
    repeat = publish("db.t", catalog=catalog, wap_id="run-1")  # a retried task
    assert not repeat.committed and repeat.snapshot_id == staged.snapshot_id


def test_publish_after_main_moved_cherry_picks_the_staged_append(
    catalog: SqlCatalog, pyiceberg_catalog: Any, history: list[int], write: Callable[..., Any]
) -> None:
    staged = write(range(70, 72), wap_id="run-2")
    other = write(range(90, 91))
    done = publish("db.t", catalog=catalog, wap_id="run-2")
    assert done.committed and done.created_snapshot
    snap = catalog.load_table("db.t").metadata.current_snapshot()
    assert snap is not None and snap.parent_snapshot_id == other.snapshot_id
    assert snap.summary is not None and snap.summary["published-wap-id"] == "run-2"
    assert snap.summary["source-snapshot-id"] == str(staged.snapshot_id)
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21, 70, 71, 90]
    assert not publish("db.t", catalog=catalog, wap_id="run-2").committed
    assert not publish("db.t", catalog=catalog, cherry_pick=staged.snapshot_id).committed


def test_staging_needs_the_table_property(
    catalog: SqlCatalog, history: list[int], write: Callable[..., Any]
) -> None:
    create("db.plain", catalog=catalog, schema=SCHEMA)
    before = catalog.load_table("db.plain").metadata_location
    with pytest.raises(ValidationError, match=r"write\.wap\.enabled=true"):
        append("db.plain", "sql:SELECT 1L AS id, 'eu' AS region", catalog=catalog, wap_id="x")
    assert catalog.load_table("db.plain").metadata_location == before


@pytest.mark.parametrize("verb", ["replace", "merge", "delete"])
def test_every_write_verb_stages_and_publishes(
    spark: SparkSession,
    catalog: SqlCatalog,
    pyiceberg_catalog: Any,
    history: list[int],
    verb: str,
) -> None:
    runner = LocalRunner(spark)
    source = spark.createDataFrame([(0, "us"), (5, "us")], DDL)
    if verb == "replace":
        staged = replace(
            "db.t", source, where="id < 10", wap_id="w", catalog=catalog, runner=runner
        )
        expected = [0, 5, 10, 11, 20, 21]
    elif verb == "merge":
        staged = merge("db.t", source, on="id", wap_id="w", catalog=catalog, runner=runner)
        expected = [0, 1, 5, 10, 11, 20, 21]
    else:
        staged = delete("db.t", "id >= 20", wap_id="w", catalog=catalog, runner=runner)
        expected = [0, 1, 10, 11]
    assert staged.committed
    assert catalog.load_table("db.t").metadata.current_snapshot_id == history[-1]
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21]
    done = publish("db.t", catalog=catalog, wap_id="w")
    assert done.snapshot_id == staged.snapshot_id  # main had not moved: a fast-forward
    assert ids(pyiceberg_catalog) == expected


def test_publish_a_branch_is_a_fast_forward(
    catalog: SqlCatalog, pyiceberg_catalog: Any, history: list[int], write: Callable[..., Any]
) -> None:
    made = branch("db.t", "audit", catalog=catalog)
    assert made.committed and made.snapshot_id == history[-1] and made.previous_snapshot_id is None
    on_branch = write(range(30, 32), branch="audit")
    assert ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21]
    done = publish("db.t", catalog=catalog, branch="audit")
    assert done.committed and done.snapshot_id == on_branch.snapshot_id
    assert done.refs == {"audit": on_branch.snapshot_id, "main": on_branch.snapshot_id}
    assert ids(pyiceberg_catalog)[-2:] == [30, 31]
    assert not publish("db.t", catalog=catalog, branch="audit").committed


def test_publish_refuses_a_branch_that_main_is_not_an_ancestor_of(
    catalog: SqlCatalog, history: list[int], write: Callable[..., Any]
) -> None:
    branch("db.t", "audit", catalog=catalog)
    write(range(30, 31), branch="audit")
    write(range(40, 41))  # main moved on: publishing the branch would drop it
    before = location(catalog)
    with pytest.raises(ValidationError, match="not an ancestor"):
        publish("db.t", catalog=catalog, branch="audit")
    assert location(catalog) == before


def test_rollback_and_set_current(
    catalog: SqlCatalog, pyiceberg_catalog: Any, history: list[int]
) -> None:
    back = rollback("db.t", catalog=catalog, to_snapshot=history[0])
    assert back.committed and (back.previous_snapshot_id, back.snapshot_id) == (
        history[-1],
        history[0],
    )
    assert ids(pyiceberg_catalog) == [0, 1]
    assert not rollback("db.t", catalog=catalog, to_snapshot=str(history[0])).committed
    before = location(catalog)
    with pytest.raises(ValidationError, match="not an ancestor"):
        rollback("db.t", catalog=catalog, to_snapshot=history[-1])
    assert location(catalog) == before
    forward = set_current("db.t", history[-1], catalog=catalog)
    assert forward.committed and ids(pyiceberg_catalog) == [0, 1, 10, 11, 20, 21]


def test_rollback_to_a_timestamp(catalog: SqlCatalog, history: list[int]) -> None:
    snaps = {s.snapshot_id: s for s in catalog.load_table("db.t").metadata.snapshots}
    third = snaps[history[2]].timestamp_ms
    done = rollback("db.t", catalog=catalog, to_timestamp=third)  # strictly before it
    assert done.snapshot_id == history[1] or snaps[history[1]].timestamp_ms == third
    first = dt.datetime.fromtimestamp(snaps[history[0]].timestamp_ms / 1000, tz=dt.UTC)
    before = location(catalog)
    with pytest.raises(ValidationError, match="has no snapshot before"):
        rollback("db.t", catalog=catalog, to_timestamp=first - dt.timedelta(days=1))
    assert location(catalog) == before


def test_tags_and_branches(catalog: SqlCatalog, pyiceberg_catalog: Any, history: list[int]) -> None:
    made = tag("db.t", "v1", snapshot_id=history[1], retain="30d", catalog=catalog)
    assert made.committed and made.snapshot_id == history[1]
    ref = catalog.load_table("db.t").metadata.refs["v1"]
    assert ref.max_ref_age_ms == 30 * 86_400_000
    assert ids(pyiceberg_catalog, ref="v1") == [0, 1, 10, 11]
    assert not tag("db.t", "v1", snapshot_id=history[1], catalog=catalog).committed
    before = location(catalog)
    with pytest.raises(ValidationError, match="already has a tag named 'v1'"):
        tag("db.t", "v1", snapshot_id=history[0], catalog=catalog)
    with pytest.raises(ValidationError, match="no branch named 'v1'"):
        drop_branch("db.t", "v1", catalog=catalog)
    assert location(catalog) == before
    gone = untag("db.t", "v1", catalog=catalog)
    assert gone.committed and gone.snapshot_id is None and "v1" not in gone.refs
    assert branch("db.t", "dev", snapshot_id=history[0], catalog=catalog).snapshot_id == history[0]
    assert drop_branch("db.t", "dev", catalog=catalog).refs == {"main": history[-1]}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c, h: publish("db.t", catalog=c, branch="nope"), "no branch named 'nope'"),
        (lambda c, h: publish("db.t", catalog=c, wap_id="nope"), "staged with wap.id 'nope'"),
        (lambda c, h: publish("db.t", catalog=c), "exactly one of"),
        (lambda c, h: publish("db.t", catalog=c, cherry_pick=123), "no snapshot 123"),
        (lambda c, h: rollback("db.t", catalog=c, to_snapshot="x"), "must be a snapshot id"),
        (lambda c, h: set_current("db.t", 42, catalog=c), "no snapshot 42"),
        (lambda c, h: tag("db.t", "t", retain="forever", catalog=c), "positive duration"),
        (lambda c, h: tag("db.t", "", catalog=c), "non-empty name"),
        (lambda c, h: untag("db.t", "main", catalog=c), "no tag named 'main'"),
        (lambda c, h: drop_branch("db.t", "main", catalog=c), "main branch cannot be dropped"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    catalog: SqlCatalog, history: list[int], call: Callable[..., Any], message: str
) -> None:
    before = location(catalog)
    with pytest.raises(ValidationError, match=message) as raised:
        call(catalog, history)
    assert "\n" not in str(raised.value)
    assert location(catalog) == before
