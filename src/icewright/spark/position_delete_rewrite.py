"""The Spark job of ``rewrite --deletes-only``: position delete files read and written anew
(Iceberg Java's ``RewritePositionDeleteFiles``; spec: "Position Delete Files").

The job is given scan tasks: live data files, each with the position delete files being
rewritten that apply to it (the planner's association: scope, sequence numbers, bounds).
It reads those delete files, keeps exactly the rows that name one of the tasks' data files
through an association that holds, so rows naming a data file that is no longer live, or
one the delete file does not apply to, are dropped, removes repeated positions, and writes
what is left with :func:`~icewright.spark.position_deletes.write_position_deletes`: one
file per data file, sorted by position, with ``referenced_data_file`` and full metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.expressions import ALWAYS_TRUE
from icewright.io.base import FileIO
from icewright.manifest.data_file import FileContent
from icewright.scan.tasks import FileScanTask
from icewright.spark.deletes import (
    DELETE_FILE_COLUMN,
    DELETE_TARGET_COLUMN,
    normalize_path,
    normalized_path_column,
    spark_file_path,
)
from icewright.spark.failures import spark_failure
from icewright.spark.file_access import hadoop_options
from icewright.spark.position_deletes import GROUP_COLUMN, DeleteTarget, write_position_deletes
from icewright.spark.row_changes import RowChanges
from icewright.spec.table_metadata import TableMetadata

__all__ = ["rewrite_position_deletes"]

_PATH = "__iw_path"


def rewrite_position_deletes(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    properties: Mapping[str, str] | None = None,
) -> RowChanges:
    """Rewrite the position delete files of ``tasks`` (see the module docstring): the new
    files are :attr:`RowChanges.delete_files`, the data files they name
    :attr:`RowChanges.referenced_files`, the positions kept :attr:`RowChanges.deleted`.
    Nothing is committed; Spark's failures are raised as :mod:`icewright.errors` errors."""
    try:
        return _rewrite(spark, metadata, io, tasks, {**metadata.properties, **(properties or {})})
    except Exception as e:
        raise spark_failure(e, job="position delete rewrite job") from e


def _rewrite(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    properties: Mapping[str, str],
) -> RowChanges:
    paths: dict[str, str] = {}
    pairs: set[tuple[str, str]] = set()
    targets: dict[str, tuple[int, DeleteTarget]] = {}
    for task in tasks:
        target = normalize_path(task.file_path)
        if target not in targets:
            group = DeleteTarget(task.file_path, task.spec_id, tuple(task.partition))
            targets[target] = (len(targets), group)
        for d in task.delete_files:
            if d.content is FileContent.POSITION_DELETES:
                paths.setdefault(normalize_path(d.file_path), d.file_path)
                pairs.add((normalize_path(d.file_path), target))
    if not pairs:
        return _nothing(0)
    associations = F.broadcast(
        spark.createDataFrame(
            sorted(pairs), f"{DELETE_FILE_COLUMN} string, {DELETE_TARGET_COLUMN} string"
        )
    )
    groups = [group for _, group in targets.values()]
    named = F.broadcast(
        spark.createDataFrame(
            [(p, group.data_file, i) for p, (i, group) in targets.items()],
            f"{DELETE_TARGET_COLUMN} string, {_PATH} string, {GROUP_COLUMN} int",
        )
    )
    # file_path and pos have fixed names (spec), so files written without ids are read too
    rows = (
        spark.read.options(**hadoop_options(io))
        .schema("file_path string, pos bigint")
        .parquet(*(spark_file_path(p) for p in paths.values()))
        .select(
            normalized_path_column(F.col("_metadata.file_path"), uri_encoded=True).alias(
                DELETE_FILE_COLUMN
            ),
            normalized_path_column(F.col("file_path"), uri_encoded=False).alias(
                DELETE_TARGET_COLUMN
            ),
            F.col("pos"),
        )
        .join(associations, [DELETE_FILE_COLUMN, DELETE_TARGET_COLUMN], "inner")
        .select(DELETE_TARGET_COLUMN, "pos")
        .distinct()
        .join(named, DELETE_TARGET_COLUMN)
        .select(F.col(_PATH).alias("file_path"), F.col("pos"), F.col(GROUP_COLUMN))
    )
    kept = rows.count()
    if kept == 0:
        return _nothing(len(paths))
    written = write_position_deletes(
        rows, groups, location=metadata.location, properties=properties, io=io, row_count=kept
    )
    referenced = tuple(sorted({f.referenced_data_file or "" for f in written}))
    return RowChanges(
        data_files=(),
        delete_files=written,
        removed_files=(),
        referenced_files=referenced,
        conflict_filter=ALWAYS_TRUE,
        deleted=kept,
        files_read=len(paths),
    )


def _nothing(files_read: int) -> RowChanges:
    return RowChanges(
        data_files=(),
        delete_files=(),
        removed_files=(),
        referenced_files=(),
        conflict_filter=ALWAYS_TRUE,
        files_read=files_read,
    )
