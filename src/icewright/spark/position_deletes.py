"""Writing position delete files (spec: "Position Delete Files") from a Spark frame of
``(file_path, pos)`` rows.

A position delete file names rows of data files by the data file's path (exactly as its
manifest entry spells it) and the row's 0-based position. The spec asks for rows sorted
by ``file_path`` then ``pos``, for the reserved field ids (``file_path`` 2147483546,
``pos`` 2147483545), and for the delete file to carry the partition of the data files
it applies to. Files are scoped to one data file each, as Iceberg Java writes them by
default (``write.delete.granularity=file``): the rows are grouped by the data file they
name, each group hashed to one Spark task, sorted there and written as one file, which
the driver describes with full metrics and ``referenced_data_file`` (spec: "can be used
for v2 position delete files that contain deletes for only one data file"). A reader
then applies it to that one file only, and once the data file is rewritten the delete
file can go with it (:func:`icewright.scan.file_scoped_deletes`).
"""

from __future__ import annotations

import dataclasses
import pickle
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile, FileContent
from icewright.manifest.metrics import data_file_from_parquet
from icewright.spark.session import map_in_arrow
from icewright.spark.write import delete_job_dir, delete_strays
from icewright.spark.write_settings import WriteSettings, data_location
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

__all__ = [
    "GROUP_COLUMN",
    "ONE_TASK_ROWS",
    "POSITION_DELETE_SCHEMA",
    "DeleteTarget",
    "write_position_deletes",
]

POSITION_DELETE_SCHEMA = Schema(
    NestedField(2147483546, "file_path", StringType(), required=True),
    NestedField(2147483545, "pos", LongType(), required=True),
)
"""The columns of a position delete file, with the spec's reserved ids."""

GROUP_COLUMN = "__iw_group"
"""Column of the input frame: the index of the row's :class:`DeleteTarget`."""

_ARROW_SCHEMA = pa.schema(
    [
        pa.field(
            "file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": "2147483546"}
        ),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "2147483545"}),
    ]
)
_RESULT_SCHEMA = T.StructType([T.StructField("payload", T.BinaryType(), False)])
# Java keeps full bounds for both columns of a position delete file.
_METRICS = {"write.metadata.metrics.default": "full"}


@dataclass(frozen=True, slots=True)
class DeleteTarget:
    """The data file a group of rows names, with its spec and partition."""

    data_file: str
    spec_id: int
    partition: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Written:
    group: int
    path: str
    size: int
    metadata: pq.FileMetaData


@dataclass(frozen=True, slots=True)
class _DeleteWriter:
    """The ``mapInArrow`` function: one file per group in the task's (sorted) rows."""

    directory: str
    job_id: str
    io_class: type[FileIO]
    io_properties: Mapping[str, str]
    compression: str

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        task = (context.partitionId(), context.attemptNumber()) if context else (0, 0)
        fs, normalize = self.io_class(dict(self.io_properties)).to_pyarrow_filesystem()
        if fs.type_name == "local":
            fs.create_dir(normalize(self.directory), recursive=True)
        done: list[_Written] = []
        group: int | None = None
        stream: Any = None
        writer: pq.ParquetWriter | None = None
        path = ""

        def finish() -> None:
            nonlocal writer, stream
            if writer is None:
                return
            writer.close()
            size = stream.tell()
            stream.close()
            assert group is not None
            done.append(_Written(group, path, size, writer.writer.metadata))
            writer = stream = None

        try:
            for batch in batches:
                groups = batch.column(2).to_pylist()
                start = 0
                while start < batch.num_rows:
                    end = start
                    while end < batch.num_rows and groups[end] == groups[start]:
                        end += 1
                    if groups[start] != group:
                        finish()
                        group = groups[start]
                        name = f"{task[0]:05d}-{task[1]}-{self.job_id}-{group:05d}-deletes.parquet"
                        path = f"{self.directory}/{name}"
                        stream = fs.open_output_stream(normalize(path))
                        writer = pq.ParquetWriter(
                            stream, _ARROW_SCHEMA, compression=self.compression, store_schema=False
                        )
                    rows = pa.Table.from_arrays(
                        [
                            batch.column(0).slice(start, end - start),
                            batch.column(1).slice(start, end - start),
                        ],
                        schema=_ARROW_SCHEMA,
                    )
                    assert writer is not None
                    writer.write_table(rows)
                    start = end
            finish()
        finally:
            if writer is not None:
                writer.close()
                stream.close()
        if done:
            yield pa.RecordBatch.from_arrays(
                [pa.array([pickle.dumps(w) for w in done], pa.binary())], names=["payload"]
            )


ONE_TASK_ROWS = 100_000
"""Position deletes up to this many are written by a single task."""


def write_position_deletes(
    frame: DataFrame,
    groups: Sequence[DeleteTarget],
    *,
    location: str,
    properties: Mapping[str, str],
    io: FileIO,
    row_count: int | None = None,
) -> tuple[DataFile, ...]:
    """Write the rows of ``frame`` (``file_path`` string, ``pos`` long, and
    :data:`GROUP_COLUMN`, an index into ``groups``) as position delete files of the
    table at ``location``: one file per group (per data file), rows sorted by position.
    ``row_count``, the frame's row count when the caller knows it: up to
    :data:`ONE_TASK_ROWS` are written by one task (a task per group costs more than
    the writing).

    The files go to a job directory under the table's data location; a failed job
    deletes it and raises.
    """
    settings = WriteSettings.from_properties(properties, partitioned=False, sorted_=False)
    job_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:12]}"
    directory = f"{data_location(location, properties)}/{job_id}"
    writer = _DeleteWriter(directory, job_id, type(io), dict(io.properties), settings.compression)
    count = max(1, min(len(groups), frame.sparkSession.sparkContext.defaultParallelism * 4))
    if row_count is not None and row_count <= ONE_TASK_ROWS:
        count = 1
    planned = (
        frame.select(
            F.col("file_path").cast("string"), F.col("pos").cast("long"), F.col(GROUP_COLUMN)
        )
        .repartition(count, F.col(GROUP_COLUMN))
        .sortWithinPartitions(GROUP_COLUMN, "file_path", "pos")
    )
    try:
        rows = map_in_arrow(planned, writer, _RESULT_SCHEMA).collect()
    except BaseException:  # interrupted too: nothing references the files yet
        delete_job_dir(io, directory)
        raise
    written: list[_Written] = [pickle.loads(bytes(row["payload"])) for row in rows]
    delete_strays(io, directory, {w.path for w in written})
    files = []
    for w in written:
        group = groups[w.group]
        described = data_file_from_parquet(
            w.path,
            w.size,
            w.metadata,
            POSITION_DELETE_SCHEMA,
            partition=group.partition,
            spec_id=group.spec_id,
            properties=_METRICS,
        )
        files.append(
            dataclasses.replace(
                described,
                content=FileContent.POSITION_DELETES,
                referenced_data_file=group.data_file,
            )
        )
    return tuple(files)
