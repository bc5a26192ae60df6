"""The conflict matrix: every pair of operations racing on one table, on every catalog kind.

Two handles load the same table. Both operations are prepared from that state; the
first commits from handle 1, then the second commits from handle 2, whose metadata is
now stale: its first attempt loses the race at the catalog, and the commit loop
refreshes and re-applies it, which either succeeds or raises the named
``ValidationError``. The expected outcome of each ordered pair is written in
:data:`MATRIX`; it follows the spec ("Commit Conflict Resolution and Retry") and Iceberg
Java 1.10's rules:

* an append has no conflicts and always re-applies (``FastAppend``/``MergeAppend``);
* a delete by row filter has none either (``StreamingDelete`` validates nothing unless
  asked): it re-applies, and so also removes matching files added in between;
* an overwrite by filter at the default ``serializable`` isolation
  (``write.update.isolation-level``) fails if data matching its filter was added since
  its start (``validateAddedDataFiles``: "found conflicting files") or if matching data
  was removed (``validateDeletedDataFiles``: "found conflicting deleted files", counting
  ``overwrite``, ``replace`` and ``delete`` snapshots);
* a dynamic partition replace validated as Spark does at ``serializable``
  (``validateNoConflictingData`` + ``validateNoConflictingDeletes``) fails the same way
  for its partitions;
* a rewrite (compaction) fails when one of its input files is no longer live
  (``failMissingDeletePaths``: "missing required files to delete");
* expire snapshots re-applies on the refreshed table: it computes retention afresh;
* a schema change fails when the schema changed since it was prepared and otherwise
  re-applies: the issue's rule. Java's ``SchemaUpdate.commit`` does not retry at all (any
  concurrent commit fails it with ``CommitFailedException``); its REST requirements
  (``assert-current-schema-id``, ``assert-last-assigned-field-id``) draw the line where
  icewright does.

After every pair the table is checked: it loads, its snapshot list is what the outcome
implies (ids, order, parents, operations), no manifest or manifest list is left in the
metadata directory that no snapshot references (nothing a failed or losing attempt wrote
survives), every metadata JSON file there is the current one or in the metadata log,
and the rows are those of a model of the operations (read by icewright's scan planning
and pyarrow; on SQLite also by pyiceberg 0.12).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Catalog, Table
from icewright.commit import (
    DeleteFiles,
    ExpireSnapshots,
    MergeAppend,
    OverwriteFiles,
    ReplacePartitions,
    RewriteFiles,
    update_schema,
)
from icewright.commit.snapshot_producer import metadata_dir
from icewright.errors import ValidationError
from icewright.scan import plan_files
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.types import StringType
from tests.commit.support import (
    FAST,
    SCHEMA,
    avro_files,
    files_for,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
    scan_rows,
)
from tests.support.catalogs import CATALOG_KINDS, make_catalog

# --- the operations ------------------------------------------------------------------------

# The table starts with two snapshots: S1 appends E1 (day 1, eu, ids 0-4), S2 appends U1
# (day 2, us, ids 100-102). Every data operation touches partition (day 1, eu) and filters
# on region = 'eu'; the first operation's new rows get ids from 1000, the second's from
# 2000. Rows are modelled as {id: (day, region)}.
Rows = dict[int, tuple[int, str]]
START_ROWS = rows(5, 1, "eu", 0) + rows(3, 2, "us", 100)
EU = "region = 'eu'"


def _model(data: list[dict[str, Any]]) -> Rows:
    return {r["id"]: (r["ts"].day, r["region"]) for r in data}


def _new_rows(base: int) -> list[dict[str, Any]]:
    return rows(2, 1, "eu", base)


def _build_append(t: Table, base: int) -> Any:
    return MergeAppend(t, files_for(t, _new_rows(base)))


def _build_overwrite(t: Table, base: int) -> Any:
    # Isolation from the table properties: serializable, the default.
    op = OverwriteFiles(t).overwrite_by_row_filter(EU).add_files(files_for(t, _new_rows(base)))
    return op.isolation_level_from_properties()


def _build_replace(t: Table, base: int) -> Any:
    # As Spark's dynamic overwrite validates at serializable isolation.
    op = ReplacePartitions(t, files_for(t, _new_rows(base)))
    return op.validate_no_conflicting_data().validate_no_conflicting_deletes()


def _build_delete(t: Table, base: int) -> Any:
    return DeleteFiles(t).delete_from_row_filter(EU)


def _build_rewrite(t: Table, base: int) -> Any:
    # Compaction as a maintenance job does it: plan the files of a partition on the handle,
    # read their rows, write them again, and swap the files.
    old = [task.data_file for task in plan_files(t, filter=EU)]
    assert len(old) == 1
    data = [
        {"id": i, "ts": ts, "region": region} for i, ts, region in scan_rows(t) if region == "eu"
    ]
    return RewriteFiles(t).rewrite_files(old, files_for(t, data))


def _build_expire(t: Table, base: int) -> Any:
    # "Snapshots older than now, retain the last one", now being when it was prepared.
    return ExpireSnapshots(t).expire_older_than(int(time.time() * 1000)).retain_last(1)


def _build_schema(t: Table, base: int) -> Any:
    return update_schema(t).add_column(f"c{base}", StringType())


def _drop(r: Rows, keep: Callable[[tuple[int, str]], bool]) -> Rows:
    return {k: v for k, v in r.items() if keep(v)}


@dataclass(frozen=True)
class Op:
    """An operation of the matrix: how to prepare it, and what it does to the rows."""

    build: Callable[[Table, int], Any]
    effect: Callable[[Rows, int], Rows]
    operation: str | None  # the snapshot operation it commits; None: no snapshot


OPS: dict[str, Op] = {
    "append": Op(_build_append, lambda r, b: {**r, **_model(_new_rows(b))}, "append"),
    "overwrite": Op(
        _build_overwrite,
        lambda r, b: {**_drop(r, lambda v: v[1] != "eu"), **_model(_new_rows(b))},
        "overwrite",
    ),
    "replace": Op(
        _build_replace,
        lambda r, b: {**_drop(r, lambda v: v != (1, "eu")), **_model(_new_rows(b))},
        "overwrite",
    ),
    "delete": Op(_build_delete, lambda r, b: _drop(r, lambda v: v[1] != "eu"), "delete"),
    "rewrite": Op(_build_rewrite, lambda r, b: r, "replace"),
    "expire": Op(_build_expire, lambda r, b: r, None),
    "schema": Op(_build_schema, lambda r, b: r, None),
}

REMOVES_E1 = ("overwrite", "replace", "delete", "rewrite")

# --- the expected outcomes -----------------------------------------------------------------

OK = None
ADDED = "found conflicting files that can contain records"
REMOVED = "found conflicting deleted files"
MISSING = "missing required files to delete"
SCHEMA_CHANGED = "the table schema changed since this update was prepared"

# Rows: the second (stale) operation. Columns: the first, which committed before it.
# OK: both commit; otherwise the ValidationError message the second one fails with.
# fmt: off
ORDER = ("append", "overwrite", "replace", "delete", "rewrite", "expire", "schema")
TABLE: dict[str, tuple[str | None, ...]] = {
    #             append  overwrite replace  delete   rewrite  expire  schema
    "append":    (OK,     OK,       OK,      OK,      OK,      OK,     OK),
    "overwrite": (ADDED,  ADDED,    ADDED,   REMOVED, REMOVED, OK,     OK),
    "replace":   (ADDED,  ADDED,    ADDED,   REMOVED, REMOVED, OK,     OK),
    "delete":    (OK,     OK,       OK,      OK,      OK,      OK,     OK),
    "rewrite":   (OK,     MISSING,  MISSING, MISSING, MISSING, OK,     OK),
    "expire":    (OK,     OK,       OK,      OK,      OK,      OK,     OK),
    "schema":    (OK,     OK,       OK,      OK,      OK,      OK,     SCHEMA_CHANGED),
}
# fmt: on
MATRIX: dict[tuple[str, str], str | None] = {
    (first, second): TABLE[second][ORDER.index(first)] for second in ORDER for first in ORDER
}

# --- the check -----------------------------------------------------------------------------


def _setup(catalog: Catalog, name: str) -> tuple[list[int], str, str]:
    """Table ``name`` with its two starting snapshots: their ids, and E1's and U1's paths."""
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
    table = catalog.create_table(name, SCHEMA, spec, properties=FAST)
    e1, u1 = sorted(files_for(table, START_ROWS), key=lambda f: f.partition[1])
    table = MergeAppend(table, [e1]).commit().table
    table = MergeAppend(table, [u1]).commit().table
    ids = [s.snapshot_id for s in table.metadata.snapshots]
    # Both snapshots must be strictly older than the cutoff of an expire prepared next.
    last = table.metadata.snapshots[-1].timestamp_ms
    while int(time.time() * 1000) <= last:
        time.sleep(0.001)
    return ids, e1.file_path, u1.file_path


def _expected_snapshots(history: list[int], name: str, committed_id: int | None) -> list[int]:
    """The snapshot list after operation ``name`` committed on a linear ``history``."""
    if name == "expire":
        # Everything before the head is older than the expire's cutoff (it was prepared
        # before the other operation committed); the head is kept by retain_last(1).
        return history[-1:]
    if OPS[name].operation is None:
        return history
    assert committed_id is not None
    return [*history, committed_id]


def _metadata_json_files(table: Table) -> set[str]:
    return {
        f.path
        for f in table.io.list_prefix(metadata_dir(table.metadata))
        if f.path.endswith(".metadata.json")
    }


# Every kind 4-6 s on a quiet machine (filesystem-s3 more: moto's S3 server answers one
# request at a time), up to 27 s on a busy one: over the guard for tests outside slow.
@pytest.mark.slow
@pytest.mark.parametrize("kind", CATALOG_KINDS)
def test_conflict_matrix(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, subtests: pytest.Subtests
) -> None:
    """Every ordered pair of :data:`MATRIX` on one catalog of ``kind`` (a table per pair:
    the catalog, its namespace and its test servers are set up once per kind)."""
    catalog = make_catalog(kind, request, tmp_path)
    try:
        catalog.create_namespace("db")
        for first, second in sorted(MATRIX):
            with subtests.test(pair=f"{first}-then-{second}"):
                _check_pair(catalog, kind, first, second, tmp_path)
    finally:
        catalog.close()


def _check_pair(catalog: Catalog, kind: str, first: str, second: str, tmp_path: Path) -> None:
    table_name = f"db.{first}_{second}"
    history, e1, u1 = _setup(catalog, table_name)
    handle_1 = catalog.load_table(table_name)
    handle_2 = catalog.load_table(table_name)
    # Both writers prepare their work from the same state.
    op_1 = OPS[first].build(handle_1, 1000)
    op_2 = OPS[second].build(handle_2, 2000)

    result_1 = op_1.commit()
    assert result_1.committed  # so the second operation's handle is stale
    history = _expected_snapshots(history, first, result_1.snapshot_id)
    expected_rows = OPS[first].effect(_model(START_ROWS), 1000)

    error = MATRIX[(first, second)]
    if error is None:
        result_2 = op_2.commit()
        history = _expected_snapshots(history, second, result_2.snapshot_id)
        expected_rows = OPS[second].effect(expected_rows, 2000)
        if OPS[second].operation is not None:
            assert result_2.committed
    else:
        with pytest.raises(ValidationError, match=error):
            op_2.commit()

    final = catalog.load_table(table_name)
    meta = final.metadata
    if error is not None:
        # A failed operation changes nothing: not even a new metadata file.
        assert final.metadata_location == result_1.table.metadata_location
    # The snapshot list, its head, its parents (one linear history) and the operations of
    # the new snapshots.
    assert [s.snapshot_id for s in meta.snapshots] == history
    assert meta.current_snapshot_id == history[-1]
    for parent, child in zip(meta.snapshots, meta.snapshots[1:], strict=False):
        assert child.parent_snapshot_id == parent.snapshot_id
    produced = [(result_1, first)] + ([(result_2, second)] if error is None else [])
    for result, op_name in produced:
        if OPS[op_name].operation is not None:
            snap = meta.snapshot_by_id(result.snapshot_id)
            assert snap is not None and snap.operation is not None
            assert snap.operation.value == OPS[op_name].operation
    # Nothing that no metadata references is left behind: no manifest or manifest list of
    # a failed operation or a losing attempt, and no metadata file outside the log.
    assert avro_files(final) == referenced_metadata_files(final)
    logged = {e.metadata_file for e in meta.metadata_log} | {final.metadata_location}
    assert _metadata_json_files(final) <= logged
    # The schema change, if committed, is there.
    columns = [f.name for f in meta.schema().fields]
    assert columns[:3] == ["id", "ts", "region"]
    assert ("c1000" in columns) == (first == "schema")
    assert ("c2000" in columns) == (second == "schema" and error is None)
    # Expire deletes E1 only when the first operation removed it and the second expired
    # the snapshots where it was live; nothing ever deletes U1, which stays live.
    assert final.io.exists(e1) == (not (second == "expire" and first in REMOVES_E1))
    assert final.io.exists(u1)
    # The rows.
    got = {i: (ts.day, region) for i, ts, region in scan_rows(final)}
    assert got == expected_rows
    if kind == "sqlite":
        ids, snapshot_ids, _ = pyiceberg_read(tmp_path, table_name)
        assert ids == sorted(expected_rows)
        assert snapshot_ids == history
