"""instant_ms: the one reader of instants (actions, operators' templated arguments, the
command's --older-than)."""

from __future__ import annotations

import datetime as dt

import pytest

from icewright.actions.instants import instant_ms
from icewright.errors import ValidationError

NOW = 1_800_000_000_000
JAN2 = int(dt.datetime(2026, 1, 2, tzinfo=dt.UTC).timestamp() * 1000)


def test_every_form_of_an_instant() -> None:
    assert instant_ms(None) is None and instant_ms("") is None
    assert instant_ms(1_700_000_000_000) == 1_700_000_000_000
    assert instant_ms(" 1700000000000 ") == 1_700_000_000_000
    assert instant_ms("2026-01-02T00:00:00Z") == JAN2
    assert instant_ms("2026-01-02T00:00:00") == JAN2  # no zone: UTC
    assert instant_ms("2026-01-02") == JAN2
    assert instant_ms(dt.datetime(2026, 1, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))) == JAN2
    assert instant_ms(dt.datetime(2026, 1, 2)) == JAN2
    assert instant_ms("now", now_ms=NOW) == NOW
    assert instant_ms("7d", now_ms=NOW) == NOW - 7 * 86_400_000
    assert instant_ms("1.5h", now_ms=NOW) == NOW - 5_400_000
    assert instant_ms(dt.timedelta(hours=1), now_ms=NOW) == NOW - 3_600_000


@pytest.mark.parametrize("bad", ["yesterday", "7 fortnights", True, 1.5, [1]])
def test_anything_else_is_a_validation_error_naming_the_argument(bad: object) -> None:
    with pytest.raises(ValidationError, match="older_than"):
        instant_ms(bad)
