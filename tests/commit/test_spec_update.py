"""Partition spec evolution and sort order replacement on a real SQLite catalog.

Expected field ids, names and spec ids follow the spec's "Partition Evolution" rules
and Iceberg Java's ``BaseUpdatePartitionSpec`` / ``TableMetadata.Builder``; pyiceberg
0.12 and Iceberg Java read the evolved tables (data written under both specs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.commit.spec_update import ReplaceSortOrder, UpdatePartitionSpec
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile

UTC = dt.UTC


def rows(n: int, day: int, region: str, start: int) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 3, day, tzinfo=UTC)
    return [
        {"id": start + i, "ts": base + dt.timedelta(hours=i), "region": region} for i in range(n)
    ]


def files_for(table: Table, data: list[dict[str, Any]]) -> list[DataFile]:
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def fields(table: Table, spec_id: int | None = None) -> list[tuple[int, int, str, str]]:
    m = table.metadata
    spec = m.spec() if spec_id is None else m.spec_by_id(spec_id)
    return [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields]


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Iterator[Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    cat = PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    yield cat
    cat.engine.dispose()


# --- partition specs ------------------------------------------------------------------


def test_added_fields_continue_ids_and_become_default(make_table: Callable[..., Table]) -> None:
    table = make_table()  # spec 0: day(ts) as ts_day (1000), identity(region) (1001)
    result = UpdatePartitionSpec(table).add_field("id", "bucket[4]").commit()
    t = result.table.refresh()
    assert result.committed
    assert t.metadata.default_spec_id == 1
    assert t.metadata.last_partition_id == 1002
    # Java's BaseUpdatePartitionSpec names a bucket field <col>_bucket_<n>.
    assert fields(t) == [
        (2, 1000, "ts_day", "day"),
        (3, 1001, "region", "identity"),
        (1, 1002, "id_bucket_4", "bucket[4]"),
    ]
    assert fields(t, 0) == [(2, 1000, "ts_day", "day"), (3, 1001, "region", "identity")]


def test_v2_remove_drops_the_field_and_readding_reuses_the_old_spec(
    make_table: Callable[..., Table],
) -> None:
    table = make_table()
    removed = UpdatePartitionSpec(table).remove_field("region").commit().table
    assert fields(removed) == [(2, 1000, "ts_day", "day")]
    assert removed.metadata.default_spec_id == 1
    # Adding identity(region) back recycles field id 1001, which makes spec 0 again:
    # the table returns to spec id 0 instead of adding a third spec.
    back = UpdatePartitionSpec(removed).add_identity("region").commit().table
    assert back.metadata.default_spec_id == 0
    assert len(back.metadata.partition_specs) == 2
    assert back.metadata.last_partition_id == 1001


def test_v1_remove_becomes_void_and_a_new_field_renames_it(
    make_table: Callable[..., Table], pyi: Any
) -> None:
    table = make_table(format_version=1)
    fast_append(table, files_for(table, rows(2, 1, "eu", 0)))
    removed = UpdatePartitionSpec(table.refresh()).remove_field("region").commit().table
    assert fields(removed) == [(2, 1000, "ts_day", "day"), (3, 1001, "region", "void")]
    readded = UpdatePartitionSpec(removed).add_identity("region").commit().table
    # v1 never recycles ids; the void field yields its name as <name>_<field id>.
    assert fields(readded) == [
        (2, 1000, "ts_day", "day"),
        (3, 1001, "region_1001", "void"),
        (3, 1002, "region", "identity"),
    ]
    assert readded.metadata.to_dict()["partition-spec"][2]["field-id"] == 1002
    # Data written under the spec with a void field reads back in pyiceberg.
    fast_append(readded, files_for(readded, rows(3, 2, "us", 10)))
    loaded = pyi.load_table("db.orders")
    assert [str(f.transform) for f in loaded.spec().fields] == ["day", "void", "identity"]
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [0, 1, 10, 11, 12]


def test_rename_and_remove_then_add_restores(make_table: Callable[..., Table]) -> None:
    table = make_table()
    renamed = UpdatePartitionSpec(table).rename_field("ts_day", "day").commit().table
    assert fields(renamed)[0] == (2, 1000, "day", "day")
    # Removing and adding the same field in one update keeps it (with the new name).
    same = UpdatePartitionSpec(renamed).remove_field("day").add_field("ts", "day", "d").commit()
    assert fields(same.table)[0] == (2, 1000, "d", "day")
    # Removing by source column and transform (Java's term form).
    gone = UpdatePartitionSpec(same.table).remove_field("ts", "day").commit().table
    assert fields(gone) == [(3, 1001, "region", "identity")]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda u: u.remove_field("nope"), "no such field"),
        (lambda u: u.add_field("nope", "day"), "no column named 'nope'"),
        (lambda u: u.add_field("ts", "day"), "already has it"),
        (lambda u: u.add_field("id", "bucket[2]").add_field("id", "bucket[2]"), "twice"),
        (lambda u: u.add_field("id", "truncate[3]", "ts_day"), "already has a field"),
        (lambda u: u.add_field("region", "bucket[2]", "id"), "schema column"),
        (lambda u: u.add_field("region", "day"), "cannot be applied"),
        (lambda u: u.remove_field("region").rename_field("region", "r"), "remove and rename"),
        (
            lambda u: u.remove_field("ts_day").add_field("ts", "hour").add_field("ts", "month"),
            "redundant",
        ),
    ],
)
def test_bad_changes_fail_and_change_nothing(
    make_table: Callable[..., Table], build: Callable[[UpdatePartitionSpec], Any], message: str
) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match=message):
        build(UpdatePartitionSpec(table)).commit()
    after = table.refresh()
    assert after.metadata_location == table.metadata_location


def test_unknown_transform_is_refused_at_once(make_table: Callable[..., Table]) -> None:
    with pytest.raises(ValidationError, match="unknown transform"):
        UpdatePartitionSpec(make_table()).add_field("id", "zorder")


def test_concurrent_spec_change_fails_clearly(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    stale = table
    UpdatePartitionSpec(table).add_field("id", "bucket[8]").commit()
    with pytest.raises(ValidationError, match="default partition spec changed"):
        UpdatePartitionSpec(stale).remove_field("region").commit()
    assert table.refresh().metadata.default_spec_id == 1
    assert len(table.refresh().metadata.partition_specs) == 2


def test_concurrent_append_lets_the_spec_change_reapply(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    stale = table
    appended = fast_append(table, files_for(table, rows(3, 1, "eu", 0)))
    result = UpdatePartitionSpec(stale).add_field("id", "bucket[8]").commit()
    final = result.table.refresh()
    assert final.metadata.current_snapshot_id == appended.snapshot_id
    assert fields(final)[-1] == (1, 1002, "id_bucket_8", "bucket[8]")


def test_data_under_both_specs_reads_in_pyiceberg(
    make_table: Callable[..., Table], pyi: Any
) -> None:
    table = make_table()
    first = fast_append(table, files_for(table, rows(4, 1, "eu", 0)))
    evolved = (
        UpdatePartitionSpec(first.table)
        .remove_field("region")
        .add_field("id", "bucket[2]")
        .commit()
        .table
    )
    second_files = files_for(evolved, rows(5, 2, "us", 100))
    assert {f.spec_id for f in second_files} == {1}
    second = fast_append(evolved, second_files)
    loaded = pyi.load_table("db.orders")
    assert loaded.spec().spec_id == 1
    assert [f.name for f in loaded.spec().fields] == ["ts_day", "id_bucket_2"]
    assert sorted(loaded.specs()) == [0, 1]
    got = sorted(loaded.scan().to_arrow().column("id").to_pylist())
    assert got == [0, 1, 2, 3, 100, 101, 102, 103, 104]
    # Partition pruning under the new spec works in pyiceberg too.
    assert sorted(loaded.scan(row_filter="region = 'us'").to_arrow().column("id").to_pylist()) == [
        100,
        101,
        102,
        103,
        104,
    ]
    assert second.summary["total-records"] == "9"


# --- sort orders -----------------------------------------------------------------------


def orders(table: Table) -> list[tuple[int, list[tuple[int, str, str, str]]]]:
    return [
        (
            o.order_id,
            [
                (f.source_id, str(f.transform), str(f.direction), str(f.null_order))
                for f in o.fields
            ],
        )
        for o in table.metadata.sort_orders
    ]


def test_sort_order_replace_reuses_identical_orders(make_table: Callable[..., Table]) -> None:
    table = make_table()
    first = ReplaceSortOrder(table).asc("region").desc("ts", "nulls-first").commit().table
    assert first.metadata.default_sort_order_id == 1
    assert orders(first)[-1] == (
        1,
        [(3, "identity", "asc", "nulls-first"), (2, "identity", "desc", "nulls-first")],
    )
    second = ReplaceSortOrder(first).desc("id", transform="bucket[4]").commit().table
    assert second.metadata.default_sort_order_id == 2
    assert orders(second)[-1] == (2, [(1, "bucket[4]", "desc", "nulls-last")])
    again = ReplaceSortOrder(second).asc("region").desc("ts", "nulls-first").commit().table
    assert again.metadata.default_sort_order_id == 1  # identical order: same id
    assert len(again.metadata.sort_orders) == 3  # unsorted 0, 1, 2
    unsorted = ReplaceSortOrder(again).commit().table
    assert unsorted.metadata.default_sort_order_id == 0


def test_sorted_table_made_unsorted_lists_order_zero(catalog: SqlCatalog) -> None:
    from icewright.spec.sorting import build_sort_order
    from tests.commit.support import SCHEMA

    table = catalog.create_table("db.s", SCHEMA, sort_order=build_sort_order(SCHEMA, ["id"]))
    assert [o.order_id for o in table.metadata.sort_orders] == [1]
    t = ReplaceSortOrder(table).commit().table
    assert t.metadata.default_sort_order_id == 0
    assert sorted(o.order_id for o in t.metadata.sort_orders) == [0, 1]


def test_sort_order_errors(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"commit.retry.min-wait-ms": "1"})
    with pytest.raises(ValidationError, match="null order"):
        ReplaceSortOrder(table).asc("id", "nulls-middle")
    with pytest.raises(ValidationError, match="no column named"):
        ReplaceSortOrder(table).asc("nope").commit()
    stale = table
    ReplaceSortOrder(table).asc("id").commit()
    with pytest.raises(ValidationError, match="default sort order changed"):
        ReplaceSortOrder(stale).desc("id").commit()


@pytest.mark.slow
@pytest.mark.interop
def test_iceberg_java_reads_the_evolved_table(
    make_table: Callable[..., Table],
    iceberg_java: Any,
) -> None:
    table = make_table()
    first = fast_append(table, files_for(table, rows(3, 1, "eu", 0)))
    evolved = UpdatePartitionSpec(first.table).add_field("id", "bucket[2]").commit().table
    sorted_t = ReplaceSortOrder(evolved).desc("id").commit().table
    final = fast_append(sorted_t, files_for(sorted_t, rows(2, 2, "us", 10))).table
    with iceberg_java.batch() as batch:
        meta = batch.parse_table_metadata(final.metadata_location)
        scan = batch.scan(final.metadata_location)
    parsed = meta.value
    assert parsed["default_spec_id"] == 1 and parsed["last_partition_id"] == 1002
    assert parsed["default_sort_order_id"] == 1
    assert scan.value.count == 5
    ids = sorted(r[scan.value.columns.index("id")] for r in scan.value.rows)
    assert ids == [0, 1, 2, 10, 11]
