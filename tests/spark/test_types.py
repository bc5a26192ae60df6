"""Iceberg <-> Spark schemas, and aligning a source DataFrame to a table schema."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from decimal import Decimal
from typing import Any

import pytest
from pyiceberg.schema import Schema as PyIcebergSchema
from pyiceberg.schema import assign_fresh_schema_ids
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.catalog import SqlCatalog
from icewright.commit.schema_update import update_schema
from icewright.errors import ValidationError
from icewright.spark.types import (
    FIELD_ID_KEY,
    align_columns,
    has_time_type,
    schema_from_spark,
    to_spark_schema,
    write_spark_type,
)
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

NESTED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(
        2,
        "loc",
        StructType(
            NestedField(3, "lat", DoubleType(), required=True), NestedField(4, "city", StringType())
        ),
        doc="where",
    ),
    NestedField(5, "tags", ListType(6, StringType(), element_required=False)),
    NestedField(
        7,
        "attrs",
        MapType(8, StringType(), 9, StructType(NestedField(10, "v", IntegerType())), False),
    ),
    NestedField(11, "u", UUIDType()),
    NestedField(12, "f", FixedType(3)),
)


def _ids(data_type: T.DataType) -> list[int]:
    out: list[int] = []
    if isinstance(data_type, T.StructType):
        for f in data_type.fields:
            out.append(f.metadata[FIELD_ID_KEY])
            out += _ids(f.dataType)
    elif isinstance(data_type, T.ArrayType):
        out += _ids(data_type.elementType)
    elif isinstance(data_type, T.MapType):
        out += _ids(data_type.keyType) + _ids(data_type.valueType)
    return out


def test_spark_schema_carries_every_struct_field_id() -> None:
    spark_schema = to_spark_schema(NESTED)
    # Lists and maps have no StructField for their element/key/value in Spark.
    assert _ids(spark_schema) == [1, 2, 3, 4, 5, 7, 10, 11, 12]
    loc = spark_schema["loc"]
    assert loc.metadata["comment"] == "where"
    assert not spark_schema["id"].nullable and spark_schema["loc"].nullable
    assert not loc.dataType["lat"].nullable
    assert spark_schema["tags"].dataType == T.ArrayType(T.StringType(), True)
    assert spark_schema["u"].dataType == T.StringType()  # as Iceberg's Spark integration
    assert write_spark_type(UUIDType()) == T.BinaryType()  # the job carries the 16 bytes
    assert spark_schema["f"].dataType == T.BinaryType()


def test_spark_schema_survives_a_dataframe(spark: SparkSession) -> None:
    df = spark.createDataFrame([], to_spark_schema(NESTED))
    assert _ids(df.schema) == [1, 2, 3, 4, 5, 7, 10, 11, 12]


@pytest.mark.parametrize(
    ("iceberg", "spark_type"),
    [
        (BooleanType(), T.BooleanType()),
        (IntegerType(), T.IntegerType()),
        (LongType(), T.LongType()),
        (FloatType(), T.FloatType()),
        (DoubleType(), T.DoubleType()),
        (DecimalType(38, 10), T.DecimalType(38, 10)),
        (DateType(), T.DateType()),
        (TimestampType(), T.TimestampNTZType()),
        (TimestamptzType(), T.TimestampType()),
        (StringType(), T.StringType()),
        (BinaryType(), T.BinaryType()),
    ],
)
def test_primitive_types_round_trip(iceberg: Any, spark_type: T.DataType) -> None:
    schema = Schema(NestedField(1, "c", iceberg))
    assert to_spark_schema(schema)["c"].dataType == spark_type
    assert schema_from_spark(T.StructType([T.StructField("c", spark_type)])).find_type(1) == iceberg


def test_time_maps_to_spark_time_where_spark_has_it() -> None:
    schema = Schema(NestedField(1, "t", TimeType()))
    if has_time_type():
        assert to_spark_schema(schema)["t"].dataType == T.TimeType(6)
        back = schema_from_spark(T.StructType([T.StructField("t", T.TimeType(6))]))
        assert back.find_type(1) == TimeType()
    else:
        with pytest.raises(ValidationError, match="time"):
            to_spark_schema(schema)


def test_types_spark_cannot_carry_are_refused() -> None:
    with pytest.raises(ValidationError, match="nanosecond"):
        to_spark_schema(Schema(NestedField(1, "ns", TimestampNsType())))
    interval = T.StructType([T.StructField("i", T.DayTimeIntervalType())])
    with pytest.raises(ValidationError, match="interval"):
        schema_from_spark(interval)


def test_fresh_ids_follow_java_assign_fresh_ids() -> None:
    spark_schema = T.StructType(
        [
            T.StructField("a", T.LongType(), False),
            T.StructField(
                "s",
                T.StructType(
                    [
                        T.StructField(
                            "x", T.ArrayType(T.StructType([T.StructField("q", T.IntegerType())]))
                        ),
                        T.StructField("y", T.MapType(T.StringType(), T.DoubleType(), False)),
                    ]
                ),
            ),
            T.StructField("b", T.StringType(), True, {"comment": "bee"}),
        ]
    )
    ours = schema_from_spark(spark_schema)
    # pyiceberg's independent assign_fresh_schema_ids renumbers the same structure.
    theirs = assign_fresh_schema_ids(
        PyIcebergSchema.model_validate_json(json.dumps(ours.to_json()))
    )
    assert json.loads(theirs.model_dump_json())["fields"] == ours.to_json()["fields"]
    assert ours.find_field("a").required and not ours.find_field("b").required
    assert ours.find_field("b").doc == "bee"
    assert ours.highest_field_id == 9
    relaxed = schema_from_spark(spark_schema, required_as_nullable=True)
    assert not relaxed.find_field("a").required


# --- alignment --------------------------------------------------------------------


TABLE = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "score", DoubleType()),
    NestedField(3, "amount", DecimalType(12, 2)),
    NestedField(4, "name", StringType()),
    NestedField(
        5,
        "point",
        StructType(NestedField(6, "x", LongType(), required=True), NestedField(7, "y", LongType())),
    ),
)


def _frame(spark: SparkSession, ddl: str, rows: list[tuple[Any, ...]]) -> Any:
    return spark.createDataFrame(rows, ddl)


def test_align_widens_reorders_and_fills(spark: SparkSession) -> None:
    df = _frame(
        spark,
        "point struct<y: int, x: int>, name string, amount decimal(10,2), id int, score float",
        [((2, 1), "a", Decimal("1.25"), 7, 0.5)],
    )
    aligned = align_columns(df.schema, TABLE)
    out = df.select(*aligned.columns)
    assert out.columns == ["id", "score", "amount", "name", "point"]
    assert [f.dataType for f in out.schema.fields] == [
        T.LongType(),
        T.DoubleType(),
        T.DecimalType(12, 2),
        T.StringType(),
        T.StructType(
            [T.StructField("x", T.LongType(), True), T.StructField("y", T.LongType(), True)]
        ),
    ]
    row = out.collect()[0]
    assert (row.id, row.score, row.amount, row.point.x, row.point.y) == (
        7,
        0.5,
        Decimal("1.25"),
        1,
        2,
    )
    assert aligned.added == () and aligned.schema is TABLE


def test_align_fills_missing_optional_columns_with_null(spark: SparkSession) -> None:
    df = _frame(spark, "ID long", [(1,)])  # names match case-insensitively
    out = df.select(*align_columns(df.schema, TABLE).columns).collect()[0]
    assert out.asDict() == {"id": 1, "score": None, "amount": None, "name": None, "point": None}


@pytest.mark.parametrize(
    ("ddl", "column", "words"),
    [
        ("id long, score string", "score", "string"),
        ("id long, amount decimal(12,3)", "amount", "decimal(12,3)"),
        ("id long, amount decimal(14,2)", "amount", "decimal(14,2)"),
        ("id long, amount double", "amount", "double"),
        ("id double", "id", "double"),
        ("id long, name binary", "name", "binary"),
        ("id long, point struct<x: string>", "point.x", "string"),
    ],
)
def test_align_refuses_unsafe_casts(spark: SparkSession, ddl: str, column: str, words: str) -> None:
    df = _frame(spark, ddl, [])
    with pytest.raises(
        ValidationError, match=rf"'{column}' is {words.replace('(', '[(]').replace(')', '[)]')}"
    ):
        align_columns(df.schema, TABLE)


def test_align_refuses_date_to_timestamp_and_zone_changes(spark: SparkSession) -> None:
    table = Schema(NestedField(1, "ts", TimestampType()), NestedField(2, "tz", TimestamptzType()))
    df = _frame(spark, "ts date, tz timestamp_ntz", [])
    with pytest.raises(ValidationError) as info:
        align_columns(df.schema, table)
    assert "'ts' is date" in str(info.value) and "'tz' is timestamp_ntz" in str(info.value)


def test_align_names_missing_required_and_extra_columns(spark: SparkSession) -> None:
    df = _frame(spark, "score double, colour string, point struct<y: long, z: long>", [])
    with pytest.raises(ValidationError) as info:
        align_columns(df.schema, TABLE)
    message = str(info.value)
    assert "['id', 'point.x']" in message  # the required ones, nested too
    assert "['point.z', 'colour']" in message


def test_align_with_evolution_matches_update_schema_ids(
    spark: SparkSession, sqlite_catalog: SqlCatalog
) -> None:
    table = sqlite_catalog.create_table("db.t", TABLE)
    table = update_schema(table).delete_column("name").commit().table  # last-column-id stays 7
    base = table.metadata.schema()
    df = _frame(
        spark,
        "id long, colour string,"
        " point struct<x: long, z: array<struct<p: int, q: map<string, int>>>>,"
        " extra struct<k: int>",
        [(1, "red", (2, [(3, {"a": 4})]), (5,))],
    )
    aligned = align_columns(
        df.schema, base, allow_evolution=True, last_column_id=table.metadata.last_column_id
    )
    # Listed in the order their ids were drawn (a struct's own columns first).
    assert [(a.parent, a.field.name) for a in aligned.added] == [
        (("point",), "z"),
        ((), "colour"),
        ((), "extra"),
    ]
    assert min(a.field.field_id for a in aligned.added) == 8  # never reuses dropped id 4
    update = update_schema(table)
    for added in aligned.added:
        update.add_column((*added.parent, added.field.name), added.field.field_type)
    committed = update.commit().table.metadata.schema()
    assert committed.as_struct() == aligned.schema.as_struct()
    out = df.select(*aligned.columns).collect()[0]
    assert out.colour == "red" and out.point.z[0].q == {"a": 4} and out.extra.k == 5


def test_align_parses_uuid_strings_and_keeps_binary(spark: SparkSession) -> None:
    table = Schema(NestedField(1, "u", UUIDType()), NestedField(2, "raw", UUIDType()))
    text = "F79C3E09-677C-4BBD-A479-3F349CB785E7"
    df = spark.createDataFrame([(text, bytearray(16))], "u string, raw binary")
    row = df.select(*align_columns(df.schema, table).columns).collect()[0]
    assert bytes(row.u).hex() == text.replace("-", "").lower()
    assert bytes(row.raw) == bytes(16)


def test_align_uses_write_defaults(spark: SparkSession) -> None:
    table = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "kind", StringType(), required=True, initial_default="a", write_default="b"),
        NestedField(3, "day", DateType(), write_default="2024-02-29"),
    )
    df = spark.range(1)
    row = df.select(*align_columns(df.schema, table).columns).collect()[0]
    assert row.kind == "b" and str(row.day) == "2024-02-29"


def test_align_accepts_untyped_nulls(spark: SparkSession) -> None:
    df = spark.range(1).select(F.col("id"), F.lit(None).alias("name"))
    out = df.select(*align_columns(df.schema, TABLE).columns)
    assert out.schema["name"].dataType == T.StringType()


def test_import_without_pyspark_names_the_extra() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pyspark"] = None  # as if PySpark were not installed
        from icewright.errors import MissingDependency
        try:
            import icewright.spark
        except MissingDependency as e:
            print("MISSING", e)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("MISSING") and "icewright[spark]" in out.stdout


def test_timestamp_literal_ignores_the_session_time_zone(spark: Any) -> None:
    from icewright.spark.types import literal
    from icewright.spec.types import TimestampType

    micros = 1_577_836_800_000_001  # 2020-01-01 00:00:00.000001
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        row = spark.range(1).select(literal(TimestampType(), micros).alias("t")).first()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert row is not None
    assert str(row["t"]) == "2020-01-01 00:00:00.000001"
