"""Reading an Iceberg table into a Spark DataFrame (spec: "Scan Planning", "Column Projection",
"Row-level Deletes"; Appendix A for Parquet).

>>> # df = read_table(spark, table, filter="region = 'eu'", columns=["id", "region"])
>>> # df = read_table(spark, table, ref="audit")                  # a branch or tag
>>> # df = read_table(spark, (metadata, io), as_of=1767225600000)  # time travel

:func:`read_table` plans the files with :class:`icewright.scan.TableScan` (time travel,
pruning, delete association, residuals) and reads them with Spark's own Parquet reader,
matching columns by Iceberg field id (``spark.sql.parquet.fieldId.read.enabled``; the
read schema's fields carry ``parquet.field.id``), so renamed and reordered columns follow
their ids, dropped columns are not read, and columns added after a file was written come
back null or as their ``initial-default``. Files without field ids are read by name through
the table's ``schema.name-mapping.default``. Then position and equality deletes are applied
(:mod:`icewright.spark.deletes`) and the residual filter, in Iceberg's two-valued
semantics. :func:`read_plan` reads an already planned scan.

Two Spark behaviours shape the read schema:

* Spark pushes Parquet filters down by column *name*, even when it reads by field id: a
  filter on a renamed column would test the file column that happens to have that name and
  skip row groups wrongly. A column is therefore read under its own name only when that
  name never meant anything else in the table's schema history (its filters are still
  pushed down); otherwise under the private name ``__iw_<field id>``, which no file has
  (no pushdown for it, and no wrong one).
* Spark 3.5 cannot widen types in the Parquet reader (int -> long, float -> double,
  decimal precision) and its nested vectorized reader fails on renamed or missing struct
  fields inside lists and maps; on Spark 3 files of promoted columns are read with the type
  they were written with and cast, and the nested vectorized reader is switched off when
  needed. Spark 4 handles both itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Operation,
    Or,
    rewrite_not,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile, FileFormat
from icewright.scan import ScanPlan, Source, TableScan
from icewright.spark.deletes import (
    DELETE_FILE_COLUMN,
    FILE_COLUMN,
    POS_COLUMN,
    apply_equality_deletes,
    apply_position_deletes,
    equality_column,
    has_deletes,
    has_position_deletes,
    normalize_path,
    normalized_path_column,
    spark_file_path,
)
from icewright.spark.types import FIELD_ID_KEY, has_time_type, to_spark_field
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata
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
from icewright.spec.values import from_json_value

__all__ = ["FIELD_ID_KEY", "NAME_MAPPING_PROPERTY", "read_plan", "read_table", "spark_literal"]

log = logging.getLogger(__name__)

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
"""Table property: how to find columns in files written without field ids."""
_FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"
_TIME_TYPE = "spark.sql.timeType.enabled"
_NESTED_VECTORIZED = "spark.sql.parquet.enableNestedColumnVectorizedReader"
_PRIVATE = "__iw_"
_ROOT = -1
_ARROW_FIELD_ID = b"PARQUET:field_id"
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


# --- public API ------------------------------------------------------------------------------


def read_table(
    spark: SparkSession,
    table: Source,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of: int | dt.datetime | None = None,
    filter: Expression | str | None = None,
    columns: Sequence[str] | str | None = None,
    case_sensitive: bool = True,
) -> DataFrame:
    """The rows of ``table`` (an ``icewright.catalog.Table`` or a ``(TableMetadata, FileIO)``
    pair) as a Spark DataFrame.

    At most one of ``snapshot_id``, ``ref`` (branch or tag) and ``as_of`` (milliseconds
    since the epoch or an aware datetime) picks the snapshot; the default is the current one.
    ``filter`` is an icewright expression or SQL-like text (``"region = 'eu' AND qty > 2"``);
    ``columns`` selects columns (dotted names for nested fields), in schema order. Column
    types are :func:`icewright.spark.types.to_spark_type`'s: ``uuid`` as its string form,
    ``fixed`` as binary, ``time`` as ``TIME(6)`` on Spark 4.1+; a column Spark cannot hold
    (``time`` on Spark 3.5, nanosecond timestamps, variants, geospatial types) raises
    :class:`ValidationError` naming it when selected or filtered on.

    Sets ``spark.sql.parquet.fieldId.read.enabled`` (and ``spark.sql.timeType.enabled`` for a
    time column) on the session if it is off; on Spark 3.5 it may also turn off
    ``spark.sql.parquet.enableNestedColumnVectorizedReader`` (see the module docstring).
    """
    scan = TableScan.of(
        table,
        snapshot_id=snapshot_id,
        ref=ref,
        as_of_ms=as_of,
        row_filter=filter,
        case_sensitive=case_sensitive,
        columns=None if columns is None else ((columns,) if isinstance(columns, str) else columns),
    )
    return read_plan(spark, (scan.metadata, scan.io), scan.plan())


def read_plan(spark: SparkSession, table: Source, plan: ScanPlan) -> DataFrame:
    """Read the tasks of an already planned scan of ``table`` (see :func:`read_table`).

    The plan's projected schema gives the columns; its filter (or, when all tasks agree, their
    residual) is applied to the rows, after the tasks' delete files.
    """
    metadata, io = _source(table)
    return _Reader(spark, metadata, io, plan).frame()


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
    for path, f in _walk(fields, ()):
        if not _supported(f.field_type):
            raise ValidationError(
                f"column {'.'.join(path)!r} ({why}) has type {f.field_type}, which Spark "
                f"{spark_version} cannot read (time needs Spark 4.1+); leave it out with "
                "columns=[...] and do not filter on it"
            )


def _walk(
    fields: Sequence[NestedField], prefix: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], NestedField]]:
    for f in fields:
        path = (*prefix, f.name)
        yield path, f
        t = f.field_type
        if isinstance(t, StructType | ListType | MapType):
            yield from _walk(t.fields, path)


# --- literals and filters --------------------------------------------------------------------


def _timestamp_text(micros: int) -> str:
    try:
        moment = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise ValidationError(
            f"timestamp {micros} us is outside the years 1-9999 Spark literals cover"
        ) from None
    return moment.isoformat(sep=" ", timespec="microseconds")


def spark_literal(value: Any, t: IcebergType) -> Column:
    """A Spark literal of icewright value ``value`` of Iceberg type ``t``, typed as Spark reads
    the column (a uuid as its 16 bytes, dates and timestamps exact, without time zone games)."""
    if value is None:
        return F.lit(None).cast(_spark_type(t))
    if isinstance(t, DateType):
        return F.lit(_EPOCH_DATE + dt.timedelta(days=int(value)))
    if isinstance(t, TimestamptzType):
        return F.expr(f"timestamp_micros({int(value)}L)")
    if isinstance(t, TimestampType):
        return F.expr(f"TIMESTAMP_NTZ '{_timestamp_text(int(value))}'")
    if isinstance(t, TimeType):
        clock = (_EPOCH + dt.timedelta(microseconds=int(value))).time()
        return F.expr(f"TIME '{clock.isoformat(timespec='microseconds')}'")
    if isinstance(t, UUIDType):
        raw = value.bytes if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).bytes
        return F.lit(bytearray(raw))
    if isinstance(t, BinaryType | FixedType):
        return F.lit(bytearray(value))
    if isinstance(t, DecimalType):
        return F.lit(Decimal(value)).cast(_spark_type(t))
    if isinstance(t, PrimitiveType) and _supported(t):
        return F.lit(value).cast(_spark_type(t))
    raise ValidationError(f"a {t} value has no Spark literal here")


def _filter_column(expr: Expression, column: Callable[[BoundReference], Column]) -> Column:
    """``expr`` (bound) as a Spark filter that keeps exactly the rows Iceberg's does.

    Iceberg's tests are two-valued (expressions spec: "Comparisons"): a null or NaN value
    fails every comparison with a literal, and ``!=``, ``NOT IN`` and ``NOT STARTS WITH``
    are the exact negations of their positive forms, true for null. Spark's are
    three-valued, a filter drops rows whose predicate is null, and NaN sorts above every
    number. With the negations pushed into the tests first (:func:`rewrite_not`), AND and
    OR of tests that are null where Iceberg says false keep the same rows, so only the
    negated tests and float orderings need adjusting; the plain comparisons stay plain, so
    Spark can still push them down to Parquet row-group statistics.
    """
    return _positive(rewrite_not(expr), column)


def _positive(expr: Expression, column: Callable[[BoundReference], Column]) -> Column:
    if expr is ALWAYS_TRUE:
        return F.lit(True)
    if expr is ALWAYS_FALSE:
        return F.lit(False)
    if isinstance(expr, And):
        return _positive(expr.left, column) & _positive(expr.right, column)
    if isinstance(expr, Or):
        return _positive(expr.left, column) | _positive(expr.right, column)
    if isinstance(expr, Not):  # not left by rewrite_not on a bound expression; exact anyway
        return ~F.coalesce(_positive(expr.child, column), F.lit(False))
    if not isinstance(expr, BoundPredicate):
        raise ValidationError(f"cannot apply the unbound or unknown expression {expr!r}")
    return _test(expr, column(expr.term))


def _test(pred: BoundPredicate, c: Column) -> Column:
    """One test; null (dropping the row) where Iceberg's is false."""
    op, t = pred.op, pred.term.field_type
    if op is Operation.IS_NULL:
        return c.isNull()
    if op is Operation.NOT_NULL:
        return c.isNotNull()
    if op is Operation.IS_NAN:
        return F.isnan(c)
    if op is Operation.NOT_NAN:
        return ~F.isnan(c)  # isnan(null) is false: a null is "not NaN"
    if op in (Operation.IN, Operation.NOT_IN):
        test = c.isin([spark_literal(v, t) for v in pred.literals])
    elif op in (Operation.STARTS_WITH, Operation.NOT_STARTS_WITH):
        test = c.startswith(F.lit(str(pred.literal)))
    else:
        lit = spark_literal(pred.literal, t)
        tests = {
            Operation.EQ: lambda: c == lit,
            Operation.NOT_EQ: lambda: c == lit,
            Operation.LT: lambda: c < lit,
            Operation.LT_EQ: lambda: c <= lit,
            Operation.GT: lambda: c > lit,
            Operation.GT_EQ: lambda: c >= lit,
        }
        test = tests[op]()
    if op in (Operation.NOT_EQ, Operation.NOT_IN, Operation.NOT_STARTS_WITH):
        return ~test | c.isNull()  # the negation, true for null (and for NaN already)
    if op in (Operation.GT, Operation.GT_EQ) and isinstance(t, FloatType | DoubleType):
        return test & ~F.isnan(c)  # Spark orders NaN above every number
    return test


def _references(expr: Expression) -> Iterator[BoundReference]:
    if isinstance(expr, And | Or):
        yield from _references(expr.left)
        yield from _references(expr.right)
    elif isinstance(expr, Not):
        yield from _references(expr.child)
    elif isinstance(expr, BoundPredicate):
        yield expr.term


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
    return any(f.field_id == field_id for _, f in _walk(getattr(t, "fields", ()), ()))


# --- the footer of a data file ----------------------------------------------------------------


def _arrow_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(_ARROW_FIELD_ID)
    return None if raw is None else int(raw)


def _arrow_children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [t.value_field]
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    return []


def _arrow_ids(fields: Sequence[pa.Field]) -> dict[int, pa.DataType]:
    out: dict[int, pa.DataType] = {}
    for f in fields:
        fid = _arrow_id(f)
        if fid is not None:
            out[fid] = f.type
        out.update(_arrow_ids(_arrow_children(f.type)))
    return out


def _written_type(arrow: pa.DataType, target: IcebergType) -> IcebergType:
    """The type a promoted column was written with, if the file predates the promotion."""
    if isinstance(target, LongType) and pa.types.is_int32(arrow):
        return IntegerType()
    if isinstance(target, DoubleType) and pa.types.is_float32(arrow):
        return FloatType()
    if (
        isinstance(target, DecimalType)
        and pa.types.is_decimal(arrow)
        and arrow.precision < target.precision
    ):
        return DecimalType(arrow.precision, arrow.scale)
    return target


def _read_footer(io: FileIO, path: str) -> pa.Schema:
    with io.open_input(path) as f:
        return pq.ParquetFile(f).schema_arrow


def _has_ids(footer: pa.Schema) -> bool:
    return any(_arrow_id(f) is not None for f in footer)


# --- files without field ids: the name mapping (spec: "Column Projection", Appendix C) --------


def _name_mapping(metadata: TableMetadata) -> list[Any] | None:
    text = metadata.properties.get(NAME_MAPPING_PROPERTY)
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except ValueError as e:
        raise ValidationError(
            f"table property {NAME_MAPPING_PROPERTY} is not valid JSON ({e}); fix or remove it"
        ) from None
    if not isinstance(parsed, list):
        raise ValidationError(f"table property {NAME_MAPPING_PROPERTY} must be a JSON list")
    return parsed


def _entries_by_id(entries: Sequence[Any] | None) -> dict[int, Mapping[str, Any]]:
    out: dict[int, Mapping[str, Any]] = {}
    for e in entries or ():
        if isinstance(e, Mapping) and isinstance(e.get("field-id"), int):
            out[e["field-id"]] = e
    return out


def _mapped_type(
    t: IcebergType,
    arrow: pa.DataType,
    entries: Sequence[Any] | None,
    spark3: bool,
    present: set[int],
) -> T.DataType:
    """The Spark type that reads ``t`` by the file's own names, found through the mapping."""
    by_id = _entries_by_id(entries)
    if isinstance(t, StructType):
        children = {c.name: c for c in _arrow_children(arrow)} if pa.types.is_struct(arrow) else {}
        fields = []
        for f in t.fields:
            entry = by_id.get(f.field_id, {})
            name = next((n for n in entry.get("names") or () if n in children), None)
            if name is None:
                # absent from this file: read under a name it does not have, which gives null
                fields.append(
                    T.StructField(f"{_PRIVATE}missing_{f.field_id}", _spark_type(f.field_type))
                )
                continue
            present.add(f.field_id)
            sub = _mapped_type(
                f.field_type, children[name].type, entry.get("fields"), spark3, present
            )
            fields.append(T.StructField(name, sub))
        return T.StructType(fields)
    kids = _arrow_children(arrow)
    if isinstance(t, ListType) and len(kids) == 1:
        present.add(t.element_id)
        sub_entries = by_id.get(t.element_id, {}).get("fields")
        return T.ArrayType(_mapped_type(t.element_type, kids[0].type, sub_entries, spark3, present))
    if isinstance(t, MapType) and len(kids) == 2:
        present.update((t.key_id, t.value_id))
        key = _mapped_type(
            t.key_type, kids[0].type, by_id.get(t.key_id, {}).get("fields"), spark3, present
        )
        value = _mapped_type(
            t.value_type, kids[1].type, by_id.get(t.value_id, {}).get("fields"), spark3, present
        )
        return T.MapType(key, value)
    return _spark_type(_written_type(arrow, t) if spark3 else t, ids=False)


# --- the reader -------------------------------------------------------------------------------


@dataclasses.dataclass
class _Group:
    """Files Spark reads with one read schema; ``cast``: columns need casting afterwards."""

    schema: T.StructType
    cast: bool
    paths: list[str] = dataclasses.field(default_factory=list)


def _metrics_ids(f: DataFile) -> set[int]:
    ids: set[int] = set()
    for m in (f.value_counts, f.null_value_counts, f.column_sizes, f.lower_bounds):
        if m:
            ids.update(m)
    return ids


def _source(table: Source) -> tuple[TableMetadata, FileIO]:
    if isinstance(table, tuple):
        if len(table) != 2 or not isinstance(table[0], TableMetadata):
            raise ValidationError("a table is a Table or a (TableMetadata, FileIO) pair")
        return table[0], table[1]
    metadata, io = getattr(table, "metadata", None), getattr(table, "io", None)
    if not isinstance(metadata, TableMetadata) or io is None:
        raise ValidationError(
            f"a table is a Table or a (TableMetadata, FileIO) pair, not {table!r}"
        )
    return metadata, io


class _Reader:
    """One read of a planned scan."""

    def __init__(
        self, spark: SparkSession, metadata: TableMetadata, io: FileIO, plan: ScanPlan
    ) -> None:
        self.spark = spark
        self.metadata = metadata
        self.io = io
        self.plan = plan
        self.tasks = list(plan.tasks)
        self.version = spark.version
        self.spark3 = int(spark.version.split(".")[0]) < 4
        self.history = _History.of(metadata.schemas)
        self.mapping = _name_mapping(metadata)
        self._footers: dict[str, pa.Schema] = {}
        self._present: dict[str, set[int]] = {}  # files read by name: the ids they have
        for task in self.tasks:
            if task.data_file.file_format is not FileFormat.PARQUET:
                raise ValidationError(
                    f"data file {task.file_path} is {task.data_file.file_format.value}: the "
                    "Spark reader reads Parquet data files only"
                )

    # -- the pieces of the read ---------------------------------------------------------------

    def frame(self) -> DataFrame:
        projection = self.plan.projected_schema
        _check_supported(projection.fields, self.version, "selected")
        output = [to_spark_field(f) for f in projection.fields]
        if not self.tasks:
            return self.spark.createDataFrame([], _nullable_struct(T.StructType(output)))
        residual = self._residual()
        internal = self._internal_struct(projection, residual)
        self._ensure_confs(internal)
        groups = self._groups([t.file_path for t in self.tasks], internal, allow_names=True)
        defaults = self._defaults(internal)
        need_pos = has_position_deletes(self.tasks)
        need_file = need_pos or has_deletes(self.tasks) or any(not d[3] for d in defaults)
        df = self._read(
            groups, internal, file_column=FILE_COLUMN if need_file else None, pos=need_pos
        )
        df = self._apply_defaults(df, internal, defaults)
        if residual is not ALWAYS_TRUE:
            df = df.filter(
                _filter_column(
                    residual,
                    lambda ref: _column_at(internal, ref.field_id, f"filter column {ref.name!r}"),
                )
            )
        if need_pos:
            df = apply_position_deletes(self.spark, df, self.tasks)
        if need_file:
            df = apply_equality_deletes(
                self.spark,
                df,
                self.tasks,
                lambda paths, ids: self._read_equality_deletes(paths, ids, internal),
                lambda i: _column_at(internal, i, "equality delete column"),
            )
        have = {f.field_id: f for f in internal.fields}
        return df.select(
            *(
                _conform(
                    F.col(_quote(have[w.field_id].name)),
                    have[w.field_id].field_type,
                    w.field_type,
                ).alias(w.name, metadata=o.metadata)
                for w, o in zip(projection.fields, output, strict=True)
            )
        )

    def _residual(self) -> Expression:
        """One filter for every row: the tasks' residual when they agree, else the filter."""
        residuals: list[Expression] = []
        for task in self.tasks:
            if not any(task.residual == r for r in residuals):
                residuals.append(task.residual)
        expr = residuals[0] if len(residuals) == 1 else self.plan.filter
        for ref in _references(expr):
            if ref.in_list_or_map:
                raise ValidationError(
                    f"cannot filter rows on {ref.name!r}: it is inside a list or map, and a row "
                    "holds many values of it"
                )
        return expr

    def _historic_field(self, field_id: int) -> tuple[NestedField, int | None]:
        # the newest schema with the field: a dropped equality column is still applied
        for schema in reversed(self.metadata.schemas):
            if field_id in schema.field_ids():
                return schema.find_field(field_id), schema.parent_id(field_id)
        raise ValidationError(
            f"a delete file uses field id {field_id}, which no schema of the table has: the "
            "table metadata is corrupt"
        )

    def _internal_struct(self, projection: Schema, residual: Expression) -> StructType:
        """The projection plus the columns filters and equality deletes need, as read."""
        from icewright.scan import select_columns

        schema = self.plan.schema
        extra = {r.field_id for r in _references(residual)}
        for task in self.tasks:
            for d in task.delete_files:
                extra.update(d.equality_ids or ())
        names = [schema.column_name(f.field_id) for f in _leaf_fields(projection.fields)]
        known = schema.field_ids()
        names += [schema.column_name(i) for i in sorted(extra & known)]
        fields = list(select_columns(schema, names).fields)
        _check_supported(fields, self.version, "needed to filter or delete rows")
        internal = _internal(StructType(*fields), _ROOT, self.history)
        assert isinstance(internal, StructType)
        dropped = []
        for i in sorted(extra - known):
            f, parent = self._historic_field(i)
            if parent is not None:
                raise ValidationError(
                    f"equality deletes use the dropped nested column {f.name!r} (field id {i}); "
                    "reading them is not supported: compact the table's deletes first"
                )
            _check_supported([f], self.version, "an equality delete column")
            dropped.append(NestedField(i, _private(i), f.field_type, False))
        return StructType(*internal.fields, *dropped)

    def _ensure_confs(self, internal: StructType) -> None:
        self._require_conf(_FIELD_ID_READ, "icewright reads Parquet columns by field id")
        if any(isinstance(f.field_type, TimeType) for _, f in _walk(internal.fields, ())):
            self._require_conf(_TIME_TYPE, "Spark reads Iceberg's time type only with it")
        if (
            self.spark3
            and _nested_risk(internal, self.history, self.mapping is not None)
            and str(self.spark.conf.get(_NESTED_VECTORIZED, "true")).lower() != "false"
        ):
            # Spark 3.5's nested vectorized reader cannot fill a struct field inside a list or
            # map that a file lacks or names differently (IllegalArgumentException "doesn't
            # match the type ... in column vector"); the row-based reader can.
            log.warning(
                "setting %s=false for this session: Spark %s cannot read renamed or added "
                "struct fields inside lists and maps with it",
                _NESTED_VECTORIZED,
                self.version,
            )
            self.spark.conf.set(_NESTED_VECTORIZED, "false")

    def _require_conf(self, key: str, why: str) -> None:
        if str(self.spark.conf.get(key, "false")).lower() != "true":
            log.info("setting %s=true for this session: %s", key, why)
            self.spark.conf.set(key, "true")

    # -- footers and read groups --------------------------------------------------------------

    def _footers_of(self, paths: Sequence[str]) -> dict[str, pa.Schema]:
        missing = [p for p in dict.fromkeys(paths) if p not in self._footers]
        if missing:
            workers = max(1, min(8, len(missing)))
            with ThreadPoolExecutor(workers, thread_name_prefix="icewright-footer") as pool:
                for path, footer in zip(
                    missing, pool.map(lambda p: _read_footer(self.io, p), missing), strict=True
                ):
                    self._footers[path] = footer
        return {p: self._footers[p] for p in paths}

    def _groups(
        self, paths: Sequence[str], internal: StructType, *, allow_names: bool
    ) -> list[_Group]:
        base = T.StructType([_spark_field(f) for f in internal.fields])
        ids = [f.field_id for _, f in _walk(internal.fields, ())]
        promoted = self.spark3 and any(self.history.promoted(i) for i in ids)
        by_names = allow_names and self.mapping is not None
        footers = self._footers_of(paths) if promoted or by_names else {}
        targets = _primitive_types(internal) if promoted else {}
        groups: dict[str, _Group] = {}
        for path in paths:
            footer = footers.get(path)
            schema, cast = base, False
            if footer is not None and _has_ids(footer):
                written = _arrow_ids(list(footer))
                overrides = {
                    i: _written_type(written[i], t)
                    for i, t in targets.items()
                    if i in written and _written_type(written[i], t) != t
                }
                if overrides:
                    schema = T.StructType(
                        [_spark_field(f, overrides=overrides) for f in internal.fields]
                    )
                    cast = True
            elif footer is not None:
                if self.mapping is None or not allow_names:
                    raise ValidationError(
                        f"data file {path} has no Parquet field ids and the table has no "
                        f"{NAME_MAPPING_PROPERTY} property to find its columns by name; set one"
                    )
                present: set[int] = set()
                mapped = _mapped_type(
                    internal, pa.struct(list(footer)), self.mapping, self.spark3, present
                )
                assert isinstance(mapped, T.StructType)
                self._present[path] = present
                schema, cast = mapped, True
            group = groups.setdefault(schema.json(), _Group(schema, cast))
            group.paths.append(path)
        return list(groups.values())

    def _read(
        self,
        groups: Sequence[_Group],
        internal: StructType,
        *,
        file_column: str | None,
        pos: bool,
    ) -> DataFrame:
        base = T.StructType([_spark_field(f) for f in internal.fields])
        frames = []
        for group in groups:
            reader = self.spark.read.schema(group.schema).parquet(
                *(spark_file_path(p) for p in group.paths)
            )
            cols = []
            for read, want, typed in zip(
                group.schema.fields, internal.fields, base.fields, strict=True
            ):
                col = F.col(_quote(read.name))
                if group.cast:
                    col = col.cast(typed.dataType)
                cols.append(col.alias(want.name))
            if file_column is not None:
                path = normalized_path_column(F.col("_metadata.file_path"), uri_encoded=True)
                cols.append(path.alias(file_column))
            if pos:
                cols.append(F.col("_metadata.row_index").alias(POS_COLUMN))
            frames.append(reader.select(*cols))
        out = frames[0]
        for frame in frames[1:]:
            out = out.union(frame)
        return out

    # -- initial defaults ---------------------------------------------------------------------

    def _defaults(self, internal: StructType) -> list[tuple[NestedField, Any, list[str], bool]]:
        """(field, default, files that lack it, whether all do) per field with a default."""
        fields = [
            f
            for _, f in _walk(internal.fields, ())
            if f.initial_default is not None and isinstance(f.field_type, PrimitiveType)
        ]
        # files whose metrics do not show the column: their footers decide (read at once)
        self._footers_of(
            [
                t.file_path
                for t in self.tasks
                if t.file_path not in self._present
                and any(f.field_id not in _metrics_ids(t.data_file) for f in fields)
            ]
        )
        out = []
        for f in fields:
            value = from_json_value(f.field_type, f.initial_default)
            lacking = [t for t in self.tasks if not self._has_field(t.data_file, f.field_id)]
            if lacking:
                paths = sorted({normalize_path(t.file_path) for t in lacking})
                out.append((f, value, paths, len(lacking) == len(self.tasks)))
        return out

    def _has_field(self, data_file: DataFile, field_id: int) -> bool:
        present = self._present.get(data_file.file_path)
        if present is not None:
            return field_id in present
        if field_id in _metrics_ids(data_file):
            return True
        footer = self._footers_of([data_file.file_path])[data_file.file_path]
        return field_id in _arrow_ids(list(footer))

    def _apply_defaults(
        self,
        df: DataFrame,
        internal: StructType,
        defaults: Sequence[tuple[NestedField, Any, list[str], bool]],
    ) -> DataFrame:
        for f, value, lacking, everywhere in defaults:
            lit = spark_literal(value, f.field_type)

            def make(
                old: Column,
                lit: Column = lit,
                lacking: list[str] = lacking,
                everywhere: bool = everywhere,
            ) -> Column:
                if everywhere:
                    return lit
                return F.when(F.col(FILE_COLUMN).isin(lacking), lit).otherwise(old)

            for top in internal.fields:
                if top.field_id == f.field_id:
                    df = df.withColumn(top.name, make(F.col(_quote(top.name))))
                    break
                replaced = _replace_field(F.col(_quote(top.name)), top.field_type, f.field_id, make)
                if replaced is not None:
                    df = df.withColumn(top.name, replaced)
                    break
        return df

    # -- equality delete files ----------------------------------------------------------------

    def _read_equality_deletes(
        self, paths: Sequence[str], ids: tuple[int, ...], internal: StructType
    ) -> DataFrame:
        # A delete file keeps the table's nesting (an equality column inside a struct is
        # inside that struct in the file too), so it is read with the data's own read
        # struct cut to the equality columns, which are then lifted out.
        struct = _prune(internal, set(ids))
        groups = self._groups(paths, struct, allow_names=False)
        frame = self._read(groups, struct, file_column=DELETE_FILE_COLUMN, pos=False)
        return frame.select(
            F.col(DELETE_FILE_COLUMN),
            *(_column_at(struct, i, "equality column").alias(equality_column(i)) for i in ids),
        )


def _prune(struct: StructType, ids: set[int]) -> StructType:
    """``struct`` cut to the fields ``ids`` and the structs that hold them."""
    kept = []
    for f in struct.fields:
        if f.field_id in ids:
            kept.append(f)
        elif isinstance(f.field_type, StructType):
            inner = _prune(f.field_type, ids)
            if inner.fields:
                kept.append(dataclasses.replace(f, field_type=inner))
    return StructType(*kept)


def _leaf_fields(fields: Sequence[NestedField]) -> Iterator[NestedField]:
    """The selected fields of a projection: structs are entered, lists and maps whole."""
    for f in fields:
        if isinstance(f.field_type, StructType) and f.field_type.fields:
            yield from _leaf_fields(f.field_type.fields)
        else:
            yield f


def _primitive_types(struct: StructType) -> dict[int, IcebergType]:
    return {
        f.field_id: f.field_type
        for _, f in _walk(struct.fields, ())
        if isinstance(f.field_type, PrimitiveType)
    }


def _nested_risk(internal: StructType, history: _History, by_names: bool) -> bool:
    """Whether a struct field inside a list or map may be renamed or missing in some file."""

    def visit(t: IcebergType, parent: int, repeated: bool) -> bool:
        if not isinstance(t, StructType | ListType | MapType):
            return False
        inner = repeated or isinstance(t, ListType | MapType)
        for f in t.fields:
            if (
                repeated
                and isinstance(t, StructType)
                and (
                    by_names
                    or f.name.startswith(_PRIVATE)
                    or not history.always_with(f.field_id, parent)
                )
            ):
                return True
            if visit(f.field_type, f.field_id, inner):
                return True
        return False

    return visit(internal, _ROOT, False)
