"""Every operation's resulting table, read by two independent implementations.

Each scenario builds the same starting table on a real SQLite catalog (three appends:
E1 = day 1 / eu, ids 0-4; U1 = day 2 / us, ids 100-102; E2 = day 1 / eu, ids 10-11),
runs one operation through the public surface (:mod:`icewright.commit`), and then
checks that

* pyiceberg 0.12 (the same SQLite catalog) and DuckDB's Iceberg extension (the metadata
  file) read exactly the rows the operation should leave, and so does icewright's own
  scan planning;
* pyiceberg's snapshot list -- ids, operations, parents -- and its current snapshot are
  icewright's.

The expected rows come from the scenario's own bookkeeping (which rows were written,
which removed), never from one of the readers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import Table
from icewright.commit import (
    ManageSnapshots,
    RowDelta,
    StagedAppend,
    Transaction,
    UpdatePartitionSpec,
    UpdateProperties,
    append,
    delete_files,
    expire_snapshots,
    fast_append,
    overwrite,
    replace_partitions,
    rewrite_files,
    update_schema,
)
from icewright.manifest.data_file import DataFile
from icewright.manifest.manifest_list import read_manifest_list
from icewright.spec.types import StringType
from tests.commit.support import (
    FAST,
    duckdb_rows,
    files_for,
    one_file,
    position_delete_file,
    pyiceberg_table,
    rows,
    scan_rows,
)

COLUMNS = ("id", "ts", "region")
Row = dict[str, Any]


@dataclass
class Start:
    """The starting table and what it holds."""

    table: Table
    e1: DataFile
    u1: DataFile
    e2: DataFile
    snapshot_ids: list[int]
    rows: list[Row] = field(default_factory=list)


def _start(make_table: Callable[..., Table], format_version: int = 2, **properties: str) -> Start:
    table = make_table(format_version=format_version, **FAST, **properties)
    data = {
        "e1": rows(5, 1, "eu", 0),
        "u1": rows(3, 2, "us", 100),
        "e2": rows(2, 1, "eu", 10),
    }
    written: dict[str, DataFile] = {}
    ids = []
    for key, part in data.items():
        written[key] = one_file(table, part)
        result = fast_append(table, [written[key]])
        table = result.table
        assert result.snapshot_id is not None
        ids.append(result.snapshot_id)
    all_rows = [r for part in data.values() for r in part]
    return Start(table, written["e1"], written["u1"], written["e2"], ids, all_rows)


def _without(data: list[Row], predicate: Callable[[Row], bool]) -> list[Row]:
    return [r for r in data if not predicate(r)]


def _file_rows(table: Table, f: DataFile) -> list[Row]:
    """The rows of one data file, in file order (positions)."""
    data: list[Row] = (
        pq.read_table(table.io.open_input(f.file_path)).select(list(COLUMNS)).to_pylist()
    )
    return data


# --- the scenarios: each returns the resulting table and the rows it should hold ---------


def _fast_append(s: Start) -> tuple[Table, list[Row]]:
    new = rows(2, 3, "eu", 200)
    return fast_append(s.table, files_for(s.table, new)).table, s.rows + new


def _merge_append(s: Start) -> tuple[Table, list[Row]]:
    # The table merges from 2 manifests on (min-count-to-merge=2, set in the start).
    new = rows(2, 3, "us", 300)
    result = append(s.table, files_for(s.table, new))
    snap = result.table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    assert len(read_manifest_list(result.table.io.read(snap.manifest_list))) == 1
    return result.table, s.rows + new


def _overwrite_by_filter(s: Start) -> tuple[Table, list[Row]]:
    new = rows(3, 1, "eu", 400)
    result = overwrite(s.table, row_filter="region = 'eu'", add_files=files_for(s.table, new))
    return result.table, _without(s.rows, lambda r: r["region"] == "eu") + new


def _overwrite_by_files(s: Start) -> tuple[Table, list[Row]]:
    # Copy-on-write: E1 without ids 3 and 4 replaces E1.
    kept = [r for r in rows(5, 1, "eu", 0) if r["id"] < 3]
    result = overwrite(s.table, delete_files=[s.e1], add_files=[one_file(s.table, kept)])
    return result.table, _without(s.rows, lambda r: r["id"] in (3, 4))


def _replace_partitions(s: Start) -> tuple[Table, list[Row]]:
    new = rows(2, 1, "eu", 500)
    result = replace_partitions(s.table, files_for(s.table, new), validate_no_conflicting_data=True)
    day1_eu = lambda r: r["ts"].day == 1 and r["region"] == "eu"  # noqa: E731
    return result.table, _without(s.rows, day1_eu) + new


def _delete(s: Start) -> tuple[Table, list[Row]]:
    result = delete_files(s.table, row_filter="region = 'us'")
    return result.table, _without(s.rows, lambda r: r["region"] == "us")


def _rewrite(s: Start) -> tuple[Table, list[Row]]:
    # Compaction: E1 and E2 (same partition) become one file with the same rows.
    merged = sorted(_file_rows(s.table, s.e1) + _file_rows(s.table, s.e2), key=lambda r: r["id"])
    result = rewrite_files(s.table, [s.e1, s.e2], [one_file(s.table, merged)])
    assert result.operation is not None and result.operation.value == "replace"
    return result.table, s.rows


def _row_delta(s: Start) -> tuple[Table, list[Row]]:
    # Merge-on-read: a position delete file removes positions 0 and 3 of E1.
    in_e1 = _file_rows(s.table, s.e1)
    gone = {in_e1[0]["id"], in_e1[3]["id"]}
    delta = RowDelta(s.table).add_deletes(position_delete_file(s.table, s.e1, [0, 3]))
    result = delta.validate_data_files_exist([s.e1.file_path]).commit()
    assert result.operation is not None and result.operation.value == "delete"
    return result.table, _without(s.rows, lambda r: r["id"] in gone)


def _expire(s: Start) -> tuple[Table, list[Row]]:
    # Make sure the older snapshots are strictly older than the cutoff.
    while int(time.time() * 1000) <= s.table.metadata.last_updated_ms:
        time.sleep(0.001)
    expired = expire_snapshots(s.table, older_than_ms=int(time.time() * 1000), retain_last=1)
    assert expired.commit is not None
    assert sorted(expired.expired_snapshot_ids) == sorted(s.snapshot_ids[:2])
    assert not s.table.io.exists(s.table.metadata.snapshots[0].manifest_list or "")
    return expired.commit.table, s.rows


def _schema(s: Start) -> tuple[Table, list[Row]]:
    evolved = update_schema(s.table).add_column("note", StringType()).commit().table
    new = [{**r, "note": f"n{r['id']}"} for r in rows(2, 4, "eu", 600)]
    result = fast_append(evolved, files_for(evolved, new))
    return result.table, [{**r, "note": None} for r in s.rows] + new


def _transaction(s: Start) -> tuple[Table, list[Row]]:
    # One commit: a new column and files that use it.
    tx = Transaction(s.table)
    tx.update_schema().add_column("note", StringType())
    new = [{**r, "note": "tx"} for r in rows(2, 4, "us", 650)]
    preview = tx.metadata
    tx.append(write_data_files(s.table.io, preview, rows_to_arrow(preview.schema(), new)))
    result = tx.commit()
    assert len(result.table.metadata.snapshots) == len(s.snapshot_ids) + 1
    return result.table, [{**r, "note": None} for r in s.rows] + new


def _spec(s: Start) -> tuple[Table, list[Row]]:
    evolved = (
        UpdatePartitionSpec(s.table)
        .remove_field("region")
        .add_field("id", "bucket[4]")
        .commit()
        .table
    )
    new = rows(4, 5, "us", 700)
    new_files = files_for(evolved, new)
    assert {f.spec_id for f in new_files} == {1}
    return fast_append(evolved, new_files).table, s.rows + new


def _rollback(s: Start) -> tuple[Table, list[Row]]:
    result = ManageSnapshots(s.table).rollback_to(s.snapshot_ids[1]).commit()
    assert result.table.metadata.current_snapshot_id == s.snapshot_ids[1]
    return result.table, _without(s.rows, lambda r: 10 <= r["id"] <= 11)


def _cherry_pick(s: Start) -> tuple[Table, list[Row]]:
    # Write-audit-publish: stage an append, let main move on, then cherry-pick it.
    table = UpdateProperties(s.table).set("write.wap.enabled", "true").commit().table
    staged_rows = rows(2, 6, "eu", 800)
    staged = StagedAppend(table, files_for(table, staged_rows), wap_id="audit-1").commit()
    assert staged.table.metadata.current_snapshot_id == s.snapshot_ids[-1]  # not yet on main
    other_rows = rows(1, 6, "us", 900)
    moved = fast_append(staged.table, files_for(staged.table, other_rows)).table
    assert staged.snapshot_id is not None
    picked = ManageSnapshots(moved).cherry_pick(staged.snapshot_id).commit()
    assert picked.snapshot_id != staged.snapshot_id  # a new snapshot, not a fast-forward
    assert picked.summary["source-snapshot-id"] == str(staged.snapshot_id)
    return picked.table, s.rows + other_rows + staged_rows


SCENARIOS: dict[str, Callable[[Start], tuple[Table, list[Row]]]] = {
    "fast_append": _fast_append,
    "merge_append": _merge_append,
    "overwrite_by_filter": _overwrite_by_filter,
    "overwrite_by_files": _overwrite_by_files,
    "replace_partitions": _replace_partitions,
    "delete": _delete,
    "rewrite": _rewrite,
    "row_delta": _row_delta,
    "expire": _expire,
    "schema": _schema,
    "transaction": _transaction,
    "spec": _spec,
    "rollback": _rollback,
    "cherry_pick": _cherry_pick,
}


def _sorted(data: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(data, key=lambda r: tuple((v is None, v) for v in r))


# Format v1 for every scenario but the row delta (delete files need v2).
CASES = [(name, 2) for name in SCENARIOS] + [(n, 1) for n in SCENARIOS if n != "row_delta"]


@pytest.mark.interop
@pytest.mark.parametrize(("name", "format_version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_operation_reads_the_same_in_pyiceberg_and_duckdb(
    make_table: Callable[..., Table], tmp_path: Path, name: str, format_version: int
) -> None:
    props = {"commit.manifest.min-count-to-merge": "2"} if name == "merge_append" else {}
    start = _start(make_table, format_version, **props)
    final, expected_rows = SCENARIOS[name](start)
    final = final.refresh()  # what the catalog holds
    meta = final.metadata
    columns = tuple(f.name for f in meta.schema().fields)
    expected = _sorted([tuple(r[c] for c in columns) for r in expected_rows])
    # Sanity: the scenarios write tz-aware timestamps, as every reader returns them.
    assert all(r["ts"].tzinfo is not None for r in expected_rows)

    assert scan_rows(final, columns) == expected
    assert duckdb_rows(final.metadata_location, columns) == expected
    with pyiceberg_table(tmp_path) as theirs:
        assert theirs.metadata_location == final.metadata_location
        got = theirs.scan().to_arrow().select(list(columns)).to_pylist()
        assert _sorted([tuple(r[c] for c in columns) for r in got]) == expected
        current = theirs.current_snapshot()
        assert current is not None and current.snapshot_id == meta.current_snapshot_id
        theirs_snaps = [
            (s.snapshot_id, s.summary.operation.value if s.summary else None, s.parent_snapshot_id)
            for s in theirs.snapshots()
        ]
    ours = [
        (s.snapshot_id, s.operation.value if s.operation else None, s.parent_snapshot_id)
        for s in meta.snapshots
    ]
    assert theirs_snaps == ours


# --- the public surface ----------------------------------------------------------------


def test_public_surface_is_import_cheap_and_complete() -> None:
    """``import icewright.commit`` loads no operation, catalog driver, Avro or Arrow code;
    every exported name then resolves, and ``append``/``overwrite`` are the functions even
    after their same-named modules are imported."""
    code = """
import json, sys
import icewright.commit as c
loaded_at_import = sorted(m for m in sys.modules if m.startswith(("icewright.", "pyarrow",
    "sqlalchemy", "boto3", "fastavro")))
from icewright.commit.append import FastAppend
import icewright.commit.overwrite
resolved = {n: type(getattr(c, n)).__name__ for n in c.__all__}
from icewright.commit import append, overwrite
print(json.dumps({"loaded": loaded_at_import, "resolved": resolved,
    "append": append.__module__, "overwrite": overwrite.__module__,
    "fast": FastAppend.__module__}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(out.stdout)
    assert report["loaded"] == ["icewright.commit", "icewright.lazy"]
    assert set(report["resolved"]) >= {
        "fast_append",
        "append",
        "overwrite",
        "replace_partitions",
        "delete_files",
        "rewrite_files",
        "expire_snapshots",
        "remove_orphan_files",
        "update_schema",
        "Transaction",
        "ManageSnapshots",
        "UpdatePartitionSpec",
        "ReplaceSortOrder",
        "UpdateProperties",
        "create_table",
        "create_or_replace_table",
        "register_table",
        "drop_table",
        "create_view",
        "replace_view",
        "drop_view",
        "CommitResult",
        "commit_updates",
        "PendingUpdate",
    }
    assert "module" not in report["resolved"].values()
    assert report["append"] == "icewright.commit.merge_append"
    assert report["overwrite"] == "icewright.commit.overwrite"
    assert report["fast"] == "icewright.commit.append"


def test_unknown_names_still_fall_back_to_submodules() -> None:
    import icewright.commit as c
    from icewright.commit import summary  # a submodule, not an export

    assert summary.__name__ == "icewright.commit.summary"
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        c.nothing_here  # noqa: B018
