"""read_table: Iceberg tables read into Spark DataFrames by field id, with deletes and filters.

Tables are written by icewright's in-process Parquet writer and committed by its commit
engine (or by pyiceberg, or by Iceberg Java); the expected rows are the rows written, the
spec's rules applied to them (sequence numbers, two-valued comparisons), or what an
independent implementation reads.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io as _io
import json
import math
import textwrap
import uuid
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.catalog.metadata_files import read_table_metadata
from icewright.commit.append import fast_append
from icewright.commit.properties import UpdateProperties
from icewright.commit.refs import ManageSnapshots
from icewright.commit.row_delta import RowDelta
from icewright.commit.schema_update import update_schema
from icewright.commit.spec_update import UpdatePartitionSpec
from icewright.errors import ValidationError
from icewright.expressions import parse
from icewright.io import LocalFileIO
from icewright.manifest import DataFile, FileContent, FileFormat
from icewright.scan import TableScan
from icewright.spark.read import read_plan, read_table
from icewright.spark.types import has_time_type, to_spark_schema
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

if TYPE_CHECKING:
    from tests.support.spark35 import Spark35

UTC = dt.UTC
POS_PATH_ID = 2147483546
POS_ID = 2147483545
FIELD_ID = b"PARQUET:field_id"


# --- helpers ---------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A collected Spark value as plain Python (rows as dicts, binary as bytes)."""
    if isinstance(value, Row):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def collect(df: DataFrame, key: str = "id") -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts, sorted by ``key``."""
    return sorted((plain(r) for r in df.collect()), key=lambda r: r[key])


def ids(df: DataFrame) -> list[int]:
    return sorted(r["id"] for r in df.select("id").collect())


def append(table: Table, rows: Sequence[dict[str, Any]]) -> tuple[Table, list[DataFile]]:
    files = write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), rows))
    return fast_append(table, files).table, files


def _field(name: str, t: pa.DataType, field_id: int, nullable: bool = False) -> pa.Field:
    return pa.field(name, t, nullable, {FIELD_ID: str(field_id).encode()})


def _put(table: Table, data: pa.Table, kind: str) -> tuple[str, int]:
    buf = _io.BytesIO()
    pq.write_table(data, buf)
    path = f"{table.location}/data/{kind}-{uuid.uuid4()}.parquet"
    table.io.create(path, buf.getvalue())
    return path, len(buf.getvalue())


def position_deletes(
    table: Table, target: DataFile, positions: list[int], *, spelled: str | None = None
) -> DataFile:
    """A real position delete file for rows of ``target`` (its path as ``spelled``)."""
    data = pa.table(
        {"file_path": [spelled or target.file_path] * len(positions), "pos": positions},
        schema=pa.schema(
            [_field("file_path", pa.string(), POS_PATH_ID), _field("pos", pa.int64(), POS_ID)]
        ),
    )
    path, size = _put(table, data, "pos")
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.POSITION_DELETES,
        record_count=len(positions),
        file_size_in_bytes=size,
        partition=target.partition,
        spec_id=target.spec_id,
    )


def equality_deletes(
    table: Table,
    columns: dict[str, tuple[int, pa.DataType, list[Any]]],
    *,
    partition: tuple[Any, ...] = (),
    spec_id: int = 0,
) -> DataFile:
    """A real equality delete file: ``columns`` maps name -> (field id, type, values)."""
    fields = [_field(n, t, i, nullable=True) for n, (i, t, _) in columns.items()]
    data = pa.table({n: v for n, (_, _, v) in columns.items()}, schema=pa.schema(fields))
    path, size = _put(table, data, "eq")
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.EQUALITY_DELETES,
        record_count=data.num_rows,
        file_size_in_bytes=size,
        partition=partition,
        spec_id=spec_id,
        equality_ids=tuple(i for i, _, _ in columns.values()),
    )


# --- every type ------------------------------------------------------------------------------

EVERY = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "b", BooleanType()),
    NestedField(3, "i", IntegerType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec", DecimalType(12, 3)),
    NestedField(7, "day", DateType()),
    NestedField(8, "ts", TimestampType()),
    NestedField(9, "tstz", TimestamptzType()),
    NestedField(10, "s", StringType()),
    NestedField(11, "u", UUIDType()),
    NestedField(12, "fx", FixedType(3)),
    NestedField(13, "bin", BinaryType()),
    NestedField(
        14,
        "loc",
        StructType(NestedField(15, "lat", DoubleType()), NestedField(16, "u2", UUIDType())),
    ),
    NestedField(17, "tags", ListType(18, StringType(), element_required=False)),
    NestedField(19, "attrs", MapType(20, StringType(), 21, LongType(), value_required=False)),
    NestedField(22, "uids", ListType(23, UUIDType(), element_required=False)),
)


def every_rows() -> list[dict[str, Any]]:
    out = []
    for n in range(3):
        out.append(
            {
                "id": n,
                "b": n % 2 == 0,
                "i": -(2**31) if n == 0 else n,
                "f": 1.5 * n,
                "d": -2.25 * n,
                "dec": Decimal("123456789.125") if n == 0 else Decimal(n),
                "day": dt.date(1969, 12, 31) + dt.timedelta(days=n * 400),
                "ts": dt.datetime(2026, 3, 1, 12, 0, 0, 123456) + dt.timedelta(hours=n),
                "tstz": dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
                + dt.timedelta(days=n),
                "s": f"s{n}é",
                "u": uuid.UUID(int=(n + 1) * 0x1234567890ABCDEF),
                "fx": bytes([n, n + 1, n + 2]),
                "bin": b"\x00\xff" * n,
                "loc": {"lat": n / 3, "u2": uuid.UUID(int=n)},
                "tags": ["a", None, str(n)],
                "attrs": {"k": n, "none": None},
                "uids": [uuid.UUID(int=7), None],
            }
        )
    out.append({"id": 3})  # every other column null
    return out


def test_every_type_reads_back_as_written(catalog: SqlCatalog, spark: SparkSession) -> None:
    table, _ = append(catalog.create_table("db.every", EVERY), every_rows())
    df = read_table(spark, table)
    assert df.columns == [f.name for f in EVERY.fields]
    # the DataFrame's types are the shared Iceberg -> Spark mapping (uuid as text)
    expected_types = to_spark_schema(EVERY)
    assert [f.dataType.simpleString() for f in df.schema.fields] == [
        f.dataType.simpleString() for f in expected_types.fields
    ]
    written = table.metadata.schema()
    assert [f.metadata["parquet.field.id"] for f in df.schema.fields] == [
        f.field_id for f in written.fields
    ]
    # instants compare as microseconds since the epoch, whatever the process time zone
    got = collect(df.withColumn("tstz", F.unix_micros("tstz")))
    for row, want in zip(got, every_rows(), strict=True):
        for name in want:
            value = want[name]
            if name == "tstz":
                value = (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(
                    microseconds=1
                )
            elif name == "u":
                value = str(value)
            elif name == "loc":
                value = {"lat": value["lat"], "u2": str(value["u2"])}
            elif name == "uids":
                value = [None if v is None else str(v) for v in value]
            assert row[name] == value, name
        assert all(row[k] is None for k in row if k not in want)


def test_time_columns(catalog: SqlCatalog, spark: SparkSession) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "t", TimeType())
    )
    table, _ = append(
        catalog.create_table("db.times", schema),
        [{"id": 1, "t": dt.time(0, 0, 0, 1)}, {"id": 2, "t": dt.time(23, 59, 59, 999999)}],
    )
    assert ids(read_table(spark, table, columns=["id"])) == [1, 2]  # not selected: fine
    if not has_time_type():
        with pytest.raises(ValidationError, match=r"'t'.*time"):
            read_table(spark, table)
        return
    got = collect(read_table(spark, table, filter="t > '12:00:00'"))
    assert got == [{"id": 2, "t": dt.time(23, 59, 59, 999999)}]


def test_nanosecond_timestamps_name_the_column(catalog: SqlCatalog, spark: SparkSession) -> None:
    table = catalog.create_table("db.ns", Schema(NestedField(1, "id", LongType())))
    base = table.metadata
    schema = Schema(
        NestedField(1, "id", LongType()), NestedField(2, "at_ns", TimestampNsType()), schema_id=1
    )
    v3 = dataclasses.replace(
        base, format_version=3, next_row_id=0, schemas=(*base.schemas, schema), current_schema_id=1
    )
    with pytest.raises(ValidationError, match=r"'at_ns'.*timestamp_ns"):
        read_table(spark, (v3, table.io))
    empty = read_table(spark, (v3, table.io), columns=["id"])
    assert empty.columns == ["id"] and empty.count() == 0


# --- peers write, icewright reads ------------------------------------------------------------


def test_pyiceberg_written_table(catalog: SqlCatalog, spark: SparkSession, tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergCatalog
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.types import DoubleType as PyDouble
    from pyiceberg.types import LongType as PyLong
    from pyiceberg.types import NestedField as PyField
    from pyiceberg.types import StringType as PyString

    theirs = PyIcebergCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    try:
        py_table = theirs.create_table(
            "db.py",
            PySchema(
                PyField(1, "id", PyLong(), required=True),
                PyField(2, "name", PyString(), required=False),
                PyField(3, "score", PyDouble(), required=False),
            ),
        )
        arrow_schema = pa.schema(
            [
                pa.field("id", pa.int64(), False),
                pa.field("name", pa.string()),
                pa.field("score", pa.float64()),
            ]
        )
        py_table.append(
            pa.table(
                {"id": [1, 2, 3], "name": ["a", None, "c"], "score": [0.5, None, 2.0]},
                schema=arrow_schema,
            )
        )
        py_table.append(pa.table({"id": [4], "name": ["d"], "score": [9.0]}, schema=arrow_schema))
        with py_table.update_schema() as u:
            u.rename_column("name", "label")
        py_table = theirs.load_table("db.py")
        expected = sorted(py_table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    finally:
        theirs.engine.dispose()
    table = catalog.load_table("db.py")
    assert collect(read_table(spark, table)) == expected
    got = collect(read_table(spark, table, filter="label = 'c' or score > 5", columns=["id"]))
    assert got == [{"id": 3}, {"id": 4}]


# --- time travel -----------------------------------------------------------------------------

SIMPLE = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
)


def test_time_travel_by_snapshot_ref_and_timestamp(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    table, _ = append(catalog.create_table("db.tt", SIMPLE), [{"id": 1, "name": "a"}])
    first = table.metadata.current_snapshot()
    assert first is not None
    table = ManageSnapshots(table).create_tag("v1", first.snapshot_id).commit().table
    table = update_schema(table).rename_column("name", "label").commit().table
    table, _ = append(table, [{"id": 2, "label": "b"}])
    second = table.metadata.current_snapshot()
    assert second is not None
    table = ManageSnapshots(table).create_branch("audit").commit().table
    audit = fast_append(
        table,
        write_data_files(
            table.io,
            table.metadata,
            rows_to_arrow(table.metadata.schema(), [{"id": 9, "label": "z"}]),
        ),
        branch="audit",
    ).table
    table, _ = append(audit, [{"id": 3, "label": "c"}])

    assert ids(read_table(spark, table)) == [1, 2, 3]
    # an old snapshot reads with the schema it was written with (the column was "name")
    old = read_table(spark, table, snapshot_id=first.snapshot_id)
    assert collect(old) == [{"id": 1, "name": "a"}]
    assert collect(read_table(spark, table, ref="v1")) == [{"id": 1, "name": "a"}]
    assert ids(read_table(spark, table, ref="audit")) == [1, 2, 9]
    assert read_table(spark, table, ref="audit").columns == ["id", "label"]
    as_of = read_table(spark, table, as_of=second.timestamp_ms)
    assert collect(as_of) == [{"id": 1, "label": "a"}, {"id": 2, "label": "b"}]
    moment = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, tz=UTC)
    assert ids(read_table(spark, table, as_of=moment)) == [1]
    with pytest.raises(ValidationError, match="no branch or tag named 'nope'"):
        read_table(spark, table, ref="nope")
    with pytest.raises(ValidationError, match="only one of"):
        read_table(spark, table, ref="v1", snapshot_id=first.snapshot_id)


# --- filters and projection ------------------------------------------------------------------

FILTERED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "score", DoubleType()),
    NestedField(4, "day", DateType()),
    NestedField(5, "at", TimestamptzType()),
    NestedField(6, "amount", DecimalType(9, 2)),
    NestedField(7, "u", UUIDType()),
    NestedField(8, "raw", BinaryType()),
    NestedField(
        9,
        "loc",
        StructType(NestedField(10, "lat", DoubleType()), NestedField(11, "lon", DoubleType())),
    ),
)
START = dt.datetime(2026, 1, 1, tzinfo=UTC)


def filtered_rows() -> list[dict[str, Any]]:
    out = []
    for n in range(12):
        out.append(
            {
                "id": n,
                "name": None if n % 5 == 4 else ["alpha", "beta", "gamma"][n % 3] + str(n),
                "score": math.nan if n % 7 == 3 else (None if n == 11 else n - 5.0),
                "day": dt.date(2026, 1, 1) + dt.timedelta(days=n),
                "at": START + dt.timedelta(hours=7 * n),
                "amount": Decimal(n) / 4,
                "u": uuid.UUID(int=n),
                "raw": bytes([n]),
                "loc": None if n == 6 else {"lat": float(n), "lon": -float(n)},
            }
        )
    return out


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _lt(v: Any, x: Any) -> bool:
    # the spec's comparison: null and NaN never compare true
    return v is not None and not _is_nan(v) and v < x


# (expression text, the spec's meaning of it for one row)
FILTERS: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
    ("score < 0", lambda r: _lt(r["score"], 0)),
    (
        "score >= 2",
        lambda r: r["score"] is not None and not _is_nan(r["score"]) and r["score"] >= 2,
    ),
    ("NOT (score < 0)", lambda r: not _lt(r["score"], 0)),
    ("score != 1", lambda r: r["score"] != 1),  # true for null and NaN
    ("score = 1 OR name IS NULL", lambda r: r["score"] == 1 or r["name"] is None),
    ("score IS NAN", lambda r: _is_nan(r["score"])),
    ("score IS NOT NAN", lambda r: not _is_nan(r["score"])),
    ("score IS NULL", lambda r: r["score"] is None),
    ("name IN ('alpha0', 'beta1', 'zzz')", lambda r: r["name"] in ("alpha0", "beta1")),
    ("name NOT IN ('alpha0', 'beta1')", lambda r: r["name"] not in ("alpha0", "beta1")),
    ("name LIKE 'gam%'", lambda r: r["name"] is not None and r["name"].startswith("gam")),
    ("name NOT LIKE 'gam%'", lambda r: not (r["name"] is not None and r["name"].startswith("gam"))),
    ("day >= '2026-01-10'", lambda r: r["day"] >= dt.date(2026, 1, 10)),
    ("at < '2026-01-02T00:00:00+00:00'", lambda r: r["at"] < dt.datetime(2026, 1, 2, tzinfo=UTC)),
    ("amount > 1.5 AND amount <= 2.25", lambda r: Decimal("1.5") < r["amount"] <= Decimal("2.25")),
    (f"u = '{uuid.UUID(int=3)}'", lambda r: r["u"] == uuid.UUID(int=3)),
    ("loc.lat > 8", lambda r: r["loc"] is not None and r["loc"]["lat"] > 8),
    ("loc.lon IS NULL", lambda r: r["loc"] is None),
]


@pytest.fixture
def filter_table(catalog: SqlCatalog) -> Table:
    spec = build_partition_spec(FILTERED, [("day", "at")])
    table = catalog.create_table("db.filters", FILTERED, spec)
    rows = filtered_rows()
    table, _ = append(table, rows[:6])
    table, _ = append(table, rows[6:])
    return table


@pytest.mark.parametrize(("text", "meaning"), FILTERS, ids=[f for f, _ in FILTERS])
def test_filters_follow_the_spec(
    filter_table: Table, spark: SparkSession, text: str, meaning: Callable[[dict[str, Any]], bool]
) -> None:
    # An Iceberg expression (parse: the spec's two-valued text form), not SQL text: a
    # string filter has Spark SQL's meaning instead (tests/actions/test_sql_predicates.py).
    df = read_table(spark, filter_table, filter=parse(text), columns=["id"])
    expected = sorted(r["id"] for r in filtered_rows() if meaning(r))
    assert ids(df) == expected


def test_timestamp_filters_ignore_the_session_time_zone(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "local", TimestampType()),
        NestedField(3, "instant", TimestamptzType()),
    )
    base = dt.datetime(2026, 3, 1, 12)
    rows = [
        {"id": n, "local": base + dt.timedelta(hours=n), "instant": START + dt.timedelta(hours=n)}
        for n in range(4)
    ]
    table, _ = append(catalog.create_table("db.zones", schema), rows)
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        local = read_table(spark, table, filter="local >= '2026-03-01T13:00:00'")
        instant = read_table(spark, table, filter="instant < '2026-01-01T02:00:00+00:00'")
        assert ids(local) == [1, 2, 3]
        assert ids(instant) == [0, 1]
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_projection_and_bytes_filters(filter_table: Table, spark: SparkSession) -> None:
    from icewright.expressions import equal, is_in

    df = read_table(
        spark, filter_table, columns=["loc.lon", "id", "u"], filter=equal("raw", b"\x05")
    )
    assert df.columns == ["id", "u", "loc"]  # schema order, not the order asked for
    assert collect(df) == [{"id": 5, "loc": {"lon": -5.0}, "u": str(uuid.UUID(int=5))}]
    picked = read_table(
        spark, filter_table, filter=is_in("u", [uuid.UUID(int=1), uuid.UUID(int=2)])
    )
    assert ids(picked) == [1, 2]
    with pytest.raises(ValidationError, match="cannot find column 'nope'"):
        read_table(spark, filter_table, filter="nope = 1")
    with pytest.raises(ValidationError, match="nope"):
        read_table(spark, filter_table, columns=["nope"])
    with pytest.raises(ValidationError, match=r"cannot find column 'loc\.nope'"):
        read_table(spark, filter_table, filter="loc.nope = 1")
    with pytest.raises(ValidationError, match=r"Table or a \(TableMetadata, FileIO\) pair"):
        read_table(spark, "db.filters")  # type: ignore[arg-type]


def test_read_plan_reads_a_planned_scan(filter_table: Table, spark: SparkSession) -> None:
    plan = TableScan.of(filter_table).filter("id > 8").select("id", "name").plan()
    df = read_plan(spark, filter_table, plan)
    assert collect(df) == [
        {"id": r["id"], "name": r["name"]} for r in filtered_rows() if r["id"] > 8
    ]


def test_empty_reads_keep_the_schema(
    catalog: SqlCatalog, filter_table: Table, spark: SparkSession
) -> None:
    empty = catalog.create_table("db.empty", FILTERED)
    df = read_table(spark, empty)
    assert df.count() == 0
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        (f.name, f.dataType.simpleString()) for f in to_spark_schema(FILTERED).fields
    ]
    pruned = read_table(spark, filter_table, filter="day > '2030-01-01'", columns=["id", "u"])
    assert pruned.count() == 0 and pruned.columns == ["id", "u"]


# --- schema and partition evolution ----------------------------------------------------------


def test_schema_evolution_between_writes(catalog: SqlCatalog, spark: SparkSession) -> None:
    schema = Schema(
        NestedField(1, "a", LongType(), required=True),
        NestedField(2, "b", LongType()),
        NestedField(3, "c", StringType()),
        NestedField(4, "i", IntegerType()),
        NestedField(5, "f", FloatType()),
        NestedField(6, "pts", ListType(7, StructType(NestedField(8, "x", IntegerType())), False)),
        NestedField(9, "dec", DecimalType(5, 2)),
    )
    table, _ = append(
        catalog.create_table("db.evolve", schema),
        [
            {
                "a": 1,
                "b": 10,
                "c": "x",
                "i": 5,
                "f": 0.5,
                "pts": [{"x": 1}],
                "dec": Decimal("1.25"),
            },
            {"a": 2, "b": 20, "c": "y", "i": 6, "f": None, "pts": [], "dec": None},
        ],
    )
    # swap the names of a and b: a filter on the new "a" must not test the file's "a"
    table = update_schema(table).rename_column("a", "tmp").rename_column("b", "a").commit().table
    u = update_schema(table).rename_column("tmp", "b").add_column("n", StringType())
    u.delete_column("c").move_first("n").update_column("i", LongType())
    u.update_column("f", DoubleType()).update_column("dec", DecimalType(10, 2))
    u.add_column(("pts", "y"), StringType()).rename_column("pts.element.x", "xx")
    table = u.commit().table
    table, _ = append(
        table,
        [
            {
                "b": 3,
                "a": 30,
                "n": "new",
                "i": 2**40,
                "f": 2.5,
                "pts": [{"xx": 9, "y": "q"}],
                "dec": Decimal("12345678.90"),
            }
        ],
    )
    df = read_table(spark, table)
    assert df.columns == ["n", "b", "a", "i", "f", "pts", "dec"]
    assert collect(df, key="b") == [
        {
            "n": None,
            "b": 1,
            "a": 10,
            "i": 5,
            "f": 0.5,
            "pts": [{"xx": 1, "y": None}],
            "dec": Decimal("1.25"),
        },
        {"n": None, "b": 2, "a": 20, "i": 6, "f": None, "pts": [], "dec": None},
        {
            "n": "new",
            "b": 3,
            "a": 30,
            "i": 2**40,
            "f": 2.5,
            "pts": [{"xx": 9, "y": "q"}],
            "dec": Decimal("12345678.90"),
        },
    ]
    # Spark pushes Parquet filters by name: these would skip the wrong row groups
    assert collect(read_table(spark, table, filter="a = 20", columns=["b"]), key="b") == [{"b": 2}]
    assert collect(read_table(spark, table, filter="b = 1", columns=["a"]), key="a") == [{"a": 10}]
    assert collect(read_table(spark, table, filter="n IS NULL", columns=["b"]), key="b") == [
        {"b": 1},
        {"b": 2},
    ]
    assert collect(read_table(spark, table, filter="i > 100", columns=["b"]), key="b") == [{"b": 3}]


def test_only_names_with_one_meaning_reach_parquet_pushdown(
    catalog: SqlCatalog, spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    table, _ = append(catalog.create_table("db.push", SIMPLE), [{"id": 1, "name": "x"}])
    table = update_schema(table).rename_column("name", "label").commit().table
    df = read_table(spark, table, filter="id > 0 AND label = 'x'")
    df.explain()
    plan = capsys.readouterr().out
    pushed = plan[plan.index("PushedFilters:") :].splitlines()[0]
    assert "GreaterThan(id,0)" in pushed  # "id" always meant field 1
    assert "label" not in pushed and "name" not in pushed  # renamed: read as __iw_2
    assert collect(df) == [{"id": 1, "label": "x"}]


def test_partition_evolution(catalog: SqlCatalog, spark: SparkSession) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "region", StringType()),
        NestedField(3, "at", TimestamptzType()),
    )
    spec = build_partition_spec(schema, [("identity", "region")])
    table = catalog.create_table("db.parts", schema, spec)

    def rows(start: int) -> list[dict[str, Any]]:
        return [
            {"id": n, "region": ["eu", "us"][n % 2], "at": START + dt.timedelta(days=n)}
            for n in range(start, start + 4)
        ]

    table, _ = append(table, rows(0))
    table = (
        UpdatePartitionSpec(table)
        .add_field("at", "day")
        .add_field("id", "bucket[2]")
        .commit()
        .table
    )
    table = UpdatePartitionSpec(table).remove_field("region").commit().table
    table, new_files = append(table, rows(4))
    assert {f.spec_id for f in new_files} == {table.metadata.default_spec_id} != {0}
    assert ids(read_table(spark, table)) == list(range(8))
    assert ids(read_table(spark, table, filter="region = 'eu'")) == [0, 2, 4, 6]
    early = read_table(spark, table, filter="at < '2026-01-06T00:00:00+00:00' AND id > 1")
    assert ids(early) == [2, 3, 4]


# --- deletes ---------------------------------------------------------------------------------


def test_position_and_equality_deletes_follow_sequence_numbers(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "region", StringType()),
    )
    spec = build_partition_spec(schema, [("identity", "region")])
    table = catalog.create_table("db.deletes", schema, spec)
    table, files = append(
        table,
        [{"id": n, "name": f"n{n}", "region": "eu"} for n in range(5)]
        + [{"id": 10 + n, "name": f"n{n}", "region": "us"} for n in range(3)],
    )
    eu = next(f for f in files if f.partition == ("eu",))
    us = next(f for f in files if f.partition == ("us",))
    # position deletes, one spelling the data file as a file: URI (Java writes those)
    table = RowDelta(table).add_deletes(position_deletes(table, eu, [1, 3])).commit().table
    table = (
        RowDelta(table)
        .add_deletes(position_deletes(table, us, [0], spelled="file://" + us.file_path))
        .commit()
        .table
    )
    assert ids(read_table(spark, table)) == [0, 2, 4, 11, 12]

    # an equality delete on (name) in partition eu: applies to older eu data only
    eq = equality_deletes(
        table, {"name": (2, pa.string(), ["n2", "n1"])}, partition=("eu",), spec_id=0
    )
    table = RowDelta(table).add_deletes(eq).commit().table
    assert ids(read_table(spark, table)) == [0, 4, 11, 12]  # us's n1 and n2 stay
    # data added later with a deleted value survives (its sequence number is higher)
    table, _ = append(table, [{"id": 20, "name": "n2", "region": "eu"}])
    # in one commit: a position delete applies to the new file, an equality delete does not
    new_rows = write_data_files(
        table.io,
        table.metadata,
        rows_to_arrow(
            schema,
            [{"id": 30, "name": "x", "region": "eu"}, {"id": 31, "name": "y", "region": "eu"}],
        ),
    )
    (new_file,) = new_rows
    same = RowDelta(table).add_rows(new_file)
    same.add_deletes(position_deletes(table, new_file, [0]))
    same.add_deletes(equality_deletes(table, {"name": (2, pa.string(), ["y"])}, partition=("eu",)))
    table = same.commit().table
    assert ids(read_table(spark, table)) == [0, 4, 11, 12, 20, 31]
    # deletes apply to columns that are not selected, and with a filter
    assert collect(read_table(spark, table, columns=["name"], filter="region = 'eu'"), "name") == [
        {"name": "n0"},
        {"name": "n2"},
        {"name": "n4"},
        {"name": "y"},
    ]


def test_equality_deletes_match_nulls_and_dropped_columns(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "k", StringType()),
        NestedField(3, "v", LongType()),
    )
    table, _ = append(
        catalog.create_table("db.eqnull", schema),
        [{"id": 1, "k": None, "v": 1}, {"id": 2, "k": "a", "v": None}, {"id": 3, "k": "a", "v": 3}],
    )
    eq = equality_deletes(table, {"k": (2, pa.string(), [None]), "v": (3, pa.int64(), [1])})
    table = RowDelta(table).add_deletes(eq).commit().table
    assert ids(read_table(spark, table)) == [2, 3]  # null matches null
    eq2 = equality_deletes(table, {"k": (2, pa.string(), ["a"]), "v": (3, pa.int64(), [None])})
    table = RowDelta(table).add_deletes(eq2).commit().table
    table = update_schema(table).delete_column("v").commit().table
    assert collect(read_table(spark, table)) == [{"id": 3, "k": "a"}]


def test_equality_deletes_on_a_nested_column(catalog: SqlCatalog, spark: SparkSession) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "key", StructType(NestedField(3, "k", StringType()))),
    )
    table, _ = append(
        catalog.create_table("db.eqnested", schema),
        [{"id": 1, "key": {"k": "a"}}, {"id": 2, "key": {"k": "b"}}, {"id": 3, "key": None}],
    )
    assert table.metadata.schema().find_field("key.k").field_id == 3
    # the delete file keeps the struct, as writers project the table schema
    key_type = pa.struct([_field("k", pa.string(), 3, nullable=True)])
    data = pa.table(
        {"key": [{"k": "b"}, None]},
        schema=pa.schema([_field("key", key_type, 2, nullable=True)]),
    )
    path, size = _put(table, data, "eq")
    delete = DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.EQUALITY_DELETES,
        record_count=2,
        file_size_in_bytes=size,
        partition=(),
        spec_id=0,
        equality_ids=(3,),
    )
    table = RowDelta(table).add_deletes(delete).commit().table
    # key.k = 'b' goes; a null struct has a null key.k, which the null delete row matches
    assert ids(read_table(spark, table)) == [1]


def test_unsupported_delete_formats_are_refused(catalog: SqlCatalog, spark: SparkSession) -> None:
    table, (f,) = append(catalog.create_table("db.orc", SIMPLE), [{"id": 1, "name": "a"}])
    orc = dataclasses.replace(position_deletes(table, f, [0]), file_format=FileFormat.ORC)
    table = RowDelta(table).add_deletes(orc).commit().table
    with pytest.raises(ValidationError, match="ORC"):
        read_table(spark, table)


# --- files without field ids, initial defaults -----------------------------------------------


def test_name_mapping_reads_files_without_field_ids(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "name", StringType()),
        NestedField(3, "extra", StringType()),
    )
    table = catalog.create_table("db.mapped", schema)
    foreign = pa.table({"ID_OLD": [5, 6], "nm": ["five", "six"], "other": [1, 2]})
    path, size = _put(table, foreign, "imported")
    imported = DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        content=FileContent.DATA,
        record_count=2,
        file_size_in_bytes=size,
        partition=(),
        spec_id=0,
    )
    table = fast_append(table, [imported]).table
    # without a name mapping there is no way to find its columns: Spark refuses the file
    with pytest.raises(Exception, match="doesn't contain any field Ids"):
        read_table(spark, table).collect()
    mapping = [
        {"field-id": 1, "names": ["id", "ID_OLD"]},
        {"field-id": 2, "names": ["name", "nm"]},
        {"field-id": 3, "names": ["extra"]},
    ]
    table = (
        UpdateProperties(table)
        .set("schema.name-mapping.default", json.dumps(mapping))
        .commit()
        .table
    )
    table, _ = append(table, [{"id": 7, "name": "seven", "extra": "e"}])
    assert collect(read_table(spark, table)) == [
        {"id": 5, "name": "five", "extra": None},
        {"id": 6, "name": "six", "extra": None},
        {"id": 7, "name": "seven", "extra": "e"},
    ]
    assert collect(read_table(spark, table, filter="name = 'six'", columns=["id"])) == [{"id": 6}]


def test_initial_defaults_fill_files_written_before_the_column(
    catalog: SqlCatalog, spark: SparkSession
) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StructType(NestedField(3, "x", IntegerType()))),
    )
    table, _ = append(
        catalog.create_table("db.defaults", schema),
        [{"id": 1, "s": {"x": 1}}, {"id": 2, "s": None}],
    )
    u = update_schema(table).add_column("d", IntegerType()).add_column(("s", "y"), StringType())
    table = u.add_column("b", BinaryType()).commit().table
    table, _ = append(
        table,
        [
            {"id": 3, "s": {"x": 3, "y": None}, "d": None, "b": None},
            {"id": 4, "s": {"x": 4, "y": "z"}, "d": 7, "b": b"\x01"},
        ],
    )
    # v3 initial defaults (JSON single values, spec Appendix D); icewright writes v2 tables,
    # so the defaults are put into the metadata the reader is given
    defaults = {"d": 42, "y": "dflt", "b": "cafe"}

    def with_default(f: NestedField) -> NestedField:
        t = f.field_type
        if isinstance(t, StructType):
            t = StructType(*(with_default(g) for g in t.fields))
        d = defaults.get(f.name)
        return dataclasses.replace(f, field_type=t, initial_default=d, write_default=d)

    current = table.metadata.schema()
    evolved = Schema(*(with_default(f) for f in current.fields), schema_id=current.schema_id)
    metadata = dataclasses.replace(
        table.metadata,
        format_version=3,
        next_row_id=0,
        schemas=tuple(
            evolved if s.schema_id == current.schema_id else s for s in table.metadata.schemas
        ),
    )
    got = collect(read_table(spark, (metadata, table.io)))
    assert got == [
        {"id": 1, "s": {"x": 1, "y": "dflt"}, "d": 42, "b": b"\xca\xfe"},
        {"id": 2, "s": None, "d": 42, "b": b"\xca\xfe"},  # a null struct stays null
        {"id": 3, "s": {"x": 3, "y": None}, "d": None, "b": None},  # written nulls stay
        {"id": 4, "s": {"x": 4, "y": "z"}, "d": 7, "b": b"\x01"},
    ]
    assert ids(read_table(spark, (metadata, table.io), filter="d = 42")) == [1, 2]


# --- Iceberg Java wrote it -------------------------------------------------------------------

JAVA_ROWS = [
    (n, ["eu", "us"][n % 2], Decimal(n) + Decimal("0.25"), START + dt.timedelta(hours=n))
    for n in range(1, 9)
]


def _micros(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


@pytest.mark.slow
@pytest.mark.interop
def test_java_merge_on_read_table(spark: SparkSession, tmp_path: Path) -> None:
    from tests.support.java import IcebergJava, ensure_java_env, step_insert, step_sql

    ensure_java_env()
    java = IcebergJava()
    warehouse = tmp_path / "java-warehouse"
    with java.batch() as batch:
        write = batch.write_table(
            warehouse,
            "db.mor",
            "id bigint, region string, amount decimal(10,2), at timestamp",
            partitioned_by=["region"],
            properties={
                "format-version": "2",
                "write.delete.mode": "merge-on-read",
                "write.update.mode": "merge-on-read",
            },
            steps=[
                step_insert(JAVA_ROWS),
                step_sql("DELETE FROM {table} WHERE id IN (2, 5)"),
                step_sql("UPDATE {table} SET amount = amount + 100 WHERE id = 3"),
                step_sql("ALTER TABLE {table} RENAME COLUMN amount TO value"),
                step_sql(
                    "INSERT INTO {table} VALUES (9, 'eu', 1.50, TIMESTAMP '2026-02-01 00:00:00')"
                ),
                step_sql("DELETE FROM {table} WHERE region = 'us' AND id > 6"),
            ],
        )
        scan = batch.scan(warehouse=warehouse, table="db.mor")
    result = write.value
    io = LocalFileIO()
    metadata = read_table_metadata(io, result["metadata_location"])
    summary = metadata.current_snapshot().summary  # type: ignore[union-attr]
    assert int(summary["total-position-deletes"]) >= 3  # merge-on-read: real delete files

    def as_tuples(df: DataFrame) -> list[tuple[Any, ...]]:
        rows = df.withColumn("at", F.unix_micros("at")).collect()
        return sorted((r.id, r.region, r.value, r.at) for r in rows)

    java_rows = sorted((i, r, v, _micros(a)) for i, r, v, a in scan.value.rows)
    assert as_tuples(read_table(spark, (metadata, io))) == java_rows
    assert [r[0] for r in java_rows] == [1, 3, 4, 6, 8, 9]
    # time travel to the insert: every row, before the deletes
    inserted = result["states"][1]["snapshot_id"]
    old = read_table(spark, (metadata, io), snapshot_id=inserted)
    rows = sorted(
        (r.id, r.region, r.amount, _micros(r.at.replace(tzinfo=UTC)))
        for r in old.withColumn("at", F.to_utc_timestamp("at", "UTC")).collect()
    )
    assert rows == sorted((i, g, a, _micros(t)) for i, g, a, t in JAVA_ROWS)
    filtered = read_table(spark, (metadata, io), filter="value > 100 OR id = 9", columns=["id"])
    assert ids(filtered) == [3, 9]


# --- the same read on pyspark 3.5 ------------------------------------------------------------

SPARK35_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from icewright.io import LocalFileIO
    from icewright.spec.table_metadata import TableMetadata
    from icewright.spark.read import read_table

    path, out = sys.argv[1], sys.argv[2]
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    with open(path, "rb") as f:
        metadata = TableMetadata.from_json(f.read())
    source = (metadata, LocalFileIO())
    def rows(df):
        return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
                      for r in df.collect())
    result = {
        "version": spark.version,
        "all": rows(read_table(spark, source)),
        "filtered": rows(read_table(spark, source, filter="a = 20 OR i > 100", columns=["b"])),
        "nested_vectorized": spark.conf.get(
            "spark.sql.parquet.enableNestedColumnVectorizedReader"),
    }
    with open(out, "w") as f:
        json.dump(result, f)
    """
)


@pytest.mark.slow
def test_same_read_on_pyspark_35(
    catalog: SqlCatalog, spark: SparkSession, spark35: Spark35, tmp_path: Path
) -> None:
    schema = Schema(
        NestedField(1, "a", LongType(), required=True),
        NestedField(2, "b", LongType()),
        NestedField(3, "i", IntegerType()),
        NestedField(4, "pts", ListType(5, StructType(NestedField(6, "x", IntegerType())), False)),
    )
    table, (f,) = append(
        catalog.create_table("db.s35", schema),
        [
            {"a": 1, "b": 10, "i": 5, "pts": [{"x": 1}]},
            {"a": 2, "b": 20, "i": 6, "pts": []},
            {"a": 3, "b": 30, "i": 7, "pts": None},
        ],
    )
    table = RowDelta(table).add_deletes(position_deletes(table, f, [2])).commit().table
    table = update_schema(table).rename_column("a", "tmp").rename_column("b", "a").commit().table
    u = update_schema(table).rename_column("tmp", "b").update_column("i", LongType())
    table = (
        u.rename_column("pts.element.x", "xx").add_column(("pts", "y"), StringType()).commit().table
    )
    table, _ = append(table, [{"b": 4, "a": 40, "i": 2**40, "pts": [{"xx": 9, "y": "q"}]}])

    out = tmp_path / "out.json"
    done = spark35.run(
        SPARK35_SCRIPT, [table.metadata_location, str(out)], cwd=tmp_path, name="read35.py"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["version"].startswith("3.5")

    def rows(df: DataFrame) -> list[str]:
        return sorted(
            json.dumps(r.asDict(recursive=True), sort_keys=True, default=str) for r in df.collect()
        )

    expected_all = [
        {"b": 1, "a": 10, "i": 5, "pts": [{"xx": 1, "y": None}]},
        {"b": 2, "a": 20, "i": 6, "pts": []},
        {"b": 4, "a": 40, "i": 2**40, "pts": [{"xx": 9, "y": "q"}]},
    ]
    assert result["all"] == sorted(json.dumps(r, sort_keys=True) for r in expected_all)
    assert result["all"] == rows(read_table(spark, table))  # and Spark 4 agrees
    assert result["filtered"] == sorted(json.dumps({"b": b}) for b in (2, 4))
    # the renamed struct field inside the list needs Spark 3.5's row-based nested reader
    assert result["nested_vectorized"] == "false"
