"""Iceberg schemas as Spark ``StructType`` and back, and aligning a DataFrame to a table.

* :func:`to_spark_schema` gives the Spark schema of an Iceberg schema; every field,
  nested ones included, carries its Iceberg id under the StructField metadata key
  ``parquet.field.id`` (what Spark reads with ``spark.sql.parquet.fieldId.read.enabled``).
  Spark has no place for the ids of list elements and map keys and values.
* :func:`schema_from_spark` derives a new Iceberg schema from a DataFrame ("create from
  a source"), with fresh ids in Iceberg Java's ``assignFreshIds`` order.
* :func:`align_columns` matches a source DataFrame's columns to a table schema by name
  with only the spec's safe widenings (spec: "Schema Evolution": int -> long,
  float -> double, decimal precision widening); it reports missing required columns,
  extra columns and incompatible types all at once, or, when schema evolution is
  asked for, turns extra columns into columns to add.

Spark types per Iceberg type: boolean, int, long, float, double, decimal, date and
string map one to one; ``timestamptz`` is Spark's ``TIMESTAMP`` and ``timestamp`` its
``TIMESTAMP_NTZ``; ``uuid`` is a string (as Iceberg's own Spark integration shows it)
and ``fixed`` and ``binary`` are ``BINARY``; ``time`` is ``TIME(6)`` where Spark has it
(4.1+). Spark has no nanosecond timestamps, variants or geospatial types for Iceberg.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.spec.schema import Schema, fresh_ids
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
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from icewright.spec.values import from_json_value

__all__ = [
    "FIELD_ID_KEY",
    "INVALID_VALUE_MARKER",
    "AddedColumn",
    "Alignment",
    "align_columns",
    "from_spark_type",
    "has_time_type",
    "schema_from_spark",
    "to_spark_field",
    "to_spark_schema",
    "to_spark_type",
    "write_spark_type",
]

FIELD_ID_KEY = "parquet.field.id"
"""StructField metadata key of the Parquet field id (Spark's ``ParquetUtils``)."""

INVALID_VALUE_MARKER = "icewright-invalid-value: "
"""Prefix of the ``raise_error`` message a bad source value stops a Spark job with."""

_UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def has_time_type() -> bool:
    """Whether this PySpark has a ``TIME`` type (Spark 4.1+) for Iceberg's ``time``."""
    return hasattr(T, "TimeType")


# --- Iceberg -> Spark -----------------------------------------------------------


def to_spark_type(t: IcebergType) -> T.DataType:
    """The Spark type that shows values of Iceberg type ``t`` (uuid as a string)."""
    return _spark_type(t, write=False)


def write_spark_type(t: IcebergType) -> T.DataType:
    """The Spark type the write job carries ``t`` in: as :func:`to_spark_type`, but a
    uuid is its 16 bytes (spec: Appendix A stores it as ``fixed_len_byte_array[16]``)
    and struct fields carry no metadata."""
    return _spark_type(t, write=True)


_SIMPLE_TYPES: dict[type, T.DataType] = {
    BooleanType: T.BooleanType(),
    IntegerType: T.IntegerType(),
    LongType: T.LongType(),
    FloatType: T.FloatType(),
    DoubleType: T.DoubleType(),
    DateType: T.DateType(),
    TimestampType: T.TimestampNTZType(),
    TimestamptzType: T.TimestampType(),
    StringType: T.StringType(),
    BinaryType: T.BinaryType(),
    FixedType: T.BinaryType(),
}


def _spark_type(t: IcebergType, *, write: bool) -> T.DataType:
    if type(t) in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[type(t)]
    if isinstance(t, UUIDType):
        return T.BinaryType() if write else T.StringType()
    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    if isinstance(t, TimeType):
        if not has_time_type():
            raise ValidationError(
                "Iceberg's time type needs Spark 4.1 or later (TIME(6)); this PySpark "
                f"{_pyspark_version()} has no time type"
            )
        return T.TimeType(6)
    if isinstance(t, StructType):
        if write:
            return T.StructType(
                [
                    T.StructField(f.name, _spark_type(f.field_type, write=True), not f.required)
                    for f in t.fields
                ]
            )
        return T.StructType([to_spark_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return T.ArrayType(_spark_type(t.element_type, write=write), not t.element_required)
    if isinstance(t, MapType):
        return T.MapType(
            _spark_type(t.key_type, write=write),
            _spark_type(t.value_type, write=write),
            not t.value_required,
        )
    raise ValidationError(
        f"Spark cannot carry Iceberg type {t}: it has no nanosecond timestamps, variants, "
        "geometry or geography; write such tables with another engine"
    )


def to_spark_field(f: NestedField) -> T.StructField:
    """``f`` as a StructField with its id (and its doc as the column comment)."""
    metadata: dict[str, Any] = {FIELD_ID_KEY: f.field_id}
    if f.doc:
        metadata["comment"] = f.doc
    return T.StructField(f.name, to_spark_type(f.field_type), not f.required, metadata)


def to_spark_schema(schema: Schema) -> T.StructType:
    """The Spark schema of ``schema``; every struct field carries ``parquet.field.id``."""
    return T.StructType([to_spark_field(f) for f in schema.fields])


def _pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


# --- Spark -> Iceberg -----------------------------------------------------------


def from_spark_type(data_type: T.DataType, next_id: Callable[[], int]) -> IcebergType:
    """The Iceberg type of a Spark type, nested ids drawn from ``next_id``.

    Ids are drawn in Iceberg Java's ``TypeUtil.assignFreshIds`` order
    (:func:`icewright.spec.schema.fresh_ids`), which is also the order icewright's
    ``UpdateSchema`` uses.
    """
    placeholders = itertools.count(1)
    return fresh_ids(_converted(data_type, lambda: next(placeholders)), next_id)


def _converted(data_type: T.DataType, next_id: Callable[[], int]) -> IcebergType:
    """The Iceberg type of a Spark type, with placeholder ids from ``next_id``."""
    d = data_type
    if isinstance(d, T.BooleanType):
        return BooleanType()
    if isinstance(d, T.ByteType | T.ShortType | T.IntegerType):
        return IntegerType()
    if isinstance(d, T.LongType):
        return LongType()
    if isinstance(d, T.FloatType):
        return FloatType()
    if isinstance(d, T.DoubleType):
        return DoubleType()
    if isinstance(d, T.DecimalType):
        return DecimalType(d.precision, d.scale)
    if isinstance(d, T.DateType):
        return DateType()
    if isinstance(d, T.TimestampNTZType):
        return TimestampType()
    if isinstance(d, T.TimestampType):
        return TimestamptzType()
    if isinstance(d, T.StringType | T.VarcharType | T.CharType):
        return StringType()
    if isinstance(d, T.BinaryType):
        return BinaryType()
    if has_time_type() and isinstance(d, T.TimeType):
        return TimeType()
    if isinstance(d, T.StructType):
        return StructType(
            *[
                NestedField(
                    next_id(), f.name, _converted(f.dataType, next_id), not f.nullable, _doc(f)
                )
                for f in d.fields
            ]
        )
    if isinstance(d, T.ArrayType):
        return ListType(next_id(), _converted(d.elementType, next_id), not d.containsNull)
    if isinstance(d, T.MapType):
        key_id, value_id = next_id(), next_id()
        key = _converted(d.keyType, next_id)
        value = _converted(d.valueType, next_id)
        return MapType(key_id, key, value_id, value, not d.valueContainsNull)
    raise ValidationError(
        f"Spark type {d.simpleString()} has no Iceberg type; cast the column to one that "
        "has (e.g. intervals to a long, a void column to a typed null)"
    )


def _doc(f: T.StructField) -> str | None:
    comment = (f.metadata or {}).get("comment")
    return str(comment) if comment else None


def schema_from_spark(struct: T.StructType, *, required_as_nullable: bool = False) -> Schema:
    """A new Iceberg schema for a Spark schema: fresh ids from 1, as Java assigns them.

    A non-nullable Spark field becomes a required column unless
    ``required_as_nullable``.
    """
    counter = iter(range(1, 1 << 31))
    t = from_spark_type(struct, lambda: next(counter))
    assert isinstance(t, StructType)
    if not required_as_nullable:
        return Schema(*t.fields)
    return Schema(*[_optional(f) for f in t.fields])


def _optional(f: NestedField) -> NestedField:
    return NestedField(f.field_id, f.name, f.field_type, False, f.doc)


# --- aligning a source to a table schema ------------------------------------------


@dataclass(frozen=True, slots=True)
class AddedColumn:
    """A column the source has and the table lacks (schema evolution).

    ``parent`` names the struct it goes into (``()`` for the table itself; a list or map
    column for the struct of its elements or values), as ``UpdateSchema.add_column``
    takes it: ``add_column((*parent, field.name), field.field_type)``. ``field`` carries
    the ids the data files were written with.
    """

    parent: tuple[str, ...]
    field: NestedField


@dataclass(frozen=True, slots=True)
class Alignment:
    """The source's columns as the table's: one expression per top-level field."""

    columns: tuple[Column, ...]
    schema: Schema
    added: tuple[AddedColumn, ...]


def align_columns(
    source: T.StructType,
    schema: Schema,
    *,
    allow_evolution: bool = False,
    last_column_id: int | None = None,
    case_sensitive: bool = False,
) -> Alignment:
    """Match ``source`` (a DataFrame's schema) to ``schema`` by name.

    Each result column is the source column cast only where the spec promotes safely
    (int -> long, float -> double, decimal(P,S) -> decimal(P',S)), a uuid string parsed
    to its 16 bytes, or a null (or the field's write default) for a missing optional
    column. Raises :class:`ValidationError` naming every missing required column, every
    extra column and every incompatible type. With ``allow_evolution``, extra columns
    (nested ones too) become :class:`AddedColumn` s with ids from ``last_column_id + 1``
    (default: the schema's highest id), in the order ``UpdateSchema.add_column`` would
    assign them. Names match exactly first, then case-insensitively unless
    ``case_sensitive``. Nulls in required columns are checked while writing.
    """
    start = max(last_column_id or 0, schema.highest_field_id)
    counter = iter(range(start + 1, 1 << 31))
    aligner = _Aligner(allow_evolution, lambda: next(counter), case_sensitive)
    columns, fields = aligner.struct(lambda name: F.col(_quote(name)), source, schema.fields, ())
    aligner.raise_errors()
    evolved = schema
    if aligner.added:
        evolved = Schema(
            *fields,
            schema_id=schema.schema_id,
            identifier_field_ids=schema.identifier_field_ids,
        )
    named = tuple(c.alias(f.name) for c, f in zip(columns, fields, strict=True))
    return Alignment(named, evolved, tuple(aligner.added))


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class _Aligner:
    """One walk over the target schema; collects every problem before raising."""

    def __init__(self, allow_evolution: bool, next_id: Callable[[], int], case: bool) -> None:
        self.allow_evolution = allow_evolution
        self.next_id = next_id
        self.case_sensitive = case
        self.missing: list[str] = []
        self.extra: list[str] = []
        self.bad: list[str] = []
        self.added: list[AddedColumn] = []

    def raise_errors(self) -> None:
        problems = []
        if self.missing:
            problems.append(f"required columns missing from the source: {self.missing}")
        if self.extra:
            problems.append(
                f"columns the table does not have: {self.extra} (drop them, or allow schema "
                "evolution to add them)"
            )
        problems.extend(self.bad)
        if problems:
            text = "; ".join(problems)
            raise ValidationError(f"the source does not fit the table schema: {text}")

    def _match(self, source: T.StructType, name: str) -> T.StructField | None:
        for f in source.fields:
            if f.name == name:
                return f
        if self.case_sensitive:
            return None
        found = [f for f in source.fields if f.name.lower() == name.lower()]
        return found[0] if len(found) == 1 else None

    def struct(
        self,
        child: Callable[[str], Column],
        source: T.StructType,
        targets: Sequence[NestedField],
        path: tuple[str, ...],
    ) -> tuple[list[Column], list[NestedField]]:
        """Columns for ``targets`` from struct ``source`` at Iceberg path ``path``."""
        columns: list[Column] = []
        fields: list[NestedField] = []
        used: set[str] = set()
        for target in targets:
            match = self._match(source, target.name)
            if match is None:
                if target.required and target.write_default is None:
                    self.missing.append(".".join((*path, target.name)))
                columns.append(_default_column(target))
                fields.append(target)
                continue
            used.add(match.name)
            column, field, _ = self.value(child(match.name), match.dataType, target, path)
            columns.append(column)
            fields.append(field)
        for extra in source.fields:
            if extra.name in used:
                continue
            if not self.allow_evolution:
                self.extra.append(".".join((*path, extra.name)))
                continue
            field_id = self.next_id()
            new_type = from_spark_type(extra.dataType, self.next_id)
            added = NestedField(field_id, extra.name, new_type, False, _doc(extra))
            self.added.append(AddedColumn(path, added))
            column, field, _ = self.value(child(extra.name), extra.dataType, added, path)
            columns.append(column)
            fields.append(field)
        return columns, fields

    def value(
        self, expr: Column, source: T.DataType, target: NestedField, parent: tuple[str, ...]
    ) -> tuple[Column, NestedField, bool]:
        """``expr`` (Spark type ``source``) as a value of ``target``: the column, the
        field (its type grown by added nested columns) and whether anything changed."""
        t = target.field_type
        path = (*parent, target.name)
        if isinstance(source, T.NullType):
            return F.lit(None).cast(write_spark_type(t)), target, True
        if isinstance(t, StructType):
            if not isinstance(source, T.StructType):
                return self._mismatch(path, source, target)
            cols, fields = self.struct(expr.getField, source, t.fields, path)
            rebuilt = F.struct(*[c.alias(f.name) for c, f in zip(cols, fields, strict=True)])
            column = F.when(expr.isNull(), F.lit(None)).otherwise(rebuilt)
            return column, replace(target, field_type=StructType(*fields)), True
        if isinstance(t, ListType):
            if not isinstance(source, T.ArrayType):
                return self._mismatch(path, source, target)
            return self._list(expr, source, target, t, path)
        if isinstance(t, MapType):
            if not isinstance(source, T.MapType):
                return self._mismatch(path, source, target)
            return self._map(expr, source, target, t, path)
        return self._primitive(expr, source, target, path)

    def _list(
        self,
        expr: Column,
        source: T.ArrayType,
        target: NestedField,
        t: ListType,
        path: tuple[str, ...],
    ) -> tuple[Column, NestedField, bool]:
        seen: dict[str, Any] = {}

        def element(x: Column) -> Column:
            column, field, changed = self.value(x, source.elementType, t.element_field, path)
            seen.update(field=field, changed=changed)
            return column

        mapped = F.transform(expr, element)  # builds the lambda (and calls element) now
        if not seen["changed"]:
            return expr, target, False
        new_type = ListType(t.element_id, seen["field"].field_type, t.element_required)
        return mapped, replace(target, field_type=new_type), True

    def _map(
        self,
        expr: Column,
        source: T.MapType,
        target: NestedField,
        t: MapType,
        path: tuple[str, ...],
    ) -> tuple[Column, NestedField, bool]:
        seen: dict[str, Any] = {}

        def entry(e: Column) -> Column:
            key, key_field, key_changed = self.value(e["key"], source.keyType, t.key_field, path)
            value, value_field, value_changed = self.value(
                e["value"], source.valueType, t.value_field, path
            )
            seen.update(key=key_field, value=value_field, changed=key_changed or value_changed)
            return F.struct(key.alias("key"), value.alias("value"))

        mapped = F.map_from_entries(F.transform(F.map_entries(expr), entry))
        if not seen["changed"]:
            return expr, target, False
        new_type = MapType(
            t.key_id, seen["key"].field_type, t.value_id, seen["value"].field_type, t.value_required
        )
        return mapped, replace(target, field_type=new_type), True

    def _mismatch(
        self, path: tuple[str, ...], source: T.DataType, target: NestedField
    ) -> tuple[Column, NestedField, bool]:
        self.bad.append(
            f"column {'.'.join(path)!r} is {source.simpleString()} in the source but "
            f"{target.field_type} in the table"
        )
        return F.lit(None), target, True

    def _primitive(
        self, expr: Column, source: T.DataType, target: NestedField, path: tuple[str, ...]
    ) -> tuple[Column, NestedField, bool]:
        t = target.field_type
        if not _writable_as(source, t):
            return self._mismatch(path, source, target)
        if isinstance(t, UUIDType) and not isinstance(source, T.BinaryType):
            return _parse_uuid(expr, ".".join(path)), target, True
        spark_type = write_spark_type(t)
        if source == spark_type:
            return expr, target, False
        return expr.cast(spark_type), target, True


def _writable_as(source: T.DataType, t: IcebergType) -> bool:
    """Whether a Spark value of type ``source`` may be written to Iceberg type ``t``."""
    strings = T.StringType | T.VarcharType | T.CharType
    if isinstance(t, BooleanType):
        return isinstance(source, T.BooleanType)
    if isinstance(t, IntegerType):
        return isinstance(source, T.ByteType | T.ShortType | T.IntegerType)
    if isinstance(t, LongType):
        return isinstance(source, T.ByteType | T.ShortType | T.IntegerType | T.LongType)
    if isinstance(t, FloatType):
        return isinstance(source, T.FloatType)
    if isinstance(t, DoubleType):
        return isinstance(source, T.FloatType | T.DoubleType)
    if isinstance(t, DecimalType):
        # spec "Schema Evolution": decimal(P, S) -> decimal(P', S) with P' >= P
        return (
            isinstance(source, T.DecimalType)
            and source.scale == t.scale
            and source.precision <= t.precision
        )
    if isinstance(t, DateType):
        return isinstance(source, T.DateType)
    if isinstance(t, TimestampType):
        return isinstance(source, T.TimestampNTZType)
    if isinstance(t, TimestamptzType):
        return isinstance(source, T.TimestampType) and not isinstance(source, T.TimestampNTZType)
    if isinstance(t, StringType):
        return isinstance(source, strings)
    if isinstance(t, UUIDType):
        return isinstance(source, strings | T.BinaryType)
    if isinstance(t, FixedType | BinaryType):
        return isinstance(source, T.BinaryType)
    if isinstance(t, TimeType):
        return has_time_type() and isinstance(source, T.TimeType)
    return False


def _parse_uuid(expr: Column, label: str) -> Column:
    """A uuid string as its 16 bytes; a malformed one stops the job with a marked error."""
    text = F.lower(expr)
    return (
        F.when(expr.isNull(), F.lit(None).cast(T.BinaryType()))
        .when(text.rlike(_UUID_PATTERN), F.unhex(F.regexp_replace(text, "-", "")))
        .otherwise(
            F.raise_error(
                F.concat(F.lit(f"{INVALID_VALUE_MARKER}column {label!r}: not a UUID: "), expr)
            ).cast(T.BinaryType())
        )
    )


def _default_column(f: NestedField) -> Column:
    """A missing column: its write default (spec v3 "Default values"), else null."""
    spark_type = write_spark_type(f.field_type)
    if f.write_default is None:
        return F.lit(None).cast(spark_type)
    return literal(f.field_type, from_json_value(f.field_type, f.write_default))


def literal(t: IcebergType, value: Any) -> Column:
    """A Spark literal of Iceberg type ``t`` from a value in icewright's Python form."""
    spark_type = write_spark_type(t)
    if value is None:
        return F.lit(None).cast(spark_type)
    if isinstance(t, DateType):
        return F.lit(dt.date(1970, 1, 1) + dt.timedelta(days=int(value)))
    if isinstance(t, TimestampType):
        # A wall-clock value: going through an instant would shift it by the session time
        # zone, so cast its text (no zone involved) instead.
        wall = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(value))
        return F.lit(wall.isoformat(sep=" ")).cast(spark_type)
    if isinstance(t, TimestamptzType):
        return F.timestamp_micros(F.lit(int(value))).cast(spark_type)
    if isinstance(t, UUIDType):
        u = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
        return F.lit(bytearray(u.bytes))
    if isinstance(t, FixedType | BinaryType):
        return F.lit(bytearray(value))
    if isinstance(t, DecimalType):
        return F.lit(Decimal(value)).cast(spark_type)
    return F.lit(value).cast(spark_type)
