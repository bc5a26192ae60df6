"""``ArrowRunner``: the actions commit an Arrow table without Spark (the wrapped runner's
session is never started), a partition replace of whole files included; a schema for a
new table from Arrow types."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from icewright.actions import append, ensure_table, replace
from icewright.arrow import schema_from_arrow
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.runners.arrow import ArrowRunner, is_arrow_table
from icewright.runners.base import Runner
from icewright.runners.local import LocalRunner
from icewright.scan import plan_files

SCHEMA = "id long not null, ts timestamptz, tag string"


def _day(day: int, tag: str) -> pa.Table:
    start = dt.datetime(2026, 1, day, tzinfo=dt.UTC)
    return pa.table(
        {
            "id": [day * 10 + h for h in range(3)],
            "ts": [start + dt.timedelta(hours=h) for h in range(3)],
            "tag": [tag] * 3,
        }
    )


def _runner() -> tuple[Runner, LocalRunner]:
    local = LocalRunner()
    runner: Any = ArrowRunner(local)
    return runner, local


def _tags(catalog: SqlCatalog) -> dict[str, int]:
    from pyarrow import parquet as pq

    counts: dict[str, int] = {}
    for task in plan_files(catalog.load_table("sales.events")):
        path = task.data_file.file_path.removeprefix("file://")
        for tag in pq.read_table(path, columns=["tag"]).column("tag").to_pylist():
            counts[tag] = counts.get(tag, 0) + 1
    return counts


def test_append_and_partition_replace_without_spark(sqlite_catalog: SqlCatalog) -> None:
    from icewright.text.schema import load_schema

    sqlite_catalog.create_namespace("sales")
    ensure_table(
        "sales.events", load_schema(SCHEMA), catalog=sqlite_catalog, partition_by=[("day", "ts")]
    )
    runner, local = _runner()
    for day in (1, 2):
        result = append(
            "sales.events",
            _day(day, "v1"),
            catalog=sqlite_catalog,
            runner=runner,
            commit_key=f"d{day}",
        )
        assert result.committed and result.records_added == 3
    again = append(
        "sales.events", _day(1, "v1"), catalog=sqlite_catalog, runner=runner, commit_key="d1"
    )
    assert not again.committed  # the key is on the table: nothing written twice

    where = "ts >= '2026-01-01T00:00:00+00:00' AND ts < '2026-01-02T00:00:00+00:00'"
    replaced = replace(
        "sales.events",
        _day(1, "v2"),
        catalog=sqlite_catalog,
        where=where,
        rows_must_match=True,
        runner=runner,
    )
    assert replaced.records_removed == 3 and replaced.records_added == 3
    assert _tags(sqlite_catalog) == {"v1": 3, "v2": 3}
    assert local.spark_if_started() is None  # no Spark session was needed

    outside = _day(3, "bad")
    with pytest.raises(ValidationError, match="rows outside"):
        replace(
            "sales.events",
            outside,
            catalog=sqlite_catalog,
            where=where,
            rows_must_match=True,
            runner=runner,
        )


def test_arrow_table_needs_the_table_columns(sqlite_catalog: SqlCatalog) -> None:
    from icewright.text.schema import load_schema

    sqlite_catalog.create_namespace("sales")
    ensure_table("sales.events", load_schema(SCHEMA), catalog=sqlite_catalog)
    runner, _ = _runner()
    extra = _day(1, "x").append_column("more", pa.array([1, 2, 3]))
    with pytest.raises(ValidationError, match="columns the table does not"):
        append("sales.events", extra, catalog=sqlite_catalog, runner=runner)
    assert sqlite_catalog.load_table("sales.events").metadata.snapshots == ()


def test_schema_from_arrow() -> None:
    arrow = pa.schema(
        [
            ("id", pa.int64()),
            ("small", pa.int16()),
            ("ts", pa.timestamp("ns", tz="UTC")),
            ("local", pa.timestamp("ms")),
            ("day", pa.date32()),
            ("amount", pa.decimal128(12, 2)),
            ("tags", pa.list_(pa.string())),
            ("attrs", pa.map_(pa.string(), pa.float64())),
            ("point", pa.struct([("x", pa.float32()), ("y", pa.float32())])),
            ("kind", pa.dictionary(pa.int8(), pa.string())),
        ]
    )
    schema = schema_from_arrow(arrow)
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in schema.fields] == [
        (1, "id", "long", False),
        (2, "small", "int", False),
        (3, "ts", "timestamptz", False),
        (4, "local", "timestamp", False),
        (5, "day", "date", False),
        (6, "amount", "decimal(12,2)", False),
        (7, "tags", "list<string>", False),
        (8, "attrs", "map<string, double>", False),
        (9, "point", "struct<x: float, y: float>", False),
        (10, "kind", "string", False),
    ]
    with pytest.raises(ValidationError, match="has no Iceberg type"):
        schema_from_arrow(pa.schema([("d", pa.duration("s"))]))


def test_is_arrow_table() -> None:
    assert is_arrow_table(pa.table({"a": [1]}))
    assert not is_arrow_table("parquet:/x")
    assert not is_arrow_table(pa.record_batch({"a": [1]}))
