"""What the command prints: one JSON document (``--json``) or aligned text tables.

:func:`to_json_dict` is :func:`icewright.actions.results.to_jsonable`, the converter of
the actions' typed results that the Airflow operators use too.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import IO, Any

from icewright.actions.results import to_jsonable as to_json_dict

__all__ = [
    "dump_json",
    "format_bytes",
    "format_millis",
    "render_pairs",
    "render_table",
    "to_json_dict",
]


def dump_json(document: Any, stream: IO[str]) -> None:
    """Write ``document`` (converted by :func:`to_json_dict`) as one JSON document."""
    stream.write(json.dumps(to_json_dict(document), indent=2, allow_nan=False))
    stream.write("\n")
    stream.flush()


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned text table: a header line, a rule, then one line per row. Numbers are
    right-aligned, everything else left-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    numeric = [
        bool(rows)
        and all(
            isinstance(r[i], int | float) and not isinstance(r[i], bool)
            for r in rows
            if r[i] is not None
        )
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]) for i, v in enumerate(values)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def render_pairs(rows: Sequence[tuple[str, Any]]) -> str:
    """``key  value`` lines with the values aligned; rows whose value is None are left out."""
    shown = [(k, _cell(v)) for k, v in rows if v is not None]
    width = max((len(k) for k, _ in shown), default=0)
    return "\n".join(f"{k.ljust(width)}  {v}".rstrip() for k, v in shown)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, bytes):
        return value.hex()
    text = str(value)
    return text.replace("\n", " ")


def format_millis(ms: int | None) -> str:
    """Milliseconds since the epoch as ``YYYY-MM-DD HH:MM:SS`` UTC."""
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def format_bytes(size: int | None) -> str:
    """A byte count for people (``1.5 MiB``)."""
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
