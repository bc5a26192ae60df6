"""The task side of the write job: the ``mapInArrow`` function that writes one task's rows
as Parquet data files, rolled by size, and reports each file back to the driver.

The driver (:func:`icewright.spark.write.write_files`) pickles a :class:`FileWriter` to
Spark's Python workers, so it and what it references are importable module-level names.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from icewright.arrow import to_iceberg_values
from icewright.io.base import FileIO
from icewright.manifest.metrics import add_counts, nan_value_counts
from icewright.spark.conform import arrow_field, conform_all, null_problems
from icewright.spark.write_settings import WriteSettings
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.types import IcebergType, type_from_json

__all__ = ["FileWriter", "WrittenFile"]


@dataclass(frozen=True, slots=True)
class WrittenFile:
    path: str
    size: int
    metadata: pq.FileMetaData
    partition: tuple[Any, ...]
    nan_counts: dict[int, int]


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


class FileWriter:
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
        arrow_schema = pa.schema([arrow_field(f) for f in schema.fields])
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
                    for p in null_problems(batch.column(i), f, f.name, None)
                ]
                if problems:
                    names = ", ".join(sorted(set(problems)))
                    results.append(("violation", f"nulls in required columns: {names}"))
                    break
                arrays, misfit = conform_all(batch, arrow_schema)
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
        job: FileWriter,
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
        self.done: list[WrittenFile] = []
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

    def close(self) -> list[WrittenFile]:
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
        self.done.append(WrittenFile(current.path, size, metadata, current.key, current.nan_counts))
        self.current = None
