"""How a Dagster partition maps onto a table: a predicate over one column, and the
values a source template may use.

A partitioned icewright asset names the table column its partitions cut
(``partition_column="ts"``). A run of one partition or of a range (a single-run
backfill) covers:

* time-window partitions (daily, hourly, ...): ``column >= start AND column < end`` with
  the window's bounds (UTC), written for the column's type (``date``: the dates;
  ``timestamp``: local time without zone; ``timestamptz``: with ``+00:00``);
* any other partitions (static, dynamic): ``column IN (<the partition keys>)``.

When the table is partitioned by a transform of that column that the windows align
with (``day(ts)`` for daily partitions), the predicate selects whole table partitions,
so the replace removes exactly their files.

Source templates (``"parquet:/landing/orders/{partition_key}/"``, ``"sql:... WHERE
day = '{start_date}'"``) are filled with :meth:`PartitionScope.template_values`:
``partition_key`` (for a range, a Hadoop glob ``{k1,k2,...}`` so that one path source
reads every partition's folder), ``partition_keys`` (the keys, comma-separated and
single-quoted, for SQL ``IN``), ``start``/``end`` (ISO timestamps, UTC) and
``start_date``/``end_date``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icewright.errors import ValidationError

if TYPE_CHECKING:
    import dagster as dg

    from icewright.spec.schema import Schema

__all__ = ["PartitionScope", "fill_template"]


@dataclass(frozen=True, slots=True)
class PartitionScope:
    """The partition keys of one run and, for time windows, the window they span."""

    keys: tuple[str, ...]
    start: dt.datetime | None = None
    end: dt.datetime | None = None

    @classmethod
    def of(cls, context: dg.AssetExecutionContext) -> PartitionScope | None:
        """The scope of ``context``'s run; None for an unpartitioned run."""
        if not (context.has_partition_key or context.has_partition_key_range):
            return None
        keys = tuple(context.partition_keys)
        try:
            window = context.partition_time_window
        except Exception:  # not a time-window partitions definition
            return cls(keys)
        return cls(keys, _utc(window.start), _utc(window.end))

    def where(self, column: str, schema: Schema) -> str:
        """The SQL predicate selecting this scope's rows in ``column`` of ``schema``."""
        field = schema.find_field(column)
        name = ".".join(f"`{part}`" for part in schema.column_name(field.field_id).split("."))
        kind = str(field.field_type)
        if self.start is None or self.end is None:
            if not self.keys:
                raise ValidationError("the run has no partition keys")
            values = ", ".join(_quote(k) for k in self.keys)
            return f"{name} IN ({values})"
        if kind == "date":
            low, high = self.start.date().isoformat(), self.end.date().isoformat()
        elif kind in ("timestamptz", "timestamptz_ns"):
            low, high = self.start.isoformat(), self.end.isoformat()
        elif kind in ("timestamp", "timestamp_ns"):
            low = self.start.replace(tzinfo=None).isoformat()
            high = self.end.replace(tzinfo=None).isoformat()
        else:
            raise ValidationError(
                f"partition_column {column!r} has type {kind}: time-window partitions need a "
                "date or timestamp column"
            )
        return f"{name} >= {_quote(low)} AND {name} < {_quote(high)}"

    def template_values(self) -> dict[str, str]:
        """What a source template may name (see the module docstring)."""
        keys = self.keys
        values = {
            "partition_key": keys[0] if len(keys) == 1 else "{" + ",".join(keys) + "}",
            "partition_keys": ", ".join(_quote(k) for k in keys),
        }
        if self.start is not None and self.end is not None:
            values.update(
                start=self.start.isoformat(),
                end=self.end.isoformat(),
                start_date=self.start.date().isoformat(),
                end_date=self.end.date().isoformat(),
            )
        return values


def fill_template(source: object, values: Mapping[str, str] | None) -> object:
    """``source`` with ``{name}`` placeholders filled (only string sources; ``{{`` is a
    literal brace). An unknown name is a :class:`ValidationError`."""
    if not isinstance(source, str) or values is None:
        return source
    try:
        return source.format_map(dict(values))
    except KeyError as e:
        raise ValidationError(
            f"the source template names {{{e.args[0]}}}, which this run does not have "
            f"(known: {', '.join(sorted(values))}); write a literal brace as {{{{ or }}}}"
        ) from None
    except (IndexError, ValueError) as e:
        raise ValidationError(f"the source template {source!r} does not parse: {e}") from None


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def keys_of(scope: PartitionScope | None) -> Sequence[str]:
    """The partition keys of ``scope`` (none for an unpartitioned run)."""
    return () if scope is None else scope.keys
