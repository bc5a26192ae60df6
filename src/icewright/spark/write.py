"""The Spark write job: a source in, Parquet data files and their ``DataFile`` s out.

:func:`write_files` plans and runs one Spark job and never touches catalog metadata:

1. load the source (a DataFrame, ``sql:`` query, a path with a format, or an importable
   ``"pkg.module:function"``), and align its columns to the table schema by name with
   only safe casts (:func:`icewright.spark.types.align_columns`);
2. compute the partition values with the Iceberg transforms inside Spark
   (:mod:`icewright.spark.transforms`), distribute per ``write.distribution-mode``
   (``none``; ``hash``, the default of a partitioned table; ``range``, the default of an
   unpartitioned sorted one) and sort within tasks by the partition values, then the
   table's sort order;
3. write the files in the Spark tasks (``mapInArrow``) with pyarrow's Parquet writer
   into a job directory ``<data>/<job id>/<partition path>/`` and report each file's
   path, size, footer and partition tuple back to the driver;
4. describe every file with :func:`icewright.manifest.metrics.data_file_from_parquet`
   (metrics per ``write.metadata.metrics.*``).

Why the tasks write with pyarrow and not with Spark's Parquet data source: Spark's
writer gives no field ids to list elements and map keys and values (it writes
``field_id=-1`` there: checked on pyspark 4 and 3.5), stores uuid and fixed as
variable-length ``binary`` and cannot write ``time`` before Spark 4.1, all of which
Appendix A defines otherwise; it also turns an empty string partition value into
``__HIVE_DEFAULT_PARTITION__`` (the null's), so a partition tuple could not be recovered
exactly from its path, and it can roll files only by record count. Written from Arrow,
every file has Iceberg's exact Parquet types and ids, the partition tuple is taken
from the rows themselves, and files roll on their real size: a file is closed when
its bytes on storage plus the estimated compressed size of the rows still buffered
reach ``write.target-file-size-bytes`` (the estimate uses the compression ratio seen
so far in the file).

A failed job deletes its job directory (no metadata references it yet) and raises;
after a successful one, files of failed task attempts left in the directory are
deleted too.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import logging
import math
import pickle
import re
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.arrow import FIELD_ID, to_iceberg_values, type_to_arrow
from icewright.errors import IcewrightError, ValidationError
from icewright.io.base import FileIO, load_file_io, uri_scheme
from icewright.manifest.data_file import DataFile
from icewright.manifest.metrics import add_counts, data_file_from_parquet, nan_value_counts
from icewright.spark.session import map_in_arrow
from icewright.spark.transforms import TransformColumn, with_transform_columns
from icewright.spark.types import INVALID_VALUE_MARKER, AddedColumn, align_columns
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.sorting import NullOrder, SortDirection, SortOrder
from icewright.spec.types import (
    BinaryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
    type_from_json,
    type_to_json,
)

__all__ = [
    "FORMATS",
    "CallableSource",
    "PathSource",
    "Source",
    "SqlSource",
    "WriteResult",
    "WriteSettings",
    "data_location",
    "load_source",
    "parse_source",
    "write_files",
]

log = logging.getLogger(__name__)

# --- sources ------------------------------------------------------------------------

FORMATS = ("parquet", "csv", "json", "orc")
"""The file formats a path source may have."""

_CALLABLE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


@dataclass(frozen=True, slots=True)
class SqlSource:
    """A Spark SQL query whose result is written."""

    query: str


@dataclass(frozen=True, slots=True)
class PathSource:
    """Files at ``path`` in ``format`` (parquet, csv with a header row, json, orc)."""

    path: str
    format: str = "parquet"
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValidationError(
                f"unknown source format {self.format!r}: use one of {', '.join(FORMATS)}"
            )


@dataclass(frozen=True, slots=True)
class CallableSource:
    """An importable function ``"pkg.module:function"`` that returns a DataFrame.

    It is called with the SparkSession when it takes an argument, else with none.
    """

    target: str


Source = DataFrame | SqlSource | PathSource | CallableSource | str
"""Anything :func:`write_files` accepts; a string is read by :func:`parse_source`."""


def parse_source(text: str) -> SqlSource | PathSource | CallableSource:
    """Read a source from its text form.

    * ``sql:SELECT ...`` -- a Spark SQL query;
    * ``parquet:<path>``, ``csv:<path>``, ``json:<path>``, ``orc:<path>`` -- files;
    * ``pkg.module:function`` -- an importable callable returning a DataFrame;
    * any other text is a path; its format comes from its extension (parquet when it
      has none of the known ones).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"a source must be a non-empty string, got {text!r}")
    text = text.strip()
    head, sep, rest = text.partition(":")
    if sep and head.lower() == "sql":
        if not rest.strip():
            raise ValidationError("the sql: source has no query after 'sql:'")
        return SqlSource(rest.strip())
    if sep and head.lower() in FORMATS:
        if not rest:
            raise ValidationError(f"the {head}: source has no path after '{head}:'")
        return PathSource(rest, head.lower())
    if _CALLABLE.match(text) and not text.startswith(("file:", "s3:", "s3a:", "s3n:")):
        return CallableSource(text)
    suffix = text.rstrip("/").rsplit(".", 1)[-1].lower() if "." in text else ""
    return PathSource(text, suffix if suffix in FORMATS else "parquet")


def load_source(spark: SparkSession, source: Source) -> DataFrame:
    """The DataFrame of ``source``; a bad source raises :class:`ValidationError`."""
    if isinstance(source, DataFrame):
        return source
    if isinstance(source, str):
        source = parse_source(source)
    try:
        if isinstance(source, SqlSource):
            return spark.sql(source.query)
        if isinstance(source, PathSource):
            return _read_path(spark, source)
        if isinstance(source, CallableSource):
            return _call(spark, source)
    except IcewrightError:
        raise
    except Exception as e:
        if type(e).__name__ in ("AnalysisException", "ParseException", "IllegalArgumentException"):
            raise ValidationError(f"cannot read the source {source}: {_first_line(e)}") from None
        raise
    raise ValidationError(
        f"unsupported source {source!r}: pass a DataFrame, 'sql:<query>', "
        "'<format>:<path>', a path, or 'pkg.module:function'"
    )


def _read_path(spark: SparkSession, source: PathSource) -> DataFrame:
    scheme = uri_scheme(source.path)
    if scheme in ("file", "s3", "s3a", "s3n") or (scheme is None and source.path.startswith("/")):
        io = load_file_io(source.path)
        if not (io.exists(source.path) or any(True for _ in io.list_prefix(source.path))):
            raise ValidationError(
                f"the source path {source.path!r} does not exist (or holds no files)"
            )
    reader = spark.read.format(source.format)
    options = dict(source.options)
    if source.format == "csv":
        options = {"header": "true", "inferSchema": "true", **options}
    return reader.options(**options).load(source.path)


def _call(spark: SparkSession, source: CallableSource) -> DataFrame:
    module_name, _, attr = source.target.partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValidationError(f"cannot import the source {source.target!r}: {e}") from None
    if not callable(fn):
        raise ValidationError(f"the source {source.target!r} is not callable")
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    try:
        result = fn(spark) if params else fn()
    except IcewrightError:
        raise
    except Exception as e:
        raise ValidationError(
            f"the source {source.target!r} raised {type(e).__name__}: {_first_line(e)}"
        ) from e
    if not isinstance(result, DataFrame):
        raise ValidationError(
            f"the source {source.target!r} returned {type(result).__name__}, not a DataFrame"
        )
    return result


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# --- settings -----------------------------------------------------------------------

_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}


_TARGET_FILE_SIZE = 512 * 1024 * 1024
_ROW_GROUP_SIZE = 128 * 1024 * 1024
_PAGE_SIZE = 1024 * 1024
_DICTIONARY_PAGE_SIZE = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WriteSettings:
    """The table properties the write job follows (Iceberg's ``write.*`` defaults)."""

    compression: str = "zstd"
    compression_level: int | None = None
    target_file_size: int = _TARGET_FILE_SIZE
    row_group_size: int = _ROW_GROUP_SIZE
    page_size: int = _PAGE_SIZE
    dictionary_page_size: int = _DICTIONARY_PAGE_SIZE
    distribution: str = "none"

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, str], *, partitioned: bool, sorted_: bool
    ) -> WriteSettings:
        """Read ``write.parquet.*``, ``write.target-file-size-bytes`` and
        ``write.distribution-mode``; a bad value raises :class:`ValidationError`."""
        codec = properties.get("write.parquet.compression-codec", "zstd").strip().lower()
        if codec not in _CODECS:
            raise ValidationError(
                f"write.parquet.compression-codec={codec!r} is not supported: use one of "
                f"{', '.join(sorted(_CODECS))}"
            )
        default_mode = "hash" if partitioned else "range" if sorted_ else "none"
        mode = properties.get("write.distribution-mode", default_mode).strip().lower()
        if mode not in ("none", "hash", "range"):
            raise ValidationError(f"write.distribution-mode={mode!r}: use none, hash or range")
        level = properties.get("write.parquet.compression-level")
        return cls(
            compression=_CODECS[codec],
            compression_level=_positive(properties, "write.parquet.compression-level", 0)
            if level is not None
            else None,
            target_file_size=_positive(
                properties, "write.target-file-size-bytes", _TARGET_FILE_SIZE
            ),
            row_group_size=_positive(
                properties, "write.parquet.row-group-size-bytes", _ROW_GROUP_SIZE
            ),
            page_size=_positive(properties, "write.parquet.page-size-bytes", _PAGE_SIZE),
            dictionary_page_size=_positive(
                properties, "write.parquet.dict-size-bytes", _DICTIONARY_PAGE_SIZE
            ),
            distribution=mode,
        )


def _positive(properties: Mapping[str, str], key: str, default: int) -> int:
    raw = properties.get(key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"{key}={raw!r} is not an integer") from None
    if value < 0 or (value == 0 and not key.endswith("compression-level")):
        raise ValidationError(f"{key}={raw!r} must be positive")
    return value


def data_location(location: str, properties: Mapping[str, str]) -> str:
    """Where a table's data files go: ``write.data.path`` (or the older
    ``write.folder-storage.path``), else ``<table location>/data``."""
    for key in ("write.data.path", "write.folder-storage.path"):
        if properties.get(key):
            return properties[key].rstrip("/")
    return f"{location.rstrip('/')}/data"


# --- the result -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write job produced; nothing is committed yet.

    ``schema`` is the schema the files were written with: the table's, plus
    ``added_columns`` when schema evolution was allowed (the caller adds them, with
    these ids, in the same commit as the files).
    """

    data_files: tuple[DataFile, ...]
    added_columns: tuple[AddedColumn, ...]
    record_count: int
    job_id: str
    schema: Schema = field(repr=False)


# --- the job (driver side) ---------------------------------------------------------------

_RESULT_SCHEMA = T.StructType(
    [T.StructField("kind", T.StringType(), False), T.StructField("payload", T.BinaryType(), False)]
)


def write_files(
    spark: SparkSession,
    source: Source,
    *,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    properties: Mapping[str, str],
    location: str,
    io: FileIO,
    allow_schema_evolution: bool = False,
    last_column_id: int | None = None,
) -> WriteResult:
    """Write ``source`` as Parquet data files of a table; return their descriptors.

    ``location`` is the table's location; files go under :func:`data_location`.
    ``io`` reaches that location (the Spark tasks rebuild it from its class and
    properties). ``last_column_id`` is the table's ``last-column-id``, from which
    columns added by schema evolution take their ids (default: the schema's highest).
    Bad input raises :class:`ValidationError` and leaves no file behind.
    """
    spec.check_writable()
    if sort_order.has_unknown_transform:
        raise ValidationError(
            "the table's sort order has transforms icewright does not know; data cannot be "
            "written with it"
        )
    frame = load_source(spark, source)
    alignment = align_columns(
        frame.schema,
        schema,
        allow_evolution=allow_schema_evolution,
        last_column_id=last_column_id,
    )
    target = alignment.schema
    spec.check_compatible(target)
    sort_order.check_compatible(target)
    settings = WriteSettings.from_properties(
        properties, partitioned=spec.is_partitioned, sorted_=sort_order.is_sorted
    )
    job_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:12]}"
    job_dir = f"{data_location(location, properties)}/{job_id}"
    planned = _plan(frame.select(*alignment.columns), target, spec, sort_order, settings)
    writer = _FileWriter(
        job_id=job_id,
        job_dir=job_dir,
        schema_json=json.dumps(target.to_json()),
        spec_json=json.dumps(spec.to_json()),
        key_fields=planned.key_fields,
        data_columns=len(target.fields),
        io_class=type(io),
        io_properties=dict(io.properties),
        settings=settings,
    )
    order_id = sort_order.order_id if sort_order.is_sorted else None
    try:
        rows = map_in_arrow(planned.frame, writer, _RESULT_SCHEMA).collect()
        results = [(row["kind"], pickle.loads(bytes(row["payload"]))) for row in rows]
        problems = sorted({str(value) for kind, value in results if kind == "violation"})
        if problems:
            raise ValidationError(
                "the source has values the table cannot take (nothing was written): "
                + "; ".join(problems)
            )
        files = [value for kind, value in results if kind == "file"]
        data_files = tuple(
            data_file_from_parquet(
                f.path,
                f.size,
                f.metadata,
                target,
                partition=f.partition,
                spec_id=spec.spec_id,
                properties=properties,
                sort_order_id=order_id,
                nan_counts=f.nan_counts,
            )
            for f in files
        )
    except BaseException as e:  # interrupted too: nothing references the files yet
        _delete_job_dir(io, job_dir)
        if isinstance(e, IcewrightError) or not isinstance(e, Exception):
            raise
        message = _marked_message(e)
        if message is not None:
            raise ValidationError(message) from None
        raise IcewrightError(
            f"the Spark write job {job_id} failed; its files were deleted: {_first_line(e)}"
        ) from e
    _delete_strays(io, job_dir, {f.path for f in files})
    return WriteResult(
        data_files=data_files,
        added_columns=alignment.added,
        record_count=sum(d.record_count for d in data_files),
        job_id=job_id,
        schema=target,
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    frame: DataFrame
    key_fields: tuple[tuple[int, str], ...]  # (index in the partition tuple, result type JSON)


def _column(schema: Schema, field_id: int) -> Column:
    """The column of ``field_id`` (nested in structs: ``a.b``), each name quoted."""
    names = []
    current: int | None = field_id
    while current is not None:
        names.append(schema.find_field(current).name)
        current = schema.parent_id(current)
    return F.col(".".join(_quote(n) for n in reversed(names)))


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _plan(
    frame: DataFrame,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    settings: WriteSettings,
) -> _Plan:
    """Add partition (and sort key) columns, distribute and sort."""
    transforms: list[TransformColumn] = []
    key_fields: list[tuple[int, str]] = []
    partition_columns: list[str] = []
    for i, pf in enumerate(spec.fields):
        if pf.transform.is_void:
            continue  # always null: no column needed
        name = f"__iw_p{i}"
        source_type = schema.find_type(pf.source_id)
        column = _column(schema, pf.source_id)
        transforms.append(TransformColumn(name, pf.transform, source_type, column))
        result = pf.transform.result_type(source_type)
        key_fields.append((i, json.dumps(type_to_json(result))))
        partition_columns.append(name)
    sort_keys: list[Column] = []
    for i, sf in enumerate(sort_order.fields):
        source_type = schema.find_type(sf.source_id)
        if sf.transform.is_identity:
            key = _column(schema, sf.source_id)
        else:
            name = f"__iw_s{i}"
            transforms.append(
                TransformColumn(name, sf.transform, source_type, _column(schema, sf.source_id))
            )
            key = F.col(name)
        sort_keys.append(_ordered(key, sf.direction, sf.null_order))
    frame = with_transform_columns(frame, transforms)
    partition_keys = [F.col(c).asc_nulls_first() for c in partition_columns]
    if settings.distribution == "hash" and partition_columns:
        frame = frame.repartition(*[F.col(c) for c in partition_columns])
    elif settings.distribution == "range" and (partition_keys or sort_keys):
        frame = frame.repartitionByRange(*partition_keys, *sort_keys)
    if partition_keys or sort_keys:
        frame = frame.sortWithinPartitions(*partition_keys, *sort_keys)
    data = [F.col(_quote(f.name)) for f in schema.fields]
    frame = frame.select(*data, *[F.col(c) for c in partition_columns])
    return _Plan(frame, tuple(key_fields))


def _ordered(key: Column, direction: SortDirection, nulls: NullOrder) -> Column:
    first = nulls is NullOrder.NULLS_FIRST
    if direction is SortDirection.ASC:
        return key.asc_nulls_first() if first else key.asc_nulls_last()
    return key.desc_nulls_first() if first else key.desc_nulls_last()


def _marked_message(e: BaseException) -> str | None:
    """The message of a bad-value error raised inside the job, if that is what failed."""
    text = str(e)
    at = text.find(INVALID_VALUE_MARKER)
    if at < 0:
        return None
    return text[at + len(INVALID_VALUE_MARKER) :].splitlines()[0].strip()


def _delete_job_dir(io: FileIO, job_dir: str) -> None:
    """Delete every file of a failed job (no metadata references them)."""
    try:
        failures = io.delete_many(info.path for info in io.list_prefix(job_dir))
    except Exception:  # cleanup must not hide the job's own error
        log.warning("could not list %s to delete a failed job's files", job_dir, exc_info=True)
        return
    for path, error in failures:
        log.warning("could not delete %s of a failed write job: %s", path, error)
    if uri_scheme(job_dir) in (None, "file"):
        from icewright.io.local import local_path

        shutil.rmtree(local_path(job_dir), ignore_errors=True)


def _delete_strays(io: FileIO, job_dir: str, keep: set[str]) -> None:
    """Delete files of failed or speculative task attempts that the job did not return."""
    try:
        strays = [info.path for info in io.list_prefix(job_dir) if info.path not in keep]
        if strays:
            log.info("deleting %d files of failed task attempts in %s", len(strays), job_dir)
            io.delete_many(strays)
    except Exception:
        log.warning("could not clean stray files in %s", job_dir, exc_info=True)


# --- the job (task side) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _WrittenFile:
    path: str
    size: int
    metadata: pq.FileMetaData
    partition: tuple[Any, ...]
    nan_counts: dict[int, int]


def _arrow_field(f: NestedField) -> pa.Field:
    return pa.field(
        f.name,
        _arrow_type(f.field_type),
        nullable=not f.required,
        metadata={FIELD_ID: str(f.field_id).encode()},
    )


def _arrow_type(t: IcebergType) -> pa.DataType:
    """Iceberg's Parquet mapping as Arrow types (uuid with Parquet's UUID annotation).

    Strings, binary and lists keep the 32-bit offsets Spark sends (casting to the
    ``large_`` types would copy every batch; Parquet does not tell them apart).
    """
    if isinstance(t, UUIDType) and hasattr(pa, "uuid"):
        return pa.uuid()
    if isinstance(t, StringType):
        return pa.string()
    if isinstance(t, BinaryType):
        return pa.binary()
    if isinstance(t, StructType):
        return pa.struct([_arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(_arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(_arrow_field(t.key_field), _arrow_field(t.value_field))
    return type_to_arrow(t)


def _null_problems(
    array: pa.Array, f: NestedField, path: str, parent_valid: pa.Array | None
) -> list[str]:
    """Names of required fields that hold a null where their parent is present."""
    problems: list[str] = []
    valid = array.is_valid()
    if f.required:
        nulls = pc.invert(valid)
        if parent_valid is not None:
            nulls = pc.and_(parent_valid, nulls)
        if pc.any(nulls).as_py():
            problems.append(path)
    present = valid if parent_valid is None else pc.and_(parent_valid, valid)
    t = f.field_type
    if isinstance(t, StructType):
        for i, child in enumerate(t.fields):
            problems += _null_problems(array.field(i), child, f"{path}.{child.name}", present)
    elif isinstance(t, ListType):
        # flatten() skips null lists and honours slicing (unlike .values)
        problems += _null_problems(array.flatten(), t.element_field, f"{path}.element", None)
    elif isinstance(t, MapType):
        _, (values,) = _rebased(array, array.items)  # .items is the whole child array
        problems += _null_problems(values, t.value_field, f"{path}.value", None)
    return problems


def _conform_all(batch: pa.RecordBatch, schema: pa.Schema) -> tuple[list[pa.Array], str | None]:
    """The batch's data columns as ``schema``'s, or a message naming a misfit column."""
    arrays = []
    for i, target in enumerate(schema):
        try:
            arrays.append(_conform(batch.column(i), target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            return [], f"column {target.name!r} has a value that does not fit {target.type}: {e}"
    return arrays, None


def _conform(array: pa.Array, target: pa.Field) -> pa.Array:
    """``array`` (as Spark sent it) as an array of exactly ``target.type``.

    Arrow refuses to cast a column holding nulls to a non-nullable field, even nulls
    that only sit under a null parent struct or list (which Parquet never stores). Those
    hidden nulls get a placeholder value; nulls a reader could see were refused before.
    """
    t = target.type
    if pa.types.is_struct(t):
        children = [
            _required(_conform(array.field(i), t.field(i)), t.field(i)) for i in range(t.num_fields)
        ]
        return pa.StructArray.from_arrays(
            children, fields=[t.field(i) for i in range(t.num_fields)], mask=_nulls(array)
        )
    if pa.types.is_list(t):
        element = t.value_field
        offsets, (values,) = _rebased(array, array.values)
        values = _required(_conform(values, element), element)
        return pa.ListArray.from_arrays(offsets, values, type=t, mask=_nulls(array))
    if pa.types.is_map(t):
        offsets, (keys, items) = _rebased(array, array.keys, array.items)
        keys = _conform(keys, t.key_field)
        items = _required(_conform(items, t.item_field), t.item_field)
        return pa.MapArray.from_arrays(offsets, keys, items, type=t, mask=_nulls(array))
    if isinstance(t, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(t, array.cast(t.storage_type))
    return array.cast(t)


def _rebased(array: pa.Array, *children: pa.Array) -> tuple[pa.Array, list[pa.Array]]:
    """Offsets from 0 and the children they cover (a slice's offsets start later)."""
    offsets = array.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    rebased = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return rebased, [c.slice(start, end - start) for c in children]


def _nulls(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _required(array: pa.Array, target: pa.Field) -> pa.Array:
    """Fill the (hidden) nulls of a non-nullable field with a placeholder."""
    if target.nullable or array.null_count == 0:
        return array
    t = target.type
    if pa.types.is_struct(t):
        children = [_required(array.field(i), t.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(
            children, fields=[t.field(i) for i in range(t.num_fields)]
        )
    if pa.types.is_list(t):
        offsets, (values,) = _rebased(array, array.values)
        return pa.ListArray.from_arrays(offsets, values, type=t)
    if pa.types.is_map(t):
        offsets, (keys, items) = _rebased(array, array.keys, array.items)
        return pa.MapArray.from_arrays(offsets, keys, items, type=t)
    if isinstance(t, pa.ExtensionType):
        storage = _required(array.storage, pa.field("v", t.storage_type, nullable=False))
        return pa.ExtensionArray.from_storage(t, storage)
    return pc.fill_null(array, _placeholder(t))


def _placeholder(t: pa.DataType) -> pa.Scalar:
    if pa.types.is_fixed_size_binary(t):
        return pa.scalar(bytes(t.byte_width), t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.scalar(b"", t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False, t)
    return pa.array([0], pa.int64()).cast(t)[0]  # numbers, decimals, dates, times


def _runs(keys: Sequence[pa.Array], n: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each run of equal partition values (rows are sorted by them)."""
    if not keys or n == 0:
        return [(0, n)] if n else []
    changed: pa.Array | None = None
    for k in keys:
        a, b = k.slice(1), k.slice(0, n - 1)
        differs = pc.fill_null(pc.not_equal(a, b), pc.xor(a.is_null(), b.is_null()))
        if pa.types.is_floating(k.type):  # NaN == NaN for partitioning
            both_nan = pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False)
            differs = pc.and_(differs, pc.invert(both_nan))
        changed = differs if changed is None else pc.or_(changed, differs)
    assert changed is not None
    cuts = [int(i) + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    bounds = [0, *cuts, n]
    return list(itertools.pairwise(bounds))


def _same_key(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return all(x == y or (x != x and y != y) for x, y in zip(a, b, strict=True))  # noqa: PLR0124


class _FileWriter:
    """The ``mapInArrow`` function that writes one task's rows as data files."""

    def __init__(
        self,
        *,
        job_id: str,
        job_dir: str,
        schema_json: str,
        spec_json: str,
        key_fields: Sequence[tuple[int, str]],
        data_columns: int,
        io_class: type[FileIO],
        io_properties: Mapping[str, str],
        settings: WriteSettings,
    ) -> None:
        self.job_id = job_id
        self.job_dir = job_dir
        self.schema_json = schema_json
        self.spec_json = spec_json
        self.key_fields = tuple(key_fields)
        self.data_columns = data_columns
        self.io_class = io_class
        self.io_properties = dict(io_properties)
        self.settings = settings

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        schema = Schema.from_json(json.loads(self.schema_json))
        spec = PartitionSpec.from_json(json.loads(self.spec_json))
        arrow_schema = pa.schema([_arrow_field(f) for f in schema.fields])
        key_types = [type_from_json(json.loads(t)) for _, t in self.key_fields]
        context = TaskContext.get()
        task = (context.partitionId(), context.attemptNumber()) if context else (0, 0)
        files = _RollingFiles(self, schema, spec, arrow_schema, task)
        results: list[tuple[str, Any]] = []
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                problems = [
                    p
                    for i, f in enumerate(schema.fields)
                    for p in _null_problems(batch.column(i), f, f.name, None)
                ]
                if problems:
                    names = ", ".join(sorted(set(problems)))
                    results.append(("violation", f"nulls in required columns: {names}"))
                    break
                arrays, misfit = _conform_all(batch, arrow_schema)
                if misfit is not None:
                    results.append(("violation", misfit))
                    break
                table = pa.Table.from_arrays(arrays, schema=arrow_schema)
                keys = [batch.column(self.data_columns + j) for j in range(len(self.key_fields))]
                for start, end in _runs(keys, batch.num_rows):
                    key = self._partition(spec, keys, key_types, start)
                    files.write(key, table.slice(start, end - start))
            if not results:  # a violation leaves the files to the driver's cleanup
                results = [("file", f) for f in files.close()]
        finally:
            files.abort()
        if results:
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array([kind for kind, _ in results], pa.string()),
                    pa.array([pickle.dumps(value) for _, value in results], pa.binary()),
                ],
                names=["kind", "payload"],
            )

    def _partition(
        self,
        spec: PartitionSpec,
        keys: Sequence[pa.Array],
        key_types: Sequence[IcebergType],
        row: int,
    ) -> tuple[Any, ...]:
        values: list[Any] = [None] * len(spec.fields)
        for (index, _), array, t in zip(self.key_fields, keys, key_types, strict=True):
            values[index] = to_iceberg_values(array.slice(row, 1), t)[0]
        return tuple(values)


@dataclass
class _OpenFile:
    key: tuple[Any, ...]
    path: str
    stream: Any
    writer: pq.ParquetWriter
    buffered: list[pa.Table] = field(default_factory=list)
    buffered_bytes: int = 0
    flushed_bytes: int = 0  # Arrow bytes already written as row groups
    nan_counts: dict[int, int] = field(default_factory=dict)


class _RollingFiles:
    """One open file at a time (rows arrive clustered by partition), rolled by size."""

    def __init__(
        self,
        job: _FileWriter,
        schema: Schema,
        spec: PartitionSpec,
        arrow_schema: pa.Schema,
        task: tuple[int, int],
    ) -> None:
        self.job = job
        self.schema = schema
        self.spec = spec
        self.arrow_schema = arrow_schema
        self.task = task
        self.fs, self.normalize = job.io_class(job.io_properties).to_pyarrow_filesystem()
        self.local = self.fs.type_name == "local"
        self.current: _OpenFile | None = None
        self.count = 0
        self.done: list[_WrittenFile] = []
        self.ratio = 1.0  # compressed bytes per Arrow byte, learnt from flushed row groups

    def write(self, key: tuple[Any, ...], table: pa.Table) -> None:
        settings = self.job.settings
        if self.current is not None and not _same_key(self.current.key, key):
            self._finish()
        offset = 0
        while offset < table.num_rows:
            if self.current is None:
                self._open(key)
            current = self.current
            assert current is not None
            estimate = current.stream.tell() + current.buffered_bytes * self.ratio
            room = settings.target_file_size - estimate
            if room <= 0:
                self._flush()
                if current.stream.tell() >= 0.9 * settings.target_file_size:
                    self._finish()
                continue
            rest = table.slice(offset)
            per_row = max(rest.nbytes / rest.num_rows * self.ratio, 1e-9)
            rows = max(1, min(rest.num_rows, math.ceil(room / per_row)))
            piece = rest.slice(0, rows)
            current.buffered.append(piece)
            current.buffered_bytes += piece.nbytes
            offset += rows
            if current.buffered_bytes >= settings.row_group_size:
                self._flush()

    def close(self) -> list[_WrittenFile]:
        self._finish()
        return self.done

    def abort(self) -> None:
        if self.current is not None:
            try:
                self.current.writer.close()
                self.current.stream.close()
            except Exception:  # the driver deletes the job directory anyway
                pass
            self.current = None

    def _open(self, key: tuple[Any, ...]) -> None:
        partition_dir = self.spec.partition_to_path(key, self.schema) if self.spec.fields else ""
        self.count += 1
        name = f"{self.task[0]:05d}-{self.task[1]}-{self.job.job_id}-{self.count:05d}.parquet"
        directory = f"{self.job.job_dir}/{partition_dir}" if partition_dir else self.job.job_dir
        path = f"{directory}/{name}"
        if self.local:
            self.fs.create_dir(self.normalize(directory), recursive=True)
        stream = self.fs.open_output_stream(self.normalize(path))
        settings = self.job.settings
        options: dict[str, Any] = {
            "compression": settings.compression,
            "data_page_size": settings.page_size,
            "dictionary_pagesize_limit": settings.dictionary_page_size,
            "store_schema": False,
            "write_statistics": True,
        }
        if settings.compression_level is not None:
            options["compression_level"] = settings.compression_level
        if "store_decimal_as_integer" in inspect.signature(pq.ParquetWriter.__init__).parameters:
            options["store_decimal_as_integer"] = True  # Appendix A: int32/int64 by precision
        writer = pq.ParquetWriter(stream, self.arrow_schema, **options)
        self.current = _OpenFile(key, path, stream, writer)

    def _flush(self) -> None:
        current = self.current
        if current is None or not current.buffered:
            return
        table = pa.concat_tables(current.buffered)
        add_counts(current.nan_counts, nan_value_counts(table))
        before = current.stream.tell()
        current.writer.write_table(table, row_group_size=table.num_rows)
        current.flushed_bytes += current.buffered_bytes
        if current.buffered_bytes:
            self.ratio = max((current.stream.tell() - before) / current.buffered_bytes, 1e-6)
        current.buffered = []
        current.buffered_bytes = 0

    def _finish(self) -> None:
        current = self.current
        if current is None:
            return
        self._flush()
        # Iceberg Java records the schema in the footer too; pyarrow drops schema-level
        # metadata without the ARROW:schema blob, so add it explicitly.
        current.writer.add_key_value_metadata({"iceberg.schema": self.job.schema_json})
        current.writer.close()
        size = current.stream.tell()
        current.stream.close()
        metadata = current.writer.writer.metadata
        self.done.append(
            _WrittenFile(current.path, size, metadata, current.key, current.nan_counts)
        )
        self.current = None
