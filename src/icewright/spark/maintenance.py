"""Maintenance planning as Spark jobs, for tables too big for one process.

Three walks over a table's metadata run as Spark jobs instead of in the provider when a
table is big (:mod:`icewright.actions.maintenance` chooses): the files only expired
snapshots reach (expire, here), the files under a location that nothing references
(orphans, here), and the file groups a compaction rewrites
(:mod:`icewright.spark.rewrite_planning`). In each, executors read the manifest lists
(runs of consecutive lists a task, each manifest sent once a task) and manifests (a task
per group of :data:`MANIFESTS_PER_TASK`), with icewright's own readers, and hand their
rows to Spark as Arrow batches; Spark joins and subtracts the path sets, and only the
answer comes back: the paths to delete, the orphan paths, the file groups. Nothing here
commits or deletes; the provider does both (:mod:`icewright.commit.expire`,
:mod:`icewright.commit.orphans`, :mod:`icewright.actions.rewrite`) with the answer.

The decisions are those of the provider's walks, file for file: a manifest is unreachable
when no retained snapshot lists it; a content file when it is live in an unreachable
manifest and live in no retained manifest; a listed file is an orphan when no reference
has its normalized path (:func:`icewright.io.file_keys.file_key`) and it is older than the
cutoff. A manifest list or manifest that cannot be read is reported as the provider's walk
reports it.

Executors get the FileIO as its public properties plus its credentials
(:mod:`icewright.io.secrets`), in the task closure, never in a file.
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.io.file_keys import describe_conflict, file_key, key_matches
from icewright.io.secrets import secret_properties
from icewright.manifest.data_file import FileContent, ManifestFile
from icewright.manifest.live_paths import expired_manifest_lists, inline_manifests, live_paths
from icewright.manifest.manifest_list import ManifestListReader
from icewright.spark.job_spec import (
    PartitionTypes,
    io_from_json,
    io_to_json,
    partition_types,
)
from icewright.spark.session import map_in_arrow
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "MANIFESTS_PER_TASK",
    "ExecutorIO",
    "ExecutorTable",
    "find_orphans",
    "reading_tasks",
    "slices",
    "unreachable_files",
]

MANIFESTS_PER_TASK = 8
"""Manifests one Spark task reads at most (and manifest lists, up to four tasks per core)."""

ENTRIES_PER_TASK = 10_000
"""Manifest entries a task that reads manifests is given at least, by the counts their
manifest-list records declare, while every core gets two tasks: tasks of a few tiny
manifests each cost more to start than to run."""

_EXPIRED, _RETAINED = "expired", "retained"
_SHOWN_PROBLEMS = 5


@dataclass(frozen=True)
class ExecutorIO:
    """A FileIO as executors rebuild it: its class and public properties, and its
    credentials apart (:func:`icewright.io.secrets.secret_properties`), kept in memory."""

    public: Mapping[str, Any]
    secrets: Mapping[str, str]

    @classmethod
    def of(cls, io: FileIO) -> ExecutorIO:
        """What executors need to rebuild ``io``."""
        return cls(io_to_json(io), secret_properties(io.properties))

    def get(self) -> FileIO:
        """The FileIO, built once per Python worker."""
        key = hashlib.sha256(
            json.dumps([self.public, dict(self.secrets)], sort_keys=True).encode()
        ).hexdigest()
        found = _IOS.get(key)
        if found is None:
            found = _IOS[key] = io_from_json(dict(self.public), dict(self.secrets))
        return found


_IOS: dict[str, FileIO] = {}


class ExecutorTable:
    """The table as executors see it: its metadata as JSON text, parsed once per Python
    worker (metadata objects are not pickled: they are immutable by ``__setattr__``)."""

    def __init__(self, metadata: TableMetadata) -> None:
        self.text = json.dumps(metadata.to_dict())
        self.key = hashlib.sha256(self.text.encode()).hexdigest()

    def get(self) -> tuple[TableMetadata, PartitionTypes]:
        """The metadata and its partition types, built once per Python worker."""
        found = _TABLES.get(self.key)
        if found is None:
            metadata = TableMetadata.from_json(json.loads(self.text))
            found = _TABLES[self.key] = (metadata, partition_types(metadata))
        return found


_TABLES: dict[str, tuple[TableMetadata, PartitionTypes]] = {}


def slices(count: int) -> int:
    """Tasks that read ``count`` manifests, :data:`MANIFESTS_PER_TASK` a task."""
    return max(1, math.ceil(count / MANIFESTS_PER_TASK))


def reading_tasks(spark: SparkSession, manifests: int, entries: int) -> int:
    """Tasks that read ``manifests`` manifests of ``entries`` entries in all: at most
    :data:`MANIFESTS_PER_TASK` manifests a task, and about :data:`ENTRIES_PER_TASK`
    entries a task while every core gets two tasks."""
    wanted = max(math.ceil(entries / ENTRIES_PER_TASK), 2 * spark.sparkContext.defaultParallelism)
    return max(1, min(slices(manifests), wanted))


def _text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --- executor functions ------------------------------------------------------------------
#
# Executors hand their rows to Spark as Arrow batches (:func:`map_in_arrow`), not as
# pickled rows converted one by one in the JVM: the manifest and file stages move hundreds
# of thousands of rows.

_BATCH_ROWS = 8192

_LIST_COLUMNS: tuple[tuple[str, T.DataType, pa.DataType], ...] = (
    ("role", T.StringType(), pa.string()),
    ("snapshot_id", T.LongType(), pa.int64()),
    ("error", T.StringType(), pa.string()),
    ("manifest_path", T.StringType(), pa.string()),
    ("manifest", T.BinaryType(), pa.binary()),
    ("live", T.BooleanType(), pa.bool_()),
    ("entries", T.LongType(), pa.int64()),
)
_LIVE_COLUMNS: tuple[tuple[str, T.DataType, pa.DataType], ...] = (
    ("manifest_path", T.StringType(), pa.string()),
    ("error", T.StringType(), pa.string()),
    ("file_path", T.StringType(), pa.string()),
    ("content", T.IntegerType(), pa.int32()),
)
_KEY_COLUMNS: tuple[tuple[str, T.DataType, pa.DataType], ...] = (
    ("key", T.StringType(), pa.string()),
    ("scheme", T.StringType(), pa.string()),
    ("authority", T.StringType(), pa.string()),
)


def _spark_schema(columns: Sequence[tuple[str, T.DataType, pa.DataType]]) -> T.StructType:
    return T.StructType([T.StructField(name, kind) for name, kind, _ in columns])


def _arrow_schema(columns: Sequence[tuple[str, T.DataType, pa.DataType]]) -> pa.Schema:
    return pa.schema([(name, kind) for name, _, kind in columns])


def _batched(rows: Iterable[tuple[Any, ...]], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """``rows`` as Arrow record batches of ``schema``."""
    chunk: list[tuple[Any, ...]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= _BATCH_ROWS:
            yield _batch(chunk, schema)
            chunk = []
    if chunk:
        yield _batch(chunk, schema)


def _batch(rows: Sequence[tuple[Any, ...]], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True))
    arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _unbatched(batches: Iterable[pa.RecordBatch], *names: str) -> Iterator[tuple[Any, ...]]:
    """The rows of ``batches`` as tuples of the columns ``names``."""
    for batch in batches:
        yield from zip(*(batch.column(n).to_pylist() for n in names), strict=True)


def _list_rows(
    io: ExecutorIO, items: Iterable[tuple[str, bytes]]
) -> Iterator[tuple[str, int, str | None, str | None, bytes | None, bool, int | None]]:
    """Each manifest of the task's snapshots, once per role: (role, snapshot id, error,
    path, record, may hold live files, entries); a list that cannot be read gives one row
    with its error. A list repeats most of its parent's records, so a task that reads a run of
    consecutive lists sends each manifest once, not once per list."""
    reader = ManifestListReader()  # a list repeats its parent's records: decoded once
    file_io = io.get()
    seen: set[tuple[str, str]] = set()
    for role, blob in items:
        snapshot: Snapshot = pickle.loads(blob)
        try:
            if snapshot.manifest_list is None:
                listed: Sequence[ManifestFile] = inline_manifests(snapshot)
            else:
                listed = reader.read(file_io.read(snapshot.manifest_list), snapshot.manifest_list)
        except Exception as exc:  # reported per snapshot, as the provider's walk does
            yield role, snapshot.snapshot_id, _text(exc), None, None, False, None
            continue
        for m in listed:
            if (role, m.manifest_path) in seen:
                continue
            seen.add((role, m.manifest_path))
            live = m.has_added_files() or m.has_existing_files()
            counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
            entries = None if None in counts else sum(c or 0 for c in counts)
            record = pickle.dumps(m)
            yield role, snapshot.snapshot_id, None, m.manifest_path, record, live, entries


def _read_lists(io: ExecutorIO, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    rows = _list_rows(io, _unbatched(batches, "role", "snapshot"))
    return _batched(rows, _arrow_schema(_LIST_COLUMNS))


def _live_rows(
    io: ExecutorIO, rows: Iterable[tuple[bytes]], keyed: bool
) -> Iterator[tuple[Any, ...]]:
    """(manifest path, error, file path, content) per live entry, and one row with no
    file for every manifest read (so that a manifest without live entries is seen).
    ``keyed`` adds the :func:`~icewright.io.file_keys.file_key` of the file (on a
    manifest's own row: of the manifest)."""
    file_io = io.get()
    for (blob,) in rows:
        manifest: ManifestFile = pickle.loads(blob)
        path = manifest.manifest_path
        try:
            found = live_paths(file_io.read(path), manifest)
        except Exception as exc:  # reported per manifest
            yield (path, _text(exc), None, None, *((None,) * 3 if keyed else ()))
            continue
        if not keyed:
            yield path, None, None, None
            for file_path, content in found:
                yield path, None, file_path, int(content)
            continue
        key = file_key(path)
        yield path, None, None, None, key.path, key.scheme, key.authority
        for file_path, content in found:
            key = file_key(file_path)
            yield path, None, file_path, int(content), key.path, key.scheme, key.authority


def _read_manifests(
    io: ExecutorIO, keyed: bool, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    columns = (*_LIVE_COLUMNS, *_KEY_COLUMNS) if keyed else _LIVE_COLUMNS
    rows = _live_rows(io, _unbatched(batches, "manifest"), keyed)
    return _batched(rows, _arrow_schema(columns))


def _conflict_check(rows: Iterable[Any]) -> Iterator[tuple[str]]:
    """The conflict text of each listed file referenced only under forms other than its
    own that :func:`~icewright.io.file_keys.key_matches` does not accept either."""
    for row in rows:
        path = row["path"]
        forms = {(f["scheme"], f["authority"]) for f in row["forms"] if f is not None}
        key = file_key(path)
        if not any(key_matches(form, key) for form in forms):
            yield (describe_conflict(path, forms),)


# --- shared stages -----------------------------------------------------------------------


def _list_slices(spark: SparkSession, count: int) -> int:
    """Tasks that read ``count`` manifest lists: :data:`MANIFESTS_PER_TASK` a task, but
    at most four per core, since each task sends the manifests of its run of lists once
    and more tasks send them more often."""
    return max(1, min(slices(count), 4 * spark.sparkContext.defaultParallelism))


def _manifest_frame(
    spark: SparkSession, io: ExecutorIO, roles: Sequence[tuple[str, Sequence[Snapshot]]]
) -> tuple[DataFrame, int]:
    """Every manifest of every snapshot (by role), read by executors from the lists, and
    the number of tasks that read them."""

    items = [
        (role, pickle.dumps(s))
        for role, snapshots in roles
        for s in sorted(
            {s.snapshot_id: s for s in snapshots}.values(),
            key=lambda s: (s.sequence_number, s.timestamp_ms),
        )
    ]
    schema = _spark_schema(_LIST_COLUMNS)
    if not items:
        return spark.createDataFrame([], schema), 0
    tasks = _list_slices(spark, len(items))
    # parallelize keeps runs of consecutive snapshots together: parents before children
    rdd = spark.sparkContext.parallelize(items, tasks)
    snapshots = spark.createDataFrame(rdd, "role string, snapshot binary", verifySchema=False)
    return map_in_arrow(snapshots, partial(_read_lists, io), schema), tasks


def _live_frame(
    spark: SparkSession, io: ExecutorIO, manifests: DataFrame, *, keyed: bool = False
) -> tuple[DataFrame, int, int]:
    """The live entries of ``manifests`` (distinct ones), read by executors, the number
    of manifests and the number of tasks that read them."""
    row = manifests.agg(
        F.count("*").alias("n"),
        F.sum(F.coalesce("entries", F.lit(ENTRIES_PER_TASK // MANIFESTS_PER_TASK))).alias("e"),
    ).collect()[0]
    count, entries = int(row["n"]), int(row["e"] or 0)
    tasks = reading_tasks(spark, count, entries)
    spread = manifests.select("manifest_path", "manifest").repartition(tasks, "manifest_path")
    columns = (*_LIVE_COLUMNS, *_KEY_COLUMNS) if keyed else _LIVE_COLUMNS
    frame = map_in_arrow(spread, partial(_read_manifests, io, keyed), _spark_schema(columns))
    return frame, count, tasks


def _stream(frame: DataFrame) -> Iterator[Any]:
    """The rows of ``frame``, a partition at a time (never collected whole)."""
    yield from frame.toLocalIterator(prefetchPartitions=True)


def _manifest_counts(lists: DataFrame) -> dict[str, tuple[int, int]]:
    """Per role: (lists that failed, distinct manifests), in one Spark job."""
    rows = (
        lists.groupBy("role")
        .agg(
            F.sum(F.col("error").isNotNull().cast("int")).alias("failed"),
            F.countDistinct("manifest_path").alias("manifests"),
        )
        .collect()
    )
    return {r["role"]: (int(r["failed"] or 0), int(r["manifests"])) for r in rows}


# --- expire --------------------------------------------------------------------------------


def unreachable_files(
    spark: SparkSession,
    io: FileIO,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
) -> dict[str, Any]:
    """What :func:`icewright.commit.reachability.unreachable_files` decides, as a Spark
    job: a JSON object with ``manifest_lists``, ``manifests``, ``data_files``,
    ``delete_files`` (sorted path lists), ``errors``, ``data_files_skipped`` and
    ``tasks`` (how many tasks read manifest lists and manifests)."""
    eio = ExecutorIO.of(io)
    frame, tasks = _manifest_frame(spark, eio, [(_EXPIRED, expired), (_RETAINED, retained)])
    lists = frame.cache()
    try:
        return _unreachable(spark, eio, lists, tasks, expired=expired, retained=retained)
    finally:
        lists.unpersist()


def _unreachable(
    spark: SparkSession,
    eio: ExecutorIO,
    lists: DataFrame,
    tasks: int,
    *,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
) -> dict[str, Any]:
    by_id = {s.snapshot_id: s for s in (*expired, *retained)}
    counts = _manifest_counts(lists)
    failed_expired, expired_manifests = counts.get(_EXPIRED, (0, 0))
    failed_retained = counts.get(_RETAINED, (0, 0))[0]
    failures: list[tuple[str, int, str]] = []
    if failed_expired or failed_retained:
        failed = lists.filter(F.col("error").isNotNull()).select("role", "snapshot_id", "error")
        failures = [(r["role"], r["snapshot_id"], r["error"]) for r in failed.collect()]
    errors = [
        f"cannot read the manifest list of expired snapshot {_named(by_id[sid])}: {e}"
        for role, sid, e in failures
        if role == _EXPIRED
    ]
    unreadable = {sid for role, sid, _ in failures if role == _EXPIRED}
    manifest_lists = expired_manifest_lists(expired, retained, unreadable)
    result: dict[str, Any] = {
        "manifest_lists": manifest_lists,
        "manifests": [],
        "data_files": [],
        "delete_files": [],
        "errors": errors,
        "data_files_skipped": None,
        "tasks": tasks,
    }
    if expired_manifests == 0:
        return result
    if failed_retained:
        errors += [
            f"cannot read the manifest list of retained snapshot {_named(by_id[sid])}: {e}"
            for role, sid, e in failures
            if role == _RETAINED
        ]
        result["data_files_skipped"] = (
            f"{failed_retained} manifest list(s) of retained snapshots could not be read, so "
            "which manifests and files they still need is unknown: no manifest and no data "
            "or delete file was deleted"
        )
        return result
    ok = lists.filter(F.col("error").isNull())
    candidates = ok.filter(F.col("role") == _EXPIRED).dropDuplicates(["manifest_path"])
    kept = ok.filter(F.col("role") == _RETAINED).dropDuplicates(["manifest_path"])
    deletable = candidates.join(kept.select("manifest_path"), "manifest_path", "left_anti")
    frame, count, reading = _live_frame(spark, eio, deletable)
    if count == 0:
        return result
    content = frame.cache()
    still: DataFrame | None = None
    try:
        # One row per deletable manifest: read (no file) or not (an error); few, collected.
        marks = content.filter(F.col("file_path").isNull()).collect()
        errors += [
            f"cannot read expired manifest {r['manifest_path']}: {r['error']}"
            for r in marks
            if r["error"] is not None
        ]
        result["manifests"] = sorted(r["manifest_path"] for r in marks if r["error"] is None)
        if not result["manifests"]:
            return result
        files = (
            content.filter(F.col("file_path").isNotNull())
            .groupBy("file_path")
            .agg(F.min("content").alias("content"))
        )
        frame, _, kept_reading = _live_frame(spark, eio, kept.filter(F.col("live")))
        result["tasks"] = tasks + reading + kept_reading
        still = frame.cache()
        bad = still.filter(F.col("error").isNotNull()).collect()
        if bad:
            errors += [
                f"cannot read retained manifest {r['manifest_path']}: {r['error']}" for r in bad
            ]
            result["data_files_skipped"] = (
                f"{len(bad)} manifest(s) of retained snapshots could not be read, so whether "
                "they still hold the expired files is unknown: no data or delete file was "
                "deleted"
            )
            return result
        live = still.filter(F.col("file_path").isNotNull()).select("file_path")
        gone = files.join(live, "file_path", "left_anti")
        data: list[str] = []
        deletes: list[str] = []
        for row in _stream(gone):
            (data if row["content"] == int(FileContent.DATA) else deletes).append(row["file_path"])
        result["data_files"] = sorted(data)
        result["delete_files"] = sorted(deletes)
        return result
    finally:
        content.unpersist()
        if still is not None:
            still.unpersist()


def _named(snapshot: Snapshot) -> str:
    return f"{snapshot.snapshot_id} ({snapshot.manifest_list or 'inline manifests'})"


# --- orphans -------------------------------------------------------------------------------


def find_orphans(
    spark: SparkSession,
    io: FileIO,
    metadata: TableMetadata,
    *,
    extra_references: Iterable[str],
    root: str,
    cutoff_ms: int,
    skip_prefix: str,
) -> dict[str, Any]:
    """What :func:`icewright.commit.orphans.find_orphans` decides, as a Spark job.

    Executors read every snapshot's manifest list and manifests; the referenced paths
    (those, the manifest lists, and ``extra_references``: metadata, hint and statistics
    files) are joined with the listing of ``root`` by normalized path. The location is
    listed once by the job's driver. A JSON object: ``orphans`` (paths), ``listed``,
    ``referenced``, ``too_new``, ``conflicts``, ``tasks``. Raises
    :class:`~icewright.errors.ValidationError` when a reference cannot be read.
    """
    eio = ExecutorIO.of(io)
    frame, list_tasks = _manifest_frame(spark, eio, [("all", metadata.snapshots)])
    lists = frame.cache()
    cached: list[DataFrame] = [lists]
    try:
        failed = lists.filter(F.col("error").isNotNull()).collect()
        manifests = lists.filter(F.col("error").isNull()).dropDuplicates(["manifest_path"])
        frame, _, reading = _live_frame(spark, eio, manifests, keyed=True)
        content = frame.cache()
        cached.append(content)
        by_id = {s.snapshot_id: s for s in metadata.snapshots}
        problems = [
            f"cannot read the manifest list of snapshot {_named(by_id[r['snapshot_id']])}: "
            f"{r['error']}"
            for r in failed
        ]
        problems += [
            f"cannot read manifest {r['manifest_path']}: {r['error']}"
            for r in content.filter(F.col("error").isNotNull()).collect()
        ]
        if problems:
            shown = "; ".join(problems[:_SHOWN_PROBLEMS])
            more = len(problems) - _SHOWN_PROBLEMS
            raise ValidationError(
                f"cannot list every file the table references ({len(problems)} unreadable): "
                f"{shown}{f'; and {more} more' if more > 0 else ''}. Nothing was deleted; fix "
                "or restore those files first"
            )
        keyed = "path string, key string, scheme string, authority string"
        side = {p for s in metadata.snapshots if (p := s.manifest_list)}
        side.update(extra_references)
        # a manifest's own row (no file) carries the manifest's key
        references = content.select(
            F.coalesce("file_path", "manifest_path").alias("path"), "key", "scheme", "authority"
        ).union(spark.createDataFrame(_keyed(side), keyed, verifySchema=False))
        # per key: the forms it is referenced under and its distinct paths, in one shuffle
        forms = (
            references.groupBy("key")
            .agg(
                F.collect_set(F.struct("scheme", "authority")).alias("forms"),
                F.countDistinct("path").alias("n"),
            )
            .cache()
        )
        cached.append(forms)
        joined = (
            _listing(spark, io, root)
            .join(forms.select("key", "forms"), "key", "left")
            .select(
                "path",
                "modified_ms",
                "scheme",
                "authority",
                "forms",
                F.col("key").startswith(skip_prefix).alias("skip"),
            )
            .cache()
        )
        cached.append(joined)
        # A file referenced under its own (scheme, authority) matches; any other form is
        # compared by key_matches, in Python.
        exact = F.exists(
            "forms",
            lambda f: (
                f["scheme"].eqNullSafe(F.col("scheme"))
                & f["authority"].eqNullSafe(F.col("authority"))
            ),
        )
        unsure = F.col("forms").isNotNull() & ~F.col("skip") & ~exact
        unreferenced = joined.filter(~F.col("skip") & F.col("forms").isNull())
        new = F.col("modified_ms") >= cutoff_ms
        stats = joined.agg(
            F.count("*").alias("listed"),
            F.sum((~F.col("skip") & F.col("forms").isNull() & new).cast("int")).alias("too_new"),
            F.sum(unsure.cast("int")).alias("unsure"),
        ).collect()[0]
        conflicts: list[str] = []
        if stats["unsure"]:
            checked = spark.createDataFrame(
                joined.filter(unsure).select("path", "forms").rdd.mapPartitions(_conflict_check),
                "conflict string",
            )
            conflicts = sorted(r[0] for r in checked.limit(_SHOWN_PROBLEMS * 20).collect())
        referenced = forms.agg(F.sum("n")).collect()[0][0] or 0
        return {
            "orphans": sorted(r["path"] for r in _stream(unreferenced.filter(~new).select("path"))),
            "listed": int(stats["listed"]),
            "referenced": int(referenced),
            "too_new": int(stats["too_new"] or 0),
            "conflicts": conflicts,
            "tasks": list_tasks + reading,
        }
    finally:
        for frame in cached:
            frame.unpersist()


def _keyed(paths: Iterable[str]) -> list[tuple[str, str, str | None, str | None]]:
    return [(p, (k := file_key(p)).path, k.scheme, k.authority) for p in paths]


_LIST_CHUNK = 50_000


def _listing(spark: SparkSession, io: FileIO, root: str) -> DataFrame:
    """The files under ``root`` (path, modified ms, and the path's key, scheme and
    authority), listed here once, handed to Spark in chunks so that the whole listing is
    never one Python list."""

    schema = "path string, modified_ms long, key string, scheme string, authority string"
    frame: DataFrame | None = None
    chunk: list[tuple[str, int, str, str | None, str | None]] = []

    def add(rows: list[tuple[str, int, str, str | None, str | None]]) -> None:
        nonlocal frame
        part = spark.createDataFrame(rows, schema, verifySchema=False)
        frame = part if frame is None else frame.union(part)

    for info in io.list_prefix(root):
        key = file_key(info.path)
        chunk.append((info.path, info.modified_ms, key.path, key.scheme, key.authority))
        if len(chunk) >= _LIST_CHUNK:
            add(chunk)
            chunk = []
    if chunk or frame is None:
        add(chunk)
    assert frame is not None
    return frame
