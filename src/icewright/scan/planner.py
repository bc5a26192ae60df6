"""Scan planning: the data files a snapshot's scan reads, with delete files and residuals.

Spec: "Scan Planning"; Iceberg Java's ``ManifestGroup`` and ``DeleteFileIndex``. For one
snapshot, :func:`plan_snapshot`:

1. reads the manifest list and skips manifests without live files (file counts) and those
   whose partition summaries cannot match the filter, projected inclusively onto the spec
   each manifest was written with (:class:`~icewright.expressions.ManifestEvaluator`);
2. reads the remaining data and delete manifests in parallel (reading manifests is the
   cost of planning a big table), dropping DELETED entries, entries whose partition cannot
   match (:class:`~icewright.expressions.PartitionEvaluator`) and files whose column
   metrics prove that no row matches
   (:class:`~icewright.expressions.InclusiveMetricsEvaluator`);
3. indexes the delete files (:class:`~icewright.scan.delete_index.DeleteFileIndex`) and
   gives every data file the delete files that apply to it and the residual filter of its
   partition (:class:`~icewright.expressions.ResidualEvaluator`).

Most callers use :class:`icewright.scan.TableScan`, which also chooses the snapshot.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any

from icewright.collector import gc_paused
from icewright.errors import InvalidMetadata, ValidationError
from icewright.expressions import (
    ALWAYS_TRUE,
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    PartitionEvaluator,
    ResidualEvaluator,
    bind,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import (
    DataFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.entry_decoder import METRICS_MAPS
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import (
    OpenedManifest,
    open_manifest,
    read_manifest,
    read_manifest_metadata,
)
from icewright.scan.delete_index import DeleteFileIndex
from icewright.scan.task_builder import live_entries, scan_tasks
from icewright.scan.tasks import FileScanTask, ScanMetrics, ScanPlan
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "ManifestJob",
    "ManifestPlanner",
    "iter_snapshot_tasks",
    "manifest_planner",
    "plan_snapshot",
]

FILTER_METRICS = tuple(m for m in METRICS_MAPS if m != "column_sizes")
"""The metrics maps a row filter's evaluation reads (sizes are never compared)."""

DEFAULT_MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)
"""Threads that read manifests at once unless a scan says otherwise (I/O bound on S3)."""


def plan_snapshot(
    metadata: TableMetadata,
    io: FileIO,
    snapshot: Snapshot | None,
    *,
    schema: Schema | None = None,
    row_filter: Expression = ALWAYS_TRUE,
    case_sensitive: bool = True,
    projected_schema: Schema | None = None,
    max_workers: int | None = None,
    column_stats: bool = True,
) -> ScanPlan:
    """Plan a scan of ``snapshot`` (None: an empty plan) of the table ``metadata`` describes.

    ``row_filter`` (bound or not) is bound to ``schema`` (default: the current schema).
    ``max_workers`` caps the threads reading manifests (default
    :data:`DEFAULT_MAX_WORKERS`). With ``column_stats=False`` only the metrics maps the
    filter reads are decoded, so the tasks' data files may lack the others.
    """
    return manifest_planner(
        metadata,
        io,
        snapshot,
        schema=schema,
        row_filter=row_filter,
        case_sensitive=case_sensitive,
        projected_schema=projected_schema,
        max_workers=max_workers,
        column_stats=column_stats,
    ).plan()


def iter_snapshot_tasks(
    metadata: TableMetadata, io: FileIO, snapshot: Snapshot | None, **options: Any
) -> Iterator[FileScanTask]:
    """The tasks :func:`plan_snapshot` (same options) would plan, one data manifest at a
    time: for tables too big to hold every task at once. No metrics are gathered.

    ``data_manifests`` (a set of manifest paths) limits the plan to those data manifests'
    files, for one Spark task's share of a distributed plan."""
    return manifest_planner(metadata, io, snapshot, **options).iter_tasks()


def manifest_planner(
    metadata: TableMetadata,
    io: FileIO,
    snapshot: Snapshot | None,
    *,
    schema: Schema | None = None,
    row_filter: Expression = ALWAYS_TRUE,
    case_sensitive: bool = True,
    projected_schema: Schema | None = None,
    max_workers: int | None = None,
    column_stats: bool = True,
    data_manifests: frozenset[str] | None = None,
) -> ManifestPlanner:
    """A planner of ``snapshot`` (None: one that only reads the manifests it is given)
    with the options of :func:`plan_snapshot`."""
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise ValidationError(f"max_workers must be a positive integer, got {max_workers!r}")
    scan_schema = metadata.schema() if schema is None else schema
    return ManifestPlanner(
        metadata=metadata,
        io=io,
        snapshot=snapshot,
        schema=scan_schema,
        expr=bind(row_filter, scan_schema, case_sensitive),
        case_sensitive=case_sensitive,
        projected_schema=scan_schema if projected_schema is None else projected_schema,
        max_workers=max_workers or DEFAULT_MAX_WORKERS,
        column_stats=column_stats,
        data_manifests=data_manifests,
    )


@dataclass(frozen=True, slots=True)
class _SpecFilters:
    """The evaluators of one partition spec (built once, shared by threads)."""

    manifest: ManifestEvaluator
    partition: PartitionEvaluator
    residual: ResidualEvaluator


@dataclass(frozen=True, slots=True)
class ManifestJob:
    """Reading one manifest: ``fetch`` is the I/O and the decompression (the manifest and
    its opened file), ``decode`` turns them into the entries kept."""

    fetch: Callable[[], tuple[ManifestFile, OpenedManifest]]
    decode: Callable[[ManifestFile, OpenedManifest], _ManifestResult]


@dataclass(slots=True)
class _ManifestResult:
    entries: list[ManifestEntry]
    skipped: int


def _restrict_to_equality_columns(f: DataFile) -> DataFile:
    # An equality delete removes every row whose equality columns match, whatever its
    # other columns hold; the values stored for other columns describe only one such row,
    # so only the equality columns' metrics may prune it against the row filter.
    ids = set(f.equality_ids or ())

    def keep(m: Any) -> Any:
        return None if m is None else {k: v for k, v in m.items() if k in ids}

    return f.replace(
        value_counts=keep(f.value_counts),
        null_value_counts=keep(f.null_value_counts),
        nan_value_counts=keep(f.nan_value_counts),
        lower_bounds=keep(f.lower_bounds),
        upper_bounds=keep(f.upper_bounds),
    )


class ManifestPlanner:
    """One planning run: the manifests and entries of a snapshot that a filter may match,
    with their delete files. :func:`plan_snapshot` plans a whole snapshot with it;
    :mod:`icewright.scan.incremental` plans the manifests a range of snapshots added."""

    def __init__(
        self,
        *,
        metadata: TableMetadata,
        io: FileIO,
        snapshot: Snapshot | None,
        schema: Schema,
        expr: Expression,
        case_sensitive: bool,
        projected_schema: Schema,
        max_workers: int,
        column_stats: bool,
        data_manifests: frozenset[str] | None = None,
    ) -> None:
        self.metadata = metadata
        self.io = io
        self.snapshot = snapshot
        self.schema = schema
        self.expr = expr
        self.case_sensitive = case_sensitive
        self.projected_schema = projected_schema
        self.max_workers = max_workers
        self.filtering = self.expr is not ALWAYS_TRUE
        # Only these data manifests are read (a Spark task's share of a big table's plan;
        # every delete manifest is still read, for the delete index).
        self.data_manifests = data_manifests
        self.specs = self.metadata.specs_by_id()
        self._spec_filters: dict[int, _SpecFilters] = {}
        self._lock = threading.Lock()
        # The metrics maps data manifests decode: all, or those the filter reads (delete
        # manifests, and data manifests when there are deletes, always decode all: the
        # delete index compares bounds).
        self.data_metrics: frozenset[str] = frozenset(
            METRICS_MAPS if column_stats else (FILTER_METRICS if self.filtering else ())
        )
        self.metrics: InclusiveMetricsEvaluator | None = (
            InclusiveMetricsEvaluator(self.schema, self.expr, case_sensitive)
            if self.filtering
            else None
        )
        self.bound_limits = () if self.metrics is None else self.metrics.bound_limits()

    def spec(self, spec_id: int, where: str) -> PartitionSpec:
        spec = self.specs.get(spec_id)
        if spec is None:
            raise InvalidMetadata(
                f"{where} uses partition spec {spec_id}, which the table does not have "
                f"(known: {sorted(self.specs)})"
            )
        return spec

    def filters(self, spec_id: int, where: str) -> _SpecFilters:
        with self._lock:
            found = self._spec_filters.get(spec_id)
            if found is None:
                spec = self.spec(spec_id, where)
                cs = self.case_sensitive
                found = _SpecFilters(
                    ManifestEvaluator(spec, self.schema, self.expr, cs),
                    PartitionEvaluator(spec, self.schema, self.expr, cs),
                    ResidualEvaluator(spec, self.schema, self.expr, cs),
                )
                self._spec_filters[spec_id] = found
            return found

    # --- step 1: manifests ---------------------------------------------------------------

    def manifests(self, snapshot: Snapshot) -> list[ManifestFile] | list[str]:
        if snapshot.manifest_list is not None:
            data = self.io.read(snapshot.manifest_list)
            return read_manifest_list(data, snapshot.manifest_list)
        return list(snapshot.manifests or ())

    def keep_manifest(self, m: ManifestFile) -> bool:
        # Java's DataTableScan ignores DELETED entries, so a manifest of only those is skipped
        if not (m.has_added_files() or m.has_existing_files()):
            return False
        if not self.filtering:
            self.spec(m.partition_spec_id, m.manifest_path)
            return True
        return self.filters(m.partition_spec_id, m.manifest_path).manifest.eval(m)

    # --- step 2: entries -----------------------------------------------------------------

    def inline_manifest(self, path: str, snapshot: Snapshot) -> tuple[bytes, ManifestFile]:
        # An early v1 snapshot lists manifest paths inline; the header gives the spec id.
        data = self.io.read(path)
        meta = read_manifest_metadata(data, path)
        return data, ManifestFile(
            manifest_path=path,
            manifest_length=len(data),
            partition_spec_id=meta.spec.spec_id,
            added_snapshot_id=snapshot.snapshot_id,
            content=ManifestContent.DATA,
            sequence_number=0,
            min_sequence_number=0,
        )

    def fetch(
        self, manifest: ManifestFile, *, all_metrics: bool = False
    ) -> tuple[ManifestFile, OpenedManifest]:
        # opened (and its entries indexed) here, in a fetch thread, for read() in another
        path = manifest.manifest_path
        metrics = self.metrics_read(manifest, all_metrics=all_metrics)
        return manifest, open_manifest(self.io.read(path), path, manifest=manifest, metrics=metrics)

    def fetch_inline(self, path: str, snapshot: Snapshot) -> tuple[ManifestFile, OpenedManifest]:
        data, manifest = self.inline_manifest(path, snapshot)
        self.spec(manifest.partition_spec_id, path)
        return manifest, open_manifest(data, path, manifest=manifest, metrics=self.data_metrics)

    def metrics_read(self, manifest: ManifestFile, *, all_metrics: bool) -> Collection[str]:
        """The metrics maps decoded from ``manifest``'s entries."""
        if manifest.content is ManifestContent.DELETES or all_metrics:
            return METRICS_MAPS
        return self.data_metrics

    def read(
        self, manifest: ManifestFile, opened: OpenedManifest, *, all_metrics: bool = False
    ) -> _ManifestResult:
        is_delete = manifest.content is ManifestContent.DELETES
        metrics = self.metrics_read(manifest, all_metrics=all_metrics)
        filters = (
            self.filters(manifest.partition_spec_id, manifest.manifest_path)
            if self.filtering
            else None
        )
        refused = [0]  # live entries the reader left out: their partition or metrics cannot match

        def accept(partition: tuple[Any, ...]) -> bool:
            assert filters is not None
            if filters.partition.eval(partition):
                return True
            refused[0] += 1
            return False

        def keep(f: DataFile) -> bool:
            assert self.metrics is not None
            checked = (
                _restrict_to_equality_columns(f) if f.content is FileContent.EQUALITY_DELETES else f
            )
            if self.metrics.eval(checked):
                return True
            refused[0] += 1
            return False

        # Files refused by their bounds' limits are never built, so not counted by keep:
        # with limits, the skipped files are the live ones the manifest list counts less
        # those kept. Only for data files: an equality delete is judged by its equality
        # columns alone.
        live = (
            None
            if manifest.added_files_count is None or manifest.existing_files_count is None
            else manifest.added_files_count + manifest.existing_files_count
        )
        use_limits = not is_delete and filters is not None and live is not None
        limits = self.bound_limits if use_limits else ()
        entries = read_manifest(
            opened,
            manifest,
            metrics=metrics,
            # a filter on columns the spec does not partition by refuses no partition
            partition_filter=None
            if filters is None or filters.partition.partition_expr is ALWAYS_TRUE
            else accept,
            file_filter=None if filters is None else keep,
            bound_limits=limits,
        )
        out = live_entries(entries, manifest.manifest_path, data_only=not is_delete)
        if limits:
            assert live is not None
            return _ManifestResult(out, max(0, live - len(out)))
        return _ManifestResult(out, refused[0])

    def read_all(self, jobs: list[ManifestJob]) -> list[_ManifestResult]:
        return list(self.results(jobs))

    def results(self, jobs: list[ManifestJob]) -> Iterator[_ManifestResult]:
        """Each job's result, in order. Threads fetch, decompress and index manifests (reads
        from an object store overlap; zlib and the compiled decoder's walk over the entries
        run without the GIL, beside the decoding); they are decoded here one after another,
        since building their objects holds the GIL and threads would only take turns at it.
        At most two fetches per thread are ahead of the decoding, so memory holds a few
        manifests' bytes."""
        if len(jobs) <= 1:
            for job in jobs:
                with gc_paused():
                    result = job.decode(*job.fetch())
                yield result
            return
        workers = min(len(jobs), self.max_workers)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="icewright-scan") as pool:
            ahead = iter(jobs)
            pending = deque((job, pool.submit(job.fetch)) for job in islice(ahead, 2 * workers))
            while pending:
                job, fetched = pending.popleft()
                following = next(ahead, None)
                if following is not None:
                    pending.append((following, pool.submit(following.fetch)))
                with gc_paused():  # within plan()'s pause, or one per manifest streamed
                    result = job.decode(*fetched.result())
                yield result

    # --- step 3: tasks -------------------------------------------------------------------

    def jobs(
        self, snapshot: Snapshot
    ) -> tuple[
        list[ManifestJob],
        list[ManifestContent],
        dict[ManifestContent, int],
        dict[ManifestContent, int],
    ]:
        """A reading job per manifest not pruned, its content, and the manifest counts."""
        listed = self.manifests(snapshot)
        # the delete index compares data files' bounds with delete files'
        all_metrics = any(
            not isinstance(m, str) and m.content is ManifestContent.DELETES for m in listed
        )
        jobs: list[ManifestJob] = []
        kinds: list[ManifestContent] = []
        totals = {ManifestContent.DATA: 0, ManifestContent.DELETES: 0}
        scanned = {ManifestContent.DATA: 0, ManifestContent.DELETES: 0}
        for m in listed:
            if self.data_manifests is not None and not self._wanted(m):
                continue
            if isinstance(m, str):
                # inline v1 manifests: no counts or summaries to prune with
                totals[ManifestContent.DATA] += 1
                scanned[ManifestContent.DATA] += 1
                kinds.append(ManifestContent.DATA)
                jobs.append(ManifestJob(partial(self.fetch_inline, m, snapshot), self.read))
                continue
            totals[m.content] += 1
            if self.keep_manifest(m):
                scanned[m.content] += 1
                kinds.append(m.content)
                read = partial(self.read, all_metrics=all_metrics)
                jobs.append(ManifestJob(partial(self.fetch, m, all_metrics=all_metrics), read))
        return jobs, kinds, totals, scanned

    def _wanted(self, m: ManifestFile | str) -> bool:
        """Whether ``m`` is read under :attr:`data_manifests`: delete manifests always."""
        assert self.data_manifests is not None
        if isinstance(m, str):
            return m in self.data_manifests
        return m.content is ManifestContent.DELETES or m.manifest_path in self.data_manifests

    def iter_tasks(self) -> Iterator[FileScanTask]:
        """The tasks, a data manifest at a time: delete manifests are read (and indexed)
        first, then each data manifest in turn, so memory holds one manifest's entries."""
        if self.snapshot is None:
            return
        jobs, kinds, _, _ = self.jobs(self.snapshot)
        delete_jobs = [j for j, k in zip(jobs, kinds, strict=True) if k is ManifestContent.DELETES]
        deletes = [e for r in self.read_all(delete_jobs) for e in r.entries]
        index = DeleteFileIndex(deletes, self.specs, self.metadata.schemas)
        data_jobs = [j for j, k in zip(jobs, kinds, strict=True) if k is ManifestContent.DATA]
        for result in self.results(data_jobs):
            with gc_paused():
                tasks = self.tasks(result.entries, index)
            yield from tasks

    def plan(self) -> ScanPlan:
        snapshot = self.snapshot
        if snapshot is None:
            return self._result(None, (), ScanMetrics())
        with gc_paused():
            return self._plan(snapshot)

    def _plan(self, snapshot: Snapshot) -> ScanPlan:
        jobs, kinds, totals, scanned = self.jobs(snapshot)
        results = self.read_all(jobs)

        data_entries: list[ManifestEntry] = []
        delete_entries: list[ManifestEntry] = []
        skipped_data = skipped_deletes = 0
        for kind, result in zip(kinds, results, strict=True):
            if kind is ManifestContent.DATA:
                data_entries += result.entries
                skipped_data += result.skipped
            else:
                delete_entries += result.entries
                skipped_deletes += result.skipped

        index = DeleteFileIndex(delete_entries, self.specs, self.metadata.schemas)
        tasks = tuple(self.tasks(data_entries, index))
        used = {d.file_path for t in tasks for d in t.delete_files} if delete_entries else ()
        metrics = ScanMetrics(
            total_data_manifests=totals[ManifestContent.DATA],
            scanned_data_manifests=scanned[ManifestContent.DATA],
            skipped_data_manifests=totals[ManifestContent.DATA] - scanned[ManifestContent.DATA],
            total_delete_manifests=totals[ManifestContent.DELETES],
            scanned_delete_manifests=scanned[ManifestContent.DELETES],
            skipped_delete_manifests=totals[ManifestContent.DELETES]
            - scanned[ManifestContent.DELETES],
            result_data_files=len(tasks),
            skipped_data_files=skipped_data,
            indexed_delete_files=len(delete_entries),
            skipped_delete_files=skipped_deletes,
            result_delete_files=len(used),
        )
        return self._result(snapshot, tasks, metrics)

    def tasks(self, entries: list[ManifestEntry], index: DeleteFileIndex) -> list[FileScanTask]:
        """A task for each of the live data ``entries``: delete files from ``index``, the
        residual of each file's partition."""
        return scan_tasks(
            entries,
            residual=ALWAYS_TRUE,
            residual_of=self.residual_of if self.filtering else None,
            deletes_of=index.for_data_file if index.referenced_delete_files() else None,
        )

    def residual_of(self, f: DataFile) -> Expression:
        return self.filters(f.spec_id, f.file_path).residual.residual_for(f.partition)

    def _result(
        self, snapshot: Snapshot | None, tasks: tuple[FileScanTask, ...], metrics: ScanMetrics
    ) -> ScanPlan:
        return ScanPlan(
            snapshot=snapshot,
            schema=self.schema,
            projected_schema=self.projected_schema,
            filter=self.expr,
            tasks=tasks,
            metrics=metrics,
        )
