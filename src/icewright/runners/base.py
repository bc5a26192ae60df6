"""Where the Spark work of an action runs: the :class:`Runner` protocol.

An action plans and commits in this process; a runner runs the data jobs and hands back
``DataFile`` descriptors (a :class:`~icewright.spark.write.WriteResult`) or a schema.
Each job's input is plain data (table metadata, scan tasks, a source or a SQL text), so
the in-process :class:`~icewright.runners.local.LocalRunner` and the ``spark-submit``
:class:`~icewright.runners.submit.SparkSubmitRunner` are interchangeable to the actions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
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

__all__ = ["Runner", "TableResolver"]

TableResolver = Callable[[tuple[str, ...]], "tuple[TableMetadata, FileIO] | None"]
"""Looks a relation name (its parts, as written in SQL) up in the catalog: the table's
metadata and FileIO, or None when it names no icewright table."""


@runtime_checkable
class Runner(Protocol):
    """Runs the Spark jobs of the actions; never touches catalog metadata."""

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
        """Write ``source`` as data files of the table (current schema, spec and order).

        ``properties`` override table properties for this job only. With ``job_key`` a
        finished job's stored result is reused instead of running again
        (:mod:`icewright.runners.store`), and a new result is stored under the key.
        """
        ...

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
        """Read ``tasks`` (their deletes applied), keep the rows matching ``keep`` (an
        unbound filter on the current schema; all rows when None), and write them in the
        table's current schema, spec and sort order (``job_key`` as for :meth:`write`)."""
        ...

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
        """Merge ``source`` into the table at ``branch`` as ``spec`` says
        (:func:`icewright.spark.merge.merge_rows`): new data and delete files, unchanged
        catalog (``job_key`` as for :meth:`write`; a result is reused only for the same
        snapshot of ``branch``)."""
        ...

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
        """Delete the rows of ``tasks`` matching ``condition`` (bound, two-valued), as
        position deletes or rewritten files (:func:`icewright.spark.merge.delete_rows`;
        ``job_key`` as for :meth:`write`)."""
        ...

    def rewrite_position_deletes(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """Write the position delete files of ``tasks`` anew, one per data file, without
        rows naming other files (:func:`icewright.spark.position_delete_rewrite.
        rewrite_position_deletes`; ``job_key`` as for :meth:`write`)."""
        ...

    def source_schema(self, source: Source) -> Schema:
        """The Iceberg schema of ``source`` (fresh ids from 1; every column optional)."""
        ...

    def analyze_view(
        self, sql: str, resolve: TableResolver
    ) -> tuple[Schema, tuple[tuple[str, ...], ...]]:
        """The schema of the query ``sql``, and the icewright tables it references."""
        ...

    def unreachable_files(
        self,
        metadata: TableMetadata,
        io: FileIO,
        expired: Sequence[Snapshot],
        retained: Sequence[Snapshot],
    ) -> UnreachableFiles:
        """As :func:`icewright.commit.reachability.unreachable_files`, as a Spark job
        (executors read the manifests); ``metadata`` is the table's, before expiry."""
        ...

    def find_orphans(self, io: FileIO, search: OrphanSearch) -> FoundOrphans:
        """As :func:`icewright.commit.orphans.find_orphans`, as a Spark job."""
        ...

    def plan_rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        snapshot_id: int,
        *,
        where: Expression | None,
        rules: CompactionRules,
    ) -> list[RewriteGroup]:
        """The compaction groups of snapshot ``snapshot_id`` (files that may match
        ``where``), planned as a Spark job."""
        ...

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
        """Write the live entries of ``groups`` (manifests by spec id) clustered by
        partition into new manifests for snapshot ``snapshot_id``, as a Spark job
        (:func:`icewright.spark.manifest_rewrite.rewrite_manifests`)."""
        ...

    def cancel(self) -> None:
        """Stop the jobs running now (safe to call from another thread); they raise."""
        ...
