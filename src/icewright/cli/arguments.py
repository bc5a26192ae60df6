"""Argument values the verbs share: instants (``--older-than``), sizes, ``K=V`` pairs.

These are argparse ``type=`` functions: a bad value raises ``argparse.ArgumentTypeError``,
which argparse reports as a usage error (exit 2) naming the option.
"""

from __future__ import annotations

import argparse
import re

from icewright.actions.instants import instant_ms as parse_instant
from icewright.errors import ValidationError

__all__ = [
    "add_distributed",
    "add_target",
    "instant_ms",
    "key_value",
    "positive_int",
    "size_bytes",
    "snapshot_ref",
]

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def add_target(p: argparse.ArgumentParser, *, staging: bool = True) -> None:
    """``--branch`` (where a write commits) and, with ``staging``, ``--wap-id`` (stage
    the snapshot for write-audit-publish instead)."""
    p.add_argument(
        "--branch",
        default="main",
        metavar="BRANCH",
        help="commit to this branch (created by the write when missing; default main)",
    )
    if staging:
        p.add_argument(
            "--wap-id",
            metavar="ID",
            help="stage the snapshot under this write-audit-publish id without moving any "
            "branch (needs write.wap.enabled=true); publish it with icewright publish --wap-id",
        )


def instant_ms(text: str, *, now_ms: int | None = None) -> int:
    """Milliseconds since the epoch for ``text``: ``now``; an age such as ``7d``, ``12h``,
    ``30m``, ``90s``, ``2w`` (that long before now); an ISO-8601 date or date-time (a time
    without a zone is UTC); or a number of milliseconds since the epoch
    (:func:`icewright.actions.instants.instant_ms`)."""
    try:
        value = parse_instant(text, "time", now_ms=now_ms)
    except ValidationError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: use 'now', an age such as 7d, 12h or 30m, an ISO "
            "date/time such as 2026-01-31T12:00:00+00:00, or epoch milliseconds"
        )
    return value


def size_bytes(text: str) -> int:
    """A byte count: ``134217728``, ``128M``, ``128MiB``, ``1.5G`` (binary units)."""
    m = _SIZE.match(text)
    if m is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: use bytes, or a number with K, M, G or T (e.g. 512M)"
        )
    value = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the size must be positive")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def non_negative_float(text: str) -> float:
    """A number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return value


def key_value(text: str) -> tuple[str, str]:
    """``K=V`` as a pair (the value may contain ``=``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


def snapshot_ref(text: str) -> int | str:
    """A snapshot id, or ``current`` (the branch head when the command starts)."""
    if text.strip().lower() in ("current", "latest"):
        return "current"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a snapshot id (a whole number) or 'current'"
        ) from None


WHERE_HELP = (
    "a Spark SQL predicate; a row matches only where it is TRUE, as in Spark SQL: "
    '"region != \'eu\'" does not match a NULL region (add "OR region IS NULL" for that), '
    "and NaN sorts above every number"
)


def add_distributed(parser: argparse.ArgumentParser) -> None:
    """``--distributed`` / ``--no-distributed``: plan on Spark, or here; neither: by the
    table's size (:mod:`icewright.actions.distributed`)."""
    parser.add_argument(
        "--distributed",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="read the manifests in a Spark job (on --master), or here with "
        "--no-distributed (default: by icewright.maintenance.distributed.min-data-files)",
    )
