"""Column metrics of a data file, read from a Parquet footer.

Spec: "Manifests" (the ``data_file`` metrics fields), "Appendix D" (bounds as
single-value bytes) and the table properties ``write.metadata.metrics.*``:

* ``write.metadata.metrics.default`` (default ``truncate(16)``) and per column
  ``write.metadata.metrics.column.<name>``: one of ``none``, ``counts``,
  ``truncate(N)`` or ``full``;
* ``write.metadata.metrics.max-inferred-column-defaults`` (default 100): only the
  first that many columns get the default mode when no default is configured
  explicitly; the others get ``none``.

Parquet statistics do not count NaN values: a writer that has the data counts them
with :func:`nan_value_counts` and hands the counts in; without them ``nan_value_counts``
is left unknown (absent) rather than guessed, as the spec reads a missing count.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileContent, FileFormat
from icewright.spec import values
from icewright.spec.schema import Schema
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
    LongType,
    PrimitiveType,
    StringType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

DEFAULT_METRICS_MODE = "truncate(16)"
MAX_INFERRED_COLUMNS_DEFAULT = 100
_FIELD_ID_KEY = b"PARQUET:field_id"
_TRUNCATE = re.compile(r"^truncate\((\d+)\)$")


@dataclass(frozen=True, slots=True)
class MetricsMode:
    """How much of a column's metrics to keep: ``none``, ``counts``, ``truncate(N)``, ``full``."""

    counts: bool
    bounds: bool
    truncate_length: int | None = None

    @classmethod
    def parse(cls, text: str) -> MetricsMode:
        mode = text.strip().lower()
        if mode == "none":
            return cls(counts=False, bounds=False)
        if mode == "counts":
            return cls(counts=True, bounds=False)
        if mode == "full":
            return cls(counts=True, bounds=True)
        if m := _TRUNCATE.match(mode):
            length = int(m.group(1))
            if length <= 0:
                raise ValidationError(
                    f"metrics mode {text!r}: the truncate length must be positive"
                )
            return cls(counts=True, bounds=True, truncate_length=length)
        raise ValidationError(
            f"unknown metrics mode {text!r}: use none, counts, truncate(N) or full"
        )


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """The metrics mode of every column, from the table properties."""

    default: MetricsMode
    by_column: Mapping[str, MetricsMode]
    max_inferred_columns: int | None

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> MetricsConfig:
        explicit_default = "write.metadata.metrics.default" in properties
        default = MetricsMode.parse(
            properties.get("write.metadata.metrics.default", DEFAULT_METRICS_MODE)
        )
        prefix = "write.metadata.metrics.column."
        by_column = {
            key[len(prefix) :]: MetricsMode.parse(value)
            for key, value in properties.items()
            if key.startswith(prefix)
        }
        limit = int(
            properties.get(
                "write.metadata.metrics.max-inferred-column-defaults",
                str(MAX_INFERRED_COLUMNS_DEFAULT),
            )
        )
        return cls(default, by_column, None if explicit_default else limit)

    def mode_for(self, schema: Schema, field_id: int, leaf_position: int) -> MetricsMode:
        name = schema.column_name(field_id)
        if name in self.by_column:
            return self.by_column[name]
        if self.max_inferred_columns is not None and leaf_position >= self.max_inferred_columns:
            return MetricsMode(counts=False, bounds=False)
        return self.default


def data_file_from_parquet(
    path: str,
    file_size_in_bytes: int,
    metadata: pq.FileMetaData,
    schema: Schema,
    *,
    partition: tuple[Any, ...] = (),
    spec_id: int = 0,
    properties: Mapping[str, str] | None = None,
    sort_order_id: int | None = None,
    nan_counts: Mapping[int, int] | None = None,
) -> DataFile:
    """Describe a Parquet data file for a manifest, with metrics from its footer.

    The file's columns must carry Iceberg field ids (``PARQUET:field_id``);
    columns without one, or with an id the schema does not know, get no metrics.
    ``nan_counts`` (from :func:`nan_value_counts` over the rows written) are kept for
    the float and double columns whose metrics mode counts.
    """
    config = MetricsConfig.from_properties(properties or {})
    leaf_ids = list(_leaf_field_ids(metadata.schema.to_arrow_schema()))
    if len(leaf_ids) != metadata.num_columns:
        raise ValidationError(
            f"{path}: the Parquet schema has {metadata.num_columns} leaf columns but "
            f"{len(leaf_ids)} were mapped to fields; is it a file with Iceberg field ids?"
        )
    known = schema.field_ids()
    top_level_order = {f.field_id: i for i, f in enumerate(schema.leaf_fields())}

    column_sizes: dict[int, int] = {}
    value_counts: dict[int, int] = {}
    null_counts: dict[int, int] = {}
    lower: dict[int, Any] = {}
    upper: dict[int, Any] = {}
    no_nulls_stats: set[int] = set()
    no_bounds: set[int] = set()

    parquet_schema = metadata.schema
    for column_index, field_id in enumerate(leaf_ids):
        if field_id is None or field_id not in known:
            continue
        mode = config.mode_for(schema, field_id, top_level_order.get(field_id, 0))
        if not mode.counts:
            continue
        iceberg_type = schema.find_type(field_id)
        column = parquet_schema.column(column_index)
        # Bounds are kept only for columns outside lists and maps (repetition 0).
        wants_bounds = (
            mode.bounds
            and column.max_repetition_level == 0
            and isinstance(iceberg_type, PrimitiveType)
        )
        for rg_index in range(metadata.num_row_groups):
            chunk = metadata.row_group(rg_index).column(column_index)
            column_sizes[field_id] = column_sizes.get(field_id, 0) + chunk.total_compressed_size
            value_counts[field_id] = value_counts.get(field_id, 0) + chunk.num_values
            stats = chunk.statistics
            if stats is None or not stats.has_null_count:
                no_nulls_stats.add(field_id)
            else:
                null_counts[field_id] = null_counts.get(field_id, 0) + stats.null_count
            if not wants_bounds:
                continue
            if stats is None or not stats.has_min_max:
                # A row group of only nulls has no min/max and does not widen the bounds;
                # anything else without statistics makes the bounds unknown.
                if (
                    stats is None
                    or not stats.has_null_count
                    or stats.null_count != chunk.num_values
                ):
                    no_bounds.add(field_id)
                continue
            lo = _physical_to_value(iceberg_type, column, stats.min_raw, lower=True)
            hi = _physical_to_value(iceberg_type, column, stats.max_raw, lower=False)
            if lo is None or hi is None:
                no_bounds.add(field_id)
                continue
            if field_id not in lower or lo < lower[field_id]:
                lower[field_id] = lo
            if field_id not in upper or hi > upper[field_id]:
                upper[field_id] = hi

    for fid in no_nulls_stats:
        null_counts.pop(fid, None)
    nans = {fid: n for fid, n in (nan_counts or {}).items() if fid in value_counts}
    lower_bytes: dict[int, bytes] = {}
    upper_bytes: dict[int, bytes] = {}
    for fid, lo in lower.items():
        if fid in no_bounds or fid not in upper:
            continue
        t = schema.find_type(fid)
        assert isinstance(t, PrimitiveType)
        mode = config.mode_for(schema, fid, top_level_order.get(fid, 0))
        lo_t = _truncate_lower(t, lo, mode.truncate_length)
        hi_t = _truncate_upper(t, upper[fid], mode.truncate_length)
        lower_bytes[fid] = values.to_bytes(t, lo_t)
        if hi_t is not None:
            upper_bytes[fid] = values.to_bytes(t, hi_t)

    return DataFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=metadata.num_rows,
        file_size_in_bytes=file_size_in_bytes,
        column_sizes=column_sizes or None,
        value_counts=value_counts or None,
        null_value_counts=null_counts or None,
        nan_value_counts=nans or None,
        lower_bounds=lower_bytes or None,
        upper_bounds=upper_bytes or None,
        split_offsets=split_offsets(metadata),
        sort_order_id=sort_order_id,
        spec_id=spec_id,
    )


def split_offsets(metadata: pq.FileMetaData) -> tuple[int, ...]:
    """Where each row group starts (its first column chunk, dictionary page included)."""
    offsets = []
    for i in range(metadata.num_row_groups):
        first = metadata.row_group(i).column(0)
        start = first.data_page_offset
        if first.has_dictionary_page and first.dictionary_page_offset is not None:
            start = min(start, first.dictionary_page_offset)
        offsets.append(start)
    return tuple(offsets)


# --- Parquet schema -> field ids -------------------------------------------


def _field_id(f: pa.Field) -> int | None:
    meta = f.metadata or {}
    raw = meta.get(_FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def _leaf_field_ids(schema: pa.Schema) -> Iterator[int | None]:
    """The Iceberg field id of each Parquet leaf column, in Parquet column order."""

    def visit(f: pa.Field) -> Iterator[int | None]:
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from visit(t.field(i))
        elif pa.types.is_map(t):
            yield from visit(t.key_field)
            yield from visit(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            yield from visit(t.value_field)
        else:
            yield _field_id(f)

    for f in schema:
        yield from visit(f)


# --- statistics -> Iceberg values -------------------------------------------


def _time_unit(column: Any) -> str | None:
    text = str(column.logical_type)
    for unit, name in (
        ("MILLIS", "milliseconds"),
        ("MICROS", "microseconds"),
        ("NANOS", "nanoseconds"),
    ):
        if name in text:
            return unit
    return None


def _scale_time(raw: int, unit: str | None, target_nanos: bool, lower: bool) -> int | None:
    if unit is None:
        return None
    factor = {"MILLIS": 1_000_000, "MICROS": 1_000, "NANOS": 1}[unit]
    nanos = raw * factor
    if target_nanos:
        return nanos
    # Rounding outward keeps the bound true when precision is lost.
    return nanos // 1000 if lower else -((-nanos) // 1000)


def _physical_to_value(t: IcebergType, column: Any, raw: Any, *, lower: bool) -> Any:
    """Convert a Parquet min/max (physical form) to the Iceberg Python value, or None."""
    physical = column.physical_type
    if isinstance(t, BooleanType):
        return bool(raw)
    if isinstance(t, IntegerType | LongType | DateType):
        return int(raw) if physical in ("INT32", "INT64") else None
    if isinstance(t, FloatType | DoubleType):
        v = float(raw)
        if math.isnan(v):  # NaN never bounds a column (spec: bounds exclude NaN)
            return None
        # Parquet may have dropped the sign of zero: widen to keep the bound true.
        if v == 0.0:
            return -0.0 if lower else 0.0
        return v
    if isinstance(t, TimeType):
        return _scale_time(int(raw), _time_unit(column), False, lower)
    if isinstance(t, TimestampType | TimestamptzType):
        if physical != "INT64":
            return None  # INT96 timestamps carry no usable statistics
        return _scale_time(int(raw), _time_unit(column), False, lower)
    if isinstance(t, TimestampNsType | TimestamptzNsType):
        if physical != "INT64":
            return None
        return _scale_time(int(raw), _time_unit(column), True, lower)
    if isinstance(t, StringType):
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    if isinstance(t, UUIDType):
        return uuid.UUID(bytes=bytes(raw))
    if isinstance(t, FixedType | BinaryType):
        return bytes(raw)
    if isinstance(t, DecimalType):
        if physical in ("INT32", "INT64"):
            unscaled = int(raw)
        else:
            unscaled = int.from_bytes(bytes(raw), "big", signed=True)
        return Decimal(unscaled).scaleb(-t.scale)
    return None


# --- truncation (spec: "Metrics" truncate(N); Java's UnicodeUtil/BinaryUtil) ---


def _truncate_lower(t: PrimitiveType, value: Any, length: int | None) -> Any:
    if length is None:
        return value
    if isinstance(t, StringType):
        return value[:length]
    if isinstance(t, BinaryType):
        return value[:length]
    return value


def _truncate_upper(t: PrimitiveType, value: Any, length: int | None) -> Any:
    """The smallest value of at most ``length`` units that is >= ``value``, or None."""
    if length is None:
        return value
    if isinstance(t, StringType):
        if len(value) <= length:
            return value
        chars = list(value[:length])
        while chars:
            code = ord(chars[-1]) + 1
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000  # skip the surrogate range
            if code <= 0x10FFFF:
                chars[-1] = chr(code)
                return "".join(chars)
            chars.pop()
        return None
    if isinstance(t, BinaryType):
        if len(value) <= length:
            return value
        data = bytearray(value[:length])
        while data:
            if data[-1] < 0xFF:
                data[-1] += 1
                return bytes(data)
            data.pop()
        return None
    return value


def nan_value_counts(data: pa.Table | pa.RecordBatch) -> dict[int, int]:
    """NaN counts of every float and double column of ``data`` by Iceberg field id.

    Columns are identified by their ``PARQUET:field_id`` field metadata, nested ones too
    (struct fields, list elements, map keys and values); values under a null parent are
    not counted. Add the counts of the batches of one file with :func:`add_counts`.
    """
    counts: dict[int, int] = {}
    for index, f in enumerate(data.schema):
        column = data.column(index)
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        for chunk in chunks:
            _count_nans(f, chunk, counts)
    return counts


def add_counts(total: dict[int, int], more: Mapping[int, int]) -> None:
    """Add ``more`` into ``total`` (counts by field id)."""
    for fid, n in more.items():
        total[fid] = total.get(fid, 0) + n


def _count_nans(f: pa.Field, array: pa.Array, counts: dict[int, int]) -> None:
    t = f.type
    if pa.types.is_floating(t):
        fid = _field_id(f)
        if fid is not None:
            found = pc.sum(pc.is_nan(array)).as_py() or 0
            counts[fid] = counts.get(fid, 0) + int(found)
    elif pa.types.is_struct(t):
        for i, child in enumerate(array.flatten()):  # children with the parent's nulls
            _count_nans(t.field(i), child, counts)
    elif pa.types.is_map(t):
        # .keys and .items are the whole child arrays, whatever the slice and the null
        # maps; as a list of entries the map flattens to just its present entries.
        entry = pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)
        flat = array.cast(pa.list_(entry)).flatten()
        _count_nans(t.key_field, flat.field(0), counts)
        _count_nans(t.item_field, flat.field(1), counts)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        _count_nans(t.value_field, array.flatten(), counts)
