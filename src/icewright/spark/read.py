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
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from icewright.expressions import Expression
from icewright.scan import ScanPlan, Source, TableScan
from icewright.spark.filters import spark_literal
from icewright.spark.name_mapping import NAME_MAPPING_PROPERTY
from icewright.spark.reader import _Reader, _source, empty_frame
from icewright.spark.types import FIELD_ID_KEY

# The read path lives in modules named after what they hold: projection (read schema, schema
# history, conforming to the projection), filters (literals and two-valued filters),
# name_mapping (Parquet footers, files without field ids), reader (the plan-to-DataFrame
# read); deletes are in deletes.py.
__all__ = [
    "CHANGE_ORDINAL",
    "CHANGE_TYPE",
    "COMMIT_SNAPSHOT_ID",
    "FIELD_ID_KEY",
    "NAME_MAPPING_PROPERTY",
    "read_changes",
    "read_columns",
    "read_plan",
    "read_table",
    "spark_literal",
]


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


def read_plan(
    spark: SparkSession, table: Source, plan: ScanPlan, *, row_ids: bool = False
) -> DataFrame:
    """Read the tasks of an already planned scan of ``table`` (see :func:`read_table`).

    The plan's projected schema gives the columns; its filter (or, when all tasks agree, their
    residual) is applied to the rows, after the tasks' delete files. With ``row_ids`` each
    row also carries where it is stored: the normalized path of its data file
    (:data:`~icewright.spark.deletes.FILE_COLUMN`) and its 0-based position there
    (:data:`~icewright.spark.deletes.POS_COLUMN`), what a position delete names.
    """
    metadata, io = _source(table)
    return _Reader(spark, metadata, io, plan, row_ids=row_ids).frame()


CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"
COMMIT_SNAPSHOT_ID = "_commit_snapshot_id"
"""The changelog's columns, named as Spark's ``changes`` view names them."""


def read_changes(
    spark: SparkSession,
    table: Source,
    *,
    start: int | str | None,
    end: int | str | None = None,
    changelog: bool = False,
    filter: Expression | str | None = None,
    columns: Sequence[str] | str | None = None,
    case_sensitive: bool = True,
) -> DataFrame:
    """The rows the snapshots after ``start`` up to ``end`` (default: the current one)
    appended, planned from the manifests those snapshots wrote
    (:mod:`icewright.scan.incremental`; ids, branch or tag names). An overwrite or delete
    in the range is a :class:`~icewright.errors.ValidationError`; with ``changelog`` the
    range's inserted and deleted rows are read instead, with
    :data:`CHANGE_TYPE` (``INSERT``/``DELETE``), :data:`CHANGE_ORDINAL` and
    :data:`COMMIT_SNAPSHOT_ID` columns, as Spark's changelog view gives them."""
    from pyspark.sql import functions as sf

    from icewright.scan.incremental import (
        iter_changelog_groups,
        plan_appends,
        plan_changelog,
        snapshot_range,
    )

    scan = TableScan.of(
        table,
        row_filter=filter,
        case_sensitive=case_sensitive,
        columns=None if columns is None else ((columns,) if isinstance(columns, str) else columns),
    )
    metadata, io = scan.metadata, scan.io
    snapshots = snapshot_range(metadata, start, end)
    options: dict[str, Any] = {
        "row_filter": scan.bound_filter(),
        "projected_schema": scan.projection(),
        "case_sensitive": case_sensitive,
    }
    if not changelog:
        return read_plan(spark, (metadata, io), plan_appends(metadata, io, snapshots, **options))
    plan, changes = plan_changelog(metadata, io, snapshots, **options)
    frames = []
    for kind, ordinal, sid, tasks in iter_changelog_groups(changes):
        part = dataclasses.replace(plan, tasks=tasks)
        frames.append(
            read_plan(spark, (metadata, io), part)
            .withColumn(CHANGE_TYPE, sf.lit(str(kind)))
            .withColumn(CHANGE_ORDINAL, sf.lit(ordinal))
            .withColumn(COMMIT_SNAPSHOT_ID, sf.lit(sid))
        )
    if not frames:
        empty = read_plan(spark, (metadata, io), dataclasses.replace(plan, tasks=()))
        return (
            empty.withColumn(CHANGE_TYPE, sf.lit(None).cast("string"))
            .withColumn(CHANGE_ORDINAL, sf.lit(None).cast("int"))
            .withColumn(COMMIT_SNAPSHOT_ID, sf.lit(None).cast("long"))
        )
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def read_columns(spark: SparkSession, table: Source) -> DataFrame:
    """A DataFrame with the columns :func:`read_table` gives ``table`` (its current schema)
    and no rows, without planning the table's files: what analysing SQL over the table
    needs (a view's schema depends on the tables' schemas, not on their data)."""
    metadata, _ = _source(table)
    return empty_frame(spark, metadata.schema())
