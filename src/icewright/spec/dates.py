"""Dates and times of day without :mod:`datetime` (which covers years 1..9999 only): the
proleptic Gregorian calendar for any year, and the text forms Iceberg uses (ISO-8601 as
java.time writes it). :mod:`icewright.spec.values` builds the JSON and human forms of
temporal values on these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.types import IcebergType

__all__ = [
    "clock",
    "days_to_ymd",
    "fixed_clock",
    "iso_date",
    "iso_year",
    "java_iso_clock",
    "java_local_time",
    "parse_clock_parts",
    "parse_date_parts",
    "ymd_to_days",
]


def days_to_ymd(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01; year 0 is 1 BC, as in Java."""
    z = days + 719_468  # shift the epoch to 0000-03-01 so leap days end each 400-year era
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def ymd_to_days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (inverse of :func:`days_to_ymd`)."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def iso_year(year: int) -> str:
    """java.time ISO_LOCAL_DATE's year: 4 digits, a sign when negative or longer."""
    if year > 9999:
        return f"+{year}"
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def iso_date(days: int) -> str:
    """The ISO-8601 date of a day count from 1970-01-01 (any year)."""
    y, m, d = days_to_ymd(days)
    return f"{iso_year(y)}-{m:02d}-{d:02d}"


def clock(nanos_of_day: int) -> tuple[int, int, int, int]:
    """(hour, minute, second, nanosecond) of a time of day in nanoseconds."""
    seconds, nanos = divmod(nanos_of_day, 1_000_000_000)
    minutes, s = divmod(seconds, 60)
    h, mi = divmod(minutes, 60)
    return h, mi, s, nanos


def fixed_clock(value_of_day: int, digits: int) -> str:
    """HH:MM:SS.fff with exactly ``digits`` fractional digits (JSON form)."""
    h, mi, s, nanos = clock(value_of_day * 10 ** (9 - digits))
    return f"{h:02d}:{mi:02d}:{s:02d}.{nanos // 10 ** (9 - digits):0{digits}d}"


def java_iso_clock(nanos_of_day: int) -> str:
    """java.time ISO_LOCAL_TIME: seconds always, fraction without trailing zeros."""
    h, mi, s, nanos = clock(nanos_of_day)
    frac = f".{nanos:09d}".rstrip("0") if nanos else ""
    return f"{h:02d}:{mi:02d}:{s:02d}{frac}"


def java_local_time(nanos_of_day: int) -> str:
    """java.time LocalTime.toString(): seconds only if set, fraction in groups of 3 digits."""
    h, mi, s, nanos = clock(nanos_of_day)
    out = f"{h:02d}:{mi:02d}"
    if s or nanos:
        out += f":{s:02d}"
    if nanos:
        frac = f"{nanos:09d}"
        groups = 1 if nanos % 1_000_000 == 0 else 2 if nanos % 1000 == 0 else 3
        out += "." + frac[: 3 * groups]
    return out


def parse_date_parts(t: IcebergType, text: str, y: str, mo: str, d: str) -> int:
    """Days from 1970-01-01 of a date given as regex groups (year, month, day) of
    ``text``; a date that does not exist is an error naming ``t``."""
    year, month, day = int(y), int(mo), int(d)
    if (
        not 1 <= month <= 12
        or not 1 <= day <= 31
        or days_to_ymd(ymd_to_days(year, month, day)) != (year, month, day)
    ):
        raise ValidationError(f"{text!r} is not a valid calendar date for {t}")
    return ymd_to_days(year, month, day)


def parse_clock_parts(t: IcebergType, text: str, parts: Sequence[Any], digits: int) -> int:
    """Units of 10**-digits s since midnight from regex groups (hour, minute, second, frac)."""
    h, mi, s, frac = parts
    hour, minute, second = int(h), int(mi), int(s or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValidationError(f"{text!r} is not a valid time of day for {t}")
    nanos = int((frac or "").ljust(9, "0"))
    per_unit: int = 10 ** (9 - digits)
    if nanos % per_unit:
        raise ValidationError(f"{text!r} has more fractional-second digits than {t} can hold")
    return (hour * 3600 + minute * 60 + second) * (10**9 // per_unit) + nanos // per_unit
