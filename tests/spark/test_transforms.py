"""Every partition transform computed by Spark equals the spec's (``Transform.apply``)."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import mmh3
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import ReadOnlyDatabase
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.spark.transforms import (
    TransformColumn,
    bucket_arrow,
    murmur3_arrow,
    transform_column,
    with_transform_columns,
)
from icewright.spark.types import has_time_type, write_spark_type
from icewright.spec.transforms import BucketTransform, Transform, parse_transform
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

EPOCH = dt.datetime(1970, 1, 1)
UTC = dt.UTC
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
# Years 0001..9999: what both Python's datetime and Spark represent.
MIN_DAY, MAX_DAY = -719_162, 2_932_896
MIN_US, MAX_US = MIN_DAY * 86_400_000_000, (MAX_DAY + 1) * 86_400_000_000 - 1

SETTINGS = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _to_spark(t: IcebergType, v: Any) -> Any:
    """An icewright Python value as PySpark takes it for write_spark_type(t)."""
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
        return bytearray(v.bytes)
    if isinstance(t, FixedType | BinaryType):
        return bytearray(v)
    return v


def _from_spark(result_type: IcebergType, v: Any) -> Any:
    if v is None:
        return None
    if isinstance(result_type, DateType):
        return (v - dt.date(1970, 1, 1)).days
    if isinstance(v, bytearray | bytes):
        return uuid.UUID(bytes=bytes(v)) if isinstance(result_type, UUIDType) else bytes(v)
    return v


Example = tuple[list[Any], list[Transform]]
"""One example of a property: values of the type, and the transforms to compare."""
Check = Callable[[list[Any], list[Transform]], None]


def _check(
    spark: SparkSession, t: IcebergType, values: list[Any], transforms: list[Transform]
) -> None:
    """Run every transform in one Spark job and compare with Transform.apply."""
    _check_examples(spark, t, [(values, transforms)])


def _check_examples(spark: SparkSession, t: IcebergType, examples: list[Example]) -> None:
    """Run every example's transforms in one Spark job and compare, example by example,
    each of its values under each of its transforms with Transform.apply."""
    usable = [[tr for tr in transforms if tr.can_transform(t)] for _, transforms in examples]
    distinct = list(dict.fromkeys(tr for transforms in usable for tr in transforms))
    schema = T.StructType(
        [
            T.StructField("example", T.IntegerType()),
            T.StructField("row", T.IntegerType()),
            T.StructField("v", write_spark_type(t)),
        ]
    )
    data = [
        (e, i, _to_spark(t, v))
        for e, (values, _) in enumerate(examples)
        for i, v in enumerate(values)
    ]
    df = spark.createDataFrame(data, schema)
    # A transform sees the values of the examples that have it (null elsewhere): values
    # are drawn for their example's transforms (test_int keeps clear of overflow by its
    # own widths). One Column per set of examples: its buckets share one hash.
    users: dict[Transform, set[int]] = {}
    for e, transforms in enumerate(usable):
        for tr in transforms:
            users.setdefault(tr, set()).add(e)
    sources: dict[frozenset[int], Column] = {}
    for tr in distinct:
        which = frozenset(users[tr])
        if which not in sources:
            every = len(which) == len(examples)
            sources[which] = (
                F.col("v") if every else F.when(F.col("example").isin(sorted(which)), F.col("v"))
            )
    columns = [
        TransformColumn(f"x{i}", tr, t, sources[frozenset(users[tr])])
        for i, tr in enumerate(distinct)
    ]
    name = {c.transform: c.name for c in columns}
    # Timestamps are compared as their transforms only (collecting them needs a local zone).
    timelike = isinstance(t, TimestampType | TimestamptzType | TimeType)
    kept = [c.name for c in columns if not (timelike and c.transform.result_type(t) == t)]
    rows = with_transform_columns(df, columns).select("example", "row", *kept).collect()
    by_example: dict[int, list[Any]] = {}
    for row in rows:
        by_example.setdefault(row["example"], []).append(row)
    for e, (values, _) in enumerate(examples):
        assert len(by_example.get(e, [])) == len(values)
        for row in by_example.get(e, []):
            value = values[row["row"]]
            for tr in usable[e]:
                if name[tr] not in kept:
                    continue
                expected = tr.apply(t, value)
                got = _from_spark(tr.result_type(t), row[name[tr]])
                assert got == expected, (tr, t, value, got, expected)


def _in_one_job(
    spark: SparkSession,
    t: IcebergType,
    example: Callable[..., None],
    **strategies: st.SearchStrategy[Any],
) -> None:
    """The property ``example(check, **drawn)`` over SETTINGS.max_examples examples drawn
    from ``strategies``, every example checked by one Spark job.

    A Spark job costs about as much for one example as for all of them, so hypothesis
    first draws the examples and only collects them (``check`` records the values and
    transforms), then one job checks each example as :func:`_check` would. If that
    fails (an assertion, or an error from Spark), hypothesis runs again with the same
    seed, each example now checked by its own job: the same examples come again, and
    hypothesis finds, shrinks and reports the failing one as it always did. The
    collecting run reads hypothesis's database without changing it, so a failure saved
    there is collected too.
    """
    examples: list[Example] = []
    run_seed = random.SystemRandom().getrandbits(64)
    db = settings.default.database
    collecting = settings(SETTINGS, database=None if db is None else ReadOnlyDatabase(db))
    seed(run_seed)(collecting(given(**strategies)(example)))(
        lambda values, transforms: examples.append((values, transforms))
    )
    assert len(examples) >= SETTINGS.max_examples
    try:
        _check_examples(spark, t, examples)
    except Exception:
        checking = seed(run_seed)(SETTINGS(given(**strategies)(example)))
        checking(lambda values, transforms: _check(spark, t, values, transforms))
        raise


def _transforms(widths: list[int], buckets: list[int]) -> list[Transform]:
    out = [parse_transform(n) for n in ("identity", "year", "month", "day", "hour", "void")]
    out += [parse_transform(f"truncate[{w}]") for w in widths]
    out += [parse_transform(f"bucket[{n}]") for n in buckets]
    return out


WIDTHS = st.lists(st.integers(1, 300), min_size=1, max_size=3)
BUCKETS = st.lists(st.integers(1, 2**31 - 1), min_size=1, max_size=3)


def _values(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.one_of(st.none(), strategy), min_size=1, max_size=40)


def test_int(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], widths: list[int], buckets: list[int]) -> None:
        # Truncation below the type's minimum overflows in every implementation: keep clear.
        values = [v if v is None or v - max(widths) > INT_MIN else v + max(widths) for v in values]
        check([*values, 0, -1, 1, -5, 34], _transforms(widths, buckets))

    _in_one_job(
        spark,
        IntegerType(),
        example,
        values=_values(st.integers(INT_MIN, INT_MAX)),
        widths=WIDTHS,
        buckets=BUCKETS,
    )


def test_long(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], widths: list[int], buckets: list[int]) -> None:
        check([*values, 0, -1, 34, LONG_MAX], _transforms(widths, buckets))

    _in_one_job(
        spark,
        LongType(),
        example,
        values=_values(st.integers(LONG_MIN + 2**31, LONG_MAX)),
        widths=WIDTHS,
        buckets=BUCKETS,
    )


def test_date(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        edges = [0, -1, 1, -365, -366, 17_486]  # 17_486 is 2017-11-16 (Appendix B)
        check([*values, *edges], _transforms([1], buckets))

    _in_one_job(
        spark, DateType(), example, values=_values(st.integers(MIN_DAY, MAX_DAY)), buckets=BUCKETS
    )


TIMESTAMP_EDGES = [0, -1, 1, -3_600_000_000, -86_400_000_001, 1_510_871_468_000_000]


def test_timestamptz(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        check([*values, *TIMESTAMP_EDGES], _transforms([1], buckets))

    _in_one_job(
        spark,
        TimestamptzType(),
        example,
        values=_values(st.integers(MIN_US, MAX_US)),
        buckets=BUCKETS,
    )


def test_timestamp(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        check([*values, *TIMESTAMP_EDGES], _transforms([1], buckets))

    _in_one_job(
        spark,
        TimestampType(),
        example,
        values=_values(st.integers(MIN_US, MAX_US)),
        buckets=BUCKETS,
    )


@pytest.mark.skipif(not has_time_type(), reason="Spark before 4.1 has no TIME type")
def test_time(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        check([*values, 0, 81_068_000_000], _transforms([1], buckets))

    _in_one_job(
        spark,
        TimeType(),
        example,
        values=_values(st.integers(0, 86_400_000_000 - 1)),
        buckets=BUCKETS,
    )


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30
)  # any code point: multi-byte, astral, NUL


def test_string(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], widths: list[int], buckets: list[int]) -> None:
        edges = ["", "iceberg", "héllo wörld", "😀x😀", "ab\x00c"]
        check([*values, *edges], _transforms([*widths, 1, 2], buckets))

    _in_one_job(spark, StringType(), example, values=_values(TEXT), widths=WIDTHS, buckets=BUCKETS)


def test_binary(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], widths: list[int], buckets: list[int]) -> None:
        check([*values, b"", b"\x00\x01\x02\x03"], _transforms(widths, buckets))

    _in_one_job(
        spark,
        BinaryType(),
        example,
        values=_values(st.binary(max_size=40)),
        widths=WIDTHS,
        buckets=BUCKETS,
    )


def test_fixed(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        check(values, _transforms([1], buckets))

    _in_one_job(
        spark,
        FixedType(5),
        example,
        values=_values(st.binary(min_size=5, max_size=5)),
        buckets=BUCKETS,
    )


def test_uuid(spark: SparkSession) -> None:
    def example(check: Check, values: list[Any], buckets: list[int]) -> None:
        check(values, _transforms([1], buckets))

    _in_one_job(spark, UUIDType(), example, values=_values(st.uuids()), buckets=BUCKETS)


def _decimal(unscaled: int, scale: int) -> Decimal:
    # Exact: the default context would round 38 digits to 28.
    return Decimal(unscaled).scaleb(-scale, context=decimal.Context(prec=60))


@pytest.mark.parametrize(("precision", "scale"), [(9, 2), (18, 0), (38, 10)])
def test_decimal(spark: SparkSession, precision: int, scale: int) -> None:
    t = DecimalType(precision, scale)

    def example(check: Check, unscaled: list[Any], widths: list[int], buckets: list[int]) -> None:
        values = [None if u is None else _decimal(u, scale) for u in unscaled]
        edges = [_decimal(u, scale) for u in (0, -1, 1, 127, 128, -128, -129, 1420)]
        check([*values, *edges], _transforms(widths, buckets))

    _in_one_job(
        spark,
        t,
        example,
        unscaled=_values(st.integers(-(10**precision) + 10**6, 10**precision - 1)),
        widths=WIDTHS,
        buckets=BUCKETS,
    )


# --- Appendix B: the spec's hash vectors -------------------------------------------------

APPENDIX_B: list[tuple[IcebergType, Any, int]] = [
    (IntegerType(), 34, 2017239379),
    (LongType(), 34, 2017239379),
    (DecimalType(4, 2), Decimal("14.20"), -500754589),
    (DateType(), 17_486, -653330422),  # 2017-11-16
    (TimeType(), 81_068_000_000, -662762989),  # 22:31:08
    (TimestampType(), 1_510_871_468_000_000, -2047944441),  # 2017-11-16T22:31:08
    (TimestamptzType(), 1_510_871_468_000_000, -2047944441),  # 2017-11-16T14:31:08-08:00
    (StringType(), "iceberg", 1210000089),
    (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (FixedType(4), b"\x00\x01\x02\x03", -188683207),
    (BinaryType(), b"\x00\x01\x02\x03", -188683207),
]


# bucket[2^31 - 1] keeps the masked hash itself (it is never 2^31 - 1 here).
APPENDIX_B_BUCKETS = [INT_MAX, 16, 1000]


@pytest.fixture(scope="module")
def appendix_b_buckets(spark: SparkSession) -> dict[tuple[str, str], dict[int, int]]:
    """Spark's buckets of every vector, by (type, repr(value)), from one Spark job: a
    column per vector, and each bucket of it computed on its own (a Column of its own)."""
    vectors = [
        (t, value) for t, value, _ in APPENDIX_B if has_time_type() or not isinstance(t, TimeType)
    ]
    schema = T.StructType(
        [T.StructField(f"v{i}", write_spark_type(t)) for i, (t, _) in enumerate(vectors)]
    )
    df = spark.createDataFrame([tuple(_to_spark(t, value) for t, value in vectors)], schema)
    columns = [
        TransformColumn(f"b{i}_{n}", BucketTransform(n), t, F.col(f"v{i}"))
        for i, (t, _) in enumerate(vectors)
        for n in APPENDIX_B_BUCKETS
    ]
    rows = with_transform_columns(df, columns).select(*[c.name for c in columns]).collect()
    assert len(rows) == 1
    return {
        (str(t), repr(value)): {n: rows[0][f"b{i}_{n}"] for n in APPENDIX_B_BUCKETS}
        for i, (t, value) in enumerate(vectors)
    }


@pytest.mark.parametrize(("t", "value", "hash_value"), APPENDIX_B, ids=str)
def test_appendix_b_vectors(
    appendix_b_buckets: dict[tuple[str, str], dict[int, int]],
    t: IcebergType,
    value: Any,
    hash_value: int,
) -> None:
    if isinstance(t, TimeType) and not has_time_type():
        pytest.skip("Spark before 4.1 has no TIME type")
    buckets = appendix_b_buckets[(str(t), repr(value))]
    for n in APPENDIX_B_BUCKETS:
        assert buckets[n] == (hash_value & INT_MAX) % n


def test_arrow_murmur3_matches_mmh3() -> None:
    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.one_of(st.none(), st.binary(max_size=70)), min_size=1, max_size=60))
    def run(values: list[bytes | None]) -> None:
        got = murmur3_arrow(pa.array(values, pa.binary())).to_pylist()
        want = [None if v is None else mmh3.hash(v, 0, signed=False) for v in values]
        assert got == want

    run()
    sliced = pa.array([b"x" * 9, b"abc", None, b"iceberg"]).slice(1)
    assert murmur3_arrow(sliced).to_pylist()[2] == 1210000089


def test_arrow_bucket_of_decimals_handles_offsets_and_nulls() -> None:
    t = DecimalType(9, 2)
    values = [Decimal("14.20"), None, Decimal("-1.28"), Decimal("0.00")]
    arr = pa.array(values, pa.decimal128(9, 2)).slice(1)
    got = bucket_arrow(arr, t, 1000).to_pylist()
    assert got == [BucketTransform(1000).apply(t, v) for v in values[1:]]


def test_long_hash_uses_no_overflowing_multiplication(spark: SparkSession) -> None:
    # Spark 4 runs in ANSI mode: a long overflow would raise instead of wrapping.
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        _check(spark, LongType(), [LONG_MIN, LONG_MAX, -1], [BucketTransform(7)])
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")


def test_unknown_or_misapplied_transforms_are_refused(spark: SparkSession) -> None:
    df = spark.range(1)
    with pytest.raises(ValidationError, match="cannot be applied"):
        transform_column(parse_transform("hour"), DateType(), F.col("id"))
    with pytest.raises(ValidationError, match="cannot be applied"):
        transform_column(parse_transform("zorder"), LongType(), F.col("id"))
    with pytest.raises(ValidationError, match="cannot be applied"):
        with_transform_columns(
            df, [TransformColumn("b", BucketTransform(2), DoubleType(), F.col("id"))]
        )
