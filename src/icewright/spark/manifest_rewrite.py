"""Rewriting manifests as a Spark job, for tables too big for one process (what Iceberg
Java's ``RewriteManifestsSparkAction`` does).

Executors read the manifests to rewrite (a share of
:data:`~icewright.spark.maintenance.MANIFESTS_PER_TASK` each) and hand every live entry,
as EXISTING, to Spark as an Arrow row keyed by its spec id and partition sort key; Spark
range-partitions the rows by (spec, partition, path) into about as many tasks as
manifests of the target size the entries make, and sorts each; each task writes its rows
into manifests of at most the target size (:mod:`icewright.manifest.clustering`, the
rules the provider uses in process). Only the new manifests' list records come back; the
commit stays in the provider (:class:`icewright.commit.rewrite_manifests.RewriteManifests`
with ``use_rewrite``).

A task names its manifests after the Spark partition it writes (``<prefix><partition>-<n>``)
and overwrites them, so a task that runs again writes the same files.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.io.base import FileIO
from icewright.manifest.clustering import (
    PartitionKey,
    as_existing,
    partition_sort_key,
    write_rolling,
    writer_factory,
)
from icewright.manifest.data_file import ManifestEntry, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_reader import read_manifest
from icewright.spark.job_spec import manifest_file_to_json
from icewright.spark.maintenance import ExecutorIO, ExecutorTable, reading_tasks
from icewright.spark.session import map_in_arrow
from icewright.spec.table_metadata import TableMetadata

__all__ = ["FILL", "rewrite_manifests"]

FILL = 0.9
"""The share of the target size a writing task is planned to fill: the entries' size is
estimated from the manifests read, and a task that holds a little more than a manifest's
worth would write a second, small one."""

_ENTRY_COLUMNS = T.StructType(
    [
        T.StructField("spec_id", T.IntegerType()),
        T.StructField("key", T.BinaryType()),
        T.StructField("path", T.StringType()),
        T.StructField("entry", T.BinaryType()),
    ]
)
_ENTRY_ARROW = pa.schema(
    [
        ("spec_id", pa.int32()),
        ("key", pa.binary()),
        ("path", pa.string()),
        ("entry", pa.binary()),
    ]
)
_WRITTEN_COLUMNS = T.StructType([T.StructField("manifest", T.StringType())])
_BATCH_ROWS = 4096


def _entry_rows(
    io: ExecutorIO, table: ExecutorTable, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """(spec id, partition sort key, path, pickled EXISTING entry) per live entry of the
    manifests in ``batches``."""
    metadata, _ = table.get()
    file_io = io.get()
    keys: dict[int, PartitionKey] = {}
    for batch in batches:
        columns: list[list[Any]] = [[], [], [], []]
        for blob in batch.column("manifest").to_pylist():
            manifest: ManifestFile = pickle.loads(blob)
            spec_id = manifest.partition_spec_id
            key = keys.get(spec_id)
            if key is None:
                spec = metadata.spec_by_id(spec_id)
                key = keys[spec_id] = partition_sort_key(spec.partition_type(metadata.schema()))
            for e in read_manifest(file_io.read(manifest.manifest_path), manifest):
                if e.is_live:
                    columns[0].append(spec_id)
                    columns[1].append(key(e.data_file.partition))
                    columns[2].append(e.data_file.file_path)
                    columns[3].append(pickle.dumps(as_existing(e)))
            if len(columns[0]) >= _BATCH_ROWS:
                yield pa.RecordBatch.from_arrays(
                    [pa.array(c) for c in columns], schema=_ENTRY_ARROW
                )
                columns = [[], [], [], []]
        if columns[0]:
            yield pa.RecordBatch.from_arrays([pa.array(c) for c in columns], schema=_ENTRY_ARROW)


@dataclass(frozen=True)
class _Output:
    """Where and for what the tasks write manifests."""

    io: ExecutorIO
    table: ExecutorTable
    snapshot_id: int
    target_size_bytes: int
    prefix: str


def _write_manifests(out: _Output, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The manifests of one sorted Spark partition, a run of entries per spec."""
    metadata, _ = out.table.get()
    file_io = out.io.get()
    context = TaskContext.get()
    part = context.partitionId() if context is not None else 0
    written: list[str] = []

    def rows() -> Iterator[tuple[int, ManifestEntry]]:
        for batch in batches:
            specs = batch.column("spec_id").to_pylist()
            for spec_id, blob in zip(specs, batch.column("entry").to_pylist(), strict=True):
                yield spec_id, pickle.loads(blob)

    for spec_id, run in itertools.groupby(rows(), key=operator.itemgetter(0)):

        def store(w: ManifestWriter) -> ManifestFile:
            path = f"{out.prefix}{part:05d}-{len(written)}.avro"
            data, manifest = w.finish(path)
            file_io.write(path, data)
            written.append(json.dumps(manifest_file_to_json(manifest)))
            return manifest

        entries = (entry for _, entry in run)
        write_rolling(
            entries,
            new_writer=writer_factory(metadata, spec_id, out.snapshot_id),
            target_size_bytes=out.target_size_bytes,
            store=store,
        )
    if written:
        yield pa.RecordBatch.from_arrays([pa.array(written, pa.string())], names=["manifest"])


def _header_bytes(metadata: TableMetadata, spec_id: int) -> int:
    """The bytes a manifest of ``spec_id`` takes before its first entry."""
    return writer_factory(metadata, spec_id, 0)().length()


def writing_tasks(
    metadata: TableMetadata, groups: Mapping[int, Sequence[ManifestFile]], target_size_bytes: int
) -> int:
    """Tasks that write the new manifests: per spec, the entries' bytes (the manifests'
    lengths less their headers) over :data:`FILL` of a manifest's room."""
    tasks = 0
    for spec_id, manifests in groups.items():
        header = _header_bytes(metadata, spec_id)
        entries = max(sum(m.manifest_length for m in manifests) - header * len(manifests), 1)
        room = max(target_size_bytes - header, 1) * FILL
        tasks += max(1, math.ceil(entries / room))
    return tasks


def rewrite_manifests(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    groups: Mapping[int, Sequence[ManifestFile]],
    *,
    snapshot_id: int,
    target_size_bytes: int,
    prefix: str,
) -> dict[str, Any]:
    """Write the live entries of ``groups`` (manifests to rewrite, by spec id) clustered
    by partition into manifests of at most ``target_size_bytes``, for the snapshot
    ``snapshot_id``, at paths starting with ``prefix``. A JSON object: ``manifests`` (the
    new manifests' records, :func:`~icewright.spark.job_spec.manifest_file_to_json`, by
    path), ``entries`` (carried over) and ``tasks`` (that read and wrote)."""
    manifests = [m for found in groups.values() for m in found]
    if not manifests:
        return {"manifests": [], "entries": 0, "tasks": 0}
    eio = ExecutorIO.of(io)
    table = ExecutorTable(metadata)
    counted = sum((m.added_files_count or 0) + (m.existing_files_count or 0) for m in manifests)
    reading = reading_tasks(spark, len(manifests), counted)
    items = spark.sparkContext.parallelize([(pickle.dumps(m),) for m in manifests], reading)
    listed = spark.createDataFrame(items, "manifest binary", verifySchema=False)
    entries = map_in_arrow(listed, partial(_entry_rows, eio, table), _ENTRY_COLUMNS)
    writing = writing_tasks(metadata, groups, target_size_bytes)
    ordered = entries.repartitionByRange(writing, "spec_id", "key", "path").sortWithinPartitions(
        "spec_id", "key", "path"
    )
    written = map_in_arrow(
        ordered,
        partial(_write_manifests, _Output(eio, table, snapshot_id, target_size_bytes, prefix)),
        _WRITTEN_COLUMNS,
    ).collect()
    found = sorted((json.loads(r["manifest"]) for r in written), key=lambda m: m["manifest_path"])
    return {
        "manifests": found,
        "entries": sum(int(m["existing_files_count"]) for m in found),
        "tasks": reading + writing,
    }
