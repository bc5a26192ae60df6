"""maintain's decisions, one per step, on real tables (SQLite catalog, Parquet files
written with pyarrow; no Spark: the steps that run here commit no data files)."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from icewright.actions import maintain, maintain_tables, plan_maintenance
from icewright.actions.maintain_plan import MaintainPolicy
from icewright.catalog import Catalog, SqlCatalog, Table
from icewright.commit import append
from icewright.commit.properties import UpdateProperties
from icewright.commit.row_delta import RowDelta
from icewright.errors import NoSuchNamespace, ValidationError
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import SCHEMA, one_file, position_delete_file, rows

NEVER_COMPACT = {
    "icewright.maintain.small-file-share": "1",
    "icewright.maintain.delete-file-ratio": "1000",
}


def _table(catalog: Catalog, name: str = "db.t", **props: str) -> Table:
    if not catalog.namespace_exists(name.rsplit(".", 1)[0]):
        catalog.create_namespace(name.rsplit(".", 1)[0])
    spec = build_partition_spec(SCHEMA, [("day", "ts")])
    return catalog.create_table(name, SCHEMA, spec, properties=dict(props))


def _appends(table: Table, count: int, *, days: int = 1, per: int = 3) -> Table:
    for n in range(count):
        table = append(table, [one_file(table, rows(per, day=1 + n % days, start=n * per))]).table
    return table


def test_policy_defaults_and_bad_values(catalog: SqlCatalog, pyiceberg_catalog: Any) -> None:
    table = _table(catalog)
    policy = MaintainPolicy.of(table.metadata)
    assert policy.enabled and policy.small_file_share == 0.2 and policy.min_manifests == 10
    assert policy.orphans_last_run_ms is None
    # written through icewright: refused at once, nothing changed
    for key, value, words in (
        ("icewright.maintain.small-file-share", "2", "from 0 to 1"),
        ("icewright.maintain.enabled", "maybe", "true or false"),
        ("icewright.maintain.small-file-shares", "0.5", "not one icewright knows"),
    ):
        with pytest.raises(ValidationError, match=words):
            UpdateProperties(table).set(key, value).commit()
    # written by another engine: maintain refuses with one line and changes nothing
    py = pyiceberg_catalog.load_table("db.t")
    with py.transaction() as tx:
        tx.set_properties({"icewright.maintain.manifests-per-partition": "0.5"})
    before = catalog.load_table("db.t").metadata_location
    with pytest.raises(ValidationError) as info:
        maintain("db.t", catalog=catalog)
    assert "manifests-per-partition='0.5' is invalid" in str(info.value)
    assert "\n" not in str(info.value)
    assert catalog.load_table("db.t").metadata_location == before


def test_compaction_is_due_for_small_files_when_a_group_qualifies(catalog: SqlCatalog) -> None:
    table = _appends(_table(catalog, "db.one"), 1)
    plan = plan_maintenance(table)
    step = plan.step("compaction")
    # every file is small (a few KB against 75% of 512 MiB), but one file is no group
    assert plan.figures["small_file_share"] == 1.0
    assert not step.due and "no file group qualifies" in step.reason
    table = _appends(table, 5)
    step = plan_maintenance(table).step("compaction")
    assert step.due and step.figures["files_to_rewrite"] == 6 and step.figures["groups"] == 1
    assert "small-file share 100.0% (limit 20.0%)" in step.reason
    quiet = _appends(_table(catalog, "db.two", **{"icewright.maintain.small-file-share": "1"}), 6)
    assert not plan_maintenance(quiet).step("compaction").due


def test_compaction_is_due_for_delete_files(catalog: SqlCatalog) -> None:
    table = _table(catalog, **{"icewright.maintain.small-file-share": "1"})
    files = [one_file(table, rows(4, day=d, start=d * 10)) for d in (1, 2, 3)]
    table = append(table, files).table
    table = (
        RowDelta(table).add_deletes(position_delete_file(table, files[0], [0, 1])).commit().table
    )
    step = plan_maintenance(table).step("compaction")
    assert step.figures["delete_file_ratio"] == pytest.approx(1 / 3, abs=1e-3)
    # one file with a delete: its group is rewritten whatever its size
    assert step.due and step.figures["files_to_rewrite"] == 1
    assert step.figures["delete_file_threshold"] == 1
    relaxed = UpdateProperties(table).set("icewright.maintain.delete-file-ratio", "0.5").commit()
    assert not plan_maintenance(relaxed.table).step("compaction").due


def test_manifest_rewrite_decision_and_a_second_run(catalog: SqlCatalog) -> None:
    table = _appends(_table(catalog, **NEVER_COMPACT), 12, days=2)
    plan = plan_maintenance(table)
    step = plan.step("rewrite_manifests")
    assert step.figures["data_manifests"] == 12 and step.figures["partitions"] == 2
    assert step.figures["manifests_per_partition"] == 6.0  # each day's files in 6 manifests
    assert step.due and "small-manifest share 100.0%" in step.reason
    done = maintain(table.identifier, catalog=catalog)
    assert [s.name for s in done.steps if s.ran] == ["rewrite_manifests", "remove_orphans"]
    manifests = next(s for s in done.steps if s.name == "rewrite_manifests")
    assert manifests.changes["manifests_replaced"] == 12
    assert manifests.changes["manifests_created"] == 1
    assert done.after["data_manifests"] == 1 and done.before["data_manifests"] == 12
    again = maintain(table.identifier, catalog=catalog)
    assert not any(s.ran for s in again.steps) and not again.changed
    assert "fewer than 10" in again.plan.step("rewrite_manifests").reason  # type: ignore[union-attr]


def test_manifest_rewrite_not_due_below_min_or_when_it_would_not_halve(
    catalog: SqlCatalog,
) -> None:
    few = _appends(_table(catalog, "db.few", **NEVER_COMPACT), 4)
    assert "fewer than 10" in plan_maintenance(few).step("rewrite_manifests").reason
    # manifests already at the target size: rewriting cannot halve them
    full = _table(catalog, "db.full", **NEVER_COMPACT, **{"commit.manifest.target-size-bytes": "1"})
    step = plan_maintenance(_appends(full, 12)).step("rewrite_manifests")
    assert not step.due and "would not halve" in step.reason


def test_expire_follows_the_retention_properties(catalog: SqlCatalog) -> None:
    table = _appends(_table(catalog, **NEVER_COMPACT), 5)
    keep_days = plan_maintenance(table).step("expire")
    assert not keep_days.due and keep_days.figures["expirable_snapshots"] == 0
    table = (
        UpdateProperties(table)
        .set("history.expire.max-snapshot-age-ms", "0")
        .set("history.expire.min-snapshots-to-keep", "2")
        .commit()
        .table
    )
    step = plan_maintenance(table).step("expire")
    assert step.due and step.figures["expirable_snapshots"] == 3
    done = maintain(table, catalog=catalog)
    expired = next(s for s in done.steps if s.name == "expire")
    assert expired.changes["snapshots_expired"] == 3
    assert len(catalog.load_table("db.t").metadata.snapshots) == 2
    bad = UpdateProperties(catalog.load_table("db.t"))
    with pytest.raises(ValidationError):
        bad.set("history.expire.min-snapshots-to-keep", "0")


def test_orphans_run_once_per_interval_and_are_recorded(catalog: SqlCatalog) -> None:
    table = _appends(_table(catalog, **NEVER_COMPACT), 2)
    stray = os.path.join(table.location, "data", "stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"x")
    old = time.time() - 4 * 86_400
    os.utime(stray, (old, old))
    first = maintain(table, catalog=catalog)
    orphans = next(s for s in first.steps if s.name == "remove_orphans")
    assert orphans.ran and orphans.changes["orphan_files_deleted"] == 1
    assert not os.path.exists(stray)
    recorded = catalog.load_table("db.t").metadata.properties
    assert (
        int(recorded["icewright.maintain.orphans-last-run-ms"]) == orphans.changes["recorded_at_ms"]
    )
    second = maintain(table, catalog=catalog).plan
    assert second is not None and not second.step("remove_orphans").due
    assert "interval 7 d" in second.step("remove_orphans").reason
    table = (
        UpdateProperties(catalog.load_table("db.t"))
        .set("icewright.maintain.orphan-interval-ms", "0")
        .commit()
        .table
    )
    assert plan_maintenance(table).step("remove_orphans").due


def test_disabled_table_and_dry_run_change_nothing(catalog: SqlCatalog) -> None:
    table = _appends(_table(catalog, **{"icewright.maintain.enabled": "false"}), 12)
    plan = plan_maintenance(table)
    assert plan.due == () and "enabled=false" in plan.steps[0].reason
    on = UpdateProperties(table).set("icewright.maintain.enabled", "true").commit().table
    before = on.metadata_location
    dry = maintain(on, catalog=catalog, dry_run=True)
    assert dry.dry_run and dry.plan is not None and "rewrite_manifests" in dry.plan.due
    assert not any(s.ran for s in dry.steps)
    assert catalog.load_table("db.t").metadata_location == before


def test_many_tables_one_failing(catalog: SqlCatalog, pyiceberg_catalog: Any) -> None:
    _appends(_table(catalog, "sales.a", **NEVER_COMPACT), 12)
    _table(catalog, "sales.b")
    _appends(_table(catalog, "other.c", **NEVER_COMPACT), 1)
    with pyiceberg_catalog.load_table("sales.b").transaction() as tx:
        tx.set_properties({"icewright.maintain.min-manifests": "1"})
    seen: list[str] = []
    results = maintain_tables(
        namespace="sales", catalog=catalog, on_table=lambda r: seen.append(r.table)
    )
    assert [r.table for r in results] == seen == ["sales.a", "sales.b"]
    a, b = results
    assert not a.failed and a.changed
    assert b.failed and b.error is not None and "min-manifests='1' is invalid" in b.error
    everything = maintain_tables(catalog=catalog, dry_run=True)
    assert [r.table for r in everything] == ["other.c", "sales.a", "sales.b"]
    with pytest.raises(NoSuchNamespace, match="does not exist"):
        maintain_tables(namespace="nowhere", catalog=catalog)


def test_manifests_without_live_files_are_dropped(catalog: SqlCatalog) -> None:
    # what a compaction leaves behind: delete manifests whose every entry is DELETED
    table = _appends(_table(catalog, **NEVER_COMPACT), 2)
    target = one_file(table, rows(20, start=100))
    table = append(table, [target]).table
    deletes = []
    for k in range(10):
        d = position_delete_file(table, target, [k])
        table = RowDelta(table).add_deletes(d).commit().table
        deletes.append(d)
    removal = RowDelta(table)
    for d in deletes:
        removal.remove_deletes(d)
    table = removal.commit().table
    plan = plan_maintenance(table)
    assert plan.figures["empty_manifests"] == 10 and plan.figures["delete_files"] == 0
    step = plan.step("rewrite_manifests")
    assert step.due and "10 manifest(s) without a live file" in step.reason
    done = maintain(table, catalog=catalog)
    assert done.after["delete_manifests"] == 0 and done.after["empty_manifests"] == 0
    assert not maintain(table, catalog=catalog).changed
