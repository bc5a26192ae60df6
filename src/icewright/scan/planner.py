"""Scan planning: the data files a scan reads, with their delete files and residuals.

Spec: "Scan Planning". For the chosen snapshot (see :mod:`icewright.scan.time_travel`):

1. read the manifest list; skip manifests without live files (file counts) and those whose
   partition summaries cannot match the filter, projected inclusively onto the spec each
   manifest was written with (:class:`~icewright.expressions.ManifestEvaluator`);
2. read the remaining data and delete manifests in parallel (the cost of planning a big
   table is reading manifests), dropping DELETED entries, entries whose partition cannot
   match (:class:`~icewright.expressions.PartitionEvaluator`) and files whose column
   metrics prove that no row matches
   (:class:`~icewright.expressions.InclusiveMetricsEvaluator`);
3. index the delete files (:class:`~icewright.scan.delete_index.DeleteFileIndex`) and give
   every data file the delete files that apply to it and the residual filter of its
   partition (:class:`~icewright.expressions.ResidualEvaluator`).

This follows Iceberg Java's ``DataTableScan`` / ``ManifestGroup``. :class:`TableScan` is an
immutable builder; :func:`plan_files` is the one-call form.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from icewright.errors import InvalidMetadata, ValidationError
from icewright.expressions import (
    ALWAYS_TRUE,
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    PartitionEvaluator,
    ResidualEvaluator,
    and_,
    bind,
    parse,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import (
    DataFile,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.manifest import read_manifest, read_manifest_metadata
from icewright.manifest.manifest_list import read_manifest_list
from icewright.scan.delete_index import DeleteFileIndex
from icewright.scan.time_travel import ScanTarget, resolve_scan_target
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import NestedField, StructType

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "FileScanTask",
    "ScanMetrics",
    "ScanPlan",
    "TableScan",
    "plan_files",
    "select_columns",
]

DEFAULT_MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)
"""Threads that read manifests at once unless a scan says otherwise (I/O bound on S3)."""


class _TableLike(Protocol):
    """What a scan needs of a table handle (``icewright.catalog.Table`` has it)."""

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def io(self) -> FileIO: ...


Source = _TableLike | tuple[TableMetadata, FileIO]


@dataclass(frozen=True, slots=True)
class FileScanTask:
    """One data file to read, with the delete files to apply and the filter left to apply.

    ``residual`` is bound to the scan schema: :data:`~icewright.expressions.ALWAYS_TRUE`
    when every row of the file's partition matches the filter. ``delete_files`` follow the
    spec's scope rules (see :mod:`icewright.scan.delete_index`).
    """

    data_file: DataFile
    delete_files: tuple[DataFile, ...]
    residual: Expression
    spec_id: int
    data_sequence_number: int
    file_sequence_number: int | None = None
    snapshot_id: int | None = None

    @property
    def file_path(self) -> str:
        """The data file's location."""
        return self.data_file.file_path

    @property
    def record_count(self) -> int:
        """Rows in the data file (before deletes)."""
        return self.data_file.record_count

    @property
    def partition(self) -> tuple[Any, ...]:
        """The data file's partition tuple (of spec ``spec_id``)."""
        return self.data_file.partition


@dataclass(frozen=True, slots=True)
class ScanMetrics:
    """What planning read and skipped (names as in Iceberg Java's ``ScanMetrics``).

    ``scanned_*_manifests`` counts the manifests that were opened and read.
    """

    total_data_manifests: int = 0
    scanned_data_manifests: int = 0
    skipped_data_manifests: int = 0
    total_delete_manifests: int = 0
    scanned_delete_manifests: int = 0
    skipped_delete_manifests: int = 0
    result_data_files: int = 0
    skipped_data_files: int = 0
    indexed_delete_files: int = 0
    skipped_delete_files: int = 0
    result_delete_files: int = 0


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """The outcome of planning: the snapshot read, the schema and filter used, the tasks."""

    snapshot: Snapshot | None
    schema: Schema
    projected_schema: Schema
    filter: Expression
    tasks: tuple[FileScanTask, ...]
    metrics: ScanMetrics

    @property
    def data_files(self) -> tuple[DataFile, ...]:
        """The data files of the tasks, in task order."""
        return tuple(t.data_file for t in self.tasks)

    @property
    def delete_files(self) -> tuple[DataFile, ...]:
        """Every delete file some task applies, each once, in first-use order."""
        seen: dict[str, DataFile] = {}
        for t in self.tasks:
            for d in t.delete_files:
                seen.setdefault(d.file_path, d)
        return tuple(seen.values())


# --- the builder ---------------------------------------------------------------------------


def _source(source: Source) -> tuple[TableMetadata, FileIO]:
    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[0], TableMetadata):
            raise ValidationError(
                "a scan source is a Table or a (TableMetadata, FileIO) pair, "
                f"got a tuple of {len(source)} items"
            )
        return source[0], source[1]
    metadata = getattr(source, "metadata", None)
    io = getattr(source, "io", None)
    if not isinstance(metadata, TableMetadata) or io is None:
        raise ValidationError(
            f"a scan source is a Table or a (TableMetadata, FileIO) pair, got {source!r}"
        )
    return metadata, io


def _as_expression(value: Expression | str | None) -> Expression:
    if value is None:
        return ALWAYS_TRUE
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, Expression):
        return value
    raise ValidationError(
        f"a row filter is an Expression or a SQL-like string such as \"region = 'eu'\", "
        f"got {type(value).__name__} {value!r}"
    )


@dataclass(frozen=True, eq=False)
class TableScan:
    """An immutable scan description; every method returns a changed copy.

    >>> # TableScan.of(table).use_ref("audit").filter("region = 'eu'").plan_files()

    At most one of ``snapshot_id``, ``ref`` and ``as_of_ms`` selects the snapshot (default:
    the current one). The row filter is bound to the scan schema when the scan is built,
    so an unknown column or a bad literal fails at once with a :class:`ValidationError`.
    """

    metadata: TableMetadata
    io: FileIO = field(repr=False)
    snapshot_id: int | None = None
    ref: str | None = None
    as_of_ms: int | dt.datetime | None = None
    row_filter: Expression = ALWAYS_TRUE
    case_sensitive: bool = True
    columns: tuple[str, ...] | None = None
    max_workers: int | None = None
    _target: ScanTarget = field(init=False, repr=False)
    _bound: Expression = field(init=False, repr=False)
    _projection: Schema = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.case_sensitive, bool):
            raise ValidationError(f"case_sensitive must be a bool, got {self.case_sensitive!r}")
        if self.max_workers is not None and (
            isinstance(self.max_workers, bool)
            or not isinstance(self.max_workers, int)
            or self.max_workers < 1
        ):
            raise ValidationError(
                f"max_workers must be a positive integer, got {self.max_workers!r}"
            )
        object.__setattr__(self, "row_filter", _as_expression(self.row_filter))
        if self.columns is not None:
            if isinstance(self.columns, str):
                object.__setattr__(self, "columns", (self.columns,))
            else:
                object.__setattr__(self, "columns", tuple(self.columns))
        target = resolve_scan_target(
            self.metadata, snapshot_id=self.snapshot_id, ref=self.ref, as_of_ms=self.as_of_ms
        )
        object.__setattr__(self, "_target", target)
        object.__setattr__(
            self, "_bound", bind(self.row_filter, target.schema, self.case_sensitive)
        )
        object.__setattr__(
            self, "_projection", select_columns(target.schema, self.columns, self.case_sensitive)
        )

    @classmethod
    def of(cls, source: Source, **options: Any) -> TableScan:
        """A scan of ``source`` (a Table, or a (TableMetadata, FileIO) pair)."""
        metadata, io = _source(source)
        return cls(metadata, io, **options)

    def _with(self, **changes: Any) -> TableScan:
        return dataclasses.replace(self, **changes)

    def _selector_is_free(self, name: str) -> None:
        selectors = (("snapshot_id", self.snapshot_id), ("ref", self.ref), ("as_of", self.as_of_ms))
        taken = [n for n, v in selectors if v is not None]
        if taken:
            raise ValidationError(
                f"cannot {name}: this scan already reads by {taken[0]}; a scan reads one snapshot"
            )

    def use_snapshot(self, snapshot_id: int) -> TableScan:
        """Read snapshot ``snapshot_id`` (with the schema it was written with)."""
        self._selector_is_free("use_snapshot")
        return self._with(snapshot_id=snapshot_id)

    def use_ref(self, name: str) -> TableScan:
        """Read the snapshot of branch or tag ``name``."""
        self._selector_is_free("use_ref")
        return self._with(ref=name)

    def as_of(self, timestamp_ms: int | dt.datetime) -> TableScan:
        """Read the snapshot that was current at ``timestamp_ms`` (or an aware datetime)."""
        self._selector_is_free("as_of")
        return self._with(as_of_ms=timestamp_ms)

    def filter(self, expr: Expression | str) -> TableScan:
        """Also require ``expr`` (ANDed with the filter so far)."""
        return self._with(row_filter=and_(self.row_filter, _as_expression(expr)))

    def select(self, *columns: str) -> TableScan:
        """Read only these columns (dotted names for nested fields); ``"*"`` for all."""
        return self._with(columns=None if "*" in columns else columns)

    def with_case_sensitive(self, case_sensitive: bool = True) -> TableScan:
        """Match column names with or without case."""
        return self._with(case_sensitive=case_sensitive)

    def with_max_workers(self, max_workers: int) -> TableScan:
        """Read at most ``max_workers`` manifests at once."""
        return self._with(max_workers=max_workers)

    def snapshot(self) -> Snapshot | None:
        """The snapshot this scan reads (None for a table without snapshots)."""
        return self._target.snapshot

    def schema(self) -> Schema:
        """The schema the filter is bound to: the snapshot's for time travel."""
        return self._target.schema

    def projection(self) -> Schema:
        """The selected columns of :meth:`schema`."""
        return self._projection

    def bound_filter(self) -> Expression:
        """The row filter bound to :meth:`schema`."""
        return self._bound

    def plan(self) -> ScanPlan:
        """Plan the scan: tasks and metrics."""
        return _Planner(self).plan()

    def plan_files(self) -> list[FileScanTask]:
        """The scan's tasks: one per data file that may hold matching rows."""
        return list(self.plan().tasks)


def plan_files(
    source: Source,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of_ms: int | dt.datetime | None = None,
    filter: Expression | str | None = None,
    case_sensitive: bool = True,
    columns: Sequence[str] | None = None,
    max_workers: int | None = None,
) -> list[FileScanTask]:
    """Plan a scan of ``source`` in one call; see :class:`TableScan`."""
    return TableScan.of(
        source,
        snapshot_id=snapshot_id,
        ref=ref,
        as_of_ms=as_of_ms,
        row_filter=_as_expression(filter),
        case_sensitive=case_sensitive,
        columns=None if columns is None else tuple(columns),
        max_workers=max_workers,
    ).plan_files()


# --- column selection ----------------------------------------------------------------------


def select_columns(
    schema: Schema, columns: Iterable[str] | None, case_sensitive: bool = True
) -> Schema:
    """``schema`` cut to ``columns`` and the structs that hold them (all columns with None).

    A selected struct, list or map keeps everything inside it; a list or map that holds a
    selected field is kept whole. Unknown names raise :class:`ValidationError`.
    """
    if columns is None:
        return schema
    wanted = {schema.find_field(name, case_sensitive).field_id for name in columns}

    def prune(fields: tuple[NestedField, ...]) -> list[NestedField]:
        out = []
        for f in fields:
            if f.field_id in wanted:
                out.append(f)
            elif isinstance(f.field_type, StructType):
                inner = prune(f.field_type.fields)
                if inner:
                    out.append(dataclasses.replace(f, field_type=StructType(*inner)))
            elif _holds_any(f, wanted, schema):
                out.append(f)
        return out

    kept = prune(schema.fields)
    return Schema(*kept, schema_id=schema.schema_id)


def _holds_any(f: NestedField, wanted: set[int], schema: Schema) -> bool:
    parents = {fid: schema.parent_id(fid) for fid in wanted}
    for fid in wanted:
        parent = parents[fid]
        while parent is not None:
            if parent == f.field_id:
                return True
            parent = schema.parent_id(parent)
    return False


# --- planning ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SpecFilters:
    """The evaluators of one partition spec (built once, shared by threads)."""

    manifest: ManifestEvaluator
    partition: PartitionEvaluator
    residual: ResidualEvaluator


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


class _Planner:
    """One planning run of a :class:`TableScan`."""

    def __init__(self, scan: TableScan) -> None:
        self.scan = scan
        self.metadata = scan.metadata
        self.io = scan.io
        self.schema = scan.schema()
        self.expr = scan.bound_filter()
        self.filtering = self.expr is not ALWAYS_TRUE
        self.specs = self.metadata.specs_by_id()
        self._spec_filters: dict[int, _SpecFilters] = {}
        self._lock = threading.Lock()
        self.metrics: InclusiveMetricsEvaluator | None = (
            InclusiveMetricsEvaluator(self.schema, self.expr, scan.case_sensitive)
            if self.filtering
            else None
        )

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
                cs = self.scan.case_sensitive
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

    def read_inline(self, path: str, snapshot: Snapshot) -> _ManifestResult:
        data, manifest = self.inline_manifest(path, snapshot)
        self.spec(manifest.partition_spec_id, path)
        return self.read(manifest, data)

    def read(self, manifest: ManifestFile, data: bytes | None = None) -> _ManifestResult:
        if data is None:
            data = self.io.read(manifest.manifest_path)
        entries = read_manifest(data, manifest)
        is_delete = manifest.content is ManifestContent.DELETES
        out: list[ManifestEntry] = []
        skipped = 0
        filters = (
            self.filters(manifest.partition_spec_id, manifest.manifest_path)
            if self.filtering
            else None
        )
        for e in entries:
            if not e.is_live:
                continue
            f = e.data_file
            if not is_delete and f.content is not FileContent.DATA:
                raise InvalidMetadata(
                    f"data manifest {manifest.manifest_path} lists delete file {f.file_path}"
                )
            if filters is not None:
                if not filters.partition.eval(f.partition):
                    skipped += 1
                    continue
                assert self.metrics is not None
                checked = (
                    _restrict_to_equality_columns(f)
                    if f.content is FileContent.EQUALITY_DELETES
                    else f
                )
                if not self.metrics.eval(checked):
                    skipped += 1
                    continue
            out.append(e)
        return _ManifestResult(out, skipped)

    def read_all(self, jobs: list[Callable[[], _ManifestResult]]) -> list[_ManifestResult]:
        if len(jobs) <= 1:
            return [job() for job in jobs]
        workers = min(len(jobs), self.scan.max_workers or DEFAULT_MAX_WORKERS)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="icewright-scan") as pool:
            return list(pool.map(lambda job: job(), jobs))

    # --- step 3: tasks -------------------------------------------------------------------

    def plan(self) -> ScanPlan:
        snapshot = self.scan.snapshot()
        if snapshot is None:
            return self._result(None, (), ScanMetrics())
        listed = self.manifests(snapshot)
        jobs: list[Callable[[], _ManifestResult]] = []
        kinds: list[ManifestContent] = []
        totals = {ManifestContent.DATA: 0, ManifestContent.DELETES: 0}
        scanned = {ManifestContent.DATA: 0, ManifestContent.DELETES: 0}
        for m in listed:
            if isinstance(m, str):
                # inline v1 manifests: no counts or summaries to prune with
                totals[ManifestContent.DATA] += 1
                scanned[ManifestContent.DATA] += 1
                kinds.append(ManifestContent.DATA)
                jobs.append(partial(self.read_inline, m, snapshot))
                continue
            totals[m.content] += 1
            if self.keep_manifest(m):
                scanned[m.content] += 1
                kinds.append(m.content)
                jobs.append(partial(self.read, m))
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
        tasks = tuple(self.task(e, index) for e in data_entries)
        used = {d.file_path for t in tasks for d in t.delete_files}
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

    def task(self, entry: ManifestEntry, index: DeleteFileIndex) -> FileScanTask:
        f = entry.data_file
        seq = entry.sequence_number
        if seq is None:
            raise InvalidMetadata(f"data file {f.file_path} has no data sequence number")
        residual = (
            self.filters(f.spec_id, f.file_path).residual.residual_for(f.partition)
            if self.filtering
            else ALWAYS_TRUE
        )
        return FileScanTask(
            data_file=f,
            delete_files=index.for_data_file(f, seq),
            residual=residual,
            spec_id=f.spec_id,
            data_sequence_number=seq,
            file_sequence_number=entry.file_sequence_number,
            snapshot_id=entry.snapshot_id,
        )

    def _result(
        self, snapshot: Snapshot | None, tasks: tuple[FileScanTask, ...], metrics: ScanMetrics
    ) -> ScanPlan:
        return ScanPlan(
            snapshot=snapshot,
            schema=self.schema,
            projected_schema=self.scan.projection(),
            filter=self.expr,
            tasks=tasks,
            metrics=metrics,
        )
