"""The in-process runner: :class:`LocalRunner` runs an action's Spark jobs on the
in-process SparkSession (:func:`icewright.spark.session.local_session`: an active session
is reused). It implements :class:`~icewright.runners.base.Runner`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from icewright.errors import IcewrightError, ValidationError
from icewright.runners.base import Runner, TableResolver
from icewright.runners.store import (
    JobStore,
    fingerprint,
    row_change_fingerprint,
    row_change_results,
    run_keyed,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icewright.commit.orphans import FoundOrphans, OrphanSearch
    from icewright.commit.reachability import UnreachableFiles
    from icewright.commit.rewrite_manifests import ManifestRewrite
    from icewright.expressions import Expression
    from icewright.io.base import FileIO
    from icewright.manifest.data_file import ManifestFile
    from icewright.runners.maintenance import RewriteGroup
    from icewright.scan.compaction import CompactionRules
    from icewright.scan.tasks import FileScanTask
    from icewright.spark.row_changes import MergeSpec, RowChanges, WriteMode
    from icewright.spark.write import Source, WriteResult
    from icewright.spec.schema import Schema
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["LocalRunner", "default_runner"]


def default_runner() -> Runner:
    """The runner used when an action is given none: a :class:`LocalRunner`."""
    return LocalRunner()


class LocalRunner:
    """Runs the jobs on an in-process SparkSession.

    ``spark`` defaults to :func:`icewright.spark.session.local_session` (the active
    session, or a new embedded one), obtained when the first job runs. Stored job
    results (``job_key``) go under ``staging`` (default: the table's
    ``.icewright/jobs``). Each job runs in its own Spark job group, which
    :meth:`cancel` cancels. ``conf`` is set on the session while each job runs (runtime
    settings such as OpenLineage's ``spark.openlineage.parent*``), then restored.
    """

    def __init__(
        self,
        spark: SparkSession | None = None,
        *,
        staging: str | None = None,
        conf: Mapping[str, str] | None = None,
    ) -> None:
        self._spark = spark
        self._staging = staging
        self._conf = dict(conf or {})
        self._groups: set[str] = set()
        self._cancelled = False
        self._lock = threading.Lock()

    @property
    def spark(self) -> SparkSession:
        """The session the jobs run on."""
        if self._spark is None:
            from icewright.spark.session import local_session

            self._spark = local_session()
        return self._spark

    def spark_if_started(self) -> SparkSession | None:
        """The session if a job has started it yet, else None (for progress readers,
        which must not start a JVM themselves)."""
        return self._spark

    def write(
        self,
        metadata: TableMetadata,
        io: FileIO,
        source: Source,
        *,
        allow_schema_evolution: bool = False,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> WriteResult:
        """See :meth:`Runner.write`."""
        from icewright.spark.job_spec import partition_types
        from icewright.spark.write import write_files

        def run() -> WriteResult:
            with self._job_group("write"):
                return write_files(
                    self.spark,
                    source,
                    schema=metadata.schema(),
                    spec=metadata.spec(),
                    sort_order=metadata.sort_order(),
                    properties={**metadata.properties, **(properties or {})},
                    location=metadata.location,
                    io=io,
                    allow_schema_evolution=allow_schema_evolution,
                    last_column_id=metadata.last_column_id,
                )

        if job_key is None:
            return run()
        mark = fingerprint(
            metadata,
            "write",
            source=source,
            allow_schema_evolution=allow_schema_evolution,
            properties=properties,
        )
        return run_keyed(
            self.job_store(metadata, io), job_key, mark, run, partition_types(metadata)
        )

    def rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        keep: Expression | None = None,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> WriteResult:
        """See :meth:`Runner.rewrite`."""
        from icewright.spark.job_spec import partition_types

        def run() -> WriteResult:
            frame = read_tasks(self.spark, metadata, io, tasks, keep)
            merged = {**metadata.properties, **(properties or {})}
            return self.write(metadata, io, bin_packed(frame, tasks, merged), properties=properties)

        if job_key is None:
            return run()
        mark = fingerprint(metadata, "rewrite", tasks=tasks, keep=keep, properties=properties)
        return run_keyed(
            self.job_store(metadata, io), job_key, mark, run, partition_types(metadata)
        )

    def merge(
        self,
        metadata: TableMetadata,
        io: FileIO,
        source: Source,
        spec: MergeSpec,
        *,
        branch: str = "main",
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.merge`."""
        from icewright.spark.job_spec import partition_types
        from icewright.spark.merge import merge_rows

        def run() -> RowChanges:
            with self._job_group("merge"):
                return merge_rows(
                    self.spark, metadata, io, source, spec, branch=branch, properties=properties
                )

        mark = row_change_fingerprint(
            metadata, "merge", branch, source=source, spec=spec, properties=properties
        )
        if job_key is None:
            return run()
        codec = row_change_results(metadata.schema())
        store = self.job_store(metadata, io)
        return run_keyed(store, job_key, mark, run, partition_types(metadata), codec=codec)

    def delete_rows(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        condition: Expression,
        mode: WriteMode,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.delete_rows`."""
        from icewright.spark.job_spec import partition_types
        from icewright.spark.merge import delete_rows

        def run() -> RowChanges:
            with self._job_group("delete"):
                return delete_rows(
                    self.spark,
                    metadata,
                    io,
                    tasks,
                    condition=condition,
                    mode=mode,
                    properties=properties,
                )

        mark = row_change_fingerprint(
            metadata,
            "delete-rows",
            None,
            tasks=tasks,
            keep=condition,
            mode=mode,
            properties=properties,
        )
        if job_key is None:
            return run()
        codec = row_change_results(metadata.schema())
        store = self.job_store(metadata, io)
        return run_keyed(store, job_key, mark, run, partition_types(metadata), codec=codec)

    def rewrite_position_deletes(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.rewrite_position_deletes`."""
        from icewright.spark.job_spec import partition_types
        from icewright.spark.position_delete_rewrite import rewrite_position_deletes

        def run() -> RowChanges:
            with self._job_group("rewrite-position-deletes"):
                return rewrite_position_deletes(
                    self.spark, metadata, io, tasks, properties=properties
                )

        if job_key is None:
            return run()
        mark = row_change_fingerprint(
            metadata, "rewrite-position-deletes", None, tasks=tasks, properties=properties
        )
        codec = row_change_results(metadata.schema())
        store = self.job_store(metadata, io)
        return run_keyed(store, job_key, mark, run, partition_types(metadata), codec=codec)

    def unreachable_files(
        self,
        metadata: TableMetadata,
        io: FileIO,
        expired: Sequence[Snapshot],
        retained: Sequence[Snapshot],
    ) -> UnreachableFiles:
        """See :meth:`Runner.unreachable_files`."""
        from icewright.runners.maintenance import unreachable
        from icewright.spark import maintenance

        with self._job_group("expire"):
            return unreachable(maintenance.unreachable_files(self.spark, io, expired, retained))

    def find_orphans(self, io: FileIO, search: OrphanSearch) -> FoundOrphans:
        """See :meth:`Runner.find_orphans`."""
        from icewright.runners.maintenance import found_orphans, orphan_references
        from icewright.spark import maintenance

        with self._job_group("orphans"):
            return found_orphans(
                maintenance.find_orphans(
                    self.spark,
                    io,
                    search.metadata,
                    extra_references=orphan_references(search),
                    root=search.root,
                    cutoff_ms=search.cutoff_ms,
                    skip_prefix=search.skip_prefix,
                )
            )

    def plan_rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        snapshot_id: int,
        *,
        where: Expression | None,
        rules: CompactionRules,
    ) -> list[RewriteGroup]:
        """See :meth:`Runner.plan_rewrite`."""
        from icewright.spark import rewrite_planning

        snapshot = metadata.snapshot_by_id(snapshot_id)
        if snapshot is None:
            raise ValidationError(f"the table has no snapshot {snapshot_id} to plan a rewrite of")
        with self._job_group("rewrite-plan"):
            return rewrite_planning.rewrite_groups(
                self.spark, metadata, io, snapshot, row_filter=where, rules=rules
            )

    def rewrite_manifests(
        self,
        metadata: TableMetadata,
        io: FileIO,
        groups: Mapping[int, Sequence[ManifestFile]],
        *,
        snapshot_id: int,
        target_size_bytes: int,
        prefix: str,
    ) -> ManifestRewrite:
        """See :meth:`Runner.rewrite_manifests`."""
        from icewright.runners.maintenance import manifest_rewrite
        from icewright.spark import manifest_rewrite as job

        with self._job_group("rewrite-manifests"):
            answer = job.rewrite_manifests(
                self.spark,
                metadata,
                io,
                groups,
                snapshot_id=snapshot_id,
                target_size_bytes=target_size_bytes,
                prefix=prefix,
            )
        return manifest_rewrite(answer, groups)

    def job_store(self, metadata: TableMetadata, io: FileIO) -> JobStore:
        """Where this runner keeps the results of keyed jobs of the table."""

        return JobStore.for_table(metadata, io, self._staging)

    def cancel(self) -> None:
        """Cancel the Spark job groups of the jobs running now (from any thread)."""
        with self._lock:
            groups = list(self._groups)
            self._cancelled = bool(groups)
        if self._spark is None:
            return
        for group in groups:
            self._spark.sparkContext.cancelJobGroup(group)

    @contextlib.contextmanager
    def _job_group(self, what: str) -> Iterator[None]:
        """Run the enclosed Spark jobs in a job group of their own (thread-local)."""
        sc = self.spark.sparkContext
        group = f"icewright-{what}-{uuid.uuid4().hex[:12]}"
        with self._lock:
            self._groups.add(group)
        sc.setJobGroup(group, f"icewright {what}", interruptOnCancel=True)
        from icewright.spark.session import job_conf

        try:
            with job_conf(self.spark, self._conf):
                yield
        except IcewrightError as e:
            if self._cancelled:
                raise IcewrightError(f"the Spark {what} job was cancelled: {e}") from e
            raise
        finally:
            with self._lock:
                self._groups.discard(group)
                if not self._groups:
                    self._cancelled = False
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
            sc.setLocalProperty("spark.job.interruptOnCancel", None)  # type: ignore[arg-type]

    def source_schema(self, source: Source) -> Schema:
        """See :meth:`Runner.source_schema`."""
        from icewright.spark.types import schema_from_spark
        from icewright.spark.write import load_source

        frame = load_source(self.spark, source)
        return schema_from_spark(frame.schema, required_as_nullable=True)

    def analyze_view(
        self, sql: str, resolve: TableResolver
    ) -> tuple[Schema, tuple[tuple[str, ...], ...]]:
        """See :meth:`Runner.analyze_view`."""
        from icewright.spark.failures import expected_analysis_errors
        from icewright.spark.read import read_columns
        from icewright.spark.types import schema_from_spark

        spark = self.spark
        text = sql
        found: list[tuple[str, ...]] = []
        registered: list[str] = []
        try:
            for _ in range(64):  # one more referenced table per round
                try:
                    with expected_analysis_errors():
                        frame = spark.sql(text)
                    break
                except Exception as e:
                    name = _unresolved_relation(e)
                    if name is None or name in found:
                        raise ValidationError(
                            f"Spark cannot analyse the view SQL: {_first_line(e)}"
                        ) from None
                    target = resolve(name)
                    if target is None:
                        raise ValidationError(
                            f"the view SQL references {'.'.join(name)!r}, which is neither a "
                            f"table of the catalog nor known to Spark: {_first_line(e)}"
                        ) from None
                    found.append(name)
                    temp = f"__iw_view_source_{len(found)}"
                    # the columns are all the analysis needs: no file of the table is planned
                    read_columns(spark, target).createOrReplaceTempView(temp)
                    registered.append(temp)
                    text = _substitute(text, name, temp)
            else:
                raise ValidationError("the view SQL references too many tables (more than 64)")
            schema = schema_from_spark(frame.schema, required_as_nullable=True)
        finally:
            for temp in registered:
                spark.catalog.dropTempView(temp)
        return schema, tuple(found)


def read_tasks(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    keep: Expression | None,
) -> DataFrame:
    """The rows of ``tasks`` (their deletes applied) that match ``keep`` (all when None),
    in the table's current schema."""
    from icewright.scan import TableScan
    from icewright.scan.tasks import ScanMetrics, ScanPlan
    from icewright.spark.read import read_plan

    scan = TableScan.of((metadata, io), **({} if keep is None else {"row_filter": keep}))
    residual = scan.bound_filter()
    plan = ScanPlan(
        snapshot=scan.snapshot(),
        schema=scan.schema(),
        projected_schema=scan.projection(),
        filter=residual,
        tasks=tuple(dataclasses.replace(t, residual=residual) for t in tasks),
        metrics=ScanMetrics(),
    )
    return read_plan(spark, (metadata, io), plan)


def bin_packed(
    frame: DataFrame, tasks: Sequence[FileScanTask], properties: Mapping[str, str]
) -> DataFrame:
    """``frame`` in as many Spark partitions as target-size files the tasks' bytes make.

    Under ``write.distribution-mode=none`` the write job writes a file per Spark
    partition, and a read makes a partition per split: five small input files would stay
    several files. Iceberg Java's bin-pack rewrite likewise sizes its read to the number
    of output files it expects. A shuffle that the distribution mode asks for (hash,
    range) repartitions anyway.
    """
    from icewright.spark.write import WriteSettings

    settings = WriteSettings.from_properties(properties, partitioned=False, sorted_=False)
    size = sum(t.data_file.file_size_in_bytes for t in tasks)
    expected = max(1, math.ceil(size / settings.target_file_size))
    return frame.coalesce(expected)


# --- relation names in Spark's analysis errors -----------------------------------------

_NOT_FOUND = re.compile(r"TABLE_OR_VIEW_NOT_FOUND\]\s*The table or view (\S+) cannot be found")
_QUOTED = re.compile(r"`((?:[^`]|``)*)`|([^.`\s]+)")


def _unresolved_relation(e: BaseException) -> tuple[str, ...] | None:
    """The relation Spark could not find (``TABLE_OR_VIEW_NOT_FOUND``), as name parts."""
    condition = None
    for getter in ("getCondition", "getErrorClass"):
        fn = getattr(e, getter, None)
        if callable(fn):
            try:
                condition = fn()
            except Exception:  # older pyspark: no JVM error class
                condition = None
            if condition:
                break
    text = None
    params = getattr(e, "getMessageParameters", None)
    if condition == "TABLE_OR_VIEW_NOT_FOUND" and callable(params):
        try:
            text = (params() or {}).get("relationName")
        except Exception:
            text = None
    if text is None:
        m = _NOT_FOUND.search(str(e))
        if m is None:
            return None
        text = m.group(1)
    parts = tuple(
        (q.replace("``", "`") if q else p) for q, p in _QUOTED.findall(text.strip().rstrip("."))
    )
    return parts or None


def _substitute(sql: str, name: tuple[str, ...], temp: str) -> str:
    """``sql`` with every reference to ``name`` (quoted or not) replaced by ``temp``."""
    part = [rf"(?:`{re.escape(p)}`|{re.escape(p)})" for p in name]
    pattern = r"(?<![\w`.])" + r"\s*\.\s*".join(part) + r"(?![\w`])"
    new, count = re.subn(pattern, temp, sql, flags=re.IGNORECASE)
    if count == 0:
        raise ValidationError(
            f"cannot find the reference to {'.'.join(name)!r} in the view SQL to analyse it"
        )
    return new


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
