"""The Spark write job: files, field ids, partition tuples, metrics, layout and bad input."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import os
import random
import textwrap
import uuid
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.catalog import SqlCatalog
from icewright.commit.append import fast_append
from icewright.errors import IcewrightError, ValidationError
from icewright.io import LocalFileIO
from icewright.manifest.metrics import data_file_from_parquet, nan_value_counts
from icewright.spark.types import has_time_type, to_spark_schema
from icewright.spark.write import (
    CallableSource,
    PathSource,
    SqlSource,
    WriteResult,
    data_location,
    parse_source,
    write_files,
)
from icewright.spec.partitioning import (
    UNPARTITIONED_PARTITION_SPEC,
    PartitionSpec,
    build_partition_spec,
)
from icewright.spec.schema import Schema
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortOrder, build_sort_order
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

if TYPE_CHECKING:
    from tests.support.spark35 import Spark35

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1)
FIELD_ID = b"PARQUET:field_id"

# --- helpers -------------------------------------------------------------------------------


def write(
    spark: SparkSession,
    source: Any,
    schema: Schema,
    location: Path,
    spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
    order: SortOrder = UNSORTED_SORT_ORDER,
    properties: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> WriteResult:
    return write_files(
        spark,
        source,
        schema=schema,
        spec=spec,
        sort_order=order,
        properties=dict(properties or {}),
        location=str(location),
        io=LocalFileIO(),
        **kwargs,
    )


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


def to_spark_value(t: IcebergType, v: Any) -> Any:
    """An icewright Python value as PySpark takes it (uuid as its string)."""
    if v is None:
        return None
    if isinstance(t, DateType):
        return dt.date(1970, 1, 1) + dt.timedelta(days=v)
    if isinstance(t, TimestamptzType):
        return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=v)
    if isinstance(t, TimestampType):
        return EPOCH + dt.timedelta(microseconds=v)
    if isinstance(t, TimeType):
        return (EPOCH + dt.timedelta(microseconds=v)).time()
    if isinstance(t, UUIDType):
        return str(v)
    if isinstance(t, FixedType | BinaryType):
        return bytearray(v)
    if isinstance(t, StructType):
        return tuple(to_spark_value(f.field_type, v.get(f.name)) for f in t.fields)
    if isinstance(t, ListType):
        return [to_spark_value(t.element_type, x) for x in v]
    if isinstance(t, MapType):
        return {
            to_spark_value(t.key_type, k): to_spark_value(t.value_type, x) for k, x in v.items()
        }
    return v


def from_arrow_value(t: IcebergType, v: Any) -> Any:
    """A value pyarrow read (to_pylist) in icewright's Python convention."""
    if v is None:
        return None
    if isinstance(t, DateType):
        return (v - dt.date(1970, 1, 1)).days
    if isinstance(t, TimestamptzType):
        return (v - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)
    if isinstance(t, TimestampType):
        return (v - EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(t, TimeType):
        return (dt.datetime.combine(EPOCH.date(), v) - EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(t, UUIDType):
        return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=v)
    if isinstance(t, StructType):
        return {f.name: from_arrow_value(f.field_type, v.get(f.name)) for f in t.fields}
    if isinstance(t, ListType):
        return [from_arrow_value(t.element_type, x) for x in v]
    if isinstance(t, MapType):
        return {from_arrow_value(t.key_type, k): from_arrow_value(t.value_type, x) for k, x in v}
    return v


def frame(spark: SparkSession, schema: Schema, rows: list[dict[str, Any]]) -> DataFrame:
    spark_schema = to_spark_schema(schema)
    data = [tuple(to_spark_value(f.field_type, r.get(f.name)) for f in schema.fields) for r in rows]
    return spark.createDataFrame(data, spark_schema)


def read_rows(path: str, schema: Schema) -> list[dict[str, Any]]:
    table = pq.read_table(path)
    return [
        {f.name: from_arrow_value(f.field_type, r[f.name]) for f in schema.fields}
        for r in table.to_pylist()
    ]


def field_ids(arrow_schema: pa.Schema) -> dict[int, str]:
    """Every Parquet field id in a file, nested ones too, with its Arrow type."""
    out: dict[int, str] = {}

    def visit(f: pa.Field) -> None:
        out[int(f.metadata[FIELD_ID])] = str(f.type)
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i))
        elif pa.types.is_map(t):
            visit(t.key_field)
            visit(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            visit(t.value_field)

    for f in arrow_schema:
        visit(f)
    return out


# --- every type -----------------------------------------------------------------------------

ALL_FIELDS = [
    NestedField(1, "b", BooleanType()),
    NestedField(2, "i", IntegerType(), required=True),
    NestedField(3, "l", LongType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec9", DecimalType(9, 2)),
    NestedField(7, "dec18", DecimalType(18, 3)),
    NestedField(8, "dec38", DecimalType(38, 10)),
    NestedField(9, "day", DateType()),
    NestedField(11, "ts", TimestampType()),
    NestedField(12, "tstz", TimestamptzType()),
    NestedField(13, "s", StringType()),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(4)),
    NestedField(16, "bin", BinaryType()),
    NestedField(
        17,
        "st",
        StructType(
            NestedField(18, "x", IntegerType(), required=True), NestedField(19, "y", StringType())
        ),
    ),
    NestedField(20, "lst", ListType(21, LongType(), element_required=False)),
    NestedField(22, "mp", MapType(23, StringType(), 24, DoubleType(), value_required=False)),
]
if has_time_type():
    ALL_FIELDS.append(NestedField(10, "t", TimeType()))
ALL_TYPES = Schema(*ALL_FIELDS)

ALL_ROWS: list[dict[str, Any]] = [
    {
        "b": True,
        "i": 1,
        "l": -(2**62),
        "f": 1.5,
        "d": -2.25,
        "dec9": Decimal("1234567.89"),
        "dec18": Decimal("-123456789012345.678"),
        "dec38": Decimal("1234567890123456789012345678.0123456789"),
        "day": -1,
        "t": 81_068_000_001,
        "ts": -1,
        "tstz": 1_510_871_468_123_456,
        "s": "héllo 😀",
        "u": uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        "fx": b"\x00\x01\x02\x03",
        "bin": b"",
        "st": {"x": 7, "y": None},
        "lst": [1, None, 3],
        "mp": {"a": 1.0, "b": None},
    },
    {"i": -2, "st": None, "lst": [], "mp": {}},
    {
        "b": False,
        "i": 2**31 - 1,
        "l": 0,
        "f": float("inf"),
        "d": float("nan"),
        "dec9": Decimal("-0.01"),
        "day": 20_000,
        "t": 0,
        "ts": 2**50,
        "tstz": -(2**50),
        "s": "",
        "u": uuid.UUID(int=0),
        "fx": b"\xff\xff\xff\xff",
        "bin": bytes(range(256)),
        "st": {"x": -1, "y": "why"},
        "lst": None,
        "mp": None,
    },
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _full(row: dict[str, Any]) -> dict[str, Any]:
    return {f.name: row.get(f.name) for f in ALL_TYPES.fields}


def test_every_type_is_written_with_iceberg_parquet_types_and_ids(
    spark: SparkSession, tmp_path: Path
) -> None:
    result = write(spark, frame(spark, ALL_TYPES, ALL_ROWS), ALL_TYPES, tmp_path)
    assert result.record_count == 3 and result.added_columns == () and result.schema is ALL_TYPES
    rows = []
    for data_file in result.data_files:
        path = data_file.file_path
        assert path.startswith(f"{tmp_path}/data/{result.job_id}/") and path.endswith(".parquet")
        ids = field_ids(pq.read_schema(path))
        assert set(ids) == set(ALL_TYPES.field_ids())  # list element, map key and value too
        rows += read_rows(path, ALL_TYPES)
    expected = sorted((_full(r) for r in ALL_ROWS), key=lambda r: r["i"])
    assert all(
        _same(a, b) for a, b in zip(sorted(rows, key=lambda r: r["i"]), expected, strict=True)
    )

    # Appendix A: the Parquet types of each column.
    meta = pq.read_metadata(result.data_files[0].file_path)
    columns = {meta.schema.column(i).path: meta.schema.column(i) for i in range(meta.num_columns)}
    assert columns["u"].physical_type == "FIXED_LEN_BYTE_ARRAY" and columns["u"].length == 16
    assert "UUID" in str(columns["u"].logical_type)
    assert columns["fx"].physical_type == "FIXED_LEN_BYTE_ARRAY" and columns["fx"].length == 4
    assert columns["bin"].physical_type == "BYTE_ARRAY"
    assert columns["dec9"].physical_type == "INT32" and columns["dec18"].physical_type == "INT64"
    assert columns["dec38"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert "isAdjustedToUTC=false" in str(columns["ts"].logical_type)
    assert "isAdjustedToUTC=true" in str(columns["tstz"].logical_type)
    assert "microseconds" in str(columns["tstz"].logical_type)
    assert columns["i"].max_definition_level == 0  # required
    if has_time_type():
        assert columns["t"].physical_type == "INT64"
        assert "Time(isAdjustedToUTC=false, timeUnit=microseconds)" in str(
            columns["t"].logical_type
        )
    assert json.loads(meta.metadata[b"iceberg.schema"]) == ALL_TYPES.to_json()
    assert meta.row_group(0).column(0).compression == "ZSTD"  # the default codec


def test_data_files_carry_the_footer_metrics(spark: SparkSession, tmp_path: Path) -> None:
    properties = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.s": "truncate(2)",
        "write.metadata.metrics.column.l": "full",
    }
    spec = build_partition_spec(ALL_TYPES, [("bucket", "i", 2)])
    rows = [*ALL_ROWS, *({"i": n, "s": f"name-{n}", "l": n} for n in range(20))]
    result = write(
        spark, frame(spark, ALL_TYPES, rows), ALL_TYPES, tmp_path, spec, properties=properties
    )
    assert len(result.data_files) == 2
    for data_file in result.data_files:
        path = data_file.file_path
        footer = pq.read_metadata(path)
        expected = data_file_from_parquet(
            path,
            os.path.getsize(path),
            footer,
            ALL_TYPES,
            partition=data_file.partition,
            spec_id=spec.spec_id,
            properties=properties,
            # NaN counts come from the rows (Parquet statistics have none): count them
            # again from the file as pyarrow reads it back.
            nan_counts=nan_value_counts(pq.read_table(path)),
        )
        assert data_file == expected
        assert data_file.nan_value_counts is not None
        assert set(data_file.nan_value_counts) == {4, 5, 24}  # f, d and mp's values
        assert set(data_file.lower_bounds or {}) == {3, 13}  # only the columns with bounds
        assert data_file.split_offsets and data_file.split_offsets[0] == 4
        assert data_file.value_counts and data_file.value_counts[2] == data_file.record_count
    nans = sum((f.nan_value_counts or {}).get(5, 0) for f in result.data_files)
    assert nans == sum(1 for r in rows if isinstance(r.get("d"), float) and math.isnan(r["d"]))
    assert nans > 0


# --- partitioning -----------------------------------------------------------------------------

PART_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "local", TimestampType()),
    NestedField(5, "day", DateType()),
    NestedField(6, "amount", DecimalType(10, 2)),
    NestedField(7, "u", UUIDType()),
    NestedField(8, "flag", BooleanType()),
    NestedField(9, "loc", StructType(NestedField(10, "city", StringType()))),
)


def part_rows(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    names = ["", "a", "ab", "abc", "àbcd", "😀😀😀", None, "x/y=z%", "a b"]
    rows = []
    for _ in range(n):
        rows.append(
            {
                "id": rnd.randint(-(10**12), 10**12),
                "name": rnd.choice(names),
                "ts": rnd.choice([None, rnd.randint(-(10**15), 10**15)]),
                "local": rnd.randint(-(10**14), 10**14),
                "day": rnd.choice([None, rnd.randint(-800, 800)]),
                "amount": Decimal(rnd.randint(-(10**6), 10**6)).scaleb(-2),
                "u": rnd.choice([None, uuid.UUID(int=rnd.getrandbits(128))]),
                "flag": rnd.choice([True, False, None]),
                "loc": rnd.choice([None, {"city": rnd.choice(["Oslo", None, "Zürich"])}]),
            }
        )
    return rows


def test_partition_tuples_equal_the_transforms_of_their_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    spec = build_partition_spec(
        PART_SCHEMA,
        [
            ("identity", "name"),
            ("bucket", "id", 3),
            ("truncate", "name", 2, "name_prefix"),
            ("hour", "ts"),
            ("month", "local"),
            ("year", "day"),
            ("truncate", "amount", 500),
            ("bucket", "u", 2),
            ("identity", "flag"),
            ("identity", "loc.city"),
            ("void", "id", None, "gone"),
        ],
    )
    rows = part_rows(150)
    result = write(spark, frame(spark, PART_SCHEMA, rows), PART_SCHEMA, tmp_path, spec)
    assert result.record_count == len(rows)
    seen = 0
    for data_file in result.data_files:
        assert data_file.spec_id == spec.spec_id
        partition_path = spec.partition_to_path(data_file.partition, PART_SCHEMA)
        assert f"/{result.job_id}/{partition_path}/" in data_file.file_path
        for row in read_rows(data_file.file_path, PART_SCHEMA):
            seen += 1
            values = {**row, "loc.city": (row["loc"] or {}).get("city")}
            expected = tuple(
                pf.transform.apply(
                    PART_SCHEMA.find_type(pf.source_id),
                    values[PART_SCHEMA.column_name(pf.source_id)],
                )
                for pf in spec.fields
            )
            assert data_file.partition == expected
    assert seen == len(rows)
    # Distinct tuples are distinct files (hash distribution: one task per partition).
    tuples = [json.dumps(f.partition, default=str) for f in result.data_files]
    assert len(tuples) == len(set(tuples))


def test_hash_none_and_range_distribution(spark: SparkSession, tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType())
    )
    source = spark.range(0, 300, 1, 3).select(F.col("id"), F.col("id").cast("string").alias("v"))
    spec = build_partition_spec(schema, [("bucket", "id", 4)])
    hashed = write(spark, source, schema, tmp_path / "hash", spec)
    assert len(hashed.data_files) == 4  # one per bucket
    spread = write(
        spark,
        source,
        schema,
        tmp_path / "none",
        spec,
        properties={"write.distribution-mode": "none"},
    )
    assert len(spread.data_files) == 12  # every input task holds every bucket
    order = build_sort_order(schema, [("id", "desc")])
    # Keep Spark from merging the few small range partitions into one task.
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        ranged = write(spark, source, schema, tmp_path / "range", order=order)  # default: range
    finally:
        spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    bounds = sorted(
        (min(r["id"] for r in rs), max(r["id"] for r in rs))
        for rs in (read_rows(f.file_path, schema) for f in ranged.data_files)
    )
    assert len(bounds) > 1
    assert all(hi < lo for (_, hi), (lo, _) in itertools.pairwise(bounds))


def test_rows_are_sorted_within_files(spark: SparkSession, tmp_path: Path) -> None:
    order = build_sort_order(
        PART_SCHEMA,
        [("name", "asc", "nulls-last"), ("id", "desc", "nulls-last", "bucket[5]"), ("id", "asc")],
    )
    spec = build_partition_spec(PART_SCHEMA, [("day", "ts")])
    rows = part_rows(200, seed=3)
    result = write(spark, frame(spark, PART_SCHEMA, rows), PART_SCHEMA, tmp_path, spec, order)
    bucket = order.fields[1].transform
    for data_file in result.data_files:
        assert data_file.sort_order_id == order.order_id
        got = read_rows(data_file.file_path, PART_SCHEMA)
        keys = [
            (r["name"] is None, r["name"] or "", -bucket.apply(LongType(), r["id"]), r["id"])
            for r in got
        ]
        assert keys == sorted(keys)
    unsorted = write(spark, frame(spark, PART_SCHEMA, rows[:5]), PART_SCHEMA, tmp_path, spec)
    assert all(f.sort_order_id is None for f in unsorted.data_files)


def test_files_roll_near_the_target_size(spark: SparkSession, tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "blob", StringType())
    )
    # Random hex does not compress much: about 65 bytes a row on disk.
    source = spark.range(0, 30_000, 1, 1).select(
        F.col("id"), F.sha2(F.col("id").cast("string"), 256).alias("blob")
    )
    target = 256 * 1024
    result = write(
        spark,
        source,
        schema,
        tmp_path,
        properties={
            "write.target-file-size-bytes": str(target),
            "write.parquet.row-group-size-bytes": "65536",
        },
    )
    sizes = sorted((f.file_size_in_bytes for f in result.data_files), reverse=True)
    assert result.record_count == 30_000
    assert len(sizes) >= 4
    assert all(0.75 * target <= s <= 1.25 * target for s in sizes[:-1]), sizes
    assert sizes[-1] <= 1.25 * target
    for f in result.data_files:
        assert f.file_size_in_bytes == os.path.getsize(f.file_path)


@pytest.mark.parametrize(
    ("codec", "parquet_name"),
    [("gzip", "GZIP"), ("uncompressed", "UNCOMPRESSED"), ("snappy", "SNAPPY")],
)
def test_compression_codec_follows_the_table(
    spark: SparkSession, tmp_path: Path, codec: str, parquet_name: str
) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    result = write(
        spark,
        spark.range(10),
        schema,
        tmp_path,
        properties={"write.parquet.compression-codec": codec},
    )
    meta = pq.read_metadata(result.data_files[0].file_path)
    assert meta.row_group(0).column(0).compression == parquet_name


def test_data_path_property_and_empty_source(spark: SparkSession, tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    props = {"write.data.path": str(tmp_path / "elsewhere")}
    assert data_location(str(tmp_path), props) == str(tmp_path / "elsewhere")
    assert data_location("s3://b/t/", {}) == "s3://b/t/data"
    result = write(spark, spark.range(5), schema, tmp_path, properties=props)
    assert all(f.file_path.startswith(f"{tmp_path}/elsewhere/") for f in result.data_files)
    empty = write(spark, spark.range(0), schema, tmp_path / "t2")
    assert empty.data_files == () and empty.record_count == 0
    assert files_under(tmp_path / "t2") == []


# --- sources ---------------------------------------------------------------------------------

SIMPLE = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType())
)


def make_source(spark: SparkSession) -> DataFrame:
    """Used by the callable source test as ``tests.spark.test_write:make_source``."""
    return spark.createDataFrame([(1, "one"), (2, "two")], "id long, name string")


def test_parse_source() -> None:
    assert parse_source("sql:SELECT 1") == SqlSource("SELECT 1")
    assert parse_source("csv:/data/x") == PathSource("/data/x", "csv")
    assert parse_source("orc:s3://b/k") == PathSource("s3://b/k", "orc")
    assert parse_source("/data/in.json") == PathSource("/data/in.json", "json")
    assert parse_source("s3://bucket/dir") == PathSource("s3://bucket/dir", "parquet")
    assert parse_source("pkg.mod:build") == CallableSource("pkg.mod:build")
    with pytest.raises(ValidationError, match="no query"):
        parse_source("sql:  ")
    with pytest.raises(ValidationError, match="format"):
        PathSource("/x", "avro")


def test_every_kind_of_source(spark: SparkSession, tmp_path: Path) -> None:
    base = make_source(spark)
    for fmt in ("parquet", "json", "orc", "csv"):
        base.write.format(fmt).option("header", "true").save(str(tmp_path / f"in-{fmt}"))
    base.createOrReplaceTempView("icewright_source_view")
    sources: list[Any] = [
        "sql:SELECT id, name FROM icewright_source_view",
        f"parquet:{tmp_path}/in-parquet",
        PathSource(str(tmp_path / "in-json"), "json"),
        f"orc:{tmp_path}/in-orc",
        f"csv:{tmp_path}/in-csv",  # header row, types inferred (int widens to long)
        "tests.spark.test_write:make_source",
    ]
    for i, source in enumerate(sources):
        result = write(spark, source, SIMPLE, tmp_path / f"t{i}")
        got = sorted(
            r
            for f in result.data_files
            for r in map(tuple, (d.values() for d in read_rows(f.file_path, SIMPLE)))
        )
        assert got == [(1, "one"), (2, "two")], source


# --- bad input ---------------------------------------------------------------------------------


def test_bad_sources_raise_validation_errors(spark: SparkSession, tmp_path: Path) -> None:
    cases = [
        (f"parquet:{tmp_path}/missing", "does not exist"),
        ("sql:SELECT * FROM no_such_table_anywhere", "cannot read the source"),
        ("sql:SELEC 1", "cannot read the source"),
        ("tests.spark.no_such_module:f", "cannot import"),
        ("tests.spark.test_write:SIMPLE", "not callable"),
        ("tests.spark.test_write:files_under", "raised AttributeError"),
        ("tests.spark.test_write:test_parse_source", "returned NoneType"),
    ]
    for source, words in cases:
        with pytest.raises(ValidationError, match=words):
            write(spark, source, SIMPLE, tmp_path)
    assert files_under(tmp_path / "data") == []


def test_schema_mismatch_names_the_columns_and_writes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.createDataFrame([(1.5, "x", 3)], "id double, name string, extra int")
    with pytest.raises(ValidationError) as info:
        write(spark, df, SIMPLE, tmp_path)
    assert "'id' is double" in str(info.value) and "['extra']" in str(info.value)
    df2 = spark.createDataFrame([("x",)], "name string")
    with pytest.raises(
        ValidationError, match=r"required columns missing from the source: \['id'\]"
    ):
        write(spark, df2, SIMPLE, tmp_path)
    assert not (tmp_path / "data").exists()


def test_nulls_in_required_columns_fail_and_leave_no_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "pt", StructType(NestedField(3, "x", LongType(), required=True))),
        NestedField(4, "xs", ListType(5, LongType(), element_required=True)),
    )
    spec = build_partition_spec(schema, [("bucket", "id", 4)])
    good = [(i, (i,), [i]) for i in range(200)]
    cases = [
        ([*good, (None, (1,), [1])], "id"),
        ([*good, (5, (None,), [1])], "pt.x"),
        ([*good, (5, None, [None])], "xs.element"),
    ]
    for rows, column in cases:
        df = spark.createDataFrame(rows, "id long, pt struct<x: long>, xs array<long>")
        with pytest.raises(ValidationError, match=rf"nulls in required columns: {column}"):
            write(spark, df, schema, tmp_path, spec)
        assert files_under(tmp_path / "data") == []
    # A null struct may hide its required field: that is fine.
    ok = write(
        spark,
        spark.createDataFrame([(1, None, [])], "id long, pt struct<x: long>, xs array<long>"),
        schema,
        tmp_path,
        spec,
    )
    assert ok.record_count == 1


def test_values_that_do_not_fit_fail_and_leave_no_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    schema = Schema(NestedField(1, "u", UUIDType()), NestedField(2, "fx", FixedType(3)))
    bad_uuid = spark.createDataFrame([("not-a-uuid", None)], "u string, fx binary")
    with pytest.raises(ValidationError, match="column 'u': not a UUID: not-a-uuid"):
        write(spark, bad_uuid, schema, tmp_path)
    bad_fixed = spark.createDataFrame([(None, bytearray(b"abcd"))], "u string, fx binary")
    with pytest.raises(ValidationError, match="column 'fx' has a value that does not fit"):
        write(spark, bad_fixed, schema, tmp_path)
    assert files_under(tmp_path / "data") == []


def test_a_failed_job_deletes_what_it_wrote(spark: SparkSession, tmp_path: Path) -> None:
    # Task 0 writes its files; task 1 fails: the job directory must be gone.
    source = spark.range(0, 2000, 1, 2).select(
        F.when(F.col("id") == 1999, F.raise_error(F.lit("boom")))
        .otherwise(F.col("id"))
        .alias("id"),
        F.lit("x").alias("name"),
    )
    with pytest.raises(IcewrightError, match=r"write job .* failed") as info:
        write(spark, source, SIMPLE, tmp_path, properties={"write.distribution-mode": "none"})
    assert not isinstance(info.value, ValidationError)
    assert files_under(tmp_path / "data") == []


def test_schema_evolution_adds_the_new_columns(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, "a", 2.5)], "id long, name string, score double")
    with pytest.raises(ValidationError, match=r"\['score'\]"):
        write(spark, df, SIMPLE, tmp_path)
    result = write(spark, df, SIMPLE, tmp_path, allow_schema_evolution=True, last_column_id=5)
    (added,) = result.added_columns
    assert added.parent == () and added.field.name == "score" and added.field.field_id == 6
    assert result.schema.find_field("score").field_id == 6
    ids = field_ids(pq.read_schema(result.data_files[0].file_path))
    assert ids == {1: "int64", 2: "string", 6: "double"}


def test_writes_to_object_storage(spark: SparkSession, s3_server: Any) -> None:
    from icewright.io import S3FileIO

    io = S3FileIO(s3_server.properties)
    location = f"s3://{s3_server.new_bucket()}/db/events"
    spec = build_partition_spec(PART_SCHEMA, [("bucket", "id", 2)])
    rows = part_rows(40, seed=5)
    result = write_files(
        spark,
        frame(spark, PART_SCHEMA, rows),
        schema=PART_SCHEMA,
        spec=spec,
        sort_order=UNSORTED_SORT_ORDER,
        properties={},
        location=location,
        io=io,
    )
    assert len(result.data_files) == 2
    got = []
    for data_file in result.data_files:
        assert data_file.file_path.startswith(f"{location}/data/{result.job_id}/id_bucket=")
        payload = io.read(data_file.file_path)
        assert len(payload) == data_file.file_size_in_bytes
        got += [r["id"] for r in pq.read_table(pa.BufferReader(payload)).to_pylist()]
    assert sorted(got) == sorted(r["id"] for r in rows)
    # A failed job leaves nothing in the bucket either.
    with pytest.raises(ValidationError):
        write_files(
            spark,
            spark.createDataFrame([(None,)], "id long"),
            schema=PART_SCHEMA,
            spec=spec,
            sort_order=UNSORTED_SORT_ORDER,
            properties={},
            location=f"{location}-2",
            io=io,
        )
    assert list(io.list_prefix(f"{location}-2")) == []


# --- end to end ---------------------------------------------------------------------------------


def test_written_table_reads_back_in_pyiceberg(spark: SparkSession, tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    uri, warehouse = f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "warehouse")
    catalog = SqlCatalog("local", uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    schema = Schema(*[f for f in PART_SCHEMA.fields if f.name != "u"])
    spec = build_partition_spec(
        schema, [("day", "ts"), ("bucket", "id", 4), ("truncate", "name", 2)]
    )
    table = catalog.create_table("db.events", schema, spec)
    rows = part_rows(120, seed=11)
    for chunk in (rows[:70], rows[70:]):
        metadata = table.metadata
        result = write_files(
            spark,
            frame(spark, schema, chunk),
            schema=metadata.schema(),
            spec=metadata.spec(),
            sort_order=metadata.sort_order(),
            properties=metadata.properties,
            location=metadata.location,
            io=table.io,
        )
        table = fast_append(table, result.data_files).table
    assert table.metadata.current_snapshot() is not None

    theirs = PyIcebergSqlCatalog("local", uri=uri, warehouse=warehouse).load_table("db.events")
    scanned = theirs.scan().to_arrow()
    got = sorted(
        (
            {f.name: from_arrow_value(f.field_type, r[f.name]) for f in schema.fields}
            for r in scanned.to_pylist()
        ),
        key=lambda r: r["id"],
    )
    want = sorted(({f.name: r[f.name] for f in schema.fields} for r in rows), key=lambda r: r["id"])
    assert got == want
    snapshot = theirs.current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    assert snapshot.summary["total-records"] == str(len(rows))


# --- pyspark 3.5 ----------------------------------------------------------------------------------

_SPARK35_JOB = textwrap.dedent(
    """
    import json, sys, uuid
    from decimal import Decimal
    import pyspark
    from pyspark.sql import functions as F
    from icewright.io import LocalFileIO
    from icewright.spark.session import local_session
    from icewright.spark.write import write_files
    from icewright.spec.partitioning import build_partition_spec
    from icewright.spec.schema import Schema
    from icewright.spec.sorting import build_sort_order

    schema = Schema.from_json(json.loads(sys.argv[2]))
    spark = local_session(**{"spark.master": "local[2]"})
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, 400, 1, 2).select(
        F.col("id"),
        F.concat(F.lit("n"), (F.col("id") % 7).cast("string")).alias("name"),
        F.timestamp_micros(F.col("id") * F.lit(7_200_000_000) - F.lit(10**11)).alias("ts"),
        (F.col("id") / F.lit(8)).cast("decimal(10,2)").alias("amount"),
        F.lit("f79c3e09-677c-4bbd-a479-3f349cb785e7").alias("u"),
        F.array(F.col("id")).alias("xs"),
    )
    spec = build_partition_spec(
        schema,
        [("day", "ts"), ("bucket", "id", 4), ("bucket", "name", 3), ("truncate", "amount", 300)],
    )
    order = build_sort_order(schema, [("id", "desc")])
    result = write_files(
        spark, df, schema=schema, spec=spec, sort_order=order, properties={},
        location=sys.argv[1], io=LocalFileIO(),
    )
    print(json.dumps({
        "version": pyspark.__version__,
        "spec": spec.to_json(),
        "files": [
            [f.file_path, f.record_count, [str(v) for v in f.partition]]
            for f in result.data_files
        ],
    }))
    """
)


@pytest.mark.slow
def test_write_job_runs_on_pyspark_35(spark35: Spark35, tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "amount", DecimalType(10, 2)),
        NestedField(5, "u", UUIDType()),
        NestedField(6, "xs", ListType(7, LongType(), element_required=False)),
    )
    out = spark35.run(
        _SPARK35_JOB, [str(tmp_path / "table"), json.dumps(schema.to_json())], cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-4000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["version"].startswith("3.5")
    spec = PartitionSpec.from_json(report["spec"])
    total = 0
    for path, count, partition in report["files"]:
        assert set(field_ids(pq.read_schema(path))) == set(schema.field_ids())
        rows = read_rows(path, schema)
        assert len(rows) == count
        total += count
        ids = [r["id"] for r in rows]
        assert ids == sorted(ids, reverse=True)
        for row in rows:
            expected = [
                pf.transform.apply(
                    schema.find_type(pf.source_id), row[schema.column_name(pf.source_id)]
                )
                for pf in spec.fields
            ]
            assert [str(v) for v in expected] == partition
            assert row["u"] == uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7") and row["xs"] == [
                row["id"]
            ]
    assert total == 400
