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
from icewright.spec.values import days_to_ymd, ymd_to_days

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


def _check_range(column: str, t: IcebergType, value: Any, n: int, lo: int, hi: int) -> int:
    if not lo <= n <= hi:
        raise _fail(column, t, value, f"it is out of range [{lo}, {hi}]")
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


def _on_grid(
    column: str, t: IcebergType, value: Any, exact: Fraction, unit: Fraction, lo: int, hi: int
) -> Any:
    """``exact`` as a multiple of ``unit`` (an int count), or :class:`Between` two counts."""
    count = exact / unit
    below = math.floor(count)
    if below == count:
        return _check_range(column, t, value, below, lo, hi)
    above = below + 1
    if above < lo or below > hi:
        raise _fail(column, t, value, f"it is out of range [{lo}, {hi}]")
    return Between(
        below if below >= lo else None,
        above if above <= hi else None,
    )


def _to_integer(column: str, t: IcebergType, value: Any, lo: int, hi: int) -> Any:
    exact = _exact_fraction(value)
    if exact is None:
        raise _fail(column, t, value, "write a number (without quotes)")
    return _on_grid(column, t, value, exact, Fraction(1), lo, hi)


def _to_decimal(column: str, t: DecimalType, value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            raise _fail(column, t, value, "it is not a decimal number") from None
    exact = _exact_fraction(value)
    if exact is None:
        raise _fail(column, t, value, "write a decimal number such as 12.34")
    limit = 10**t.precision - 1
    unit = Fraction(1, 10**t.scale) if t.scale >= 0 else Fraction(10 ** (-t.scale))
    result = _on_grid(column, t, value, exact, unit, -limit, limit)

    def as_decimal(unscaled: int | None) -> Decimal | None:
        if unscaled is None:
            return None
        return Decimal(unscaled).scaleb(-t.scale)

    if isinstance(result, Between):
        return Between(as_decimal(result.below), as_decimal(result.above))
    return as_decimal(result)


def _to_float(column: str, t: IcebergType, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise _fail(column, t, value, "write a number (without quotes)")
    f = float(value)
    if isinstance(t, FloatType):
        if math.isfinite(f) and abs(f) > FLOAT_MAX:
            raise _fail(column, t, value, "it is out of the range of a 32-bit float")
        # Java's Number.floatValue(): round to the nearest 32-bit float.
        return float(struct.unpack("<f", struct.pack("<f", f))[0])
    if math.isinf(f) and not (isinstance(value, float) and math.isinf(value)):
        raise _fail(column, t, value, "it is out of the range of a 64-bit double")
    return f


# --- ISO-8601 text -------------------------------------------------------------------

_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_OFFSET = r"(Z|z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_DATE_RE = re.compile(rf"^{_DATE}$")
_TIME_RE = re.compile(rf"^{_TIME}$")
_TIMESTAMP_RE = re.compile(rf"^{_DATE}[Tt ]{_TIME}{_OFFSET}?$")


def _parse_date(column: str, t: IcebergType, text: str, y: str, mo: str, d: str) -> int:
    year, month, day = int(y), int(mo), int(d)
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise _fail(column, t, text, "it is not a valid calendar date")
    days = ymd_to_days(year, month, day)
    if days_to_ymd(days) != (year, month, day):
        raise _fail(column, t, text, "it is not a valid calendar date")
    return days


def _parse_clock(column: str, t: IcebergType, text: str, parts: tuple[Any, ...]) -> int:
    """Nanoseconds since midnight."""
    h, mi, s, frac = parts
    hour, minute, second = int(h), int(mi), int(s or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _fail(column, t, text, "it is not a valid time of day")
    return (hour * 3600 + minute * 60 + second) * 10**9 + int((frac or "").ljust(9, "0"))


def _parse_offset(column: str, t: IcebergType, text: str, offset: str) -> int:
    """The zone offset in seconds east of UTC."""
    if offset in ("Z", "z"):
        return 0
    sign = -1 if offset[0] == "-" else 1
    digits = offset[1:].replace(":", "")
    hours, minutes, seconds = int(digits[0:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
    if hours > 18 or minutes > 59 or seconds > 59:
        raise _fail(column, t, text, "its zone offset is not valid")
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _scale_nanos(column: str, t: IcebergType, value: Any, nanos: int, lo: int, hi: int) -> Any:
    """Nanoseconds as the column's unit (micros unless a ``*_ns`` type)."""
    unit = 1 if isinstance(t, _NANO_TYPES) else 1000
    return _on_grid(column, t, value, Fraction(nanos), Fraction(unit), lo, hi)


def _timestamp_from_text(column: str, t: IcebergType, text: str) -> Any:
    zoned = isinstance(t, _ZONED_TYPES)
    example = "2026-01-31T10:00:00" + ("+00:00" if zoned else "")
    if _DATE_RE.match(text):
        # Java: a date does not convert to a timestamp (no implicit midnight).
        raise _fail(
            column, t, text, f"a date is not a timestamp; write the timestamp, e.g. {example!r}"
        )
    m = _TIMESTAMP_RE.match(text)
    if not m:
        raise _fail(column, t, text, f"it is not an ISO-8601 timestamp such as {example!r}")
    groups = m.groups()
    days = _parse_date(column, t, text, *groups[0:3])
    nanos = days * 86_400 * 10**9 + _parse_clock(column, t, text, groups[3:7])
    offset = groups[7]
    if zoned:
        if offset is None:
            raise _fail(
                column, t, text, "the column has a time zone: add the offset, e.g. '+00:00' or 'Z'"
            )
        nanos -= _parse_offset(column, t, text, offset) * 10**9
    elif offset is not None:
        raise _fail(column, t, text, "the column is a timestamp without zone: leave out the offset")
    return _scale_nanos(column, t, text, nanos, LONG_MIN, LONG_MAX)


def _timestamp_from_datetime(column: str, t: IcebergType, value: datetime.datetime) -> Any:
    zoned = isinstance(t, _ZONED_TYPES)
    offset = value.utcoffset()
    if zoned and offset is None:
        raise _fail(column, t, value, "the column has a time zone: pass an aware datetime")
    if not zoned and offset is not None:
        raise _fail(column, t, value, "the column is a timestamp without zone: pass a naive one")
    naive = value.replace(tzinfo=None) - (offset or datetime.timedelta(0))
    days = ymd_to_days(naive.year, naive.month, naive.day)
    of_day = (naive.hour * 3600 + naive.minute * 60 + naive.second) * 10**6 + naive.microsecond
    return _scale_nanos(
        column, t, value, (days * MICROS_PER_DAY + of_day) * 1000, LONG_MIN, LONG_MAX
    )


def _to_timestamp(column: str, t: IcebergType, value: Any) -> Any:
    if isinstance(value, bool):
        raise _fail(column, t, value, "a boolean is not a timestamp")
    if isinstance(value, int):
        return _check_range(column, t, value, value, LONG_MIN, LONG_MAX)
    if isinstance(value, str):
        return _timestamp_from_text(column, t, value.strip())
    if isinstance(value, datetime.datetime):
        return _timestamp_from_datetime(column, t, value)
    if isinstance(value, datetime.date):
        raise _fail(
            column, t, value, "a date is not a timestamp; pass a datetime (e.g. at midnight)"
        )
    raise _fail(column, t, value, "write an ISO-8601 timestamp string")


def _to_date(column: str, t: IcebergType, value: Any) -> int:
    if isinstance(value, bool):
        raise _fail(column, t, value, "a boolean is not a date")
    if isinstance(value, int):
        return _check_range(column, t, value, value, INT_MIN, INT_MAX)
    if isinstance(value, str):
        m = _DATE_RE.match(value.strip())
        if not m:
            raise _fail(column, t, value, "it is not an ISO-8601 date such as '2026-01-31'")
        return _check_range(
            column, t, value, _parse_date(column, t, value, *m.groups()), INT_MIN, INT_MAX
        )
    if isinstance(value, datetime.datetime):
        # Java converts a timestamp literal to a date by taking its day (floor).
        micros = _timestamp_from_datetime(
            column, TimestamptzType() if value.utcoffset() is not None else TimestampType(), value
        )
        return _check_range(column, t, value, micros // MICROS_PER_DAY, INT_MIN, INT_MAX)
    if isinstance(value, datetime.date):
        return ymd_to_days(value.year, value.month, value.day)
    raise _fail(column, t, value, "write an ISO-8601 date string such as '2026-01-31'")


def _to_time(column: str, t: IcebergType, value: Any) -> Any:
    lo, hi = 0, MICROS_PER_DAY - 1
    if isinstance(value, bool):
        raise _fail(column, t, value, "a boolean is not a time")
    if isinstance(value, int):
        return _check_range(column, t, value, value, lo, hi)
    if isinstance(value, str):
        m = _TIME_RE.match(value.strip())
        if not m:
            raise _fail(column, t, value, "it is not an ISO-8601 time such as '10:15:30'")
        nanos = _parse_clock(column, t, value, m.groups())
        return _on_grid(column, t, value, Fraction(nanos), Fraction(1000), lo, hi)
    if isinstance(value, datetime.time):
        if value.utcoffset() is not None:
            raise _fail(column, t, value, "a time column has no zone: pass a naive time")
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return seconds * 10**6 + value.microsecond
    raise _fail(column, t, value, "write an ISO-8601 time string such as '10:15:30'")


def _to_bytes(column: str, t: IcebergType, value: Any) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
    elif isinstance(value, str):
        # Java's StringLiteral.to(binary/fixed): a hexadecimal string.
        try:
            data = bytes.fromhex(value)
        except ValueError:
            raise _fail(column, t, value, "write bytes, or a hexadecimal string") from None
    else:
        raise _fail(column, t, value, "write bytes, or a hexadecimal string")
    if isinstance(t, FixedType) and len(data) != t.length:
        raise _fail(column, t, value, f"it has {len(data)} bytes, the column holds {t.length}")
    return data


def convert_literal(value: Any, field_type: IcebergType, column: str) -> Any:
    """``value`` in ``field_type``'s Python value convention, or a :class:`Between`.

    Raises :class:`ValidationError` naming ``column`` and ``value`` when the value cannot be
    read as the type or is out of its range.
    """
    t = field_type
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise _fail(column, t, value, "write true or false")
        return value
    if isinstance(t, IntegerType):
        return _to_integer(column, t, value, INT_MIN, INT_MAX)
    if isinstance(t, LongType):
        return _to_integer(column, t, value, LONG_MIN, LONG_MAX)
    if isinstance(t, FloatType | DoubleType):
        return _to_float(column, t, value)
    if isinstance(t, DecimalType):
        return _to_decimal(column, t, value)
    if isinstance(t, DateType):
        return _to_date(column, t, value)
    if isinstance(t, TimeType):
        return _to_time(column, t, value)
    if isinstance(t, _TIMESTAMP_TYPES):
        return _to_timestamp(column, t, value)
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise _fail(column, t, value, "write a quoted string")
        return value
    if isinstance(t, UUIDType):
        if isinstance(value, uuid.UUID):
            return value
        if isinstance(value, str):
            try:
                return uuid.UUID(value.strip())
            except ValueError:
                raise _fail(column, t, value, "it is not a UUID") from None
        raise _fail(column, t, value, "write a UUID string")
    if isinstance(t, FixedType | BinaryType):
        return _to_bytes(column, t, value)
    raise ValidationError(
        f"column {column!r} has type {t}, which predicates with values do not support; "
        "only IS NULL / IS NOT NULL can test it"
    )
