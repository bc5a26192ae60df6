"""What the command prints: one JSON document (``--json``) or aligned text tables.

:func:`to_json_dict` turns the actions' typed results (frozen dataclasses holding
mappings, tuples, snapshots, schemas and commit results) into plain JSON values; it is
the one converter every verb uses.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import IO, Any

__all__ = [
    "dump_json",
    "format_bytes",
    "format_millis",
    "render_pairs",
    "render_table",
    "to_json_dict",
]


def to_json_dict(value: Any) -> Any:
    """``value`` as JSON-able data: dataclasses become objects of their fields, mappings
    objects with string keys, tuples/lists/sets arrays; enums their value; decimals,
    uuids and dates their text; bytes base64; non-finite floats their text. A catalog
    ``Table``/``View`` handle becomes its name; objects with a ``to_json`` returning a
    dict (schemas, snapshots, specs) use it."""
    from icewright.catalog.base import Catalog, Table, View
    from icewright.io.base import FileIO

    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return to_json_dict(value.value)
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Table | View):
        return str(value.identifier)
    if isinstance(value, Catalog | FileIO):
        return None
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and (not dataclasses.is_dataclass(value) or _prefers_to_json(value)):
        try:
            out = to_json()
        except TypeError:
            out = None
        if isinstance(out, dict | list):
            return to_json_dict(out)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        result: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            result[f.name] = to_json_dict(getattr(value, f.name))
        for name in _EXTRA_PROPERTIES.get(type(value).__name__, ()):
            result[name] = to_json_dict(getattr(value, name))
        return result
    if isinstance(value, Mapping):
        return {str(to_json_dict(k)): to_json_dict(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset):
        return [to_json_dict(v) for v in value]
    return str(value)


_EXTRA_PROPERTIES: dict[str, tuple[str, ...]] = {"WaitResult": ("found",)}
"""Computed properties worth showing next to a result's fields."""


def _prefers_to_json(value: Any) -> bool:
    """Spec dataclasses whose JSON form (Appendix C) reads better than their fields."""
    return type(value).__name__ in ("Snapshot", "PartitionSpec", "SortOrder", "SnapshotRef")


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
