"""Instants as users write them, read once for every adapter: the maintenance actions,
the operators' templated arguments and the command's ``--older-than``.

An instant is milliseconds since the epoch (an int, or its text), a ``datetime`` (without a
zone it is UTC), ISO-8601 text (``2026-01-31``, ``2026-01-31T12:00:00+00:00``; without a
zone it is UTC, as ``{{ data_interval_end }}`` renders), ``now``, an age such as ``7d``,
``12h``, ``30m``, ``90s`` or ``2w`` (that long before now), or a ``timedelta`` (likewise).
"""

from __future__ import annotations

import datetime as dt
import re
import time

from icewright.errors import ValidationError

__all__ = ["Instant", "duration_ms", "instant_ms"]

Instant = int | str | dt.datetime | dt.timedelta
"""What :func:`instant_ms` reads."""

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def instant_ms(value: object, what: str = "older_than", *, now_ms: int | None = None) -> int | None:
    """Milliseconds since the epoch of ``value`` (see the module docstring); None for None
    or empty text. ``now_ms`` fixes "now" (default: the clock). Anything else, and an
    instant before 1970 (no snapshot is that old: a typo), is a :class:`ValidationError`
    naming ``what`` and the forms it takes."""
    ms = _instant_ms(value, what, now_ms)
    if ms is not None and ms < 0:
        raise ValidationError(
            f"{what} {value!r} is before 1970-01-01, when no table existed: give a later "
            "time or a shorter age"
        )
    return ms


def duration_ms(value: object, what: str = "retain") -> int:
    """Milliseconds of a duration: an int (milliseconds) or its text, a ``timedelta``, or
    an age such as ``30d``, ``12h``, ``2w``. It must be positive; anything else is a
    :class:`ValidationError` naming ``what``."""
    ms: int | None = None
    if isinstance(value, dt.timedelta):
        ms = int(value.total_seconds() * 1000)
    elif isinstance(value, int) and not isinstance(value, bool):
        ms = value
    elif isinstance(value, str):
        text = value.strip()
        if m := _AGE.match(text):
            ms = int(float(m.group(1)) * _UNIT_SECONDS[m.group(2).lower()] * 1000)
        elif text.isdigit():
            ms = int(text)
    if ms is None or ms <= 0:
        raise ValidationError(
            f"{what} must be a positive duration such as 30d, 12h, 2w or milliseconds, "
            f"got {value!r}"
        )
    return ms


def _instant_ms(value: object, what: str, now_ms: int | None) -> int | None:
    if value is None or value == "":
        return None
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if isinstance(value, bool):
        raise ValidationError(f"{what} must be an instant, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.timedelta):
        return now - int(value.total_seconds() * 1000)
    if isinstance(value, dt.datetime):
        return _datetime_ms(value)
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be an instant, got {type(value).__name__}")
    text = value.strip()
    if text.lower() == "now":
        return now
    if m := _AGE.match(text):
        return now - int(float(m.group(1)) * _UNIT_SECONDS[m.group(2).lower()] * 1000)
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{what} {value!r} is neither milliseconds since the epoch nor a time: use 'now', "
            "an age such as 7d, 12h or 30m, or an ISO-8601 date/time such as "
            "2026-01-31T12:00:00+00:00"
        ) from None
    return _datetime_ms(parsed)


def _datetime_ms(value: dt.datetime) -> int:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return int(aware.timestamp() * 1000)
