"""Partition transforms (spec: "Partition Transforms", "Bucket Transform Details",
"Truncate Transform Details", Appendix B for hashing, Appendix C for strings).

A :class:`Transform` is an immutable value that renders to its spec string with
``str()`` (``"bucket[16]"``) and is parsed back by :func:`parse_transform`.
Transforms are applied to values in icewright's Python value convention (see
:mod:`icewright.spec.values`): dates are ``int`` days, times and timestamps
``int`` microseconds, ``*_ns`` timestamps ``int`` nanoseconds, decimals
:class:`~decimal.Decimal`, uuids :class:`~uuid.UUID`, fixed/binary ``bytes``.

Predicate projection (``project`` / ``project_strict``) is added by the
expressions layer later; the class shape keeps one subclass per transform so
those methods have a home.
"""

from __future__ import annotations

import math
import re
import struct
import uuid
from typing import Any, ClassVar

import mmh3

from icewright.errors import ValidationError
from icewright.spec.dates import days_to_ymd
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
    LongType,
    PrimitiveType,
    StringType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)
from icewright.spec.values import (
    decimal_from_unscaled,
    decimal_to_unscaled,
    human_string,
    unscaled_to_bytes,
)

_INT_MAX = 0x7FFFFFFF
_MICROS_PER_HOUR = 3_600_000_000
_MICROS_PER_DAY = 86_400_000_000
_EPOCH_YEAR = 1970

_NANOS_TIMESTAMPS = (TimestampNsType, TimestamptzNsType)


# --- the transforms -----------------------------------------------------------


class Transform:
    """Base class of every partition transform; immutable and hashable.

    Two transforms are equal when their spec strings are equal.
    """

    __slots__ = ()

    def __str__(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"parse_transform({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Transform) and type(other) is type(self) and str(other) == str(self)
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, str(self)))

    def to_json(self) -> str:
        """The transform's JSON form (Appendix C): its spec string."""
        return str(self)

    # --- kind ---------------------------------------------------------------

    @property
    def is_identity(self) -> bool:
        """True for ``identity``."""
        return False

    @property
    def is_void(self) -> bool:
        """True for ``void`` (always null)."""
        return False

    @property
    def is_unknown(self) -> bool:
        """True for a transform icewright does not know.

        Readers ignore such a field; writers must not write data with it (spec:
        "Partitioning").
        """
        return False

    # --- types --------------------------------------------------------------

    def can_transform(self, source: IcebergType) -> bool:
        """Whether this transform accepts a column of type ``source``."""
        raise NotImplementedError

    def result_type(self, source: IcebergType) -> IcebergType:
        """The type of the partition values this transform makes from ``source``."""
        raise NotImplementedError

    def _check_source(self, source: IcebergType) -> None:
        if not self.can_transform(source):
            raise ValidationError(
                f"transform {self} cannot be applied to a column of type {source}; "
                "see the spec's 'Partition Transforms' table for the accepted source types"
            )

    # --- values -------------------------------------------------------------

    def apply(self, source_type: IcebergType, value: Any) -> Any:
        """Transform one value of ``source_type``; null stays null."""
        self._check_source(source_type)
        if value is None:
            return None
        return self._apply(source_type, value)

    def _apply(self, source_type: IcebergType, value: Any) -> Any:
        raise NotImplementedError

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        """The value as written in Hive-style partition paths (Java ``toHumanString``).

        ``result_type`` is the partition field's type (:meth:`result_type`).
        """
        if value is None:
            return "null"
        return human_string(result_type, value)

    # --- ordering -----------------------------------------------------------

    @property
    def preserves_order(self) -> bool:
        """Whether ``a <= b`` implies ``t(a) <= t(b)``."""
        return False

    def satisfies_order_of(self, other: Transform) -> bool:
        """Whether data ordered by this transform is also ordered by ``other``."""
        return self == other

    @property
    def dedup_name(self) -> str:
        """Key under which two fields on one source column are redundant (Java ``dedupName``)."""
        return str(self)


class IdentityTransform(Transform):
    """The source value, unmodified."""

    __slots__ = ()

    def __str__(self) -> str:
        return "identity"

    @property
    def is_identity(self) -> bool:
        return True

    def can_transform(self, source: IcebergType) -> bool:
        # Spec: any primitive except geometry and geography; variant is not a primitive.
        return isinstance(source, PrimitiveType) and not isinstance(
            source, GeometryType | GeographyType | VariantType
        )

    def result_type(self, source: IcebergType) -> IcebergType:
        return source

    def _apply(self, source_type: IcebergType, value: Any) -> Any:
        return value

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform) -> bool:
        # Ordering by the value orders by anything that preserves order.
        return other.preserves_order


class BucketTransform(Transform):
    """``bucket[N]``: ``(murmur3_x86_32(x) & Integer.MAX_VALUE) % N``."""

    __slots__ = ("num_buckets",)
    num_buckets: int

    def __init__(self, num_buckets: int) -> None:
        if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or num_buckets <= 0:
            raise ValidationError(
                f"bucket[{num_buckets}]: bucket count must be positive (a number of buckets >= 1)"
            )
        object.__setattr__(self, "num_buckets", num_buckets)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("transforms are immutable")

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source: IcebergType) -> bool:
        return isinstance(
            source,
            IntegerType
            | LongType
            | DecimalType
            | DateType
            | TimeType
            | TimestampType
            | TimestamptzType
            | TimestampNsType
            | TimestamptzNsType
            | StringType
            | UUIDType
            | FixedType
            | BinaryType,
        )

    def result_type(self, source: IcebergType) -> IcebergType:
        return IntegerType()

    def _apply(self, source_type: IcebergType, value: Any) -> Any:
        return (bucket_hash(source_type, value) & _INT_MAX) % self.num_buckets

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else str(value)


class TruncateTransform(Transform):
    """``truncate[W]``: numbers down to a multiple of W, strings/binary to W units."""

    __slots__ = ("width",)
    width: int

    def __init__(self, width: int) -> None:
        if isinstance(width, bool) or not isinstance(width, int) or width <= 0:
            raise ValidationError(f"truncate[{width}]: truncate width must be positive (>= 1)")
        object.__setattr__(self, "width", width)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("transforms are immutable")

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source: IcebergType) -> bool:
        return isinstance(source, IntegerType | LongType | DecimalType | StringType | BinaryType)

    def result_type(self, source: IcebergType) -> IcebergType:
        return source

    def _apply(self, source_type: IcebergType, value: Any) -> Any:
        w = self.width
        if isinstance(source_type, IntegerType | LongType):
            # Python's % already yields a non-negative remainder for w > 0, which is
            # the spec's v - (((v % W) + W) % W).
            return int(value) - (int(value) % w)
        if isinstance(source_type, DecimalType):
            # Spec: W applies to the unscaled value, keeping the column's scale.
            unscaled = decimal_to_unscaled(source_type, value)
            return decimal_from_unscaled(unscaled - unscaled % w, source_type.scale)
        if isinstance(source_type, StringType):
            # Python strings index by code point, as the spec requires (note 3).
            return str(value)[:w]
        return bytes(value[:w])

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform) -> bool:
        # A longer prefix (or finer step) orders within a shorter one (Java Truncate).
        return isinstance(other, TruncateTransform) and other.width <= self.width


class TimeTransform(Transform):
    """Base of ``year``, ``month``, ``day`` and ``hour``: offsets from the epoch."""

    __slots__ = ()
    _name: ClassVar[str] = ""
    _hours: ClassVar[int] = 0  # granularity in hours, for satisfies_order_of

    def __str__(self) -> str:
        return self._name

    def can_transform(self, source: IcebergType) -> bool:
        return isinstance(
            source, DateType | TimestampType | TimestamptzType | TimestampNsType | TimestamptzNsType
        )

    def result_type(self, source: IcebergType) -> IcebergType:
        return IntegerType()

    @property
    def preserves_order(self) -> bool:
        return True

    def satisfies_order_of(self, other: Transform) -> bool:
        # Finer granularity orders within coarser (Java TransformUtil.satisfiesOrderOf).
        return isinstance(other, TimeTransform) and self._hours <= other._hours

    @property
    def dedup_name(self) -> str:
        # Two time transforms on one column are redundant (Java TimeTransform.dedupName).
        return "time"

    def _apply(self, source_type: IcebergType, value: Any) -> Any:
        if isinstance(source_type, DateType):
            return self._from_days(int(value))
        micros = int(value)
        if isinstance(source_type, _NANOS_TIMESTAMPS):
            micros //= 1000
        return self._from_micros(micros)

    def _from_days(self, days: int) -> int:
        raise NotImplementedError

    def _from_micros(self, micros: int) -> int:
        return self._from_days(micros // _MICROS_PER_DAY)


class YearTransform(TimeTransform):
    """Years from 1970 (floor, so 1969 is -1)."""

    __slots__ = ()
    _name = "year"
    _hours = 365 * 24

    def _from_days(self, days: int) -> int:
        return days_to_ymd(days)[0] - _EPOCH_YEAR

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else human_year(int(value))


class MonthTransform(TimeTransform):
    """Months from 1970-01."""

    __slots__ = ()
    _name = "month"
    _hours = 30 * 24

    def _from_days(self, days: int) -> int:
        y, m, _ = days_to_ymd(days)
        return (y - _EPOCH_YEAR) * 12 + (m - 1)

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else human_month(int(value))


class DayTransform(TimeTransform):
    """Days from 1970-01-01; the result type is ``date`` (spec table, Java ``Days``)."""

    __slots__ = ()
    _name = "day"
    _hours = 24

    def result_type(self, source: IcebergType) -> IcebergType:
        return DateType()

    def _from_days(self, days: int) -> int:
        return days

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return human_string(DateType(), value)


class HourTransform(TimeTransform):
    """Hours from 1970-01-01 00:00:00."""

    __slots__ = ()
    _name = "hour"
    _hours = 1

    def can_transform(self, source: IcebergType) -> bool:
        # Spec table: hour has no date source.
        return isinstance(
            source, TimestampType | TimestamptzType | TimestampNsType | TimestamptzNsType
        )

    def _from_days(self, days: int) -> int:
        # Unreachable through apply(), which refuses dates first.
        raise ValidationError("hour cannot be applied to a date")

    def _from_micros(self, micros: int) -> int:
        return micros // _MICROS_PER_HOUR

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else human_hour(int(value))


class VoidTransform(Transform):
    """Always null; replaces a dropped partition field in v1 tables."""

    __slots__ = ()

    def __str__(self) -> str:
        return "void"

    @property
    def is_void(self) -> bool:
        return True

    def can_transform(self, source: IcebergType) -> bool:
        return True

    def result_type(self, source: IcebergType) -> IcebergType:
        return source

    def apply(self, source_type: IcebergType, value: Any) -> Any:
        return None

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null"


class UnknownTransform(Transform):
    """A transform icewright does not know, kept verbatim so it is written back unchanged."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "text", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("transforms are immutable")

    def __str__(self) -> str:
        return self.text

    @property
    def is_unknown(self) -> bool:
        return True

    def can_transform(self, source: IcebergType) -> bool:
        return False

    def result_type(self, source: IcebergType) -> IcebergType:
        # What Java and pyiceberg use for fields they cannot interpret.
        return StringType()

    def apply(self, source_type: IcebergType, value: Any) -> Any:
        raise ValidationError(
            f"cannot apply unknown transform {self.text!r}: icewright does not implement it, "
            "so data cannot be written with this partition spec or sort order"
        )


IDENTITY = IdentityTransform()
YEAR = YearTransform()
MONTH = MonthTransform()
DAY = DayTransform()
HOUR = HourTransform()
VOID = VoidTransform()

_SIMPLE: dict[str, Transform] = {str(t): t for t in (IDENTITY, YEAR, MONTH, DAY, HOUR, VOID)}
_WITH_ARG = re.compile(r"^\s*([A-Za-z_]\w*)\s*\[\s*([+-]?\d+)\s*\]\s*$")


def parse_transform(text: str) -> Transform:
    """Parse a transform string (Appendix C), e.g. ``"day"`` or ``"bucket[ 16 ]"``.

    Names are case-insensitive like Java's ``Transforms.fromString``. A name icewright
    does not know gives an :class:`UnknownTransform` holding the original text.
    """
    if not isinstance(text, str):
        raise ValidationError(f"a transform must be a JSON string, got {text!r}")
    simple = _SIMPLE.get(text.strip().lower())
    if simple is not None:
        return simple
    m = _WITH_ARG.match(text)
    if m:
        name, arg = m.group(1).lower(), int(m.group(2))
        if name == "bucket":
            return BucketTransform(arg)
        if name == "truncate":
            return TruncateTransform(arg)
    return UnknownTransform(text)


# --- Appendix B: 32-bit hashing ----------------------------------------------


def _murmur3(data: bytes) -> int:
    return int(mmh3.hash(data, 0, signed=True))


def _hash_long(v: int) -> int:
    return _murmur3(struct.pack("<q", v))


def _double_to_long_bits(v: float) -> int:
    # Appendix B note 5: canonical NaN, -0.0 hashed as 0.0.
    if math.isnan(v):
        return 0x7FF8000000000000
    if v == 0.0:
        v = 0.0
    return int(struct.unpack("<q", struct.pack("<d", v))[0])


def bucket_hash(source_type: IcebergType, value: Any) -> int:
    """The signed 32-bit Murmur3 hash of ``value`` as Appendix B defines it.

    Also covers boolean, float and double from Appendix B's second table, which
    are not valid bucket sources. Raises :class:`ValidationError` for a type
    without a defined hash (variant, geometry, nested types ...).
    """
    t = source_type
    if value is None:
        raise ValidationError("null has no 32-bit hash: bucket transforms return null for null")
    if isinstance(
        t, IntegerType | LongType | DateType | TimeType | TimestampType | TimestamptzType
    ):
        # Note 1: int and long hash alike so promotion keeps buckets stable.
        return _hash_long(int(value))
    if isinstance(t, _NANOS_TIMESTAMPS):
        # Note 3: nanoseconds are converted (floor) to microseconds before hashing.
        return _hash_long(int(value) // 1000)
    if isinstance(t, DecimalType):
        return _murmur3(unscaled_to_bytes(decimal_to_unscaled(t, value)))
    if isinstance(t, StringType):
        return _murmur3(str(value).encode("utf-8"))
    if isinstance(t, UUIDType):
        u = value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value))
        return _murmur3(u.bytes)  # note 4: big-endian
    if isinstance(t, FixedType | BinaryType):
        return _murmur3(bytes(value))
    if isinstance(t, BooleanType):
        return _hash_long(1 if value else 0)
    if isinstance(t, FloatType | DoubleType):
        return _hash_long(_double_to_long_bits(float(value)))
    raise ValidationError(f"Appendix B defines no 32-bit hash for type {t}")


# --- human strings of time ordinals (Java TransformUtil) -------------------------
# Java formats these with String.format("%04d..."), not java.time, so years keep
# plain zero padding.


def human_year(year_ordinal: int) -> str:
    """``year`` partition value as text: ``2017``."""
    return f"{_EPOCH_YEAR + year_ordinal:04d}"


def human_month(month_ordinal: int) -> str:
    """``month`` partition value as text: ``2017-12``."""
    return f"{_EPOCH_YEAR + month_ordinal // 12:04d}-{month_ordinal % 12 + 1:02d}"


def human_hour(hour_ordinal: int) -> str:
    """``hour`` partition value as text: ``2017-12-01-10``."""
    days, hour = divmod(hour_ordinal, 24)
    y, m, d = days_to_ymd(days)
    return f"{y:04d}-{m:02d}-{d:02d}-{hour:02d}"
