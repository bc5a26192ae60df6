"""Maintenance planning as Spark jobs, for tables too big for one process.

Three walks over a table's metadata run here instead of in the provider when a table is
big (:mod:`icewright.actions.maintenance` chooses): the files only expired snapshots
reach (expire), the files under a location that nothing references (orphans), and the
file groups a compaction rewrites (rewrite planning). In each, executors read the manifest
lists and manifests (a task per group of :data:`MANIFESTS_PER_TASK`, with icewright's own
readers), Spark joins and subtracts the path sets, and only the answer comes back: the
paths to delete, the orphan paths, the file groups. Nothing here commits or deletes; the
provider does both (:mod:`icewright.commit.expire`, :mod:`icewright.commit.orphans`,
:mod:`icewright.actions.rewrite`) with the answer.

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
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE, Expression
from icewright.io.base import FileIO
from icewright.io.file_keys import describe_conflict, file_key, key_matches
from icewright.io.secrets import secret_properties
from icewright.manifest.data_file import FileContent, ManifestContent, ManifestFile
from icewright.manifest.live_paths import expired_manifest_lists, inline_manifests, live_paths
from icewright.manifest.manifest_list import ManifestListReader, read_manifest_list
from icewright.scan.compaction import CompactionRules
from icewright.scan.planner import iter_snapshot_tasks
from icewright.scan.tasks import FileScanTask
from icewright.spark.job_spec import (
    PartitionTypes,
    expression_from_json,
    expression_to_json,
    io_from_json,
    io_to_json,
    partition_types,
    scan_task_from_json,
    scan_task_to_json,
)
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "MANIFESTS_PER_TASK",
    "ExecutorIO",
    "find_orphans",
    "rewrite_groups",
    "unreachable_files",
]

MANIFESTS_PER_TASK = 8
"""Manifest lists or manifests one Spark task reads."""

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


def _slices(count: int) -> int:
    return max(1, math.ceil(count / MANIFESTS_PER_TASK))


def _text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --- executor functions ------------------------------------------------------------------


def _list_rows(
    io: ExecutorIO, items: Iterable[tuple[str, Snapshot]]
) -> Iterator[tuple[str, int, str | None, str | None, bytes | None, bool]]:
    """Each manifest of each snapshot: (role, snapshot id, error, path, record, may hold
    live files); a list that cannot be read gives one row with its error."""
    reader = ManifestListReader()  # a list repeats its parent's records: decoded once
    file_io = io.get()
    for role, snapshot in items:
        try:
            if snapshot.manifest_list is None:
                listed: Sequence[ManifestFile] = inline_manifests(snapshot)
            else:
                listed = reader.read(file_io.read(snapshot.manifest_list), snapshot.manifest_list)
        except Exception as exc:  # reported per snapshot, as the provider's walk does
            yield role, snapshot.snapshot_id, _text(exc), None, None, False
            continue
        for m in listed:
            live = m.has_added_files() or m.has_existing_files()
            yield role, snapshot.snapshot_id, None, m.manifest_path, pickle.dumps(m), live


def _live_rows(
    io: ExecutorIO, rows: Iterable[Any]
) -> Iterator[tuple[str, str | None, str | None, int | None]]:
    """(manifest path, error, file path, content) per live entry, and one row with no
    file for every manifest read (so that a manifest without live entries is seen)."""
    file_io = io.get()
    for row in rows:
        manifest: ManifestFile = pickle.loads(row["manifest"])
        try:
            found = live_paths(file_io.read(manifest.manifest_path), manifest)
        except Exception as exc:  # reported per manifest
            yield manifest.manifest_path, _text(exc), None, None
            continue
        yield manifest.manifest_path, None, None, None
        for path, content in found:
            yield manifest.manifest_path, None, path, int(content)


def _keyed_listing(
    rows: Iterable[tuple[str, int]],
) -> Iterator[tuple[str, int, str, str | None, str | None]]:
    for path, modified in rows:
        key = file_key(path)
        yield path, modified, key.path, key.scheme, key.authority


def _keyed_references(rows: Iterable[Any]) -> Iterator[tuple[str, str | None, str | None]]:
    for row in rows:
        key = file_key(row[0])
        yield key.path, key.scheme, key.authority


def _conflict_check(rows: Iterable[Any]) -> Iterator[tuple[str, int, bool, bool, str | None]]:
    """Per listed file: (path, modified ms, skipped, referenced, conflict text when
    referenced only under another scheme or authority)."""
    for row in rows:
        path, modified, skip = row["path"], row["modified_ms"], row["skip"]
        forms = {(f["scheme"], f["authority"]) for f in row["forms"] or () if f is not None}
        if not forms:
            yield path, modified, skip, False, None
            continue
        key = file_key(path)
        if any(key_matches(form, key) for form in forms):
            yield path, modified, skip, True, None
        else:
            yield path, modified, skip, True, describe_conflict(path, forms)


# --- shared stages -----------------------------------------------------------------------


def _manifest_frame(
    spark: SparkSession, io: ExecutorIO, roles: Sequence[tuple[str, Sequence[Snapshot]]]
) -> DataFrame:
    """Every manifest of every snapshot (by role), read by executors from the lists."""

    items = [
        (role, s)
        for role, snapshots in roles
        for s in sorted(
            {s.snapshot_id: s for s in snapshots}.values(),
            key=lambda s: (s.sequence_number, s.timestamp_ms),
        )
    ]
    schema = T.StructType(
        [
            T.StructField("role", T.StringType()),
            T.StructField("snapshot_id", T.LongType()),
            T.StructField("error", T.StringType()),
            T.StructField("manifest_path", T.StringType()),
            T.StructField("manifest", T.BinaryType()),
            T.StructField("live", T.BooleanType()),
        ]
    )
    if not items:
        return spark.createDataFrame([], schema)
    rdd = spark.sparkContext.parallelize(items, _slices(len(items)))
    return spark.createDataFrame(rdd.mapPartitions(lambda it: _list_rows(io, it)), schema)


def _live_frame(spark: SparkSession, io: ExecutorIO, manifests: DataFrame, count: int) -> DataFrame:
    """The live entries of ``manifests`` (one row per distinct path), read by executors."""

    schema = T.StructType(
        [
            T.StructField("manifest_path", T.StringType()),
            T.StructField("error", T.StringType()),
            T.StructField("file_path", T.StringType()),
            T.StructField("content", T.IntegerType()),
        ]
    )
    spread = manifests.repartition(_slices(count), "manifest_path")
    return spark.createDataFrame(spread.rdd.mapPartitions(lambda it: _live_rows(io, it)), schema)


def _stream(frame: DataFrame) -> Iterator[Any]:
    """The rows of ``frame``, a partition at a time (never collected whole)."""
    yield from frame.toLocalIterator(prefetchPartitions=True)


def _manifest_counts(lists: DataFrame) -> dict[str, tuple[int, int, int]]:
    """Per role: (lists that failed, distinct manifests, distinct manifests that may hold
    live files), in one Spark job."""
    rows = (
        lists.groupBy("role")
        .agg(
            F.sum(F.col("error").isNotNull().cast("int")).alias("failed"),
            F.countDistinct("manifest_path").alias("manifests"),
            F.countDistinct(F.when(F.col("live"), F.col("manifest_path"))).alias("live"),
        )
        .collect()
    )
    return {r["role"]: (int(r["failed"] or 0), int(r["manifests"]), int(r["live"])) for r in rows}


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
    lists = _manifest_frame(spark, eio, [(_EXPIRED, expired), (_RETAINED, retained)]).cache()
    try:
        return _unreachable(spark, eio, lists, expired=expired, retained=retained)
    finally:
        lists.unpersist()


def _unreachable(
    spark: SparkSession,
    eio: ExecutorIO,
    lists: DataFrame,
    *,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
) -> dict[str, Any]:
    by_id = {s.snapshot_id: s for s in (*expired, *retained)}
    counts = _manifest_counts(lists)
    failed_expired, expired_manifests, _ = counts.get(_EXPIRED, (0, 0, 0))
    failed_retained, _, retained_live = counts.get(_RETAINED, (0, 0, 0))
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
    tasks = _slices(len(expired) + len(retained))
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
    content = _live_frame(spark, eio, deletable, expired_manifests).cache()
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
        result["tasks"] = tasks + _slices(expired_manifests) + _slices(retained_live)
        still = _live_frame(spark, eio, kept.filter(F.col("live")), retained_live).cache()
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
    lists = _manifest_frame(spark, eio, [("all", metadata.snapshots)]).cache()
    cached: list[DataFrame] = [lists]
    try:
        failed, count, _ = _manifest_counts(lists).get("all", (0, 0, 0))
        manifests = lists.filter(F.col("error").isNull()).dropDuplicates(["manifest_path"])
        content = _live_frame(spark, eio, manifests, count).cache()
        cached.append(content)
        by_id = {s.snapshot_id: s for s in metadata.snapshots}
        problems = [
            f"cannot read the manifest list of snapshot {_named(by_id[r['snapshot_id']])}: "
            f"{r['error']}"
            for r in (lists.filter(F.col("error").isNotNull()).collect() if failed else ())
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
        one = T.StructType([T.StructField("path", T.StringType())])
        side = [(p,) for s in metadata.snapshots if (p := s.manifest_list)]
        side += [(p,) for p in extra_references]
        references = (
            content.filter(F.col("file_path").isNotNull())
            .select(F.col("file_path").alias("path"))
            .union(manifests.select(F.col("manifest_path").alias("path")))
            .union(spark.createDataFrame(side, one))
            .distinct()
        )
        keyed_refs = spark.createDataFrame(
            references.rdd.mapPartitions(_keyed_references),
            "key string, scheme string, authority string",
        )
        forms = keyed_refs.groupBy("key").agg(
            F.collect_set(F.struct("scheme", "authority")).alias("forms"),
            F.count("*").alias("n"),
        )
        keyed = spark.createDataFrame(
            _listing(spark, io, root).rdd.mapPartitions(_keyed_listing),
            "path string, modified_ms long, key string, scheme string, authority string",
        )
        joined = keyed.join(forms.select("key", "forms"), "key", "left").select(
            "path", "modified_ms", "forms", F.col("key").startswith(skip_prefix).alias("skip")
        )
        checked = spark.createDataFrame(
            joined.rdd.mapPartitions(_conflict_check),
            "path string, modified_ms long, skip boolean, referenced boolean, conflict string",
        ).cache()
        cached.append(checked)
        unreferenced = checked.filter(~F.col("skip") & ~F.col("referenced"))
        new = F.col("modified_ms") >= cutoff_ms
        stats = checked.agg(
            F.count("*").alias("listed"),
            F.sum((~F.col("skip") & ~F.col("referenced") & new).cast("int")).alias("too_new"),
            F.sum((~F.col("skip") & F.col("conflict").isNotNull()).cast("int")).alias("conflicts"),
        ).collect()[0]
        conflicts: list[str] = []
        if stats["conflicts"]:
            conflicts = sorted(
                r[0]
                for r in checked.filter(~F.col("skip") & F.col("conflict").isNotNull())
                .select("conflict")
                .limit(_SHOWN_PROBLEMS * 20)
                .collect()
            )
        referenced = forms.agg(F.sum("n")).collect()[0][0] or 0
        return {
            "orphans": sorted(r["path"] for r in _stream(unreferenced.filter(~new).select("path"))),
            "listed": int(stats["listed"]),
            "referenced": int(referenced),
            "too_new": int(stats["too_new"] or 0),
            "conflicts": conflicts,
            "tasks": _slices(len(metadata.snapshots)) + _slices(count),
        }
    finally:
        for frame in cached:
            frame.unpersist()


_LIST_CHUNK = 50_000


def _listing(spark: SparkSession, io: FileIO, root: str) -> DataFrame:
    """The files under ``root`` (path, modified ms), listed here once, handed to Spark in
    chunks so that the whole listing is never one Python list."""

    schema = T.StructType(
        [T.StructField("path", T.StringType()), T.StructField("modified_ms", T.LongType())]
    )
    frame: DataFrame | None = None
    chunk: list[tuple[str, int]] = []

    def add(rows: list[tuple[str, int]]) -> None:
        nonlocal frame
        part = spark.createDataFrame(rows, schema)
        frame = part if frame is None else frame.union(part)

    for info in io.list_prefix(root):
        chunk.append((info.path, info.modified_ms))
        if len(chunk) >= _LIST_CHUNK:
            add(chunk)
            chunk = []
    if chunk or frame is None:
        add(chunk)
    assert frame is not None
    return frame


# --- rewrite planning ----------------------------------------------------------------------


class _Table:
    """The table as executors see it: its metadata as JSON text, parsed once per Python
    worker (metadata objects are not pickled: they are immutable by ``__setattr__``)."""

    def __init__(self, metadata: TableMetadata) -> None:
        self.text = json.dumps(metadata.to_dict())
        self.key = hashlib.sha256(self.text.encode()).hexdigest()

    def get(self) -> tuple[TableMetadata, PartitionTypes]:
        found = _TABLES.get(self.key)
        if found is None:
            metadata = TableMetadata.from_json(json.loads(self.text))
            found = _TABLES[self.key] = (metadata, partition_types(metadata))
        return found


_TABLES: dict[str, tuple[TableMetadata, PartitionTypes]] = {}


def _candidates(
    paths: Iterable[str],
    *,
    table: _Table,
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
    item: tuple[str, Iterable[str]], *, table: _Table, rules: CompactionRules
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
    table = _Table(metadata)
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
    candidates = sc.parallelize(data, _slices(len(data))).mapPartitions(
        lambda paths: _candidates(
            paths, table=table, io=eio, snapshot_id=snapshot_id, row_filter=where, rules=rules
        )
    )
    groups = (
        candidates.groupByKey(_slices(len(data)))
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
