"""The read schema of a Spark read of an Iceberg table: Iceberg types as the Spark types that
read them from Parquet by field id, the names columns are read under (from the table's schema
history), and the conversion of the columns read to the projected schema (spec: "Column
Projection", "Schema Evolution").

Used by :mod:`icewright.spark.reader`; see :mod:`icewright.spark.read` for why some columns
are read under private names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.spark.types import FIELD_ID_KEY, has_time_type
from icewright.spec.schema import Schema, walk_fields
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
    PrimitiveType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

_PRIVATE = "__iw_"
_ROOT = -1


# --- Iceberg types as Spark types ------------------------------------------------------------

_SIMPLE: dict[type, T.DataType] = {
    BooleanType: T.BooleanType(),
    IntegerType: T.IntegerType(),
    LongType: T.LongType(),
    FloatType: T.FloatType(),
    DoubleType: T.DoubleType(),
    DateType: T.DateType(),
    TimestamptzType: T.TimestampType(),
    TimestampType: T.TimestampNTZType(),
    StringType: T.StringType(),
    BinaryType: T.BinaryType(),
    FixedType: T.BinaryType(),
    UUIDType: T.BinaryType(),  # a 16-byte fixed in Parquet; the output shows its text form
}


def _supported(t: IcebergType) -> bool:
    if isinstance(t, TimeType):
        return has_time_type()
    return type(t) in _SIMPLE or isinstance(t, DecimalType | StructType | ListType | MapType)


def _spark_type(
    t: IcebergType, *, ids: bool = True, overrides: Mapping[int, IcebergType] | None = None
) -> T.DataType:
    """The Spark type that reads ``t`` from Parquet: field ids on struct fields (``ids``), a
    uuid as its 16 bytes, everything nullable as Spark's file reads are (a required column
    may be missing from an old file); ``overrides`` replaces the types of some field ids.

    The DataFrame's own types are :func:`icewright.spark.types.to_spark_type`'s.
    """
    over = overrides or {}
    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    if isinstance(t, TimeType) and has_time_type():
        return T.TimeType(6)
    if isinstance(t, StructType):
        return T.StructType([_spark_field(f, ids=ids, overrides=over) for f in t.fields])
    if isinstance(t, ListType):
        element = over.get(t.element_id, t.element_type)
        return T.ArrayType(_spark_type(element, ids=ids, overrides=over), True)
    if isinstance(t, MapType):
        key = over.get(t.key_id, t.key_type)
        value = over.get(t.value_id, t.value_type)
        return T.MapType(
            _spark_type(key, ids=ids, overrides=over),
            _spark_type(value, ids=ids, overrides=over),
            True,
        )
    simple = _SIMPLE.get(type(t))
    if simple is None:
        raise ValidationError(f"Iceberg type {t} has no Spark type")
    return simple


def _spark_field(
    f: NestedField, *, ids: bool = True, overrides: Mapping[int, IcebergType] | None = None
) -> T.StructField:
    t = (overrides or {}).get(f.field_id, f.field_type)
    return T.StructField(
        f.name,
        _spark_type(t, ids=ids, overrides=overrides),
        nullable=True,
        metadata={FIELD_ID_KEY: f.field_id} if ids else {},
    )


def _nullable_struct(t: T.StructType) -> T.StructType:
    out = _nullable(t)
    assert isinstance(out, T.StructType)
    return out


def _nullable(t: T.DataType) -> T.DataType:
    if isinstance(t, T.StructType):
        return T.StructType(
            [T.StructField(f.name, _nullable(f.dataType), True, f.metadata) for f in t.fields]
        )
    if isinstance(t, T.ArrayType):
        return T.ArrayType(_nullable(t.elementType), True)
    if isinstance(t, T.MapType):
        return T.MapType(_nullable(t.keyType), _nullable(t.valueType), True)
    return t


def _check_supported(fields: Sequence[NestedField], spark_version: str, why: str) -> None:
    for path, f in walk_fields(fields):
        if not _supported(f.field_type):
            raise ValidationError(
                f"column {'.'.join(path)!r} ({why}) has type {f.field_type}, which Spark "
                f"{spark_version} cannot read (time needs Spark 4.1+); leave it out with "
                "columns=[...] and do not filter on it"
            )


# --- schema history: which names are safe to read under ---------------------------------------


@dataclasses.dataclass
class _History:
    """Names and types every field id had across the table's schemas."""

    names: dict[int, set[str]] = dataclasses.field(default_factory=dict)
    siblings: dict[tuple[int, str], set[int]] = dataclasses.field(default_factory=dict)
    types: dict[int, set[IcebergType]] = dataclasses.field(default_factory=dict)
    schemas_with: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    complete: bool = True

    @classmethod
    def of(cls, schemas: Sequence[Schema]) -> _History:
        h = cls()
        for n, schema in enumerate(schemas):
            h._visit(schema.as_struct(), _ROOT, n)
        # Schema ids count up from 0; a gap means schemas were removed (Java's expiry can
        # drop unused ones) while files written with them may still be live: then no name
        # is known to be safe.
        h.complete = sorted(s.schema_id for s in schemas) == list(range(len(schemas)))
        return h

    def _visit(self, t: IcebergType, parent: int, n: int) -> None:
        if not isinstance(t, StructType | ListType | MapType):
            return
        for f in t.fields:
            self.names.setdefault(f.field_id, set()).add(f.name)
            self.siblings.setdefault((parent, f.name.lower()), set()).add(f.field_id)
            self.schemas_with.setdefault(f.field_id, set()).add(n)
            if isinstance(f.field_type, PrimitiveType):
                self.types.setdefault(f.field_id, set()).add(f.field_type)
            self._visit(f.field_type, f.field_id, n)

    def stable(self, f: NestedField, parent: int) -> bool:
        """Whether ``f``'s name never meant another column, nor ``f`` another name."""
        name = f.name
        if not self.complete or name.startswith(_PRIVATE) or name == "_metadata":
            return False
        if "." in name or "`" in name:
            return False
        return self.names.get(f.field_id, {name}) == {name} and self.siblings.get(
            (parent, name.lower()), {f.field_id}
        ) == {f.field_id}

    def always_with(self, field_id: int, parent: int) -> bool:
        """Whether every schema that has the parent also has the field (never added later)."""
        if parent == _ROOT:
            return True
        return self.schemas_with.get(parent, set()) <= self.schemas_with.get(field_id, set())

    def promoted(self, field_id: int) -> bool:
        return len(self.types.get(field_id, ())) > 1


def _private(field_id: int) -> str:
    return f"{_PRIVATE}{field_id}"


def _internal(t: IcebergType, parent: int, history: _History) -> IcebergType:
    """``t`` with every field renamed to the name it is read under (see the module doc)."""
    if isinstance(t, StructType):
        return StructType(
            *(
                dataclasses.replace(
                    f,
                    name=f.name if history.stable(f, parent) else _private(f.field_id),
                    field_type=_internal(f.field_type, f.field_id, history),
                )
                for f in t.fields
            )
        )
    if isinstance(t, ListType):
        return ListType(
            t.element_id, _internal(t.element_type, t.element_id, history), t.element_required
        )
    if isinstance(t, MapType):
        return MapType(
            t.key_id,
            _internal(t.key_type, t.key_id, history),
            t.value_id,
            _internal(t.value_type, t.value_id, history),
            t.value_required,
        )
    return t


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _path_to(struct: StructType, field_id: int) -> list[NestedField] | None:
    for f in struct.fields:
        if f.field_id == field_id:
            return [f]
        if isinstance(f.field_type, StructType):
            inner = _path_to(f.field_type, field_id)
            if inner is not None:
                return [f, *inner]
    return None


def _column_at(struct: StructType, field_id: int, what: str) -> Column:
    path = _path_to(struct, field_id)
    if path is None:
        raise ValidationError(
            f"{what} (field id {field_id}) is not a column of the read, or is inside a list "
            "or map, whose values a row holds many of"
        )
    col = F.col(_quote(path[0].name))
    for f in path[1:]:
        col = col.getField(f.name)
    return col


# --- output: internal columns to the projected schema -----------------------------------------


def _needs_rebuild(have: IcebergType, want: IcebergType) -> bool:
    if isinstance(want, UUIDType):
        return True
    if isinstance(want, StructType) and isinstance(have, StructType):
        if [(f.field_id, f.name) for f in have.fields] != [
            (f.field_id, f.name) for f in want.fields
        ]:
            return True
        return any(
            _needs_rebuild(h.field_type, w.field_type)
            for h, w in zip(have.fields, want.fields, strict=True)
        )
    if isinstance(want, ListType | MapType) and isinstance(have, ListType | MapType):
        return any(
            _needs_rebuild(h.field_type, w.field_type)
            for h, w in zip(have.fields, want.fields, strict=True)
        )
    return False


def _uuid_text(col: Column) -> Column:
    h = F.lower(F.hex(col))
    parts = [F.substring(h, start, size) for start, size in ((1, 8), (9, 4), (13, 4), (17, 4))]
    text = F.concat_ws("-", *parts, F.substring(h, 21, 12))
    return F.when(col.isNull(), F.lit(None).cast(T.StringType())).otherwise(text)


def _conform(col: Column, have: IcebergType, want: IcebergType) -> Column:
    """``col`` (read as ``have``: private names, uuid bytes) as the projection's ``want``."""
    if not _needs_rebuild(have, want):
        return col
    if isinstance(want, UUIDType):
        return _uuid_text(col)
    if isinstance(want, StructType) and isinstance(have, StructType):
        by_id = {f.field_id: f for f in have.fields}
        parts = [
            _conform(
                col.getField(by_id[f.field_id].name), by_id[f.field_id].field_type, f.field_type
            ).alias(f.name)
            for f in want.fields
        ]
        return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*parts))
    if isinstance(want, ListType) and isinstance(have, ListType):
        return F.transform(col, lambda e: _conform(e, have.element_type, want.element_type))
    if isinstance(want, MapType) and isinstance(have, MapType):
        if _needs_rebuild(have.key_type, want.key_type):
            col = F.transform_keys(col, lambda k, _: _conform(k, have.key_type, want.key_type))
        if _needs_rebuild(have.value_type, want.value_type):
            col = F.transform_values(
                col, lambda _, v: _conform(v, have.value_type, want.value_type)
            )
        return col
    return col


def _replace_field(
    col: Column, t: IcebergType, field_id: int, make: Callable[[Column], Column]
) -> Column | None:
    """``col`` (of type ``t``) with nested field ``field_id`` replaced by ``make(old)``."""
    if isinstance(t, StructType):
        for f in t.fields:
            if f.field_id == field_id:
                return col.withField(f.name, make(col.getField(f.name)))
            inner = _replace_field(col.getField(f.name), f.field_type, field_id, make)
            if inner is not None:
                return col.withField(f.name, inner)
        return None
    if isinstance(t, ListType) and _path_anywhere(t.element_type, field_id):
        return F.transform(col, lambda e: _replace_field(e, t.element_type, field_id, make) or e)
    if isinstance(t, MapType) and _path_anywhere(t.value_type, field_id):
        return F.transform_values(
            col, lambda _, v: _replace_field(v, t.value_type, field_id, make) or v
        )
    return None


def _path_anywhere(t: IcebergType, field_id: int) -> bool:
    return any(f.field_id == field_id for _, f in walk_fields(getattr(t, "fields", ())))
