"""Conflict checks and the race matrix of the data operations, on a real SQLite catalog.

Two handles load the same table; one commits an operation, then the other commits its
own operation built on the stale handle (so its first attempt loses the race and it
re-applies on the refreshed table). The expected outcome of every pair follows Iceberg
Java's rules (``MergingSnapshotProducer`` validations): both commit, or the named
``ValidationError``. Committed results are read back by pyiceberg 0.12. (The
table-driven matrix over every operation and catalog kind is
``tests/commit/test_conflict_matrix.py``.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.commit.delete import DeleteFiles
from icewright.commit.merge_append import MergeAppend
from icewright.commit.overwrite import OverwriteFiles, ReplacePartitions
from icewright.commit.rewrite import RewriteFiles
from icewright.commit.update import PendingUpdate
from icewright.commit.validation import (
    ConflictScope,
    PartitionSet,
    ancestors_between,
    is_ancestor_of,
    snapshot_manifests,
    validation_history,
)
from icewright.errors import CommitFailed, CommitStateUnknown, ValidationError
from icewright.expressions import parse
from icewright.manifest.data_file import (
    DataFile,
    ManifestContent,
    PartitionFieldSummary,
)
from icewright.spec.snapshots import Operation
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.values import to_bytes
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    files_for,
    live_paths,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
)

# --- history helpers -------------------------------------------------------------------


def test_ancestors_between_and_history(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    ids: list[int] = []
    for day in (1, 2, 3):
        result = MergeAppend(table, files_for(table, rows(2, day))).commit()
        assert result.snapshot_id is not None
        table = result.table
        ids.append(result.snapshot_id)
    meta = table.metadata
    assert [s.snapshot_id for s in ancestors_between(meta, ids[2], ids[0])] == [ids[2], ids[1]]
    assert [s.snapshot_id for s in ancestors_between(meta, ids[2], None)] == ids[::-1]
    assert ancestors_between(meta, ids[1], ids[1]) == []
    assert is_ancestor_of(meta, ids[2], ids[0]) and not is_ancestor_of(meta, ids[0], ids[2])

    parent = meta.current_snapshot()
    assert parent is not None
    manifests, snaps = validation_history(
        meta, table.io, ids[0], parent, operations={Operation.APPEND}, content=ManifestContent.DATA
    )
    # Only the manifests the two later snapshots wrote themselves.
    assert snaps == {ids[1], ids[2]}
    assert {m.added_snapshot_id for m in manifests} == {ids[1], ids[2]}
    with pytest.raises(ValidationError, match="cannot determine the history"):
        validation_history(
            meta,
            table.io,
            12345,
            parent,
            operations={Operation.APPEND},
            content=ManifestContent.DATA,
        )


def test_added_data_files_by_filter_and_partition(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    start = MergeAppend(table, files_for(table, rows(2, 1))).commit().table
    start_id = start.metadata.current_snapshot_id
    after = MergeAppend(start, files_for(start, rows(2, 2, "us", 10))).commit().table
    parent = after.metadata.current_snapshot()
    scope = ConflictScope(after.metadata, after.io, start_id, parent)
    # A filter on another region or day finds nothing; one on 'us' finds the new file.
    scope.validate_added_data_files(data_filter=parse("region = 'eu'"))
    scope.validate_added_data_files(data_filter=parse("id < 5"))
    with pytest.raises(ValidationError, match=r"conflicting files .* region = 'us'"):
        scope.validate_added_data_files(data_filter=parse("region = 'us'"))
    us_file = next(iter(live_paths(after) - live_paths(start)))
    (_, entry) = next((m, e) for m, e in current_entries(after) if e.data_file.file_path == us_file)
    same = PartitionSet([(0, entry.data_file.partition)])
    other = PartitionSet([(0, (entry.data_file.partition[0], "eu"))])
    scope.validate_added_data_files(partitions=other)
    with pytest.raises(ValidationError, match="region=us"):
        scope.validate_added_data_files(partitions=same)


def test_partition_set_equality_and_manifest_summaries() -> None:
    s = PartitionSet([(0, (1.5, "a")), (0, (float("nan"), None))])
    assert s.contains(0, (1.5, "a")) and (0, (float("nan"), None)) in s
    assert not s.contains(1, (1.5, "a")) and len(s) == 2
    ints = PartitionSet([(0, (5,))])
    from icewright.manifest.data_file import ManifestFile
    from icewright.spec.partitioning import build_partition_spec
    from icewright.spec.schema import Schema
    from icewright.spec.types import IntegerType, NestedField

    schema = Schema(NestedField(1, "x", IntegerType()))
    spec = build_partition_spec(schema, [("identity", "x")])

    def manifest(lo: int, hi: int, nulls: bool = False) -> ManifestFile:
        return ManifestFile(
            manifest_path="m.avro",
            manifest_length=1,
            partition_spec_id=0,
            added_snapshot_id=1,
            partitions=(
                PartitionFieldSummary(
                    contains_null=nulls,
                    lower_bound=to_bytes(IntegerType(), lo),
                    upper_bound=to_bytes(IntegerType(), hi),
                ),
            ),
        )

    specs = {0: spec}
    assert ints.may_contain_any(manifest(1, 9), specs, schema)
    assert not ints.may_contain_any(manifest(6, 9), specs, schema)
    assert PartitionSet([(0, (None,))]).may_contain_any(manifest(6, 9, nulls=True), specs, schema)
    assert not PartitionSet([(0, (None,))]).may_contain_any(manifest(6, 9), specs, schema)


# --- the race matrix -------------------------------------------------------------------

# The table starts with E1 (day 1, eu, ids 0-4) and U1 (day 2, us, ids 100-102). Every
# operation touches partition (day 1, eu). Each role gets its own ids.
Rows = dict[int, tuple[int, str]]


@dataclass
class Setup:
    e1: DataFile
    u1: DataFile


def _rows_of(data: list[dict[str, Any]]) -> Rows:
    return {r["id"]: (r["ts"].day, r["region"]) for r in data}


@dataclass(frozen=True)
class Op:
    name: str
    build: Callable[[Table, Setup, int], PendingUpdate]
    effect: Callable[[Rows, int], Rows]


def _append(t: Table, s: Setup, base: int) -> PendingUpdate:
    return MergeAppend(t, files_for(t, rows(2, 1, "eu", base)))


def _overwrite(t: Table, s: Setup, base: int) -> PendingUpdate:
    op = OverwriteFiles(t).overwrite_by_row_filter("region = 'eu'")
    return op.add_files(files_for(t, rows(2, 1, "eu", base))).isolation_level_from_properties()


def _replace(t: Table, s: Setup, base: int) -> PendingUpdate:
    op = ReplacePartitions(t, files_for(t, rows(2, 1, "eu", base)))
    return op.validate_no_conflicting_data().validate_no_conflicting_deletes()


def _delete(t: Table, s: Setup, base: int) -> PendingUpdate:
    return DeleteFiles(t).delete_from_row_filter("region = 'eu'")


def _rewrite(t: Table, s: Setup, base: int) -> PendingUpdate:
    return RewriteFiles(t).rewrite_files([s.e1], files_for(t, rows(5, 1, "eu", 0)))


def _drop_eu(r: Rows) -> Rows:
    return {k: v for k, v in r.items() if v[1] != "eu"}


def _drop_day1_eu(r: Rows) -> Rows:
    return {k: v for k, v in r.items() if v != (1, "eu")}


OPS = {
    "append": Op("append", _append, lambda r, b: {**r, **_rows_of(rows(2, 1, "eu", b))}),
    "overwrite": Op(
        "overwrite", _overwrite, lambda r, b: {**_drop_eu(r), **_rows_of(rows(2, 1, "eu", b))}
    ),
    "replace": Op(
        "replace", _replace, lambda r, b: {**_drop_day1_eu(r), **_rows_of(rows(2, 1, "eu", b))}
    ),
    "delete": Op("delete", _delete, lambda r, b: _drop_eu(r)),
    "rewrite": Op("rewrite", _rewrite, lambda r, b: r),
}

OK = None
MISSING = "missing required files to delete"
ADDED = "found conflicting files that can contain records"
REMOVED = "found conflicting deleted files"

# (late operation, winner) -> None when both commit, else the error the late one raises.
MATRIX: dict[tuple[str, str], str | None] = {
    ("append", "append"): OK,
    ("append", "overwrite"): OK,
    ("append", "replace"): OK,
    ("append", "delete"): OK,
    ("append", "rewrite"): OK,
    ("overwrite", "append"): ADDED,
    ("overwrite", "overwrite"): ADDED,
    ("overwrite", "replace"): ADDED,
    ("overwrite", "delete"): REMOVED,
    ("overwrite", "rewrite"): REMOVED,
    ("replace", "append"): ADDED,
    ("replace", "overwrite"): ADDED,
    ("replace", "replace"): ADDED,
    ("replace", "delete"): REMOVED,
    ("replace", "rewrite"): REMOVED,
    ("delete", "append"): OK,
    ("delete", "overwrite"): OK,
    ("delete", "replace"): OK,
    ("delete", "delete"): OK,
    ("delete", "rewrite"): OK,
    ("rewrite", "append"): OK,
    ("rewrite", "overwrite"): MISSING,
    ("rewrite", "replace"): MISSING,
    ("rewrite", "delete"): MISSING,
    ("rewrite", "rewrite"): MISSING,
}


@pytest.mark.parametrize(("late", "winner"), sorted(MATRIX))
def test_race_matrix(
    make_table: Callable[..., Table], tmp_path: Path, late: str, winner: str
) -> None:
    table = make_table(**FAST)
    start_rows = rows(5, 1, "eu", 0) + rows(3, 2, "us", 100)
    e1, u1 = sorted(files_for(table, start_rows), key=lambda f: f.partition[1])
    table = MergeAppend(table, [e1, u1]).commit().table
    setup = Setup(e1, u1)
    before = table.refresh()
    handle_a, handle_b = before, before.refresh()  # two writers read the same state
    late_op = OPS[late].build(handle_a, setup, 2000)  # prepared first, commits second
    OPS[winner].build(handle_b, setup, 1000).commit(handle_b)

    expected = OPS[winner].effect(_rows_of(start_rows), 1000)
    error = MATRIX[(late, winner)]
    if error is None:
        result = late_op.commit(handle_a)
        assert result.committed
        expected = OPS[late].effect(expected, 2000)
    else:
        with pytest.raises(ValidationError, match=error):
            late_op.commit(handle_a)
    final = table.refresh()
    assert len(final.metadata.snapshots) == (3 if error is None else 2)
    ids, snapshot_ids, _ = pyiceberg_read(tmp_path)
    assert ids == sorted(expected)
    assert snapshot_ids == [s.snapshot_id for s in final.metadata.snapshots]
    # Nothing the losing attempts (or the failed operation) wrote is left behind.
    assert avro_files(final) == referenced_metadata_files(final)


# --- injected faults, for every operation ----------------------------------------------


class FlakyCatalog(SqlCatalog):
    """A real SQLite catalog whose next swaps fail, or land but report an unknown outcome."""

    fail_next = 0
    unknown_after_success = False

    def commit_table(self, identifier: Any, base: str, new: TableMetadata) -> str:
        if self.fail_next > 0:
            self.fail_next -= 1
            raise CommitFailed("injected: the pointer moved")
        location = super().commit_table(identifier, base, new)
        if self.unknown_after_success:
            raise CommitStateUnknown("injected: the swap landed but the answer was lost")
        return location


@pytest.fixture
def flaky(tmp_path: Path) -> FlakyCatalog:
    cat = FlakyCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(tmp_path / "wh")
    )
    cat.create_namespace("db")
    return cat


def _flaky_table(cat: SqlCatalog) -> tuple[Table, Setup]:
    from icewright.spec.partitioning import build_partition_spec
    from tests.commit.support import SCHEMA

    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
    table = cat.create_table("db.orders", SCHEMA, spec, properties=FAST)
    e1, u1 = sorted(
        files_for(table, rows(5, 1, "eu", 0) + rows(3, 2, "us", 100)), key=lambda f: f.partition[1]
    )
    return MergeAppend(table, [e1, u1]).commit().table, Setup(e1, u1)


@pytest.mark.parametrize("name", sorted(OPS))
def test_next_swaps_fail_and_every_operation_still_lands(
    flaky: FlakyCatalog, tmp_path: Path, name: str
) -> None:
    table, setup = _flaky_table(flaky)
    op = OPS[name].build(table, setup, 1000)
    flaky.fail_next = 3
    result = op.commit(table)
    assert result.committed
    final = table.refresh()
    assert len(final.metadata.snapshots) == 2
    assert final.metadata.current_snapshot_id == result.snapshot_id
    ids, _, _ = pyiceberg_read(tmp_path)
    start = _rows_of(rows(5, 1, "eu", 0) + rows(3, 2, "us", 100))
    assert ids == sorted(OPS[name].effect(start, 1000))
    # Three losing attempts wrote lists (and filtered manifests); none is left.
    assert avro_files(final) == referenced_metadata_files(final)
    # Manifests (new files, filtered) were written once and reused: one list per attempt.
    manifests_written = {"append": 1, "overwrite": 2, "replace": 2, "delete": 1, "rewrite": 2}
    assert len(op.files_written()) == 4 + manifests_written[name]


@pytest.mark.parametrize("name", ["overwrite", "delete", "rewrite"])
def test_unknown_outcome_keeps_files_and_one_snapshot(
    flaky: FlakyCatalog, tmp_path: Path, name: str
) -> None:
    table, setup = _flaky_table(flaky)
    op = OPS[name].build(table, setup, 1000)
    flaky.unknown_after_success = True
    with pytest.raises(CommitStateUnknown):
        op.commit(table)
    flaky.unknown_after_success = False
    final = table.refresh()
    assert len(final.metadata.snapshots) == 2
    for path in referenced_metadata_files(final):
        assert final.io.exists(path)
    ids, _, _ = pyiceberg_read(tmp_path)
    start = _rows_of(rows(5, 1, "eu", 0) + rows(3, 2, "us", 100))
    assert ids == sorted(OPS[name].effect(start, 1000))


@pytest.mark.parametrize("name", sorted(OPS))
def test_commit_key_commits_each_operation_once(
    make_table: Callable[..., Table], name: str
) -> None:
    table = make_table(**FAST)
    e1, u1 = sorted(
        files_for(table, rows(5, 1, "eu", 0) + rows(3, 2, "us", 100)), key=lambda f: f.partition[1]
    )
    table = MergeAppend(table, [e1, u1]).commit().table
    op = OPS[name].build(table, Setup(e1, u1), 1000)
    op_key = f"dag/{name}/run/0"
    # Give the operation a commit key after construction, as every producer accepts one.
    op.options = dataclasses.replace(op.options, commit_key=op_key)  # type: ignore[attr-defined]
    first = op.commit(table)
    again_op = OPS[name].build(first.table, Setup(e1, u1), 3000)
    again_op.options = op.options  # type: ignore[attr-defined]
    before = avro_files(first.table)
    again = again_op.commit(first.table)
    assert first.committed and not again.committed
    assert again.snapshot_id == first.snapshot_id
    final = first.table.refresh()
    assert len(final.metadata.snapshots) == 2
    # The repeated operation deleted what it wrote before finding its key.
    assert avro_files(final) == before


def test_snapshot_manifests_refuses_inline_manifest_snapshots() -> None:
    from icewright.spec.snapshots import Snapshot

    inline = Snapshot(snapshot_id=1, timestamp_ms=1, manifests=("a.avro",))
    with pytest.raises(ValidationError, match="inline"):
        snapshot_manifests(None, inline)  # type: ignore[arg-type]
