"""Partition transforms: Appendix B hash vectors, truncate table, temporal offsets,
parsing, types and ordering; bucket/truncate/time values cross-checked against
pyiceberg 0.12 as an independent implementation."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg import transforms as pyt
from pyiceberg import types as pyty

from icewright.errors import ValidationError
from icewright.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    bucket_hash,
    parse_transform,
)
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)
from icewright.spec.values import human_string

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def micros(iso: str) -> int:
    """Microseconds from the epoch of an ISO timestamp (naive = UTC), by the stdlib."""
    t = dt.datetime.fromisoformat(iso)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    d = t - EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def days(iso: str) -> int:
    return (dt.date.fromisoformat(iso) - dt.date(1970, 1, 1)).days


def time_micros(iso: str) -> int:
    t = dt.time.fromisoformat(iso)
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


# --- Appendix B ----------------------------------------------------------------

# (type, value, hash) straight from the spec's Appendix B table.
APPENDIX_B: list[tuple[IcebergType, Any, int]] = [
    (IntegerType(), 34, 2017239379),
    (LongType(), 34, 2017239379),
    (DecimalType(9, 2), Decimal("14.20"), -500754589),
    (DateType(), days("2017-11-16"), -653330422),
    (TimeType(), time_micros("22:31:08"), -662762989),
    (TimestampType(), micros("2017-11-16T22:31:08"), -2047944441),
    (TimestampType(), micros("2017-11-16T22:31:08.000001"), -1207196810),
    (TimestamptzType(), micros("2017-11-16T14:31:08-08:00"), -2047944441),
    (TimestamptzType(), micros("2017-11-16T14:31:08.000001-08:00"), -1207196810),
    (TimestampNsType(), micros("2017-11-16T22:31:08") * 1000, -2047944441),
    (TimestampNsType(), micros("2017-11-16T22:31:08.000001") * 1000 + 1, -1207196810),
    (TimestamptzNsType(), micros("2017-11-16T14:31:08-08:00") * 1000, -2047944441),
    (
        TimestamptzNsType(),
        micros("2017-11-16T14:31:08.000001-08:00") * 1000 + 1,
        -1207196810,
    ),
    (StringType(), "iceberg", 1210000089),
    (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (FixedType(4), bytes([0, 1, 2, 3]), -188683207),
    (BinaryType(), bytes([0, 1, 2, 3]), -188683207),
    # the second table: types not valid for bucketing, hashes defined anyway
    (BooleanType(), True, 1392991556),
    (FloatType(), 1.0, -142385009),
    (FloatType(), 0.0, 1669671676),
    (FloatType(), -0.0, 1669671676),
    (DoubleType(), 1.0, -142385009),
    (DoubleType(), 0.0, 1669671676),
    (DoubleType(), -0.0, 1669671676),
]


@pytest.mark.parametrize(("source", "value", "expected"), APPENDIX_B)
def test_appendix_b_hash_vectors(source: IcebergType, value: Any, expected: int) -> None:
    assert bucket_hash(source, value) == expected


def test_appendix_b_uuid_bytes_are_big_endian() -> None:
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    assert u.bytes == bytes.fromhex("F79C3E09677C4BBDA4793F349CB785E7")
    assert bucket_hash(UUIDType(), u.bytes) == 1488055340


def test_decimal_hash_ignores_the_representation_scale() -> None:
    # The unscaled value at the column's scale is hashed: 14.2 in decimal(9,2) is 1420.
    assert bucket_hash(DecimalType(9, 2), Decimal("14.2")) == -500754589
    with pytest.raises(ValidationError, match="more fractional digits"):
        bucket_hash(DecimalType(9, 2), Decimal("14.201"))


def test_nan_hashes_canonically() -> None:
    assert bucket_hash(DoubleType(), float("nan")) == bucket_hash(DoubleType(), -float("nan"))


@pytest.mark.parametrize("source", [VariantType(), GeometryType(), StructType()])
def test_no_hash_for_types_outside_appendix_b(source: IcebergType) -> None:
    with pytest.raises(ValidationError):
        bucket_hash(source, b"x")


@pytest.mark.parametrize(("source", "value", "expected"), APPENDIX_B[:17])
def test_bucket_is_masked_hash_mod_n(source: IcebergType, value: Any, expected: int) -> None:
    for n in (1, 2, 16, 100, 2**31 - 1):
        assert BucketTransform(n).apply(source, value) == (expected & 0x7FFFFFFF) % n


def test_int_and_long_bucket_alike_for_promotion() -> None:
    for v in (-(2**31), -1, 0, 1, 2**31 - 1):
        assert BucketTransform(7).apply(IntegerType(), v) == BucketTransform(7).apply(LongType(), v)


# --- bucket against pyiceberg ---------------------------------------------------

_DEC = DecimalType(38, 10)
MICROS_RANGE = st.integers(micros("0001-01-02T00:00:00"), micros("9999-12-30T00:00:00"))

BUCKET_CASES: list[tuple[IcebergType, Any, st.SearchStrategy[Any]]] = [
    (IntegerType(), pyty.IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    (LongType(), pyty.LongType(), st.integers(-(2**63), 2**63 - 1)),
    (
        _DEC,
        pyty.DecimalType(38, 10),
        st.integers(-(10**38) + 1, 10**38 - 1).map(lambda n: Decimal(f"{n}E-10")),
    ),
    (DateType(), pyty.DateType(), st.integers(-719_000, 2_900_000)),
    (TimeType(), pyty.TimeType(), st.integers(0, 86_400_000_000 - 1)),
    (TimestampType(), pyty.TimestampType(), MICROS_RANGE),
    (TimestamptzType(), pyty.TimestamptzType(), MICROS_RANGE),
    (TimestampNsType(), pyty.TimestampNanoType(), st.integers(-(2**63), 2**63 - 1)),
    (TimestamptzNsType(), pyty.TimestamptzNanoType(), st.integers(-(2**63), 2**63 - 1)),
    (StringType(), pyty.StringType(), st.text()),
    (UUIDType(), pyty.UUIDType(), st.uuids()),
    (FixedType(5), pyty.FixedType(5), st.binary(min_size=5, max_size=5)),
    (BinaryType(), pyty.BinaryType(), st.binary()),
]


@pytest.mark.parametrize(
    ("ours", "theirs", "values"), BUCKET_CASES, ids=[str(c[0]) for c in BUCKET_CASES]
)
def test_bucket_matches_pyiceberg(ours: IcebergType, theirs: Any, values: Any) -> None:
    @settings(max_examples=60, deadline=None)
    @given(value=values, n=st.sampled_from([1, 3, 16, 1000]))
    def check(value: Any, n: int) -> None:
        oracle = pyt.BucketTransform(n).transform(theirs)(value)
        assert BucketTransform(n).apply(ours, value) == oracle

    check()


def test_bucket_null_is_null() -> None:
    assert BucketTransform(4).apply(StringType(), None) is None


# --- truncate -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "width", "value", "expected"),
    [
        # the spec's "Truncate Transform Details" examples
        (IntegerType(), 10, 1, 0),
        (IntegerType(), 10, -1, -10),
        (LongType(), 10, 1, 0),
        (LongType(), 10, -1, -10),
        (DecimalType(9, 2), 50, Decimal("10.65"), Decimal("10.50")),
        (StringType(), 3, "iceberg", "ice"),
        (BinaryType(), 3, b"\x01\x02\x03\x04\x05", b"\x01\x02\x03"),
        # further cases derived from the same rules
        (IntegerType(), 10, 0, 0),
        (IntegerType(), 10, 10, 10),
        (IntegerType(), 10, -10, -10),
        (IntegerType(), 10, -11, -20),
        (DecimalType(9, 2), 50, Decimal("-0.05"), Decimal("-0.50")),
        (DecimalType(9, 2), 10, Decimal("12.34"), Decimal("12.30")),
        (StringType(), 2, "ab", "ab"),
        (StringType(), 5, "ab", "ab"),
        # code points, not bytes or UTF-16 units: each of these is one code point
        (StringType(), 2, "\u00e9\u00e8\u00ea", "\u00e9\u00e8"),
        (StringType(), 1, "\U0001f600x", "\U0001f600"),
        (StringType(), 3, "\u4e2d\u6587\u5b57\u7b26", "\u4e2d\u6587\u5b57"),
        (BinaryType(), 10, b"\x01", b"\x01"),
    ],
)
def test_truncate(source: IcebergType, width: int, value: Any, expected: Any) -> None:
    result = TruncateTransform(width).apply(source, value)
    assert result == expected
    if isinstance(expected, Decimal):
        # the column's scale is kept
        assert result.as_tuple().exponent == expected.as_tuple().exponent


def test_truncate_string_result_stays_valid_utf8() -> None:
    out = TruncateTransform(1).apply(StringType(), "\U0001f600\U0001f601")
    assert out.encode("utf-8") == "\U0001f600".encode()


TRUNCATE_CASES: list[tuple[IcebergType, Any, st.SearchStrategy[Any]]] = [
    (IntegerType(), pyty.IntegerType(), st.integers(-(2**31), 2**31 - 1)),
    (LongType(), pyty.LongType(), st.integers(-(2**63), 2**63 - 1)),
    (
        DecimalType(20, 3),
        pyty.DecimalType(20, 3),
        st.integers(-(10**20) + 1, 10**20 - 1).map(lambda n: Decimal(f"{n}E-3")),
    ),
    (StringType(), pyty.StringType(), st.text()),
    (BinaryType(), pyty.BinaryType(), st.binary()),
]


@pytest.mark.parametrize(
    ("ours", "theirs", "values"), TRUNCATE_CASES, ids=[str(c[0]) for c in TRUNCATE_CASES]
)
def test_truncate_matches_pyiceberg(ours: IcebergType, theirs: Any, values: Any) -> None:
    @settings(max_examples=60, deadline=None)
    @given(value=values, width=st.integers(1, 200))
    def check(value: Any, width: int) -> None:
        oracle = pyt.TruncateTransform(width).transform(theirs)(value)
        assert TruncateTransform(width).apply(ours, value) == oracle

    check()


# --- temporal -------------------------------------------------------------------

LAST_MICRO_BEFORE_EPOCH = micros("1969-12-31T23:59:59.999999")


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (TimestampType(), LAST_MICRO_BEFORE_EPOCH),
        (TimestamptzType(), LAST_MICRO_BEFORE_EPOCH),
        (TimestampNsType(), LAST_MICRO_BEFORE_EPOCH * 1000 + 999),
        (TimestamptzNsType(), -1),
    ],
)
def test_time_transforms_floor_before_the_epoch(source: IcebergType, value: int) -> None:
    assert YearTransform().apply(source, value) == -1
    assert MonthTransform().apply(source, value) == -1
    assert DayTransform().apply(source, value) == -1
    assert HourTransform().apply(source, value) == -1


def test_date_transforms_before_the_epoch() -> None:
    d = days("1969-12-31")
    assert d == -1
    assert YearTransform().apply(DateType(), d) == -1
    assert MonthTransform().apply(DateType(), d) == -1
    assert DayTransform().apply(DateType(), d) == -1
    assert MonthTransform().apply(DateType(), days("1969-01-01")) == -12
    assert YearTransform().apply(DateType(), days("1900-03-01")) == -70


def test_time_transforms_known_values() -> None:
    ts = micros("2017-11-16T22:31:08")
    assert YearTransform().apply(TimestampType(), ts) == 2017 - 1970
    assert MonthTransform().apply(TimestampType(), ts) == (2017 - 1970) * 12 + 10
    assert DayTransform().apply(TimestampType(), ts) == days("2017-11-16")
    assert HourTransform().apply(TimestampType(), ts) == days("2017-11-16") * 24 + 22
    assert DayTransform().apply(DateType(), days("2017-11-16")) == days("2017-11-16")


TIME_TRANSFORMS: list[tuple[Transform, Any]] = [
    (YearTransform(), pyt.YearTransform()),
    (MonthTransform(), pyt.MonthTransform()),
    (DayTransform(), pyt.DayTransform()),
    (HourTransform(), pyt.HourTransform()),
]
TIME_SOURCES: list[tuple[IcebergType, Any, st.SearchStrategy[int]]] = [
    (DateType(), pyty.DateType(), st.integers(-719_000, 2_900_000)),
    (TimestampType(), pyty.TimestampType(), MICROS_RANGE),
    (TimestamptzType(), pyty.TimestamptzType(), MICROS_RANGE),
    (TimestampNsType(), pyty.TimestampNanoType(), st.integers(-(2**63), 2**63 - 1)),
    (TimestamptzNsType(), pyty.TimestamptzNanoType(), st.integers(-(2**63), 2**63 - 1)),
]


@pytest.mark.parametrize(("ours_t", "theirs_t"), TIME_TRANSFORMS, ids=str)
@pytest.mark.parametrize(
    ("ours", "theirs", "values"), TIME_SOURCES, ids=[str(c[0]) for c in TIME_SOURCES]
)
def test_time_transforms_match_pyiceberg(
    ours_t: Transform, theirs_t: Any, ours: IcebergType, theirs: Any, values: Any
) -> None:
    if not ours_t.can_transform(ours):
        assert not theirs_t.can_transform(theirs)
        return

    @settings(max_examples=40, deadline=None)
    @given(value=values)
    def check(value: int) -> None:
        assert ours_t.apply(ours, value) == theirs_t.transform(theirs)(value)

    check()


# --- parsing and strings --------------------------------------------------------

ALL_TRANSFORMS: list[Transform] = [
    IdentityTransform(),
    BucketTransform(16),
    BucketTransform(1),
    TruncateTransform(4),
    YearTransform(),
    MonthTransform(),
    DayTransform(),
    HourTransform(),
    VoidTransform(),
    UnknownTransform("zorder"),
]


@pytest.mark.parametrize("transform", ALL_TRANSFORMS, ids=str)
def test_parse_str_round_trip(transform: Transform) -> None:
    parsed = parse_transform(str(transform))
    assert parsed == transform
    assert type(parsed) is type(transform)
    assert hash(parsed) == hash(transform)
    assert str(parsed) == str(transform)
    assert transform.to_json() == str(transform)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("identity", "identity"),
        ("bucket[16]", "bucket[16]"),
        ("bucket[ 16 ]", "bucket[16]"),
        (" bucket [16] ", "bucket[16]"),
        ("truncate[20]", "truncate[20]"),
        ("truncate[ 3]", "truncate[3]"),
        ("Bucket[8]", "bucket[8]"),
        ("DAY", "day"),
        ("year", "year"),
        ("month", "month"),
        ("hour", "hour"),
        ("void", "void"),
    ],
)
def test_parse_canonical_strings(text: str, expected: str) -> None:
    assert str(parse_transform(text)) == expected


@pytest.mark.parametrize("text", ["bucket[0]", "bucket[-1]", "bucket[ -16 ]"])
def test_bucket_count_must_be_positive(text: str) -> None:
    with pytest.raises(ValidationError, match="bucket count must be positive"):
        parse_transform(text)


@pytest.mark.parametrize("text", ["truncate[0]", "truncate[-5]"])
def test_truncate_width_must_be_positive(text: str) -> None:
    with pytest.raises(ValidationError, match="width must be positive"):
        parse_transform(text)


@pytest.mark.parametrize("text", ["zorder", "geohash[4]", "bucket", "bucket[x]", "week"])
def test_unknown_transforms_are_kept_verbatim(text: str) -> None:
    t = parse_transform(text)
    assert isinstance(t, UnknownTransform)
    assert t.is_unknown
    assert str(t) == text
    assert not t.can_transform(LongType())
    with pytest.raises(ValidationError, match="unknown transform"):
        t.apply(LongType(), 1)


def test_transforms_are_immutable() -> None:
    b = BucketTransform(4)
    with pytest.raises(AttributeError):
        b.num_buckets = 5
    assert BucketTransform(4) != BucketTransform(5)
    assert BucketTransform(4) != TruncateTransform(4)
    assert len({BucketTransform(4), BucketTransform(4), IdentityTransform()}) == 2


def test_non_string_transform_is_rejected() -> None:
    with pytest.raises(ValidationError):
        parse_transform(16)  # type: ignore[arg-type]


# --- types ----------------------------------------------------------------------

PRIMITIVES: list[IcebergType] = [
    BooleanType(),
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    DecimalType(9, 2),
    DateType(),
    TimeType(),
    TimestampType(),
    TimestamptzType(),
    TimestampNsType(),
    TimestamptzNsType(),
    StringType(),
    UUIDType(),
    FixedType(3),
    BinaryType(),
]
SPECIAL: list[IcebergType] = [
    UnknownType(),
    VariantType(),
    GeometryType(),
    GeographyType(),
    StructType(NestedField(1, "a", IntegerType())),
    ListType(1, IntegerType()),
    MapType(1, StringType(), 2, IntegerType()),
]

# The spec's "Partition Transforms" table, written out by type name.
ACCEPTS: dict[str, set[str]] = {
    "bucket[4]": {
        "int", "long", "decimal(9,2)", "date", "time", "timestamp", "timestamptz",
        "timestamp_ns", "timestamptz_ns", "string", "uuid", "fixed[3]", "binary",
    },
    "truncate[4]": {"int", "long", "decimal(9,2)", "string", "binary"},
    "year": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "month": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "day": {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "hour": {"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"},
    "identity": {str(t) for t in PRIMITIVES} | {"unknown"},
}  # fmt: skip


@pytest.mark.parametrize("transform", sorted(ACCEPTS))
def test_can_transform_matrix(transform: str) -> None:
    t = parse_transform(transform)
    for source in PRIMITIVES + SPECIAL:
        assert t.can_transform(source) == (str(source) in ACCEPTS[transform]), (t, source)


def test_void_accepts_anything_and_returns_null() -> None:
    for source in PRIMITIVES + SPECIAL:
        assert VoidTransform().can_transform(source)
        assert VoidTransform().apply(source, 1) is None
        assert VoidTransform().result_type(source) == source


def test_apply_refuses_unsupported_source() -> None:
    with pytest.raises(ValidationError, match="cannot be applied"):
        BucketTransform(4).apply(DoubleType(), 1.0)
    with pytest.raises(ValidationError, match="cannot be applied"):
        HourTransform().apply(DateType(), 1)
    with pytest.raises(ValidationError, match="cannot be applied"):
        IdentityTransform().apply(GeometryType(), b"")


@pytest.mark.parametrize("source", PRIMITIVES, ids=str)
def test_result_types(source: IcebergType) -> None:
    assert BucketTransform(8).result_type(source) == IntegerType()
    assert IdentityTransform().result_type(source) == source
    assert TruncateTransform(8).result_type(source) == source
    assert YearTransform().result_type(source) == IntegerType()
    assert MonthTransform().result_type(source) == IntegerType()
    assert HourTransform().result_type(source) == IntegerType()
    # the spec's table (and Iceberg Java's Days) give day a date result
    assert DayTransform().result_type(source) == DateType()
    assert UnknownTransform("x").result_type(source) == StringType()


def test_result_types_agree_with_pyiceberg() -> None:
    pairs: list[tuple[Transform, Any]] = [
        (DayTransform(), pyt.DayTransform()),
        (YearTransform(), pyt.YearTransform()),
        (BucketTransform(3), pyt.BucketTransform(3)),
    ]
    for ours, theirs in pairs:
        assert str(ours.result_type(TimestampType())) == str(
            theirs.result_type(pyty.TimestampType())
        )


# --- ordering -------------------------------------------------------------------


def test_preserves_order() -> None:
    assert IdentityTransform().preserves_order
    assert TruncateTransform(3).preserves_order
    for t in (YearTransform(), MonthTransform(), DayTransform(), HourTransform()):
        assert t.preserves_order
    assert not BucketTransform(3).preserves_order
    assert not VoidTransform().preserves_order
    assert not UnknownTransform("x").preserves_order


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("hour", "day", True),
        ("hour", "month", True),
        ("hour", "year", True),
        ("day", "month", True),
        ("day", "year", True),
        ("month", "year", True),
        ("day", "day", True),
        ("day", "hour", False),
        ("year", "month", False),
        ("identity", "day", True),
        ("identity", "truncate[4]", True),
        ("identity", "bucket[4]", False),
        ("identity", "identity", True),
        ("truncate[4]", "truncate[2]", True),
        ("truncate[2]", "truncate[4]", False),
        ("bucket[4]", "bucket[4]", True),
        ("bucket[4]", "bucket[2]", False),
        ("day", "identity", False),
        ("void", "void", True),
        ("void", "day", False),
    ],
)
def test_satisfies_order_of(left: str, right: str, expected: bool) -> None:
    assert parse_transform(left).satisfies_order_of(parse_transform(right)) is expected


def test_dedup_names() -> None:
    assert {t.dedup_name for t in (YearTransform(), MonthTransform(), DayTransform())} == {"time"}
    assert HourTransform().dedup_name == "time"
    assert BucketTransform(4).dedup_name == "bucket[4]"
    assert IdentityTransform().dedup_name == "identity"


# --- human strings (Java toHumanString) -----------------------------------------


@pytest.mark.parametrize(
    ("transform", "result_type", "value", "expected"),
    [
        (YearTransform(), IntegerType(), 2017 - 1970, "2017"),
        (YearTransform(), IntegerType(), -1, "1969"),
        (MonthTransform(), IntegerType(), (2017 - 1970) * 12 + 11, "2017-12"),
        (MonthTransform(), IntegerType(), -1, "1969-12"),
        (DayTransform(), DateType(), days("2017-12-01"), "2017-12-01"),
        (DayTransform(), DateType(), -1, "1969-12-31"),
        (HourTransform(), IntegerType(), days("2017-12-01") * 24 + 10, "2017-12-01-10"),
        (HourTransform(), IntegerType(), -1, "1969-12-31-23"),
        (BucketTransform(4), IntegerType(), 3, "3"),
        (VoidTransform(), IntegerType(), None, "null"),
        (IdentityTransform(), StringType(), None, "null"),
        (IdentityTransform(), StringType(), "a/b c", "a/b c"),
        (IdentityTransform(), DateType(), days("2017-12-01"), "2017-12-01"),
        (IdentityTransform(), TimeType(), time_micros("10:12:55.038194"), "10:12:55.038194"),
        # Java's humanTime is LocalTime.toString: no seconds when they are zero
        (IdentityTransform(), TimeType(), time_micros("10:12:00"), "10:12"),
        (
            IdentityTransform(),
            TimestampType(),
            micros("2017-12-01T10:12:55.038194"),
            "2017-12-01T10:12:55.038194",
        ),
        (
            IdentityTransform(),
            TimestamptzType(),
            micros("2017-12-01T10:12:55.038194-08:00"),
            "2017-12-01T18:12:55.038194+00:00",
        ),
        (
            IdentityTransform(),
            TimestampType(),
            micros("2017-12-01T10:12:55.500000"),
            "2017-12-01T10:12:55.5",
        ),
        (
            IdentityTransform(),
            TimestampNsType(),
            micros("2017-12-01T10:12:55") * 1000 + 1,
            "2017-12-01T10:12:55.000000001",
        ),
        (IdentityTransform(), BinaryType(), b"\x01\x02\x03", "AQID"),
        (TruncateTransform(3), BinaryType(), b"\x01\x02\x03", "AQID"),
        (IdentityTransform(), DecimalType(9, 2), Decimal("14.2"), "14.20"),
        (IdentityTransform(), BooleanType(), True, "true"),
        (IdentityTransform(), LongType(), -34, "-34"),
        (IdentityTransform(), DoubleType(), 1.0, "1.0"),
        (IdentityTransform(), DoubleType(), 1e7, "1.0E7"),
        (IdentityTransform(), DoubleType(), 0.001, "0.001"),
        (IdentityTransform(), DoubleType(), 1.5e-5, "1.5E-5"),
        (IdentityTransform(), DoubleType(), float("nan"), "NaN"),
        (IdentityTransform(), FloatType(), 1.1, "1.1"),
        (
            IdentityTransform(),
            UUIDType(),
            uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        ),
    ],
)
def test_to_human_string(
    transform: Transform, result_type: IcebergType, value: Any, expected: str
) -> None:
    assert transform.to_human_string(result_type, value) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(-719_000, 2_900_000))
def test_human_date_matches_stdlib(d: int) -> None:
    assert human_string(DateType(), d) == (dt.date(1970, 1, 1) + dt.timedelta(days=d)).isoformat()


@settings(max_examples=100, deadline=None)
@given(MICROS_RANGE)
def test_human_timestamp_seconds_match_stdlib(us: int) -> None:
    expected = (EPOCH + dt.timedelta(microseconds=us)).replace(tzinfo=None)
    text = human_string(TimestampType(), us)
    assert text[:19] == expected.isoformat(timespec="seconds")
    frac = text[20:] if len(text) > 19 else ""
    assert int((frac + "000000")[:6]) == expected.microsecond
