"""Applying v2 row-level deletes to a Spark read (spec: "Row-level Deletes", "Scan Planning").

The scan planner (:mod:`icewright.scan`) already decided which delete files apply to which
data file, by the spec's sequence-number and scope rules; this module executes exactly that
association and never widens it:

* position deletes: each row of a position delete file names a data file (``file_path``)
  and a 0-based row position in it (``pos``). Data rows carry their own file and position
  (Spark's ``_metadata.file_path`` and ``_metadata.row_index``, Spark >= 3.5), and a left
  anti join on (file, position), restricted to the (delete file, data file) pairs the
  planner produced, removes them;
* equality deletes: a row of an equality delete file removes every row of its associated
  data files whose equality columns (``equality_ids``) hold the same values. Nulls match
  nulls, as in Iceberg Java's ``StructLikeSet``, so the join compares with ``<=>``.

Paths are compared after :func:`normalize_path`: a delete file may spell a data file
``file:/x`` where the manifest says ``/x`` or ``file:///x``, and Spark reports
``_metadata.file_path`` as an encoded URI (``file:/a%20b``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileContent, FileFormat
from icewright.scan.tasks import FileScanTask

__all__ = [
    "DELETE_FILE_COLUMN",
    "DELETE_TARGET_COLUMN",
    "FILE_COLUMN",
    "POS_COLUMN",
    "EqualityDeleteReader",
    "apply_equality_deletes",
    "apply_position_deletes",
    "equality_column",
    "has_deletes",
    "has_position_deletes",
    "normalize_path",
    "normalized_path_column",
    "spark_file_path",
]

FILE_COLUMN = "__iw_file"
"""Hidden column of a read: the normalized path of the data file a row came from."""
POS_COLUMN = "__iw_pos"
"""Hidden column of a read: the row's 0-based position in its data file."""
DELETE_FILE_COLUMN = "__iw_delete_file"
"""Column of a delete frame: the normalized path of the delete file a delete row came from."""
DELETE_TARGET_COLUMN = "__iw_target"
"""Column of an association frame: the normalized data file path a delete file applies to."""
_DELETE_POS = "__iw_delete_pos"

# file:/x, file:///x and file://localhost/x all are the local path /x (RFC 8089); s3a://
# and s3n:// are Hadoop's names for the objects Iceberg writes as s3://. The same patterns
# run in Python and (as Java regexes) in Spark, so both sides normalize alike.
_FILE_URI = r"^file:(?://(?:localhost)?)?(?=/)"
_S3_ALIAS = r"^s3[an]://"
_GLOB_CHARS = re.compile(r"([\\\[\]{}*?])")

EqualityDeleteReader = Callable[[Sequence[str], tuple[int, ...]], DataFrame]
"""Reads equality delete files (by location) for some equality field ids; the frame has
:data:`DELETE_FILE_COLUMN` and one :func:`equality_column` per id, typed as the data."""


def normalize_path(path: str) -> str:
    """The comparable form of a file location (``file:`` URIs as local paths, ``s3a`` as ``s3``).

    >>> normalize_path("file:///tmp/t/data/a.parquet"), normalize_path("s3a://b/k")
    ('/tmp/t/data/a.parquet', 's3://b/k')
    """
    return re.sub(_S3_ALIAS, "s3://", re.sub(_FILE_URI, "", path))


def normalized_path_column(column: Column, *, uri_encoded: bool) -> Column:
    """:func:`normalize_path` as a Spark expression.

    ``uri_encoded`` is for Spark's ``_metadata.file_path``, a URI string (``%20`` for a
    space, ``%5B`` for ``[``). ``url_decode`` (Spark >= 3.4) would also turn ``+`` into a
    space, but a ``+`` in that URI is a literal plus, so it is escaped first.
    """
    if uri_encoded:
        column = F.url_decode(F.replace(column, F.lit("+"), F.lit("%2B")))
    column = F.regexp_replace(column, _FILE_URI, "")
    return F.regexp_replace(column, _S3_ALIAS, "s3://")


def spark_file_path(path: str) -> str:
    """``path`` as a Spark reader argument: glob characters escaped, so it names one file.

    Spark expands ``*?[]{}`` in reader paths (Hadoop globbing), and a data file name may
    contain them (a partition value such as ``a*b``).
    """
    return _GLOB_CHARS.sub(r"\\\1", path)


def equality_column(field_id: int) -> str:
    """The name of equality field ``field_id``'s column in a delete frame."""
    return f"__iw_eq_{field_id}"


def _check_format(delete_file: DataFile) -> None:
    if delete_file.file_format is not FileFormat.PARQUET:
        kind = "deletion vector" if delete_file.file_format is FileFormat.PUFFIN else "file"
        raise ValidationError(
            f"delete {kind} {delete_file.file_path} is {delete_file.file_format.value}: the "
            "Spark reader applies Parquet position and equality delete files only; rewrite "
            "the table's deletes with Iceberg Java (rewrite_position_delete_files) first"
        )


def has_deletes(tasks: Iterable[FileScanTask]) -> bool:
    """Whether any task has a delete file to apply."""
    return any(t.delete_files for t in tasks)


def has_position_deletes(tasks: Iterable[FileScanTask]) -> bool:
    """Whether any task has a position delete file to apply."""
    return any(d.content is FileContent.POSITION_DELETES for t in tasks for d in t.delete_files)


def _pairs(
    tasks: Iterable[FileScanTask], keep: Callable[[DataFile], bool]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Delete file locations (first-use order) and (delete file, data file) normalized pairs."""
    paths: dict[str, str] = {}
    pairs: dict[tuple[str, str], None] = {}
    for task in tasks:
        target = normalize_path(task.file_path)
        for d in task.delete_files:
            if keep(d):
                _check_format(d)
                paths.setdefault(normalize_path(d.file_path), d.file_path)
                pairs[(normalize_path(d.file_path), target)] = None
    return list(paths.values()), list(pairs)


def _associations(spark: SparkSession, pairs: list[tuple[str, str]]) -> DataFrame:
    frame = spark.createDataFrame(
        pairs, f"{DELETE_FILE_COLUMN} string, {DELETE_TARGET_COLUMN} string"
    )
    return F.broadcast(frame)


def apply_position_deletes(
    spark: SparkSession,
    data: DataFrame,
    tasks: Sequence[FileScanTask],
    options: Mapping[str, str] | None = None,
) -> DataFrame:
    """``data`` without the rows the tasks' position delete files remove (read with the
    data source ``options``: the table's Hadoop settings).

    ``data`` must have :data:`FILE_COLUMN` (normalized path) and :data:`POS_COLUMN`.
    """
    paths, pairs = _pairs(tasks, lambda d: d.content is FileContent.POSITION_DELETES)
    if not pairs:
        return data
    # file_path and pos have fixed names (spec: "Position Delete Files"), so they are read by
    # name: delete files written without field ids are read too.
    deletes = (
        spark.read.options(**(options or {}))
        .schema("file_path string, pos bigint")
        .parquet(*(spark_file_path(p) for p in paths))
        .select(
            normalized_path_column(F.col("_metadata.file_path"), uri_encoded=True).alias(
                DELETE_FILE_COLUMN
            ),
            normalized_path_column(F.col("file_path"), uri_encoded=False).alias(
                DELETE_TARGET_COLUMN
            ),
            F.col("pos").alias(_DELETE_POS),
        )
    )
    applicable = deletes.join(
        _associations(spark, pairs), on=[DELETE_FILE_COLUMN, DELETE_TARGET_COLUMN], how="inner"
    ).select(F.col(DELETE_TARGET_COLUMN).alias(FILE_COLUMN), F.col(_DELETE_POS).alias(POS_COLUMN))
    return data.join(applicable, on=[FILE_COLUMN, POS_COLUMN], how="left_anti")


def apply_equality_deletes(
    spark: SparkSession,
    data: DataFrame,
    tasks: Sequence[FileScanTask],
    read_deletes: EqualityDeleteReader,
    data_column: Callable[[int], Column],
) -> DataFrame:
    """``data`` without the rows the tasks' equality delete files remove.

    ``data`` must have :data:`FILE_COLUMN`; ``data_column(field_id)`` is the data's column
    for an equality field, and ``read_deletes`` reads delete files (see
    :data:`EqualityDeleteReader`). One anti join per distinct set of equality ids.
    """
    by_ids: dict[tuple[int, ...], list[FileScanTask]] = {}
    for task in tasks:
        for d in task.delete_files:
            if d.content is FileContent.EQUALITY_DELETES:
                ids = tuple(sorted(set(d.equality_ids or ())))
                if not ids:
                    raise ValidationError(
                        f"equality delete file {d.file_path} has no equality field ids: the "
                        "table metadata is corrupt"
                    )
                by_ids.setdefault(ids, []).append(task)
    for ids, group in by_ids.items():

        def same_ids(d: DataFile, ids: tuple[int, ...] = ids) -> bool:
            return (
                d.content is FileContent.EQUALITY_DELETES
                and tuple(sorted(set(d.equality_ids or ()))) == ids
            )

        paths, pairs = _pairs(group, same_ids)
        deletes = read_deletes(paths, ids)
        applicable = deletes.join(
            _associations(spark, pairs), on=[DELETE_FILE_COLUMN], how="inner"
        ).select(DELETE_TARGET_COLUMN, *(equality_column(i) for i in ids))
        condition = reduce(
            lambda a, b: a & b,
            (data_column(i).eqNullSafe(applicable[equality_column(i)]) for i in ids),
            data[FILE_COLUMN] == applicable[DELETE_TARGET_COLUMN],
        )
        data = data.join(applicable, on=condition, how="left_anti")
    return data
