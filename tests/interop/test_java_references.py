"""The reference verbs against Iceberg Java's Spark procedures and DDL, on copies of one table.

icewright builds one table (file-system catalog, Iceberg Java's Hadoop layout) whose
history has something for every verb: appends on ``main``, a branch ``audit`` ahead of
``main`` and a branch ``stale`` that forked before ``main``'s head, a tag, and two
snapshots staged with a WAP id (``early``, whose parent is no longer ``main``'s head, and
``late``, whose parent is). Each case then runs on two copies of that table: icewright's
action on the table registered in a SQLite catalog (the same metadata file: icewright's
commit writes a new one), and Iceberg Java's procedure (``CALL ...system.fast_forward``,
``cherrypick_snapshot``, ``publish_changes``, ``rollback_to_snapshot``,
``rollback_to_timestamp``, ``set_current_snapshot``) or DDL (``ALTER TABLE ... CREATE
TAG/BRANCH``, ``DROP TAG/BRANCH``) on a copy of the table's directory in the Hadoop
catalog.

Asserted for every case:

* where Java refuses (a fast-forward over commits of ``main``, a rollback to a
  non-ancestor, a tag name taken), icewright refuses with a ``ValidationError`` and
  commits nothing;
* otherwise, as Iceberg Java parses both metadata files: the same current snapshot and
  the same refs (names, types, snapshot, retention). A cherry-pick that is not a
  fast-forward creates a snapshot in each engine, with different ids: they are compared
  by content (parent, operation, ``source-snapshot-id`` and ``published-wap-id``, the
  files it added, as Java reads its manifests) and then mapped onto each other;
* Iceberg Java, pyiceberg and DuckDB read the same rows from ``main`` and from each
  branch and tag of icewright's result (Java by ref name, pyiceberg with ``use_ref``,
  DuckDB by the ref's snapshot id) as Iceberg Java reads from its own result.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import StaticTable

from icewright.actions import branch, drop_branch, publish, rollback, set_current, tag, untag
from icewright.catalog import Catalog, SqlCatalog, Table, load_catalog
from icewright.commit import ManageSnapshots, fast_append
from icewright.errors import ValidationError
from tests.commit.support import SCHEMA, files_for, rows
from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import IcebergJava, Pending, sorted_rows

pytestmark = [pytest.mark.slow, pytest.mark.interop]

DAY_MS = 86_400_000
BASE = "db.base"


@dataclasses.dataclass(frozen=True)
class Base:
    """The base table's snapshots by role (see the module docstring); branch ``stale``
    forked at s1 and has one append."""

    metadata_location: str
    s1: int  # main
    s2: int  # main; parent of the staged ``early``
    early: int  # staged, wap.id early
    s4: int  # main's head, parent of ``late`` and of branch audit
    audit: int  # audit's head (two appends past s4)
    audit_first: int
    late: int  # staged, wap.id late
    s4_ms: int  # s4's timestamp


def _commit(table: Table, n: int, start: int, **kw: Any) -> Table:
    time.sleep(0.005)  # distinct commit timestamps: rollback_to_timestamp picks by them
    return fast_append(table, files_for(table, rows(n, start=start)), **kw).table


def _build(warehouse: Path) -> Base:
    catalog = load_catalog({"type": "filesystem", "warehouse": str(warehouse), "name": "hadoop"})
    catalog.create_namespace("db")
    t = catalog.create_table(
        BASE, SCHEMA, properties={"format-version": "2", "write.wap.enabled": "true"}
    )
    t = _commit(t, 3, 0)
    s1 = t.metadata.current_snapshot_id
    t = ManageSnapshots(t).create_tag("old-tag", s1).create_branch("stale", s1).commit().table
    t = _commit(t, 2, 40, branch="stale")
    t = _commit(t, 3, 3)
    s2 = t.metadata.current_snapshot_id
    t = _commit(t, 2, 20, wap_id="early")
    early = t.metadata.snapshots[-1].snapshot_id
    t = _commit(t, 2, 6)
    s4 = t.metadata.current_snapshot_id
    t = ManageSnapshots(t).create_branch("audit", s4).commit().table
    t = _commit(t, 2, 10, branch="audit")
    audit_first = t.metadata.refs["audit"].snapshot_id
    t = _commit(t, 1, 12, branch="audit")
    t = _commit(t, 2, 30, wap_id="late")
    late = t.metadata.snapshots[-1].snapshot_id
    m = t.metadata
    parents = {s.snapshot_id: s.parent_snapshot_id for s in m.snapshots}
    assert s1 and s2 and s4 and parents[early] == s2 and parents[late] == s4
    return Base(
        metadata_location=t.metadata_location,
        s1=s1,
        s2=s2,
        early=early,
        s4=s4,
        audit=m.refs["audit"].snapshot_id,
        audit_first=audit_first,
        late=late,
        s4_ms=next(s.timestamp_ms for s in m.snapshots if s.snapshot_id == s4),
    )


Verb = Callable[[str, Catalog], Any]


@dataclasses.dataclass(frozen=True)
class Case:
    """One verb: icewright's call on table ``name`` and Java's statement on ``{table}``."""

    name: str
    icewright: Verb
    java: str
    refused: str | None = None  # what Java's refusal says (a regular expression)
    new_snapshot: bool = False  # a cherry-pick that re-applies changes


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _cases(h: Base) -> list[Case]:
    proc = "CALL {catalog}.system."
    return [
        Case(
            "fast_forward",
            lambda n, c: publish(n, branch="audit", catalog=c),
            proc + "fast_forward(table => '{name}', branch => 'main', to => 'audit')",
        ),
        Case(
            "fast_forward_over_main",
            lambda n, c: publish(n, branch="stale", catalog=c),
            proc + "fast_forward(table => '{name}', branch => 'main', to => 'stale')",
            refused="main is not an ancestor of stale",
        ),
        Case(
            "cherry_pick",
            lambda n, c: publish(n, cherry_pick=h.early, catalog=c),
            proc + f"cherrypick_snapshot(table => '{{name}}', snapshot_id => {h.early})",
            new_snapshot=True,
        ),
        Case(
            "cherry_pick_fast_forward",
            lambda n, c: publish(n, cherry_pick=h.late, catalog=c),
            proc + f"cherrypick_snapshot(table => '{{name}}', snapshot_id => {h.late})",
        ),
        Case(
            "publish_wap_id",
            lambda n, c: publish(n, wap_id="early", catalog=c),
            proc + "publish_changes(table => '{name}', wap_id => 'early')",
            new_snapshot=True,
        ),
        Case(
            "publish_wap_id_fast_forward",
            lambda n, c: publish(n, wap_id="late", catalog=c),
            proc + "publish_changes(table => '{name}', wap_id => 'late')",
        ),
        Case(
            "rollback_to_snapshot",
            lambda n, c: rollback(n, to_snapshot=h.s2, catalog=c),
            proc + f"rollback_to_snapshot(table => '{{name}}', snapshot_id => {h.s2})",
        ),
        Case(
            "rollback_to_non_ancestor",
            lambda n, c: rollback(n, to_snapshot=h.audit, catalog=c),
            proc + f"rollback_to_snapshot(table => '{{name}}', snapshot_id => {h.audit})",
            refused="not an ancestor of the current",
        ),
        Case(
            # strictly before s4's commit: its parent s2 (the staged snapshot is no ancestor)
            "rollback_to_timestamp",
            lambda n, c: rollback(n, to_timestamp=h.s4_ms, catalog=c),
            proc + f"rollback_to_timestamp(table => '{{name}}', timestamp => "
            f"TIMESTAMP '{_iso(h.s4_ms)}')",
        ),
        Case(
            "set_current",
            lambda n, c: set_current(n, h.audit_first, catalog=c),
            proc + f"set_current_snapshot(table => '{{name}}', snapshot_id => {h.audit_first})",
        ),
        Case(
            "tag",
            lambda n, c: tag(n, "v1", snapshot_id=h.s2, retain="7d", catalog=c),
            f"ALTER TABLE {{table}} CREATE TAG `v1` AS OF VERSION {h.s2} RETAIN 7 DAYS",
        ),
        Case(
            "tag_name_taken",
            lambda n, c: tag(n, "old-tag", snapshot_id=h.s2, catalog=c),
            f"ALTER TABLE {{table}} CREATE TAG `old-tag` AS OF VERSION {h.s2}",
            refused="old-tag already exists",
        ),
        Case(
            "branch",
            lambda n, c: branch(n, "b2", snapshot_id=h.s1, retain="3d", catalog=c),
            f"ALTER TABLE {{table}} CREATE BRANCH `b2` AS OF VERSION {h.s1} RETAIN 3 DAYS",
        ),
        Case(
            "drop_branch",
            lambda n, c: drop_branch(n, "audit", catalog=c),
            "ALTER TABLE {table} DROP BRANCH `audit`",
        ),
        Case(
            "untag",
            lambda n, c: untag(n, "old-tag", catalog=c),
            "ALTER TABLE {table} DROP TAG `old-tag`",
        ),
    ]


# --- comparing -------------------------------------------------------------------------


def _refs(meta: dict[str, Any], ids: dict[int, int]) -> dict[str, tuple[Any, ...]]:
    """Every ref as (type, snapshot id with ``ids`` applied, retention settings)."""
    return {
        name: (
            r["type"],
            ids.get(r["snapshot-id"], r["snapshot-id"]),
            r.get("max-ref-age-ms"),
            r.get("min-snapshots-to-keep"),
            r.get("max-snapshot-age-ms"),
        )
        for name, r in meta["refs"].items()
    }


def _snapshot(meta: dict[str, Any], sid: int) -> dict[str, Any]:
    (snap,) = [s for s in meta["snapshots"] if s["snapshot_id"] == sid]
    return snap


def _added(manifests: dict[str, Any]) -> list[str]:
    """Paths of the data files the current snapshot added, as Java reads its manifests."""
    sid = manifests["snapshot_id"]
    return sorted(
        e["file_path"].removeprefix("file:")
        for m in manifests["manifests"]
        for e in m["entries"]
        if e["status"] == "added" and e["snapshot_id"] == sid and e["content"] == "data"
    )


PICK_KEYS = ("source-snapshot-id", "published-wap-id", "added-data-files", "added-records")


def _same_pick(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The cherry-picked snapshots of the two engines carry the same change."""
    for key in ("parent_id", "operation", "sequence_number"):
        assert ours[key] == theirs[key], key
    for key in PICK_KEYS:
        assert ours["summary"].get(key) == theirs["summary"].get(key), key


def _ref_options(meta: dict[str, Any], name: str) -> dict[str, str]:
    return {("branch" if meta["refs"][name]["type"] == "branch" else "tag"): name}


# --- the test --------------------------------------------------------------------------


def test_reference_verbs_agree_with_iceberg_java(
    iceberg_java: IcebergJava, duckdb_iceberg: Any, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    h = _build(warehouse)
    cases = _cases(h)
    ours = SqlCatalog("ice", uri=f"sqlite:///{tmp_path}/ice.db", warehouse=str(tmp_path / "ice"))
    ours.create_namespace("db")
    base_dir = warehouse / "db" / "base"
    for case in cases:
        shutil.copytree(base_dir, warehouse / "db" / f"java_{case.name}")
        ours.register_table(f"db.{case.name}", h.metadata_location)

    # 1. Java's statement on each copy (one batch), icewright's action on the other.
    with iceberg_java.batch() as java:
        done = {c.name: java.sql(warehouse, f"db.java_{c.name}", c.java) for c in cases}
    ice_locations: dict[str, str] = {}
    for case in cases:
        name = f"db.{case.name}"
        error = done[case.name].error
        if case.refused:
            assert error is not None, f"{case.name}: Java accepted it"
            assert re.search(case.refused, error.message), (case.name, error.message)
            with pytest.raises(ValidationError) as refused:
                case.icewright(name, ours)
            assert "\n" not in str(refused.value)
            assert ours.load_table(name).metadata_location == h.metadata_location, case.name
            continue
        assert error is None, f"{case.name}: {error}"
        result = case.icewright(name, ours)
        assert result.committed, case.name
        assert result.created_snapshot == case.new_snapshot, case.name
        ice_locations[case.name] = ours.load_table(name).metadata_location

    # 2. Java parses both results; the current snapshots' manifests of cherry-picks.
    compared = [c for c in cases if not c.refused]
    with iceberg_java.batch() as java:
        parsed: dict[str, tuple[Pending[Any], Pending[Any]]] = {}
        picks: dict[str, tuple[Pending[Any], Pending[Any]]] = {}
        for c in compared:
            theirs = done[c.name].value["metadata_location"]
            parsed[c.name] = (
                java.parse_table_metadata(ice_locations[c.name]),
                java.parse_table_metadata(theirs),
            )
            if c.new_snapshot:
                picks[c.name] = (
                    java.table_manifests(ice_locations[c.name]),
                    java.table_manifests(theirs),
                )
    metas: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for c in compared:
        mine, theirs = (p.value for p in parsed[c.name])
        ids: dict[int, int] = {}
        if c.new_snapshot:
            ours_new, theirs_new = mine["current_snapshot_id"], theirs["current_snapshot_id"]
            assert ours_new != theirs_new  # each engine made its own snapshot
            _same_pick(_snapshot(mine, ours_new), _snapshot(theirs, theirs_new))
            added = [_added(p.value) for p in picks[c.name]]
            assert added[0] == added[1] and added[0], c.name
            ids = {ours_new: theirs_new}
        else:
            assert {s["snapshot_id"] for s in mine["snapshots"]} == {
                s["snapshot_id"] for s in theirs["snapshots"]
            }, c.name
        current = mine["current_snapshot_id"]
        assert ids.get(current, current) == theirs["current_snapshot_id"], c.name
        assert _refs(mine, ids) == _refs(theirs, {}), c.name
        metas[c.name] = (mine, theirs)

    # 3. The rows of main and of every branch and tag: Java on both results, pyiceberg
    #    and DuckDB on icewright's.
    with iceberg_java.batch() as java:
        reads: list[tuple[str, str, Pending[Any], Pending[Any]]] = []
        for c in compared:
            mine, theirs = metas[c.name]
            for ref in sorted(mine["refs"]):
                reads.append(
                    (
                        c.name,
                        ref,
                        java.scan(ice_locations[c.name], options=_ref_options(mine, ref)),
                        java.scan(
                            theirs["metadata_file_location"], options=_ref_options(theirs, ref)
                        ),
                    )
                )
    for name, ref, on_ours, on_theirs in reads:
        want = on_theirs.value.rows
        assert on_ours.value.rows == want, (name, ref)
        location = ice_locations[name]
        sid = metas[name][0]["refs"][ref]["snapshot-id"]
        py = StaticTable.from_metadata(location).scan().use_ref(ref).to_arrow().to_pylist()
        assert sorted_rows([tuple(r.values()) for r in py]) == want, (name, ref)
        _, duck = duckdb_scan_columns(location, connection=duckdb_iceberg, snapshot_id=sid)
        assert duck == want, (name, ref)
    assert {name for name, *_ in reads} == {c.name for c in compared}
