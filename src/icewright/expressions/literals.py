"""Conversion of predicate literals to a column's type (Iceberg Java ``Literal.to``).

Literals arrive as the caller wrote them: Python ``bool``, ``int``, ``float``,
:class:`~decimal.Decimal`, ``str``, ``bytes``, :class:`uuid.UUID` or :mod:`datetime`
objects. Binding converts each to the column type's Python value convention (ints for
dates, times and timestamps, ...), or fails with a :class:`ValidationError` that names the
column and the value.

Rules, following the reference implementation where it defines one:

* strings convert to dates (``2026-01-31``), times, timestamps (``2026-01-31T10:00:00``,
  no zone), zoned timestamps (an offset is required and converted to UTC), decimals,
  uuids, and hex-encoded binary/fixed values;
* an ``int`` is the column's own representation: days for a date, microseconds for a
  time or timestamp, nanoseconds for a ``*_ns`` timestamp;
* a date literal (``datetime.date``, or a date-only string) does not convert to a
  timestamp, as in Java: write the midnight timestamp instead;
* a number that falls between two values of an ``int``/``long``/``decimal`` column (``2.5``
  for an int, ``1.005`` for ``decimal(9,2)``), or a time with more fractional digits than
  the column keeps, is returned as :class:`Between`, so binding can rewrite the comparison
  exactly (``x < 2.5`` is ``x <= 2``; ``x = 2.5`` is always false);
* a value out of the column type's range is an error.
"""

from __future__ import annotations

import datetime
import math
import re
import struct
import uuid
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, NamedTuple

from icewright.errors import ValidationError
from icewright.spec.dates import days_to_ymd, ymd_to_days
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
    LongType,
    StringType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icewright.spec.values import decimal_from_unscaled

__all__ = ["Between", "convert_literal"]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
FLOAT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
MICROS_PER_DAY = 86_400_000_000

_NANO_TYPES = (TimestampNsType, TimestamptzNsType)
_ZONED_TYPES = (TimestamptzType, TimestamptzNsType)
_TIMESTAMP_TYPES = (TimestampType, TimestamptzType, TimestampNsType, TimestamptzNsType)


class Between(NamedTuple):
    """A literal strictly between two adjacent values of the column type."""

    below: Any
    above: Any


class _Target(NamedTuple):
    """The literal being converted, for error messages."""

    column: str
    t: IcebergType
    value: Any

    def fail(self, why: str) -> ValidationError:
        return ValidationError(
            f"cannot use {self.value!r} ({type(self.value).__name__}) as a value of column "
            f"{self.column!r} of type {self.t}: {why}"
        )


def _check_range(x: _Target, n: int, lo: int, hi: int) -> int:
    if not lo <= n <= hi:
        raise x.fail(f"it is out of range [{lo}, {hi}]")
    return n


def _exact_fraction(value: Any) -> Fraction | None:
    """The exact rational value of a numeric literal (None for other kinds)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        # Java's BigDecimal.valueOf(double): the shortest decimal that reads back.
        return Fraction(Decimal(repr(value)))
    if isinstance(value, Decimal) and value.is_finite():
        return Fraction(value)
    return None


def _on_grid(x: _Target, exact: Fraction, unit: Fraction, lo: int, hi: int) -> Any:
    """``exact`` as a multiple of ``unit`` (an int count), or :class:`Between` two counts."""
    count = exact / unit
    below = math.floor(count)
    if below == count:
        return _check_range(x, below, lo, hi)
    above = below + 1
    if above < lo or below > hi:
        raise x.fail(f"it is out of range [{lo}, {hi}]")
    return Between(below if below >= lo else None, above if above <= hi else None)


def _to_integer(x: _Target, lo: int, hi: int) -> Any:
    exact = _exact_fraction(x.value)
    if exact is None:
        raise x.fail("write a number (without quotes)")
    return _on_grid(x, exact, Fraction(1), lo, hi)


def _to_decimal(x: _Target, t: DecimalType) -> Any:
    value = x.value
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            raise x.fail("it is not a decimal number") from None
    exact = _exact_fraction(value)
    if exact is None:
        raise x.fail("write a decimal number such as 12.34")
    limit = 10**t.precision - 1
    unit = Fraction(1, 10**t.scale) if t.scale >= 0 else Fraction(10 ** (-t.scale))
    result = _on_grid(x, exact, unit, -limit, limit)

    def as_decimal(unscaled: int | None) -> Decimal | None:
        return None if unscaled is None else decimal_from_unscaled(unscaled, t.scale)

    if isinstance(result, Between):
        return Between(as_decimal(result.below), as_decimal(result.above))
    return as_decimal(result)


def _to_float(x: _Target) -> float:
    value = x.value
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise x.fail("write a number (without quotes)")
    f = float(value)
    if isinstance(x.t, FloatType):
        if math.isfinite(f) and abs(f) > FLOAT_MAX:
            raise x.fail("it is out of the range of a 32-bit float")
        # Java's Number.floatValue(): round to the nearest 32-bit float.
        return float(struct.unpack("<f", struct.pack("<f", f))[0])
    if math.isinf(f) and not (isinstance(value, float) and math.isinf(value)):
        raise x.fail("it is out of the range of a 64-bit double")
    return f


# --- ISO-8601 text -------------------------------------------------------------------

_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_OFFSET = r"(Z|z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_DATE_RE = re.compile(rf"^{_DATE}$")
_TIME_RE = re.compile(rf"^{_TIME}$")
_TIMESTAMP_RE = re.compile(rf"^{_DATE}[Tt ]{_TIME}{_OFFSET}?$")


def _parse_date(x: _Target, parts: tuple[Any, ...]) -> int:
    year, month, day = (int(p) for p in parts)
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise x.fail("it is not a valid calendar date")
    days = ymd_to_days(year, month, day)
    if days_to_ymd(days) != (year, month, day):
        raise x.fail("it is not a valid calendar date")
    return days


def _parse_clock(x: _Target, parts: tuple[Any, ...]) -> int:
    """Nanoseconds since midnight."""
    h, mi, s, frac = parts
    hour, minute, second = int(h), int(mi), int(s or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise x.fail("it is not a valid time of day")
    return (hour * 3600 + minute * 60 + second) * 10**9 + int((frac or "").ljust(9, "0"))


def _parse_offset(x: _Target, offset: str) -> int:
    """The zone offset in seconds east of UTC."""
    if offset in ("Z", "z"):
        return 0
    sign = -1 if offset[0] == "-" else 1
    digits = offset[1:].replace(":", "")
    hours, minutes, seconds = int(digits[0:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 18 or minutes > 59 or seconds > 59:
        raise x.fail("its zone offset is not valid")
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _scale_nanos(x: _Target, nanos: int) -> Any:
    """Nanoseconds since the epoch in the column's unit (micros unless a ``*_ns`` type)."""
    unit = 1 if isinstance(x.t, _NANO_TYPES) else 1000
    return _on_grid(x, Fraction(nanos), Fraction(unit), LONG_MIN, LONG_MAX)


def _timestamp_from_text(x: _Target, text: str) -> Any:
    zoned = isinstance(x.t, _ZONED_TYPES)
    example = "2026-01-31T10:00:00" + ("+00:00" if zoned else "")
    if _DATE_RE.match(text):
        # Java: a date does not convert to a timestamp (no implicit midnight).
        raise x.fail(f"a date is not a timestamp; write the timestamp, e.g. {example!r}")
    m = _TIMESTAMP_RE.match(text)
    if not m:
        raise x.fail(f"it is not an ISO-8601 timestamp such as {example!r}")
    groups = m.groups()
    nanos = _parse_date(x, groups[0:3]) * 86_400 * 10**9 + _parse_clock(x, groups[3:7])
    offset = groups[7]
    if zoned:
        if offset is None:
            raise x.fail("the column has a time zone: add the offset, e.g. '+00:00' or 'Z'")
        nanos -= _parse_offset(x, offset) * 10**9
    elif offset is not None:
        raise x.fail("the column is a timestamp without zone: leave out the offset")
    return _scale_nanos(x, nanos)


def _datetime_nanos(x: _Target, value: datetime.datetime, zoned: bool) -> int:
    offset = value.utcoffset()
    if zoned and offset is None:
        raise x.fail("the column has a time zone: pass an aware datetime")
    if not zoned and offset is not None:
        raise x.fail("the column is a timestamp without zone: pass a naive datetime")
    naive = value.replace(tzinfo=None) - (offset or datetime.timedelta(0))
    days = ymd_to_days(naive.year, naive.month, naive.day)
    of_day = (naive.hour * 3600 + naive.minute * 60 + naive.second) * 10**6 + naive.microsecond
    return (days * MICROS_PER_DAY + of_day) * 1000


def _to_timestamp(x: _Target) -> Any:
    value = x.value
    if isinstance(value, bool):
        raise x.fail("a boolean is not a timestamp")
    if isinstance(value, int):
        return _check_range(x, value, LONG_MIN, LONG_MAX)
    if isinstance(value, str):
        return _timestamp_from_text(x, value.strip())
    if isinstance(value, datetime.datetime):
        return _scale_nanos(x, _datetime_nanos(x, value, isinstance(x.t, _ZONED_TYPES)))
    if isinstance(value, datetime.date):
        raise x.fail("a date is not a timestamp; pass a datetime (e.g. at midnight)")
    raise x.fail("write an ISO-8601 timestamp string")


def _to_date(x: _Target) -> int:
    value = x.value
    if isinstance(value, bool):
        raise x.fail("a boolean is not a date")
    if isinstance(value, int):
        return _check_range(x, value, INT_MIN, INT_MAX)
    if isinstance(value, str):
        m = _DATE_RE.match(value.strip())
        if not m:
            raise x.fail("it is not an ISO-8601 date such as '2026-01-31'")
        return _check_range(x, _parse_date(x, m.groups()), INT_MIN, INT_MAX)
    if isinstance(value, datetime.datetime):
        # Java converts a timestamp literal to a date by taking its day (floor).
        nanos = _datetime_nanos(x, value, value.utcoffset() is not None)
        return _check_range(x, nanos // (MICROS_PER_DAY * 1000), INT_MIN, INT_MAX)
    if isinstance(value, datetime.date):
        return ymd_to_days(value.year, value.month, value.day)
    raise x.fail("write an ISO-8601 date string such as '2026-01-31'")


def _to_time(x: _Target) -> Any:
    value = x.value
    lo, hi = 0, MICROS_PER_DAY - 1
    if isinstance(value, bool):
        raise x.fail("a boolean is not a time")
    if isinstance(value, int):
        return _check_range(x, value, lo, hi)
    if isinstance(value, str):
        m = _TIME_RE.match(value.strip())
        if not m:
            raise x.fail("it is not an ISO-8601 time such as '10:15:30'")
        return _on_grid(x, Fraction(_parse_clock(x, m.groups())), Fraction(1000), lo, hi)
    if isinstance(value, datetime.time):
        if value.utcoffset() is not None:
            raise x.fail("a time column has no zone: pass a naive time")
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return seconds * 10**6 + value.microsecond
    raise x.fail("write an ISO-8601 time string such as '10:15:30'")


def _to_bytes(x: _Target) -> bytes:
    value = x.value
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
    elif isinstance(value, str):
        # Java's StringLiteral.to(binary/fixed): a hexadecimal string.
        try:
            data = bytes.fromhex(value)
        except ValueError:
            raise x.fail("write bytes, or a hexadecimal string") from None
    else:
        raise x.fail("write bytes, or a hexadecimal string")
    if isinstance(x.t, FixedType) and len(data) != x.t.length:
        raise x.fail(f"it has {len(data)} bytes, the column holds {x.t.length}")
    return data


def convert_literal(value: Any, field_type: IcebergType, column: str) -> Any:
    """``value`` in ``field_type``'s Python value convention, or a :class:`Between`.

    Raises :class:`ValidationError` naming ``column`` and ``value`` when the value cannot be
    read as the type or is out of its range.
    """
    t = field_type
    x = _Target(column, t, value)
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise x.fail("write true or false")
        return value
    if isinstance(t, IntegerType):
        return _to_integer(x, INT_MIN, INT_MAX)
    if isinstance(t, LongType):
        return _to_integer(x, LONG_MIN, LONG_MAX)
    if isinstance(t, FloatType | DoubleType):
        return _to_float(x)
    if isinstance(t, DecimalType):
        return _to_decimal(x, t)
    if isinstance(t, DateType):
        return _to_date(x)
    if isinstance(t, TimeType):
        return _to_time(x)
    if isinstance(t, _TIMESTAMP_TYPES):
        return _to_timestamp(x)
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise x.fail("write a quoted string")
        return value
    if isinstance(t, UUIDType):
        if isinstance(value, uuid.UUID):
            return value
        if isinstance(value, str):
            try:
                return uuid.UUID(value.strip())
            except ValueError:
                raise x.fail("it is not a UUID") from None
        raise x.fail("write a UUID string")
    if isinstance(t, FixedType | BinaryType):
        return _to_bytes(x)
    raise ValidationError(
        f"column {column!r} has type {t}, which predicates with values do not support; "
        "only IS NULL / IS NOT NULL can test it"
    )
