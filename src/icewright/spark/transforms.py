"""Iceberg partition transforms computed inside Spark (spec: "Partition Transforms",
"Bucket Transform Details", "Truncate Transform Details", Appendix B).

Columns are in the write job's representation (:func:`icewright.spark.types.write_spark_type`:
a uuid is its 16 bytes). How each transform is computed:

* ``identity``: the column; ``void``: a typed null.
* ``truncate[W]``: ints and longs ``v - pmod(v, W)`` (the spec's floor
  ``v - (((v % W) + W) % W)``); decimals the same on the unscaled value, written as
  ``v - pmod(v, W * 10^-scale)`` in exact decimal arithmetic (analysed with Spark's
  decimal precision loss off, so decimal(38, s) keeps its scale); strings
  ``substring(v, 1, W)`` (Spark counts code points) and binary ``substring`` (bytes).
* ``year``/``month``/``day``/``hour``: from the epoch, floored for values before it.
  Dates use ``unix_date``; ``timestamptz`` (Spark ``TIMESTAMP``) floor-divides
  ``unix_micros`` by a day or an hour; ``timestamp`` (``TIMESTAMP_NTZ``) uses its own
  wall-clock date and hour. None of them depend on the session time zone.
* ``bucket[N]``: ``(murmur3_x86_32(bytes, seed 0) & Integer.MAX_VALUE) % N`` over
  Appendix B's byte encodings, exactly:

  - int, long, date, time, timestamp, timestamptz hash the 8 little-endian bytes of a
    long (days, microseconds). That is two Murmur3 blocks, computed as pure Spark SQL
    integer arithmetic on longs kept in ``[0, 2^32)``: the 32-bit product ``a * c`` is
    split into 16-bit halves so no long multiplication can overflow (Spark 4 runs ANSI
    mode, where an overflow raises). Every step is its own projected column so that
    Catalyst neither builds an exponential expression tree nor merges them back
    (``CollapseProject`` keeps non-trivial expressions used twice apart).
  - string (UTF-8), binary, fixed, uuid (16 big-endian bytes) and decimal (the
    minimal big-endian two's-complement bytes of the unscaled value) hash variable
    length bytes, vectorized with ``pyarrow.compute`` uint32 arithmetic (which wraps)
    inside ``mapInArrow``: one pass per 4-byte block position over the rows that
    still have such a block, then the tail, then the finalization mix.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.spark.session import job_conf, map_in_arrow
from icewright.spark.types import write_spark_type
from icewright.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from icewright.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
    type_from_json,
    type_to_json,
)

__all__ = [
    "TransformColumn",
    "bucket_arrow",
    "murmur3_arrow",
    "result_spark_type",
    "transform_column",
    "with_transform_columns",
]

_PRECISION_LOSS = "spark.sql.decimalOperations.allowPrecisionLoss"
_MICROS_PER_DAY = 86_400_000_000
_MICROS_PER_HOUR = 3_600_000_000
_MASK32 = 0xFFFFFFFF
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_H_ADD = 0xE6546B64
_F1 = 0x85EBCA6B
_F2 = 0xC2B2AE35

_LONG_HASHED = (IntegerType, LongType, DateType, TimeType, TimestampType, TimestamptzType)
_BYTES_HASHED = (StringType, BinaryType, FixedType, UUIDType, DecimalType)


@dataclass(frozen=True, slots=True)
class TransformColumn:
    """A column ``name`` to add: ``transform`` of ``source`` (of Iceberg ``source_type``)."""

    name: str
    transform: Transform
    source_type: IcebergType
    source: Column


def result_spark_type(transform: Transform, source_type: IcebergType) -> T.DataType:
    """The Spark type of the transform's values (``day`` gives a date)."""
    return write_spark_type(transform.result_type(source_type))


# --- single-expression transforms ---------------------------------------------------


def transform_column(transform: Transform, source_type: IcebergType, column: Column) -> Column:
    """``transform`` of ``column`` as one Spark expression; all but ``bucket`` of a
    byte-hashed type (use :func:`with_transform_columns` for every transform)."""
    if transform.is_unknown or not transform.can_transform(source_type):
        raise ValidationError(
            f"transform {transform} cannot be applied to a column of type {source_type}"
        )
    t = source_type
    if isinstance(transform, IdentityTransform):
        return column
    if isinstance(transform, VoidTransform):
        return F.lit(None).cast(result_spark_type(transform, t))
    if isinstance(transform, TruncateTransform):
        return _truncate(transform.width, t, column)
    if isinstance(transform, YearTransform):
        return (F.year(_date_of(t, column)) - F.lit(1970)).cast(T.IntegerType())
    if isinstance(transform, MonthTransform):
        date = _date_of(t, column)
        months = (F.year(date) - F.lit(1970)) * F.lit(12) + F.month(date) - F.lit(1)
        return months.cast(T.IntegerType())
    if isinstance(transform, DayTransform):
        return _date_of(t, column)
    if isinstance(transform, HourTransform):
        if isinstance(t, TimestamptzType):
            return _floor_div(F.unix_micros(column), _MICROS_PER_HOUR).cast(T.IntegerType())
        hours = F.unix_date(column.cast(T.DateType())).cast(T.LongType()) * F.lit(24) + F.hour(
            column
        )
        return hours.cast(T.IntegerType())
    if isinstance(transform, BucketTransform):
        raise ValidationError(f"{transform} needs several projections: use with_transform_columns")
    raise ValidationError(f"transform {transform} has no Spark implementation")


def _truncate(width: int, t: IcebergType, column: Column) -> Column:
    if isinstance(t, IntegerType | LongType):
        w = F.lit(width).cast(write_spark_type(t))
        return column - F.pmod(column, w)
    if isinstance(t, DecimalType):
        # W counts units of the unscaled value: W * 10^-scale in the column's terms.
        step = F.lit(Decimal(width).scaleb(-t.scale)).cast(
            T.DecimalType(min(38, len(str(width)) + t.scale), t.scale)
        )
        return (column - F.pmod(column, step)).cast(write_spark_type(t))
    # Spark's substring counts code points in strings (spec note 3) and bytes in binary.
    return F.substring(column, 1, width)


def _floor_div(micros: Column, unit: int) -> Column:
    """``floor(micros / unit)`` for a day or an hour of microseconds, exactly.

    ``micros - pmod(micros, unit)`` is a multiple of ``unit``; both units are multiples
    of 2^10, so that multiple has at most 53 significant bits and it and the integer
    quotient are exact in a double.
    """
    whole = micros - F.pmod(micros, F.lit(unit))
    return (whole / F.lit(unit)).cast(T.LongType())


def _date_of(t: IcebergType, column: Column) -> Column:
    """The UTC date of a timestamptz, the wall-clock date of a timestamp, or the date."""
    if isinstance(t, DateType):
        return column
    if isinstance(t, TimestamptzType):
        return F.date_from_unix_date(_floor_div(F.unix_micros(column), _MICROS_PER_DAY))
    return column.cast(T.DateType())  # timestamp without zone: its own date


def _micros_of_clock(column: Column) -> Column:
    seconds = F.extract(F.lit("SECOND"), column)  # decimal(8,6): seconds with micros
    return (
        F.hour(column).cast(T.LongType()) * F.lit(3_600_000_000)
        + F.minute(column).cast(T.LongType()) * F.lit(60_000_000)
        + (seconds * F.lit(1_000_000)).cast(T.LongType())
    )


def _hash_long_input(t: IcebergType, column: Column) -> Column:
    """The long that Appendix B hashes for an int-like value."""
    if isinstance(t, IntegerType | LongType):
        return column.cast(T.LongType())
    if isinstance(t, DateType):
        return F.unix_date(column).cast(T.LongType())
    if isinstance(t, TimestamptzType):
        return F.unix_micros(column)
    if isinstance(t, TimeType):
        return _micros_of_clock(column)
    # timestamp without zone: wall-clock micros, independent of the session zone
    days = F.unix_date(column.cast(T.DateType())).cast(T.LongType())
    return days * F.lit(_MICROS_PER_DAY) + _micros_of_clock(column)


# --- bucket of longs as Spark SQL ---------------------------------------------------


class _Steps:
    """Adds each intermediate value as its own column (see the module docstring)."""

    def __init__(self, df: DataFrame, prefix: str) -> None:
        self.df = df
        self.prefix = prefix
        self.names: list[str] = []

    def let(self, expr: Column) -> Column:
        name = f"{self.prefix}{len(self.names)}"
        self.names.append(name)
        self.df = self.df.withColumn(name, expr)
        return F.col(name)


def _long(v: int) -> Column:
    return F.lit(v).cast(T.LongType())


def _mul32(a: Column, c: int) -> Column:
    """``(a * c) mod 2^32`` for ``a`` in [0, 2^32): products stay below 2^49."""
    low = a.bitwiseAND(_long(0xFFFF)) * _long(c)
    high = F.shiftleft((F.shiftright(a, 16) * _long(c)).bitwiseAND(_long(0xFFFF)), 16)
    return (low + high).bitwiseAND(_long(_MASK32))


def _rotl32(x: Column, r: int) -> Column:
    return F.shiftleft(x, r).bitwiseOR(F.shiftright(x, 32 - r)).bitwiseAND(_long(_MASK32))


def _bucket_long(steps: _Steps, value: Column, num_buckets: int) -> Column:
    """``bucket[N]`` of a long column: Murmur3 x86_32 (seed 0) of its 8 LE bytes."""
    low = steps.let(value.bitwiseAND(_long(_MASK32)))
    high = steps.let(F.shiftright(value, 32).bitwiseAND(_long(_MASK32)))
    h: Column = _long(0)
    for block in (low, high):
        k = steps.let(_mul32(block, _C1))
        k = steps.let(_rotl32(k, 15))
        k = steps.let(_mul32(k, _C2))
        x = steps.let(h.bitwiseXOR(k))
        x = steps.let(_rotl32(x, 13))
        h = steps.let((x * _long(5) + _long(_H_ADD)).bitwiseAND(_long(_MASK32)))
    h = steps.let(h.bitwiseXOR(_long(8)))  # the length in bytes
    h = steps.let(h.bitwiseXOR(F.shiftright(h, 16)))
    h = steps.let(_mul32(h, _F1))
    h = steps.let(h.bitwiseXOR(F.shiftright(h, 13)))
    h = steps.let(_mul32(h, _F2))
    h = steps.let(h.bitwiseXOR(F.shiftright(h, 16)))
    positive = h.bitwiseAND(_long(0x7FFFFFFF))
    return (positive % _long(num_buckets)).cast(T.IntegerType())


# --- bucket of bytes with pyarrow ---------------------------------------------------


def _u32(v: int) -> pa.Scalar:
    return pa.scalar(v, pa.uint32())


def _mul(a: pa.Array, c: int) -> pa.Array:
    return pc.multiply(a, _u32(c))  # unchecked: wraps modulo 2^32


def _rotl(x: pa.Array, r: int) -> pa.Array:
    return pc.bit_wise_or(pc.shift_left(x, _u32(r)), pc.shift_right(x, _u32(32 - r)))


def _mix_k1(k: pa.Array) -> pa.Array:
    return _mul(_rotl(_mul(k, _C1), 15), _C2)


def _mix_h1(h: pa.Array, k: pa.Array) -> pa.Array:
    return pc.add(_mul(_rotl(pc.bit_wise_xor(h, k), 13), 5), _u32(_H_ADD))


def _words(four_bytes: pa.Array) -> pa.Array:
    """Each 4-byte value read as a little-endian uint32 (Murmur3's getblock)."""
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
        four_bytes = pc.binary_reverse(four_bytes.cast(pa.binary()))
    fixed = four_bytes.cast(pa.binary(4))
    data = fixed.buffers()[1]
    return pa.Array.from_buffers(pa.uint32(), len(fixed), [None, data], offset=fixed.offset)


def murmur3_arrow(values: pa.Array) -> pa.Array:
    """Murmur3 x86_32 (seed 0) of every binary or string value, as uint32; null stays null."""
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.large_binary())
    elif pa.types.is_string(values.type) or pa.types.is_fixed_size_binary(values.type):
        values = values.cast(pa.binary())
    valid = values.is_valid()
    data = pc.fill_null(values, pa.scalar(b"", values.type))
    lengths = pc.binary_length(data).cast(pa.int64())
    blocks = pc.divide(lengths, 4)
    h = pa.repeat(_u32(0), len(data))
    for j in range(int(pc.max(blocks).as_py() or 0)):
        mask = pc.greater(blocks, j)
        words = _words(pc.binary_slice(pc.filter(data, mask), 4 * j, 4 * j + 4))
        h = pc.replace_with_mask(h, mask, _mix_h1(pc.filter(h, mask), _mix_k1(words)))
    rest = pc.subtract(lengths, pc.multiply(blocks, 4))
    for r in (1, 2, 3):
        mask = pc.equal(rest, r)
        if not pc.any(mask).as_py():
            continue
        tail = pc.binary_slice(pc.filter(data, mask), -r, 2**31 - 1)
        padded = pc.binary_join_element_wise(
            tail, pa.scalar(b"\0" * (4 - r), tail.type), pa.scalar(b"", tail.type)
        )
        k = _mix_k1(_words(padded))
        h = pc.replace_with_mask(h, mask, pc.bit_wise_xor(pc.filter(h, mask), k))
    h = pc.bit_wise_xor(h, lengths.cast(pa.uint32()))
    h = pc.bit_wise_xor(h, pc.shift_right(h, _u32(16)))
    h = _mul(h, _F1)
    h = pc.bit_wise_xor(h, pc.shift_right(h, _u32(13)))
    h = _mul(h, _F2)
    h = pc.bit_wise_xor(h, pc.shift_right(h, _u32(16)))
    return pc.if_else(valid, h, pa.scalar(None, pa.uint32()))


def _decimal_bytes(values: pa.Array) -> pa.Array:
    """Minimal big-endian two's-complement bytes of each decimal's unscaled value."""
    raw = pa.Array.from_buffers(
        pa.binary(16), len(values), [values.buffers()[0], values.buffers()[1]], offset=values.offset
    )
    big_endian = pc.binary_reverse(raw.cast(pa.binary()))
    zero, minus = pa.scalar(b"\x00"), pa.scalar(b"\xff")
    sign_bit = pa.scalar(b"\x80")
    for _ in range(15):
        first = pc.binary_slice(big_endian, 0, 1)
        second = pc.binary_slice(big_endian, 1, 2)
        # A leading 0x00 (0xff) is redundant when the next byte keeps the sign.
        redundant = pc.or_(
            pc.and_(pc.equal(first, zero), pc.less(second, sign_bit)),
            pc.and_(pc.equal(first, minus), pc.greater_equal(second, sign_bit)),
        )
        redundant = pc.and_(pc.fill_null(redundant, False), pc.greater(pc.binary_length(second), 0))
        if not pc.any(redundant).as_py():
            break
        big_endian = pc.if_else(redundant, pc.binary_slice(big_endian, 1, 16), big_endian)
    return big_endian


def bucket_arrow(values: pa.Array, source_type: IcebergType, num_buckets: int) -> pa.Array:
    """``bucket[N]`` of a string, binary, fixed, uuid (16 bytes) or decimal Arrow array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    data = _decimal_bytes(values) if isinstance(source_type, DecimalType) else values
    hashes = murmur3_arrow(data)
    positive = pc.bit_wise_and(hashes, _u32(0x7FFFFFFF)).cast(pa.int64())
    remainder = pc.subtract(positive, pc.multiply(pc.divide(positive, num_buckets), num_buckets))
    return remainder.cast(pa.int32())


class _ArrowBuckets:
    """The ``mapInArrow`` function: drops the input columns, appends the buckets."""

    def __init__(self, inputs: Sequence[tuple[str, str, int, str]], keep: Sequence[str]) -> None:
        self.inputs = list(inputs)  # (input column, type JSON, N, output name)
        self.keep = list(keep)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import json

        types = [type_from_json(json.loads(t)) for _, t, _, _ in self.inputs]
        for batch in batches:
            arrays = [batch.column(name) for name in self.keep]
            names = list(self.keep)
            for (column, _, n, out), t in zip(self.inputs, types, strict=True):
                arrays.append(bucket_arrow(batch.column(column), t, n))
                names.append(out)
            yield pa.RecordBatch.from_arrays(arrays, names=names)


# --- all transforms on a DataFrame ----------------------------------------------------


def with_transform_columns(
    df: DataFrame, columns: Sequence[TransformColumn], *, prefix: str = "__iw_t"
) -> DataFrame:
    """``df`` with one more column per :class:`TransformColumn`, in order.

    Names starting with ``prefix`` are used for intermediate columns and dropped again.
    """
    import json

    byte_inputs: list[tuple[str, str, int, str]] = []
    for i, tc in enumerate(columns):
        t = tc.transform
        if isinstance(t, BucketTransform) and not t.can_transform(tc.source_type):
            raise ValidationError(f"{t} cannot be applied to a column of type {tc.source_type}")
        if isinstance(t, BucketTransform) and isinstance(tc.source_type, _LONG_HASHED):
            steps = _Steps(df, f"{prefix}{i}_")
            value = steps.let(_hash_long_input(tc.source_type, tc.source))
            bucket = _bucket_long(steps, value, t.num_buckets)
            df = steps.df.withColumn(tc.name, bucket).drop(*steps.names)
        elif isinstance(t, BucketTransform) and isinstance(tc.source_type, _BYTES_HASHED):
            source = f"{prefix}{i}_in"
            value = tc.source
            if isinstance(tc.source_type, StringType):
                value = value.cast(T.BinaryType())  # Spark's cast is the UTF-8 bytes
            df = df.withColumn(source, value)
            byte_inputs.append(
                (source, json.dumps(type_to_json(tc.source_type)), t.num_buckets, tc.name)
            )
        elif isinstance(t, BucketTransform):
            raise ValidationError(f"{t} of type {tc.source_type} has no Spark implementation")
        elif isinstance(t, TruncateTransform) and isinstance(tc.source_type, DecimalType):
            # decimal(38, s) - decimal(38, s) is typed decimal(39, s), which Spark narrows
            # by dropping a digit of scale unless precision loss is off while the column
            # is analysed (the analysed plan keeps the exact type).
            with job_conf(df.sparkSession, {_PRECISION_LOSS: "false"}):
                df = df.withColumn(tc.name, transform_column(t, tc.source_type, tc.source))
        else:
            df = df.withColumn(tc.name, transform_column(t, tc.source_type, tc.source))
    if not byte_inputs:
        return df
    inputs = {name for name, _, _, _ in byte_inputs}
    keep = [name for name in df.columns if name not in inputs]
    by_name = {f.name: f for f in df.schema.fields}
    out_schema = T.StructType(
        [by_name[name] for name in keep]
        + [T.StructField(out, T.IntegerType(), True) for _, _, _, out in byte_inputs]
    )
    # The bucket columns must end up where the caller expects them: after the others.
    result = map_in_arrow(df, _ArrowBuckets(byte_inputs, keep), out_schema)
    order = [name for name in result.columns if name not in {c.name for c in columns}]
    return result.select(*order, *[c.name for c in columns])
