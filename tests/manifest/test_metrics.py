"""Column metrics from Parquet footers, checked against pyiceberg's own computation."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icewright.errors import ValidationError
from icewright.manifest.data_file import FileContent, FileFormat
from icewright.manifest.metrics import (
    MetricsConfig,
    MetricsMode,
    add_counts,
    data_file_from_parquet,
    nan_value_counts,
)
from icewright.spec import values
from icewright.spec.schema import Schema
from icewright.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "qty", IntegerType()),
    NestedField(3, "price", DecimalType(9, 2)),
    NestedField(4, "name", StringType()),
    NestedField(5, "ts", TimestampType()),
    NestedField(6, "tstz", TimestamptzType()),
    NestedField(7, "day", DateType()),
    NestedField(8, "ok", BooleanType()),
    NestedField(9, "score", DoubleType()),
    NestedField(10, "uid", UUIDType()),
)


def _arrow_schema() -> pa.Schema:
    def f(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
        return pa.field(
            name, t, nullable=nullable, metadata={b"PARQUET:field_id": str(fid).encode()}
        )

    return pa.schema(
        [
            f("id", pa.int64(), 1, nullable=False),
            f("qty", pa.int32(), 2),
            f("price", pa.decimal128(9, 2), 3),
            f("name", pa.string(), 4),
            f("ts", pa.timestamp("us"), 5),
            f("tstz", pa.timestamp("us", tz="UTC"), 6),
            f("day", pa.date32(), 7),
            f("ok", pa.bool_(), 8),
            f("score", pa.float64(), 9),
            f("uid", pa.binary(16), 10),
        ]
    )


def _rows(n: int) -> pa.Table:
    base = dt.datetime(2026, 1, 1)
    long_name = "z" * 20 + "é"
    data = {
        "id": list(range(n)),
        "qty": [None if i % 7 == 0 else i - 50 for i in range(n)],
        "price": [Decimal(i * 3 - 100) / 100 for i in range(n)],
        "name": [long_name if i == n - 1 else f"name-{i:04d}" for i in range(n)],
        "ts": [base + dt.timedelta(minutes=i) for i in range(n)],
        "tstz": [(base + dt.timedelta(hours=i)).replace(tzinfo=dt.UTC) for i in range(n)],
        "day": [dt.date(2025, 12, 1) + dt.timedelta(days=i % 40) for i in range(n)],
        "ok": [i % 2 == 0 for i in range(n)],
        "score": [float("nan") if i == 3 else i / 7 for i in range(n)],
        "uid": [uuid.UUID(int=i * 7919).bytes for i in range(n)],
    }
    return pa.Table.from_pydict(data, schema=_arrow_schema())


def _write(tmp_path: Path, table: pa.Table, row_group_size: int) -> tuple[str, pq.FileMetaData]:
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path), pq.read_metadata(path)


def _pyiceberg_stats(meta: pq.FileMetaData, properties: dict[str, str]) -> dict[str, object]:
    from pyiceberg import types as pt
    from pyiceberg.io import pyarrow as pyi_arrow
    from pyiceberg.schema import Schema as PySchema

    py_schema = PySchema(
        pt.NestedField(1, "id", pt.LongType(), required=True),
        pt.NestedField(2, "qty", pt.IntegerType(), required=False),
        pt.NestedField(3, "price", pt.DecimalType(9, 2), required=False),
        pt.NestedField(4, "name", pt.StringType(), required=False),
        pt.NestedField(5, "ts", pt.TimestampType(), required=False),
        pt.NestedField(6, "tstz", pt.TimestamptzType(), required=False),
        pt.NestedField(7, "day", pt.DateType(), required=False),
        pt.NestedField(8, "ok", pt.BooleanType(), required=False),
        pt.NestedField(9, "score", pt.DoubleType(), required=False),
        pt.NestedField(10, "uid", pt.UUIDType(), required=False),
    )
    stats = pyi_arrow.data_file_statistics_from_parquet_metadata(
        parquet_metadata=meta,
        stats_columns=pyi_arrow.compute_statistics_plan(py_schema, properties),
        parquet_column_mapping=pyi_arrow.parquet_path_to_id_mapping(py_schema),
    )
    return stats.to_serialized_dict()


@pytest.mark.parametrize("row_group_size", [1000, 37])
@pytest.mark.parametrize(
    "properties",
    [
        {},
        {"write.metadata.metrics.default": "full"},
        {"write.metadata.metrics.column.name": "truncate(4)"},
    ],
)
def test_metrics_agree_with_pyiceberg(
    tmp_path: Path, row_group_size: int, properties: dict[str, str]
) -> None:
    path, meta = _write(tmp_path, _rows(120), row_group_size)
    ours = data_file_from_parquet(path, 1234, meta, SCHEMA, properties=properties)
    theirs = _pyiceberg_stats(meta, properties)

    assert ours.content == FileContent.DATA
    assert ours.file_format == FileFormat.PARQUET
    assert ours.record_count == 120 == theirs["record_count"]
    assert ours.file_size_in_bytes == 1234
    assert dict(ours.column_sizes or {}) == theirs["column_sizes"]
    assert dict(ours.value_counts or {}) == theirs["value_counts"]
    assert dict(ours.null_value_counts or {}) == theirs["null_value_counts"]
    assert list(ours.split_offsets or ()) == theirs["split_offsets"]
    assert meta.num_row_groups == (1 if row_group_size == 1000 else 4)
    # pyiceberg leaves uuid bounds out when the Parquet column is plain fixed[16];
    # compare the fields both computed, and check uuid separately.
    their_lower = theirs["lower_bounds"]
    their_upper = theirs["upper_bounds"]
    assert isinstance(their_lower, dict) and isinstance(their_upper, dict)
    for fid in their_lower:
        assert (ours.lower_bounds or {})[fid] == their_lower[fid], fid
    for fid in their_upper:
        assert (ours.upper_bounds or {})[fid] == their_upper[fid], fid
    assert set(their_lower) >= set(range(1, 10))


def test_bounds_values_are_true_bounds(tmp_path: Path) -> None:
    table = _rows(50)
    path, meta = _write(tmp_path, table, 13)
    df = data_file_from_parquet(
        path, 1, meta, SCHEMA, properties={"write.metadata.metrics.default": "full"}
    )
    lower, upper = df.lower_bounds or {}, df.upper_bounds or {}
    assert values.from_bytes(LongType(), lower[1]) == 0
    assert values.from_bytes(LongType(), upper[1]) == 49
    assert values.from_bytes(IntegerType(), lower[2]) == -49
    assert values.from_bytes(DecimalType(9, 2), lower[3]) == Decimal("-1.00")
    assert values.from_bytes(DecimalType(9, 2), upper[3]) == Decimal("0.47")
    epoch = dt.datetime(1970, 1, 1)
    assert values.from_bytes(TimestampType(), lower[5]) == (
        dt.datetime(2026, 1, 1) - epoch
    ) // dt.timedelta(microseconds=1)
    assert values.from_bytes(UUIDType(), upper[10]) == uuid.UUID(int=49 * 7919)
    # NaN is never a bound; the non-NaN extremes are.
    assert values.from_bytes(DoubleType(), upper[9]) == pytest.approx(49 / 7)
    assert (df.null_value_counts or {})[2] == 8
    assert df.nan_value_counts is None  # the footer alone cannot count NaN


def test_nan_counts_of_nested_columns_skip_null_parents() -> None:
    def field(fid: int, name: str, t: pa.DataType) -> pa.Field:
        return pa.field(name, t, metadata={b"PARQUET:field_id": str(fid).encode()})

    nan = float("nan")
    schema = pa.schema(
        [
            field(1, "d", pa.float64()),
            field(2, "s", pa.struct([field(3, "x", pa.float32())])),
            field(4, "l", pa.list_(field(5, "element", pa.float64()))),
            field(
                6,
                "m",
                pa.map_(
                    field(7, "key", pa.string()).with_nullable(False),
                    field(8, "value", pa.float64()),
                ),
            ),
            field(9, "i", pa.int64()),
        ]
    )
    rows = [
        {"d": nan, "s": {"x": nan}, "l": [nan, 1.0, nan], "m": [("a", nan)], "i": 1},
        {"d": None, "s": None, "l": None, "m": None, "i": 2},
        {"d": 2.0, "s": {"x": 1.0}, "l": [nan], "m": [("b", 1.0), ("c", nan)], "i": 3},
    ]
    table = pa.Table.from_pylist(rows, schema=schema)
    expected = {1: 1, 3: 1, 5: 3, 8: 2}
    assert nan_value_counts(table) == expected
    halves = [table.slice(0, 1), table.slice(1)]
    total: dict[int, int] = {}
    for half in halves:
        add_counts(total, nan_value_counts(half))
    assert total == expected
    # A null struct whose child buffer holds NaN: not a value, not counted.
    child = pa.array([nan, nan], pa.float32())
    masked = pa.StructArray.from_arrays(
        [child], fields=[field(3, "x", pa.float32())], mask=pa.array([False, True])
    )
    batch = pa.RecordBatch.from_arrays([masked], schema=pa.schema([schema.field("s")]))
    assert nan_value_counts(batch) == {3: 1}


def test_nan_counts_are_kept_where_metrics_count(tmp_path: Path) -> None:
    path, meta = _write(tmp_path, _rows(50), 13)
    counts = {9: 3, 999: 1}
    df = data_file_from_parquet(path, 1, meta, SCHEMA, nan_counts=counts)
    assert df.nan_value_counts == {9: 3}  # 999 is no column of the file
    off = {"write.metadata.metrics.default": "none"}
    none = data_file_from_parquet(path, 1, meta, SCHEMA, nan_counts=counts, properties=off)
    assert none.nan_value_counts is None


def test_string_bounds_are_truncated_and_upper_is_incremented(tmp_path: Path) -> None:
    path, meta = _write(tmp_path, _rows(50), 1000)
    df = data_file_from_parquet(path, 1, meta, SCHEMA)
    lower = values.from_bytes(StringType(), (df.lower_bounds or {})[4])
    upper = values.from_bytes(StringType(), (df.upper_bounds or {})[4])
    assert lower == "name-0000"
    # The max is "zzzz...zé" (21 chars): truncated to 16 and the last char incremented.
    assert upper == "z" * 15 + "{"
    assert upper >= "z" * 20 + "é"


def test_modes_none_and_counts(tmp_path: Path) -> None:
    path, meta = _write(tmp_path, _rows(20), 1000)
    props = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.id": "none",
        "write.metadata.metrics.column.name": "full",
    }
    df = data_file_from_parquet(path, 1, meta, SCHEMA, properties=props)
    assert 1 not in (df.value_counts or {})
    assert (df.value_counts or {})[2] == 20
    assert set((df.lower_bounds or {}).keys()) == {4}


def test_max_inferred_columns(tmp_path: Path) -> None:
    path, meta = _write(tmp_path, _rows(10), 1000)
    df = data_file_from_parquet(
        path,
        1,
        meta,
        SCHEMA,
        properties={"write.metadata.metrics.max-inferred-column-defaults": "3"},
    )
    assert set((df.value_counts or {}).keys()) == {1, 2, 3}


def test_bad_modes_are_refused() -> None:
    with pytest.raises(ValidationError, match="unknown metrics mode"):
        MetricsMode.parse("everything")
    with pytest.raises(ValidationError, match="positive"):
        MetricsMode.parse("truncate(0)")
    assert MetricsConfig.from_properties({}).default == MetricsMode(True, True, 16)


def test_file_without_field_ids_gets_no_metrics(tmp_path: Path) -> None:
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3]}), path)
    df = data_file_from_parquet(str(path), 1, pq.read_metadata(path), SCHEMA)
    assert df.record_count == 3
    assert df.value_counts is None and df.lower_bounds is None
