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

The job is split by side: :mod:`icewright.spark.sources` (the source),
:mod:`icewright.spark.write_settings` (the ``write.*`` properties), this module (the
driver: planning, running, cleaning up) and, on the Spark workers,
:mod:`icewright.spark.file_writer` with :mod:`icewright.spark.conform`. The source and
settings names are importable from here too.
"""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import IcewrightError, ValidationError
from icewright.io.base import FileIO, uri_scheme
from icewright.manifest.data_file import DataFile
from icewright.manifest.metrics import data_file_from_parquet
from icewright.spark.failures import spark_failure
from icewright.spark.file_writer import FileWriter
from icewright.spark.session import map_in_arrow
from icewright.spark.sources import (
    FORMATS,
    CallableSource,
    PathSource,
    Source,
    SqlSource,
    load_source,
    parse_source,
)
from icewright.spark.transforms import TransformColumn, with_transform_columns
from icewright.spark.types import INVALID_VALUE_MARKER, AddedColumn, align_columns
from icewright.spark.write_settings import WriteSettings, data_location
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.sorting import NullOrder, SortDirection, SortOrder
from icewright.spec.types import type_to_json

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
    if isinstance(source, str):
        source = parse_source(source)
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
    writer = FileWriter(
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
        delete_job_dir(io, job_dir)
        if isinstance(e, IcewrightError) or not isinstance(e, Exception):
            raise
        message = _marked_message(e)
        if message is not None:
            raise ValidationError(message) from None
        path_source = source if isinstance(source, PathSource) else None
        raise spark_failure(
            e,
            job=f"write job {job_id}",
            source_path=path_source.path if path_source else None,
            source_format=path_source.format if path_source else None,
            suffix="; its files were deleted",
        ) from e
    delete_strays(io, job_dir, {f.path for f in files})
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


def delete_job_dir(io: FileIO, job_dir: str) -> None:
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


def delete_strays(io: FileIO, job_dir: str, keep: set[str]) -> None:
    """Delete files of failed or speculative task attempts that the job did not return."""
    try:
        strays = [info.path for info in io.list_prefix(job_dir) if info.path not in keep]
        if strays:
            log.info("deleting %d files of failed task attempts in %s", len(strays), job_dir)
            io.delete_many(strays)
    except Exception:
        log.warning("could not clean stray files in %s", job_dir, exc_info=True)
