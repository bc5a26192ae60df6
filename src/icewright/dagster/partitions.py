"""How a Dagster partitions definition maps onto a table: one column per dimension, a
predicate that selects exactly a run's partitions, and the values a source template
may use.

A partitioned icewright asset names the table column each dimension of its
partitions cuts: ``partition_column="ts"`` for a one-dimensional definition (daily,
hourly, static, dynamic), ``partition_columns={"date": "ts", "region": "region"}`` for
a :class:`dagster.MultiPartitionsDefinition`. A run of one partition or of a range (a
single-run backfill) replaces exactly the rows whose every dimension column holds one
of the run's keys:

* a time-window dimension (daily, hourly, ...) on a ``date``/``timestamp``/
  ``timestamptz`` column: ``column >= start AND column < end`` with the windows' bounds
  (UTC; adjacent windows joined), written for the column's type (``date``: the dates;
  ``timestamp``: local time without zone; ``timestamptz``: with ``+00:00``); on a
  ``string`` column: ``column IN (<the keys>)``;
* any other dimension (static, dynamic): ``column IN (<the keys>)``, on a ``string``,
  ``int``, ``long``, ``date`` or ``boolean`` column whose values the keys spell.

A multi-partition run's keys are the rows of a grid: the predicate is the ``AND`` of
each dimension's predicate when the keys are the whole grid of their dimension values
(one partition, or a rectangle of them), else the ``OR`` of one ``AND`` per key. A
definition the asset cannot map exactly (a dimension without a column, a column for no
dimension, a key its column's type cannot hold) is refused when the definitions load,
or when the run starts for what only the table or the instance knows (the schema of a
table the asset does not declare, the keys of a dynamic definition).

When the table is partitioned by a transform of that column that the windows align
with (``day(ts)`` for daily partitions), the predicate selects whole table partitions,
so the replace removes exactly their files.

Source templates (``"parquet:/landing/orders/{partition_key}/"``, ``"sql:... WHERE
day = '{start_date}'"``) are filled with :meth:`PartitionScope.template_values`:
``partition_key`` (for a range, a Hadoop glob ``{k1,k2,...}`` so that one path source
reads every partition's folder), ``partition_keys`` (the keys, comma-separated and
single-quoted, for SQL ``IN``), ``start``/``end`` (ISO timestamps, UTC) and
``start_date``/``end_date`` of the time-window dimension; and, for a multi-partition
run, each dimension's key by its name (``{region}``, a glob for several) and its keys
for SQL ``IN`` (``{region_keys}``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, TypeVar

import dagster as dg

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.spec.schema import Schema

__all__ = ["Dimension", "PartitionMapping", "PartitionScope", "fill_template"]

_TIME_TYPES = frozenset({"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"})
_KEY_TYPES = frozenset({"string", "int", "long", "date", "boolean"})
_INT_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_T = TypeVar("_T")
_TEMPLATE_NAMES = frozenset(
    {"partition_key", "partition_keys", "start", "end", "start_date", "end_date"}
)


@dataclass(frozen=True, slots=True)
class Dimension:
    """One dimension of a partitions definition and the table column it cuts."""

    name: str | None
    """The dimension's name in a multi-partitions definition; None for a one-dimensional
    definition."""
    column: str
    definition: dg.PartitionsDefinition[str]

    @property
    def windows(self) -> bool:
        """Whether the dimension's keys are time windows (daily, hourly, ...)."""
        return isinstance(self.definition, dg.TimeWindowPartitionsDefinition)

    def _label(self) -> str:
        what = "partition_column" if self.name is None else f"dimension {self.name!r}: column"
        return f"{what} {self.column!r}"

    def column_type(self, schema: Schema) -> str:
        """The column's type in ``schema``; a type the dimension's keys cannot be compared
        with is a :class:`ValidationError`."""
        kind = str(schema.find_field(self.column).field_type)
        allowed = (_TIME_TYPES | {"string"}) if self.windows else _KEY_TYPES
        if kind not in allowed:
            keys = "time-window keys" if self.windows else "partition keys"
            raise ValidationError(
                f"{self._label()} has type {kind}, which {keys} cannot be compared with: "
                f"map the dimension to a column of type {', '.join(sorted(allowed))}"
            )
        return kind

    def check_keys(self, keys: Sequence[str], kind: str) -> None:
        """Each of ``keys`` spells a value of the column's type ``kind``."""
        if self.windows or kind == "string":
            return
        for key in keys:
            _literal(key, kind, self._label())

    def check_windows(self, kind: str) -> None:
        """A ``date`` column takes windows of whole UTC days only (an hourly window, or a
        day in another time zone, is no range of dates)."""
        assert isinstance(self.definition, dg.TimeWindowPartitionsDefinition)
        window = self.definition.get_first_partition_window()
        if kind != "date" or window is None:
            return
        low, high = _utc(window.start), _utc(window.end)
        if low.time() != dt.time() or high.time() != dt.time():
            raise ValidationError(
                f"{self._label()} has type date, but the partitions are windows that do not "
                f"start and end at midnight UTC ({low.isoformat()} to {high.isoformat()}): "
                "map the dimension to a timestamp column"
            )

    def predicate(self, keys: Sequence[str], schema: Schema) -> str:
        """The SQL predicate selecting the rows of ``keys`` in this dimension's column."""
        kind = self.column_type(schema)
        field = schema.find_field(self.column)
        name = ".".join(f"`{part}`" for part in schema.column_name(field.field_id).split("."))
        if not self.windows or kind == "string":
            values = ", ".join(_literal(k, kind, self._label()) for k in _unique(keys))
            return f"{name} IN ({values})"
        ranges = [
            f"{name} >= {_quote(_bound(low, kind))} AND {name} < {_quote(_bound(high, kind))}"
            for low, high in self.spans(keys)
        ]
        return ranges[0] if len(ranges) == 1 else " OR ".join(f"({r})" for r in ranges)

    def spans(self, keys: Sequence[str]) -> list[tuple[dt.datetime, dt.datetime]]:
        """The windows of ``keys`` (UTC), adjacent ones joined, in time order."""
        assert isinstance(self.definition, dg.TimeWindowPartitionsDefinition)
        windows = sorted(
            (_utc(w.start), _utc(w.end))
            for w in map(self.definition.time_window_for_partition_key, _unique(keys))
        )
        joined: list[tuple[dt.datetime, dt.datetime]] = []
        for low, high in windows:
            if joined and joined[-1][1] >= low:
                joined[-1] = (joined[-1][0], max(joined[-1][1], high))
            else:
                joined.append((low, high))
        return joined


@dataclass(frozen=True, slots=True)
class PartitionMapping:
    """The columns an asset's partitions definition cuts, one per dimension."""

    definition: dg.PartitionsDefinition[str]
    dimensions: tuple[Dimension, ...]

    @classmethod
    def of(
        cls,
        partitions_def: dg.PartitionsDefinition[str] | None,
        partition_column: str | None = None,
        partition_columns: Mapping[str, str] | None = None,
        schema: Schema | None = None,
    ) -> PartitionMapping | None:
        """The mapping of an asset's arguments (None when it is not partitioned); with
        the declared ``schema``, the columns' types are checked now."""
        if partitions_def is None:
            if partition_column is not None or partition_columns is not None:
                raise ValidationError(
                    "partition_column(s) name the columns of the asset's partitions: give "
                    "partitions_def too"
                )
            return None
        if isinstance(partitions_def, dg.MultiPartitionsDefinition):
            names = [d.name for d in partitions_def.partitions_defs]
            wanted = ", ".join(f"{n!r}: <column>" for n in names)
            if partition_column is not None or partition_columns is None:
                raise ValidationError(
                    "a multi-partitions asset maps each dimension to its column: give "
                    f"partition_columns={{{wanted}}} (not partition_column)"
                )
            if set(partition_columns) != set(names):
                raise ValidationError(
                    f"partition_columns names {sorted(partition_columns)} but the dimensions "
                    f"are {names}: give partition_columns={{{wanted}}}"
                )
            clash = sorted(_TEMPLATE_NAMES.intersection(names))
            if clash:
                raise ValidationError(
                    f"the dimension name {clash[0]!r} is also a source placeholder: rename "
                    "the dimension"
                )
            dims = tuple(
                Dimension(d.name, partition_columns[d.name], d.partitions_def)
                for d in partitions_def.partitions_defs
            )
        else:
            if partition_column is None:
                raise ValidationError(
                    "partitions_def and partition_column go together: partition_column names "
                    "the table column the asset's partitions cut (e.g. 'ts' for daily "
                    "partitions)"
                )
            if partition_columns is not None:
                raise ValidationError(
                    "partition_columns is for a multi-partitions definition: give "
                    f"partition_column={partition_column!r} alone"
                )
            dims = (Dimension(None, partition_column, partitions_def),)
        mapping = cls(partitions_def, dims)
        if schema is not None:
            mapping.check(schema)
        return mapping

    @classmethod
    def for_templates(
        cls, partitions_def: dg.PartitionsDefinition[str] | None
    ) -> PartitionMapping | None:
        """A mapping that cuts no column: its scopes name a run's partitions (commit key,
        source placeholders) for an asset that selects no rows by them (a merge, a
        delete). None when not partitioned."""
        if partitions_def is None:
            return None
        if isinstance(partitions_def, dg.MultiPartitionsDefinition):
            dims = tuple(
                Dimension(d.name, "", d.partitions_def) for d in partitions_def.partitions_defs
            )
        else:
            dims = (Dimension(None, "", partitions_def),)
        return cls(partitions_def, dims)

    def check(self, schema: Schema) -> None:
        """Each column exists in ``schema`` with a type its dimension's keys fit (the keys
        of a dynamic definition are checked per run)."""
        for dim in self.dimensions:
            kind = dim.column_type(schema)
            if dim.windows:
                dim.check_windows(kind)
            elif not isinstance(dim.definition, dg.DynamicPartitionsDefinition):
                dim.check_keys(dim.definition.get_partition_keys(), kind)

    def scope(self, context: dg.AssetExecutionContext) -> PartitionScope | None:
        """The scope of ``context``'s run; None for an unpartitioned run."""
        if not (context.has_partition_key or context.has_partition_key_range):
            return None
        return PartitionScope(self, tuple(context.partition_keys))

    def split(self, key: str) -> tuple[str, ...]:
        """A partition key's key in each dimension."""
        if not isinstance(self.definition, dg.MultiPartitionsDefinition):
            return (key,)
        by_dimension = self.definition.get_partition_key_from_str(key).keys_by_dimension
        return tuple(by_dimension[d.name] for d in self.dimensions if d.name is not None)


@dataclass(frozen=True, slots=True)
class PartitionScope:
    """The partition keys of one run, and the mapping that says what they select."""

    mapping: PartitionMapping
    keys: tuple[str, ...]

    def _grid(self) -> tuple[list[tuple[str, ...]], list[list[str]]]:
        rows = _unique([self.mapping.split(k) for k in self.keys])
        columns = [_unique([row[i] for row in rows]) for i in range(len(self.mapping.dimensions))]
        return rows, columns

    def where(self, schema: Schema) -> str:
        """The SQL predicate selecting this scope's rows of a table of ``schema``."""
        if not self.keys:
            raise ValidationError("the run has no partition keys")
        dims = self.mapping.dimensions
        self.mapping.check(schema)
        rows, columns = self._grid()
        if len(rows) == len(list(product(*columns))):
            parts = [d.predicate(vals, schema) for d, vals in zip(dims, columns, strict=True)]
            return _conjunction(parts)
        return " OR ".join(
            "("
            + _conjunction([d.predicate([v], schema) for d, v in zip(dims, row, strict=True)])
            + ")"
            for row in rows
        )

    def template_values(self) -> dict[str, str]:
        """What a source template may name (see the module docstring)."""
        keys = self.keys
        values = {"partition_key": _glob(keys), "partition_keys": _quoted(keys)}
        _, columns = self._grid()
        for dim, vals in zip(self.mapping.dimensions, columns, strict=True):
            if dim.name is not None:
                values[dim.name] = _glob(vals)
                values[f"{dim.name}_keys"] = _quoted(vals)
            if dim.windows:
                spans = dim.spans(vals)
                start, end = spans[0][0], spans[-1][1]
                values.update(
                    start=start.isoformat(),
                    end=end.isoformat(),
                    start_date=start.date().isoformat(),
                    end_date=end.date().isoformat(),
                )
        return values


SENSOR_VALUES = ("snapshot_source", "snapshot_changelog")
"""The template values only a run that a snapshot sensor started has."""


def fill_template(source: object, values: Mapping[str, str] | None) -> object:
    """``source`` with ``{name}`` placeholders filled (only string sources; ``{{`` is a
    literal brace). An unknown name is a :class:`ValidationError`, and so is a sensor's
    value (``{snapshot_source}``) in a run that no sensor started, even when nothing else
    is filled."""
    if isinstance(source, str) and not (values or {}).get("snapshot_source"):
        for name in SENSOR_VALUES:
            if "{" + name + "}" in source:
                raise ValidationError(
                    f"the source names {{{name}}}, the snapshots an iceberg_snapshot_sensor "
                    "announced, but no sensor started this run (it has no icewright/source "
                    "tag): materialize it from the sensor's runs"
                )
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


def keys_of(scope: PartitionScope | None) -> Sequence[str]:
    """The partition keys of ``scope`` (none for an unpartitioned run)."""
    return () if scope is None else scope.keys


def _literal(key: str, kind: str, label: str) -> str:
    """``key`` as a SQL literal of the column type ``kind``."""
    if kind == "string":
        return _quote(key)
    try:
        if kind in _INT_RANGES:
            value = int(key)
            low, high = _INT_RANGES[kind]
            if not low <= value <= high or key.strip() != key:
                raise ValueError
            return str(value)
        if kind == "date":
            return _quote(dt.date.fromisoformat(key).isoformat())
        if kind == "boolean" and key.lower() in ("true", "false"):
            return key.lower()
    except ValueError:
        pass
    raise ValidationError(
        f"{label} has type {kind}, which the partition key {key!r} does not spell: give keys "
        f"that are {kind} values or map the dimension to a string column"
    )


def _bound(value: dt.datetime, kind: str) -> str:
    if kind == "date":
        return value.date().isoformat()
    if kind in ("timestamp", "timestamp_ns"):
        return value.replace(tzinfo=None).isoformat()
    return value.isoformat()


def _conjunction(parts: Sequence[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return " AND ".join(f"({p})" if " OR " in p else p for p in parts)


def _unique(items: Sequence[_T]) -> list[_T]:
    return list(dict.fromkeys(items))


def _glob(keys: Sequence[str]) -> str:
    return keys[0] if len(keys) == 1 else "{" + ",".join(keys) + "}"


def _quoted(keys: Sequence[str]) -> str:
    return ", ".join(_quote(k) for k in keys)


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
