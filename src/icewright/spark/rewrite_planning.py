"""Rewrite (compaction) planning as a Spark job, for tables too big for one process.

Executors plan the snapshot's data manifests (a share of
:data:`~icewright.spark.maintenance.MANIFESTS_PER_TASK` each, with the row filter and
icewright's own planner), the candidates are grouped by partition in Spark and bin-packed
there with the provider's rules (:class:`icewright.scan.compaction.CompactionRules`), so
both paths give the same groups.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark.sql import SparkSession

from icewright.expressions import ALWAYS_TRUE, Expression
from icewright.io.base import FileIO
from icewright.manifest.data_file import ManifestContent
from icewright.manifest.live_paths import inline_manifests
from icewright.manifest.manifest_list import read_manifest_list
from icewright.scan.compaction import CompactionRules
from icewright.scan.planner import iter_snapshot_tasks
from icewright.scan.tasks import FileScanTask
from icewright.spark.job_spec import (
    expression_from_json,
    expression_to_json,
    partition_types,
    scan_task_from_json,
    scan_task_to_json,
)
from icewright.spark.maintenance import ExecutorIO, ExecutorTable, slices
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["rewrite_groups"]


def _candidates(
    paths: Iterable[str],
    *,
    table: ExecutorTable,
    io: ExecutorIO,
    snapshot_id: int,
    row_filter: Any,
    rules: CompactionRules,
) -> Iterator[tuple[str, str]]:
    """(JSON of (spec id, partition), JSON of the task) for every candidate of the
    manifests ``paths`` (the delete index is built from every delete manifest, in every
    task)."""
    wanted = frozenset(paths)
    if not wanted:
        return
    metadata, types = table.get()
    expr = ALWAYS_TRUE if row_filter is None else expression_from_json(row_filter)
    tasks = iter_snapshot_tasks(
        metadata,
        io.get(),
        metadata.snapshot_by_id(snapshot_id),
        row_filter=expr,
        data_manifests=wanted,
    )
    for task in tasks:
        if rules.is_candidate(task):
            doc = scan_task_to_json(task, types)
            key = json.dumps([task.spec_id, doc["data_file"]["partition"]])
            yield key, json.dumps(doc)


def _pack(
    item: tuple[str, Iterable[str]], *, table: ExecutorTable, rules: CompactionRules
) -> Iterator[tuple[tuple[int, str], str]]:
    """The groups of one partition's candidates: ((spec id, first path), JSON of tasks)."""
    metadata, types = table.get()
    spec_id = json.loads(item[0])[0]
    docs = {}
    tasks = []
    for text in item[1]:
        doc = json.loads(text)
        task = scan_task_from_json(doc, types, metadata.schema())
        docs[task.data_file.file_path] = doc
        tasks.append(task)
    for packed in rules.groups(spec_id, tasks):
        first = packed[0].data_file.file_path
        yield (spec_id, first), json.dumps([docs[t.data_file.file_path] for t in packed])


def rewrite_groups(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    snapshot: Snapshot,
    *,
    row_filter: Expression | None,
    rules: CompactionRules,
) -> list[tuple[int, tuple[Any, ...], tuple[FileScanTask, ...]]]:
    """The file groups :func:`icewright.actions.rewrite.plan_groups` plans, as a Spark
    job: executors plan the data manifests (a share each, with the filter), the candidates
    are grouped by partition in Spark and bin-packed there. Groups come back ordered by
    (spec id, first file path)."""
    eio = ExecutorIO.of(io)
    table = ExecutorTable(metadata)
    listed = (
        read_manifest_list(io.read(snapshot.manifest_list), snapshot.manifest_list)
        if snapshot.manifest_list is not None
        else list(inline_manifests(snapshot))
    )
    data = [
        m.manifest_path
        for m in listed
        if m.content is ManifestContent.DATA
        and (m.has_added_files() or m.has_existing_files() or m.added_files_count is None)
    ]
    if not data:
        return []
    where = None if row_filter is None else expression_to_json(row_filter)
    snapshot_id = snapshot.snapshot_id
    sc = spark.sparkContext
    candidates = sc.parallelize(data, slices(len(data))).mapPartitions(
        lambda paths: _candidates(
            paths, table=table, io=eio, snapshot_id=snapshot_id, row_filter=where, rules=rules
        )
    )
    groups = (
        candidates.groupByKey(slices(len(data)))
        .flatMap(lambda item: _pack(item, table=table, rules=rules))
        .sortByKey()
        .values()
    )
    types = partition_types(metadata)
    schema = metadata.schema()
    found: list[tuple[int, tuple[Any, ...], tuple[FileScanTask, ...]]] = []
    for text in groups.toLocalIterator():
        tasks = tuple(scan_task_from_json(doc, types, schema) for doc in json.loads(text))
        found.append((tasks[0].spec_id, tasks[0].partition, tasks))
    return found
