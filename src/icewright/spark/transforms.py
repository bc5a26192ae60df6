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
    mode, where an overflow raises). Every value a step uses twice is a projected
    column of an earlier step, so that Catalyst neither builds an exponential
    expression tree nor merges them back (``CollapseProject`` keeps non-trivial
    expressions used twice apart). The steps are SQL text (one ``expr`` each, not a
    py4j call per operator), and step ``k`` of every hashed column is one projection:
    building the plan costs little next to running a small job.
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

_M32 = f"{_MASK32}L"


def _mul32(a: str, c: int) -> str:
    """``(a * c) mod 2^32`` for ``a`` in [0, 2^32): products stay below 2^49."""
    low = f"({a} & 65535L) * {c}L"
    high = f"shiftleft((shiftright({a}, 16) * {c}L) & 65535L, 16)"
    return f"(({low} + {high}) & {_M32})"


def _rotl32(x: str, r: int) -> str:
    return f"((shiftleft({x}, {r}) | shiftright({x}, {32 - r})) & {_M32})"


def _mix_h(x: str) -> str:
    """The end of a block's mix, ``h = h * 5 + 0xe6546b64``, from ``x = rotl(h ^ k, 13)``."""
    return f"(({x} * 5L + {_H_ADD}L) & {_M32})"


# Murmur3 x86_32 (seed 0) of a long ``v``'s 8 little-endian bytes: two blocks (``a``, the
# low word, then ``b``), no tail, then the finalization mix. Each step projects the named
# values (SQL over the previous step's); a value used twice by a step is always a column.
_MURMUR3_LONG_STEPS: tuple[dict[str, str], ...] = (
    {"a": f"{{v}} & {_M32}", "b": f"shiftright({{v}}, 32) & {_M32}"},
    {"a": _mul32("{a}", _C1), "b": _mul32("{b}", _C1)},
    {"a": _rotl32("{a}", 15), "b": _rotl32("{b}", 15)},
    {"x": _mul32("{a}", _C2), "b": _mul32("{b}", _C2)},  # x = h ^ k with h = 0
    {"x": _rotl32("{x}", 13)},
    {"x": f"{_mix_h('{x}')} ^ {{b}}"},
    {"x": _rotl32("{x}", 13)},
    {"h": f"{_mix_h('{x}')} ^ 8L"},  # the length in bytes
    {"h": "{h} ^ shiftright({h}, 16)"},
    {"h": _mul32("{h}", _F1)},
    {"h": "{h} ^ shiftright({h}, 13)"},
    {"h": _mul32("{h}", _F2)},
)
_MURMUR3_LONG_RESULT = "({h} ^ shiftright({h}, 16))"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _murmur3_longs(
    df: DataFrame, values: Sequence[tuple[str, Column]]
) -> tuple[DataFrame, list[str], list[str]]:
    """Murmur3 of each ``(column prefix, long value)``, side by side: each step of
    :data:`_MURMUR3_LONG_STEPS` is one projection holding that step of every value.

    Returns the frame, each value's hash (an SQL expression over its last columns, in
    ``[0, 2^32)``) and the intermediate column names (to drop).
    """
    if not values:
        return df, [], []
    names = [{"v": f"{prefix}v"} for prefix, _ in values]
    df = df.withColumns({n["v"]: value for n, (_, value) in zip(names, values, strict=True)})
    created = [n["v"] for n in names]
    for level, step in enumerate(_MURMUR3_LONG_STEPS):
        projected: dict[str, Column] = {}
        for (prefix, _), current in zip(values, names, strict=True):
            quoted = {symbol: _quote(name) for symbol, name in current.items()}
            for symbol, template in step.items():
                name = f"{prefix}{level}{symbol}"
                projected[name] = F.expr(template.format(**quoted))
                current[symbol] = name
        df = df.withColumns(projected)
        created.extend(projected)
    hashes = [
        _MURMUR3_LONG_RESULT.format(**{s: _quote(n) for s, n in current.items()})
        for current in names
    ]
    return df, hashes, created


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


@dataclass(frozen=True, slots=True)
class _Planned:
    """How one :class:`TransformColumn` is added: ``long`` (bucket of hash ``lane``),
    ``bytes`` (bucket of input column ``input_name``, set to ``expr``), ``decimal``
    (truncate, analysed without precision loss) or ``plain`` (``expr``)."""

    column: TransformColumn
    kind: str
    expr: Column | None = None
    lane: int = -1
    input_name: str = ""


def with_transform_columns(
    df: DataFrame, columns: Sequence[TransformColumn], *, prefix: str = "__iw_t"
) -> DataFrame:
    """``df`` with one more column per :class:`TransformColumn`, in order.

    Every source is a column of ``df`` as given (not one that an earlier
    :class:`TransformColumn` adds). Names starting with ``prefix`` are used for
    intermediate columns and dropped again.

    The columns are added in few projections: the steps of every ``bucket`` of an
    int-like column run side by side (step ``k`` of all of them is one projection, and
    buckets of the same source ``Column`` object and type share one hash), then one
    projection adds every column (a decimal ``truncate`` is analysed on its own, see
    below). Adding each as its own ``withColumn`` made Spark analyse ever longer plans:
    the query planning took longer than running a small job.
    """
    import json

    # Validate and build every expression first, in order (the first bad column raises).
    lanes: list[tuple[str, Column]] = []  # (column prefix, long value) to hash
    lane_of: dict[tuple[int, str], int] = {}
    plan: list[_Planned] = []
    for i, tc in enumerate(columns):
        t = tc.transform
        if isinstance(t, BucketTransform) and not t.can_transform(tc.source_type):
            raise ValidationError(f"{t} cannot be applied to a column of type {tc.source_type}")
        if isinstance(t, BucketTransform) and isinstance(tc.source_type, _LONG_HASHED):
            key = (id(tc.source), json.dumps(type_to_json(tc.source_type)))
            if key not in lane_of:
                lane_of[key] = len(lanes)
                lanes.append((f"{prefix}{i}_", _hash_long_input(tc.source_type, tc.source)))
            plan.append(_Planned(tc, "long", lane=lane_of[key]))
        elif isinstance(t, BucketTransform) and isinstance(tc.source_type, _BYTES_HASHED):
            value = tc.source
            if isinstance(tc.source_type, StringType):
                value = value.cast(T.BinaryType())  # Spark's cast is the UTF-8 bytes
            plan.append(_Planned(tc, "bytes", value, input_name=f"{prefix}{i}_in"))
        elif isinstance(t, BucketTransform):
            raise ValidationError(f"{t} of type {tc.source_type} has no Spark implementation")
        else:
            decimal = isinstance(t, TruncateTransform) and isinstance(tc.source_type, DecimalType)
            expr = transform_column(t, tc.source_type, tc.source)
            plan.append(_Planned(tc, "decimal" if decimal else "plain", expr))

    df, hashes, intermediate = _murmur3_longs(df, lanes)
    byte_inputs: list[tuple[str, str, int, str]] = []
    added: dict[str, Column] = {}
    for p in plan:
        if p.kind == "long":  # the value's hash modulo N
            assert isinstance(p.column.transform, BucketTransform)
            n = p.column.transform.num_buckets
            added[p.column.name] = F.expr(f"CAST(({hashes[p.lane]} & 2147483647L) % {n}L AS INT)")
        elif p.kind == "bytes":  # its input now, the bucket in mapInArrow below
            assert isinstance(p.column.transform, BucketTransform) and p.expr is not None
            added[p.input_name] = p.expr
            source_type = json.dumps(type_to_json(p.column.source_type))
            n = p.column.transform.num_buckets
            byte_inputs.append((p.input_name, source_type, n, p.column.name))
        elif p.kind == "decimal":
            # decimal(38, s) - decimal(38, s) is typed decimal(39, s), which Spark narrows
            # by dropping a digit of scale unless precision loss is off while the column
            # is analysed (the analysed plan keeps the exact type).
            assert p.expr is not None
            if added:
                df, added = df.withColumns(added), {}
            with job_conf(df.sparkSession, {_PRECISION_LOSS: "false"}):
                df = df.withColumn(p.column.name, p.expr)
        else:
            assert p.expr is not None
            added[p.column.name] = p.expr
    if added:
        df = df.withColumns(added)
    if intermediate:
        df = df.drop(*intermediate)
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
