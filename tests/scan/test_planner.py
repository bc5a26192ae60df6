"""Planning on real tables: partition pruning per transform, metrics pruning, manifest pruning,
residuals, DELETED entries, partition evolution, column selection and bad inputs.

Expected file sets come from the spec's projection rules applied with the transforms, and
every plan is also checked against pyiceberg 0.12's ``plan_files`` on the same catalog.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
from collections.abc import Callable
from typing import Any

import pytest

from icewright.catalog import Table
from icewright.collector import gc_paused
from icewright.commit.append import fast_append
from icewright.commit.spec_update import UpdatePartitionSpec
from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_TRUE,
    Expression,
    and_,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_equal,
    parse,
    starts_with,
)
from icewright.manifest import DataFile, read_manifest_list
from icewright.manifest.data_file import METRICS_MAPS
from icewright.scan import TableScan, plan_files, plan_snapshot, select_columns
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType, StructType
from tests.expressions.oracle import to_py
from tests.scan.support import START, CountingFileIO, append, make_rows, row_delta, write

UTC = dt.UTC
DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000


def micros(moment: dt.datetime) -> int:
    return (moment - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def no_metrics(f: DataFile) -> DataFile:
    """The file without column metrics, so that only its partition can prune it."""
    return f.replace(
        value_counts=None,
        null_value_counts=None,
        nan_value_counts=None,
        lower_bounds=None,
        upper_bounds=None,
    )


def py_plan(py_catalog: Any, expr: Expression | str, **kw: Any) -> dict[str, set[str]]:
    """pyiceberg's plan: data file path -> delete file paths."""
    row_filter = expr if isinstance(expr, str) else to_py(expr)
    tasks = py_catalog.load_table("db.t").scan(row_filter=row_filter, **kw).plan_files()
    return {t.file.file_path: {d.file_path for d in t.delete_files} for t in tasks}


def our_plan(table: Table, expr: Expression | str, **kw: Any) -> dict[str, set[str]]:
    return {
        t.file_path: {d.file_path for d in t.delete_files}
        for t in plan_files(table, filter=expr, **kw)
    }


# --- partition pruning, one transform at a time ------------------------------------------------

T_MID = micros(START + dt.timedelta(days=3, hours=5, minutes=17))


# (partition field, filter, literal(s) the spec's projection transforms, rule on the
# partition value p and the transformed literal L: keep the file?). For "<" on integer-like
# sources the spec projects to "p <= T(lit - 1)"; strings cannot step down, so "p <= T(lit)".
YEAR_CUT = micros(START + dt.timedelta(days=40))
CASES: list[tuple[tuple[Any, ...], Expression, Any, Callable[[Any, Any], bool]]] = [
    (("identity", "region"), equal("region", "us"), "us", lambda p, lit: p == lit),
    (("identity", "region"), is_in("region", ["eu", "apac"]), ("eu", "apac"), lambda p, s: p in s),
    (("identity", "region"), not_equal("region", "eu"), "eu", lambda p, lit: p != lit),
    (("bucket", "id", 4), equal("id", 13), 13, lambda p, lit: p == lit),
    (("bucket", "id", 4), is_in("id", [1, 2]), (1, 2), lambda p, s: p in s),
    (("truncate", "name", 2), equal("name", "gamma"), "gamma", lambda p, lit: p == lit),
    (("truncate", "name", 2), starts_with("name", "de"), "de", lambda p, lit: p == lit),
    (("truncate", "name", 2), less_than("name", "c"), "c", lambda p, lit: p <= lit),
    (("truncate", "id", 10), greater_than_or_equal("id", 25), 25, lambda p, lit: p >= lit),
    (("day", "ts"), greater_than_or_equal("ts", T_MID), T_MID, lambda p, lit: p >= lit),
    (("day", "ts"), equal("ts", T_MID), T_MID, lambda p, lit: p == lit),
    (("hour", "ts"), less_than("ts", T_MID), T_MID - 1, lambda p, lit: p <= lit),
    (("month", "ts"), less_than_or_equal("ts", T_MID), T_MID, lambda p, lit: p <= lit),
    (("year", "ts"), greater_than("ts", YEAR_CUT), YEAR_CUT + 1, lambda p, lit: p >= lit),
    (("month", "d"), greater_than_or_equal("d", 20424), 20424, lambda p, lit: p >= lit),
    (("day", "d"), less_than("d", 20424), 20423, lambda p, lit: p <= lit),
]


@pytest.mark.parametrize(
    ("field", "expr", "literal", "keep"),
    CASES,
    ids=[f"{c[0][0]}-{c[0][1]}-{c[1]}" for c in CASES],
)
def test_partition_pruning_per_transform(
    make_table: Callable[..., Table],
    py_catalog: Any,
    field: tuple[Any, ...],
    expr: Expression,
    literal: Any,
    keep: Callable[[Any, Any], bool],
) -> None:
    table = make_table(fields=[field])
    pf = table.metadata.spec().fields[0]
    source_type = table.metadata.schema().find_type(pf.source_id)
    rows = make_rows(60, step_hours=19)  # 60 rows over ~47 days, in two years
    files = [no_metrics(f) for f in write(table, rows)]
    table = fast_append(table, files).table

    if isinstance(literal, tuple):
        target: Any = {pf.transform.apply(source_type, v) for v in literal}
    else:
        target = pf.transform.apply(source_type, literal)
    # a null partition value (rows with a null name) matches none of these predicates
    expected = {
        f.file_path for f in files if f.partition[0] is not None and keep(f.partition[0], target)
    }
    ours = our_plan(table, expr)
    assert set(ours) == expected
    assert 0 < len(expected) < len(files), "the case must prune some files and keep some"
    assert ours == py_plan(py_catalog, expr)


# --- metrics pruning ----------------------------------------------------------------------------


@pytest.fixture
def unpartitioned(make_table: Callable[..., Table]) -> Table:
    """Four appends of ten rows each, ids 0-39, one file each (unpartitioned)."""
    table = make_table()
    for k in range(4):
        table = append(table, make_rows(10, start=10 * k))
    return table


def file_ids(table: Table, tasks: Any) -> list[int]:
    """Which append (0-3) wrote each task's file, from the file's id lower bound."""
    out = []
    for t in tasks:
        low = int.from_bytes(t.data_file.lower_bounds[1], "little", signed=True)
        out.append(low // 10)
    return sorted(out)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (and_(greater_than_or_equal("id", 12), less_than("id", 15)), [1]),
        (is_in("id", [3, 35]), [0, 3]),
        (greater_than("id", 29), [3]),
        (equal("region", "zz"), []),
        (is_null("name"), [0, 1, 2, 3]),  # ids 5, 16, 27, 38 have null names
        (less_than("score", -15.0), [0]),  # score = 1.5 * id - 20
        (is_nan("score"), [0, 2, 3]),  # NaN scores at ids 7, 20 and 33 (nan_value_counts)
        (ALWAYS_TRUE, [0, 1, 2, 3]),
    ],
)
def test_metrics_pruning(
    unpartitioned: Table, py_catalog: Any, expr: Expression, expected: list[int]
) -> None:
    plan = TableScan.of(unpartitioned).filter(expr).plan()
    assert file_ids(unpartitioned, plan.tasks) == expected
    assert plan.metrics.skipped_data_files == 4 - len(expected)
    assert plan.metrics.result_data_files == len(expected)
    # no partitions: every manifest has to be opened
    assert plan.metrics.scanned_data_manifests == 4
    assert our_plan(unpartitioned, expr) == py_plan(py_catalog, expr)


# --- manifest pruning: how many manifests were opened ---------------------------------------


@pytest.fixture
def by_day(make_table: Callable[..., Table]) -> Table:
    """Four appends, each of one day of rows: four manifests with disjoint summaries."""
    table = make_table(fields=[("day", "ts")])
    for k in range(4):
        # START is 20:00 UTC: rows 6k+1 .. 6k+6 fall on 00:00 .. 20:00 of one day
        table = append(table, make_rows(6, start=6 * k + 1, step_hours=4))
    return table


@pytest.mark.parametrize(
    ("expr", "opened"),
    [
        (equal("ts", micros(START + dt.timedelta(hours=4 * 7 + 1))), 1),  # day 2 only
        (greater_than_or_equal("ts", micros(START + dt.timedelta(hours=4 * 13))), 2),
        (less_than("ts", micros(START - dt.timedelta(days=3))), 0),
        (equal("id", 3), 4),  # not a partition column: summaries cannot help
        (ALWAYS_TRUE, 4),
    ],
)
def test_manifest_pruning_counts(by_day: Table, expr: Expression, opened: int) -> None:
    io = CountingFileIO()
    plan = TableScan.of((by_day.metadata, io)).filter(expr).plan()
    assert plan.metrics.total_data_manifests == 4
    assert plan.metrics.scanned_data_manifests == opened
    assert plan.metrics.skipped_data_manifests == 4 - opened
    snap = by_day.metadata.current_snapshot()
    assert snap is not None
    # the manifest list, then exactly the manifests that were not pruned
    assert io.reads[0] == snap.manifest_list
    assert len(io.reads) == 1 + opened
    assert len(set(io.reads)) == len(io.reads)


def test_rows_of_each_day_are_where_the_fixture_says(by_day: Table) -> None:
    # guards the counts above: each append's six rows span one UTC day
    tasks = plan_files(by_day)
    assert len(tasks) == 4
    assert len({t.partition for t in tasks}) == 4


# --- residuals ---------------------------------------------------------------------------------


def test_residuals_per_partition(make_table: Callable[..., Table]) -> None:
    table = make_table(fields=[("day", "ts"), ("identity", "region")])
    table = append(table, make_rows(40, step_hours=5))
    mid = START + dt.timedelta(days=2, hours=6)
    day_of_mid = micros(mid) // DAY_US
    tasks = plan_files(
        table, filter=and_(greater_than_or_equal("ts", micros(mid)), equal("region", "eu"))
    )
    assert tasks and all(t.partition[1] == "eu" for t in tasks)
    for t in tasks:
        text = str(t.residual)
        if t.partition[0] == day_of_mid:
            # the boundary day holds rows on both sides: the ts test remains
            assert text.startswith("ts >="), text
        else:
            assert t.partition[0] > day_of_mid
            assert t.residual is ALWAYS_TRUE
    assert any(t.partition[0] == day_of_mid for t in tasks)
    # without a filter there is nothing left to check
    assert all(t.residual is ALWAYS_TRUE for t in plan_files(table))


# --- DELETED entries, parallel reads, partition evolution ------------------------------------


def test_deleted_entries_are_not_planned(make_table: Callable[..., Table], py_catalog: Any) -> None:
    table = make_table(fields=[("identity", "region")])
    table = append(table, make_rows(8))
    table = append(table, make_rows(8, start=8))
    first = {
        t.file_path
        for t in plan_files(table)
        if t.snapshot_id == table.metadata.snapshots[0].snapshot_id
    }
    assert len(first) == 4
    gone = sorted(first)[:2]
    table = row_delta(table, remove=gone)
    planned = {t.file_path for t in plan_files(table)}
    assert not planned & set(gone)
    assert len(planned) == 6
    assert set(our_plan(table, ALWAYS_TRUE)) == set(py_plan(py_catalog, ALWAYS_TRUE))
    # a manifest of only DELETED entries is skipped without being opened
    table = row_delta(table, remove=sorted(first)[2:])
    plan = TableScan.of(table).plan()
    assert len(plan.tasks) == 4
    assert plan.metrics.total_data_manifests == 2
    assert plan.metrics.scanned_data_manifests == 1


def test_parallel_and_sequential_reads_agree(by_day: Table) -> None:
    expr = greater_than("id", 4)
    one = TableScan.of(by_day).filter(expr).with_max_workers(1).plan_files()
    many = TableScan.of(by_day).filter(expr).with_max_workers(8).plan_files()
    assert one == many
    assert len(one) == 4


def test_the_fetch_threads_index_what_the_planner_decodes(
    by_day: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk over each manifest's entries (without the GIL) is made where manifests
    # are fetched, and the decoding uses it: planning uses a second core.
    import threading

    from icewright.manifest import entry_decoder, manifest_reader

    made: list[tuple[str, object]] = []
    used: list[object] = []
    index_entries, decode_entries = entry_decoder.index_entries, entry_decoder.decode_entries

    def indexing(*args: Any, **kwargs: Any) -> object | None:
        index = index_entries(*args, **kwargs)
        made.append((threading.current_thread().name, index))
        return index

    def decoding(*args: Any, **kwargs: Any) -> Any:
        used.append(kwargs.get("index"))
        return decode_entries(*args, **kwargs)

    monkeypatch.setattr(manifest_reader, "index_entries", indexing)
    monkeypatch.setattr(manifest_reader, "decode_entries", decoding)
    tasks = TableScan.of(by_day).filter(greater_than("id", 4)).with_max_workers(2).plan_files()
    assert len(tasks) == 4
    assert len(made) >= 2
    assert all(name.startswith("icewright-scan") for name, _ in made)
    if entry_decoder.COMPILED:
        assert {id(index) for _, index in made} == {id(index) for index in used}
        assert None not in used


def test_partition_evolution_projects_per_spec(
    make_table: Callable[..., Table], py_catalog: Any
) -> None:
    table = make_table(fields=[("identity", "region")])
    table = append(table, make_rows(12))
    table = UpdatePartitionSpec(table).add_field("ts", "day").commit().table
    assert table.metadata.default_spec_id == 1
    table = append(table, make_rows(12, start=12))
    tasks = plan_files(table)
    assert {t.spec_id for t in tasks} == {0, 1}
    cutoff = micros(START + dt.timedelta(days=5))
    expr = and_(equal("region", "us"), greater_than_or_equal("ts", cutoff))
    ours = plan_files(table, filter=expr)
    # old-spec files (ids 0-11, before the cutoff) fall to their region and ts metrics;
    # new-spec files (region, day) to their partitions
    assert ours and all(t.spec_id == 1 and t.partition[0] == "us" for t in ours)
    assert all(t.partition[1] >= cutoff // DAY_US for t in ours)
    new_us = [t for t in tasks if t.spec_id == 1 and t.partition[0] == "us"]
    assert len(ours) < len(new_us)
    assert our_plan(table, expr) == py_plan(py_catalog, expr)
    assert len(ours) < len(tasks)


# --- inputs --------------------------------------------------------------------------------------


def test_string_filters_and_case_sensitivity(unpartitioned: Table) -> None:
    as_text = plan_files(unpartitioned, filter="id >= 12 and id < 15")
    as_expr = plan_files(
        unpartitioned, filter=and_(greater_than_or_equal("id", 12), less_than("id", 15))
    )
    assert as_text == as_expr and len(as_text) == 1
    assert plan_files(unpartitioned, filter="ID > 29", case_sensitive=False) == plan_files(
        unpartitioned, filter="id > 29"
    )
    with pytest.raises(ValidationError, match="ID"):
        plan_files(unpartitioned, filter="ID > 29")
    with pytest.raises(ValidationError, match="no_such_column"):
        plan_files(unpartitioned, filter="no_such_column = 1")
    with pytest.raises(ValidationError, match="row filter"):
        plan_files(unpartitioned, filter=42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="max_workers"):
        plan_files(unpartitioned, max_workers=0)
    with pytest.raises(ValidationError, match="scan source"):
        plan_files(("metadata", "io"))  # type: ignore[arg-type]
    scan = TableScan.of(unpartitioned).filter("id > 5").filter("id < 8")
    assert len(scan.plan_files()) == 1


def test_select_columns(unpartitioned: Table) -> None:
    scan = TableScan.of(unpartitioned).select("region", "id")
    assert [f.name for f in scan.projection().fields] == ["id", "region"]
    assert TableScan.of(unpartitioned).select("*").projection() == unpartitioned.metadata.schema()
    assert plan_files(unpartitioned, columns=["id"]) == plan_files(unpartitioned)
    assert select_columns(unpartitioned.metadata.schema(), ["*"]) == unpartitioned.metadata.schema()
    with pytest.raises(ValidationError, match="nope"):
        TableScan.of(unpartitioned).select("nope")
    nested = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(
            2,
            "loc",
            StructType(NestedField(3, "city", StringType()), NestedField(4, "zip", StringType())),
        ),
    )
    picked = select_columns(nested, ["loc.zip"])
    assert [f.name for f in picked.fields] == ["loc"]
    inner = picked.fields[0].field_type
    assert isinstance(inner, StructType) and [f.name for f in inner.fields] == ["zip"]
    assert (
        select_columns(nested, ["LOC"], case_sensitive=False).find_field("loc.city").field_id == 3
    )


def test_v1_tables_plan_without_sequence_numbers(
    make_table: Callable[..., Table], py_catalog: Any
) -> None:
    table = make_table(fields=[("identity", "region")], format_version=1)
    table = append(table, make_rows(8))
    table = append(table, make_rows(8, start=8))
    tasks = plan_files(table, filter="region = 'eu'")
    assert len(tasks) == 2
    assert all(t.data_sequence_number == 0 and t.delete_files == () for t in tasks)
    assert our_plan(table, "region = 'eu'") == py_plan(py_catalog, "region = 'eu'")


def test_v1_snapshots_listing_manifests_inline(make_table: Callable[..., Table]) -> None:
    table = make_table(fields=[("identity", "region")], format_version=1)
    table = append(table, make_rows(8))
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    listed = read_manifest_list(table.io.read(snap.manifest_list))
    # an early v1 snapshot: manifest paths inline, no manifest list
    inline = dataclasses.replace(
        snap, manifest_list=None, manifests=tuple(m.manifest_path for m in listed)
    )
    meta = dataclasses.replace(table.metadata, snapshots=(inline,))
    expected = plan_files(table, filter="region in ('eu', 'us')")
    got = plan_files((meta, table.io), filter="region in ('eu', 'us')")
    assert [t.file_path for t in got] == [t.file_path for t in expected]
    assert len(got) == 2
    plan = TableScan.of((meta, table.io)).plan()
    assert plan.metrics.total_data_manifests == plan.metrics.scanned_data_manifests == 1


def test_plan_snapshot_plans_a_snapshot_the_caller_chose(unpartitioned: Table) -> None:
    first = unpartitioned.metadata.snapshots[0]
    plan = plan_snapshot(
        unpartitioned.metadata, unpartitioned.io, first, row_filter=parse("id < 100")
    )
    assert plan.snapshot == first
    assert [t.file_path for t in plan.tasks] == [
        t.file_path for t in plan_files(unpartitioned, snapshot_id=first.snapshot_id)
    ]
    assert len(plan.tasks) == 1 and plan.metrics.total_data_manifests == 1
    empty = plan_snapshot(unpartitioned.metadata, unpartitioned.io, None)
    assert empty.tasks == () and empty.metrics.scanned_data_manifests == 0


# --- column stats: decoded only when the caller or the filter needs them -------------------


@pytest.mark.parametrize(
    "expr",
    [
        ALWAYS_TRUE,
        and_(greater_than_or_equal("id", 12), less_than("id", 15)),
        greater_than_or_equal("ts", micros(START + dt.timedelta(hours=4 * 13))),
    ],
)
def test_plans_without_column_stats_pick_the_same_files(by_day: Table, expr: Expression) -> None:
    full = TableScan.of(by_day).filter(expr).plan()
    lean = TableScan.of(by_day).filter(expr).with_column_stats(False).plan()
    assert [t.file_path for t in lean.tasks] == [t.file_path for t in full.tasks]
    assert lean.metrics == full.metrics
    assert all(t.data_file.column_sizes is not None for t in full.tasks)
    full_files = {t.file_path: t.data_file for t in full.tasks}
    for t in lean.tasks:
        assert t.data_file.column_sizes is None  # no filter reads sizes
        # the metrics the filter needed were read; without a filter, none
        assert (t.data_file.lower_bounds is None) == (expr is ALWAYS_TRUE)
        assert without_stats(t.data_file) == without_stats(full_files[t.file_path])


def without_stats(f: DataFile) -> DataFile:
    return f.replace(**dict.fromkeys(METRICS_MAPS))


def test_entries_refused_by_partition_while_decoding_count_as_skipped(
    make_table: Callable[..., Table],
) -> None:
    # one manifest with a file per day: the day filter refuses the other days' entries
    # before their metrics are decoded, and counts them
    table = append(make_table(fields=[("day", "ts")]), make_rows(24, start=1, step_hours=4))
    day = equal("ts", micros(START + dt.timedelta(hours=4 * 7 + 1)))
    for stats in (True, False):
        plan = TableScan.of(table).filter(day).with_column_stats(stats).plan()
        assert plan.metrics.scanned_data_manifests == 1
        assert plan.metrics.result_data_files == 1
        assert plan.metrics.skipped_data_files == 3


def test_column_stats_must_be_a_bool(by_day: Table) -> None:
    with pytest.raises(ValidationError, match="column_stats"):
        TableScan.of(by_day, column_stats="no")


def test_planning_pauses_the_collector_and_restores_it(by_day: Table) -> None:
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            with gc_paused():
                assert not gc.isenabled()
                with gc_paused():  # another planner at the same time
                    assert not gc.isenabled()
                assert not gc.isenabled()
            assert gc.isenabled() is enabled
            assert len(TableScan.of(by_day).plan().tasks) == 4
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
