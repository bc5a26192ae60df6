"""Delete files on real tables: association by sequence number, partition and spec, global
equality deletes, pruning of delete files by the filter; pyiceberg agrees on position deletes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest

from icewright.catalog import Table
from icewright.commit.spec_update import UpdatePartitionSpec
from icewright.scan import TableScan, plan_files
from tests.scan.support import (
    append,
    equality_delete,
    make_rows,
    position_delete,
    row_delta,
    write,
)


def long_bytes(v: int) -> bytes:
    return struct.pack("<q", v)


def by_region(table: Table, snapshot_index: int) -> dict[str, str]:
    """Region -> path of the data file the given snapshot added."""
    sid = table.metadata.snapshots[snapshot_index].snapshot_id
    return {t.partition[0]: t.file_path for t in plan_files(table) if t.snapshot_id == sid}


def deletes_of(table: Table, **kw: Any) -> dict[str, set[str]]:
    """Data file path -> names of the delete files applied (the name before '-')."""
    return {
        t.file_path: {d.file_path.rsplit("/", 1)[1].split("-")[0] for d in t.delete_files}
        for t in plan_files(table, **kw)
    }


def py_deletes_of(py_catalog: Any, **kw: Any) -> dict[str, set[str]]:
    tasks = py_catalog.load_table("db.t").scan(**kw).plan_files()
    return {
        t.file.file_path: {d.file_path.rsplit("/", 1)[1].split("-")[0] for d in t.delete_files}
        for t in tasks
    }


@pytest.fixture
def positional(make_table: Callable[..., Table]) -> tuple[Table, dict[str, str], dict[str, str]]:
    """Position deletes over four commits of a region-partitioned table."""
    table = make_table(fields=[("identity", "region")])
    table = append(table, make_rows(16))  # seq 1: A files
    a = by_region(table, 0)
    # seq 2: a file-scoped delete of A/eu
    table = row_delta(
        table,
        deletes=[position_delete(table, [a["eu"]], name="d2", partition=("eu",), referenced=True)],
    )
    # seq 3: B files, and in the same commit a partition-scoped delete for 'us'
    b_files = write(table, make_rows(8, start=16))
    b = {f.partition[0]: f.file_path for f in b_files}
    us_delete = position_delete(table, [a["us"], b["us"]], name="d3", partition=("us",))
    table = row_delta(table, data=b_files, deletes=[us_delete])
    # seq 4: a delete for 'apac' that keeps the data sequence number 1 of the rows it deletes
    apac_delete = position_delete(table, [a["apac"], b["apac"]], name="d4", partition=("apac",))
    table = row_delta(table, deletes=[(apac_delete, 1)])
    return table, a, b


def test_position_deletes_follow_sequence_numbers_and_partitions(
    positional: tuple[Table, dict[str, str], dict[str, str]], py_catalog: Any
) -> None:
    table, a, b = positional
    expected = {
        a["eu"]: {"d2"},  # file-scoped, later commit
        a["us"]: {"d3"},  # partition-scoped, later commit
        b["us"]: {"d3"},  # same commit: equal sequence numbers apply to position deletes
        a["apac"]: {"d4"},  # data seq 1 <= delete seq 1
        b["apac"]: set(),  # data seq 3 > delete seq 1
        a["latam"]: set(),
        b["eu"]: set(),  # d2 names only A/eu
        b["latam"]: set(),
    }
    assert deletes_of(table) == expected
    assert py_deletes_of(py_catalog) == expected
    tasks = {t.file_path: t for t in plan_files(table)}
    assert tasks[a["eu"]].data_sequence_number == 1
    assert tasks[b["us"]].data_sequence_number == 3
    # planned a manifest at a time: the same tasks, delete files included
    for scan in (TableScan.of(table), TableScan.of(table).filter("region = 'us'")):
        assert sorted(scan.iter_tasks(), key=lambda t: t.file_path) == sorted(
            scan.plan_files(), key=lambda t: t.file_path
        )


def test_time_travel_sees_the_deletes_of_its_snapshot(
    positional: tuple[Table, dict[str, str], dict[str, str]], py_catalog: Any
) -> None:
    table, a, _ = positional
    second = table.metadata.snapshots[1].snapshot_id
    expected = {path: ({"d2"} if region == "eu" else set()) for region, path in a.items()}
    assert deletes_of(table, snapshot_id=second) == expected
    assert py_deletes_of(py_catalog, snapshot_id=second) == expected


@pytest.mark.parametrize(
    "row_filter", ["region = 'us'", "id < 4", "region in ('eu', 'apac') and id >= 10", "id > 100"]
)
def test_position_deletes_with_filters_match_pyiceberg(
    positional: tuple[Table, Any, Any], py_catalog: Any, row_filter: str
) -> None:
    table, _, _ = positional
    ours = deletes_of(table, filter=row_filter)
    assert ours == py_deletes_of(py_catalog, row_filter=row_filter)
    plan = TableScan.of(table).filter(row_filter).plan()
    assert plan.metrics.total_delete_manifests == 3
    if row_filter == "region = 'us'":
        # only the 'us' delete manifest can match by its partition summary
        assert plan.metrics.scanned_delete_manifests == 1
        assert [d.file_path.rsplit("/", 1)[1] for d in plan.delete_files] == [
            "d3-pos-deletes.parquet"
        ]


@pytest.fixture
def equality(make_table: Callable[..., Table]) -> dict[str, Any]:
    """Equality deletes across two specs: unpartitioned (0, global) and by region (1)."""
    table = make_table()
    table = append(table, make_rows(8))  # seq 1: U, spec 0
    u = next(t.file_path for t in plan_files(table))
    table = UpdatePartitionSpec(table).add_identity("region").commit().table
    table = append(table, make_rows(8, start=8))  # seq 2: P files, spec 1
    p = by_region(table, 1)
    table = row_delta(
        table,
        deletes=[  # seq 3
            equality_delete(
                table, name="g3", spec_id=0, lower={1: long_bytes(0)}, upper={1: long_bytes(100)}
            ),
            equality_delete(table, name="e3", spec_id=1, partition=("eu",)),
        ],
    )
    q_files = write(table, make_rows(4, start=16))
    q = {f.partition[0]: f.file_path for f in q_files}
    table = row_delta(  # seq 4: Q files and, in the same commit, an 'eu' equality delete
        table,
        data=q_files,
        deletes=[equality_delete(table, name="e4", spec_id=1, partition=("eu",))],
    )
    table = row_delta(
        table,
        deletes=[  # seq 5: global deletes whose id ranges overlap few or no files
            equality_delete(
                table, name="g5", spec_id=0, lower={1: long_bytes(10)}, upper={1: long_bytes(12)}
            ),
            equality_delete(
                table, name="far", spec_id=0, lower={1: long_bytes(100)}, upper={1: long_bytes(200)}
            ),
        ],
    )
    return {"table": table, "u": u, "p": p, "q": q}


def test_equality_deletes_strictly_older_data_same_partition_or_global(
    equality: dict[str, Any],
) -> None:
    table, u, p, q = equality["table"], equality["u"], equality["p"], equality["q"]
    got = deletes_of(table)
    # U (spec 0, seq 1): only global deletes; ids 0-7 miss g5's [10, 12]
    assert got[u] == {"g3"}
    # P (spec 1, seq 2): global g3; e3 and e4 in 'eu'; g5 where ids overlap [10, 12]
    assert got[p["eu"]] == {"g3", "e3", "e4", "g5"}  # ids 8, 12
    assert got[p["us"]] == {"g3", "g5"}  # ids 9, 13
    assert got[p["apac"]] == {"g3", "g5"}  # ids 10, 14
    assert got[p["latam"]] == {"g3", "g5"}  # ids 11, 15
    # Q (seq 4): e4 came in the same commit (equal sequence numbers: not applied)
    assert got[q["eu"]] == set()
    assert all(got[path] == set() for path in q.values())
    # 'far' deletes ids 100-200: no data file holds such ids
    assert not any("far" in names for names in got.values())


def test_filters_prune_delete_files_only_where_safe(equality: dict[str, Any]) -> None:
    table, u = equality["table"], equality["u"]
    plan = TableScan.of(table).filter("id < 3").plan()
    assert [t.file_path for t in plan.tasks] == [u]
    assert {d.file_path.rsplit("/", 1)[1].split("-")[0] for d in plan.tasks[0].delete_files} == {
        "g3"
    }
    # g5 [10, 12] and far [100, 200] cannot delete a row with id < 3; e3 and e4 are in 'eu'
    # partitions that the filter does not exclude, but their files hold no id metrics
    assert plan.metrics.skipped_delete_files == 2
    assert plan.metrics.indexed_delete_files == 3


def test_equality_delete_is_not_pruned_by_its_non_equality_columns(
    make_table: Callable[..., Table],
) -> None:
    table = make_table()
    table = append(table, make_rows(6))
    # deletes every row with id in [0, 100]; the stored name of the deleted row says 'zzz',
    # but rows with other names and those ids are deleted too
    d = equality_delete(
        table,
        name="eq",
        lower={1: long_bytes(0), 4: b"zzz"},
        upper={1: long_bytes(100), 4: b"zzz"},
    )
    table = row_delta(table, deletes=[d])
    tasks = plan_files(table, filter="name = 'alpha'")
    assert len(tasks) == 1
    assert [x.file_path for x in tasks[0].delete_files] == [d.file_path]
    # a filter on the equality column itself does prune it
    assert plan_files(table, filter="id > 200") == []
    tasks = plan_files(table, filter="id = 3")
    assert [x.file_path for x in tasks[0].delete_files] == [d.file_path]
