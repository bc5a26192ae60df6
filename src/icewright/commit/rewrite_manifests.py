"""Rewriting manifests (Iceberg Java's ``BaseRewriteManifests``, as its Spark action and
the ``rewrite_manifests`` procedure use it).

A table appended to often ends with one small manifest per commit, and scan planning
reads them all. :class:`RewriteManifests` reads the live entries of the data manifests
of the branch head, sorts them by partition and writes them into manifests of about
``commit.manifest.target-size-bytes`` (8 MiB) each
(:mod:`icewright.manifest.clustering`), one partition spec at a time, and commits a
``replace`` snapshot that lists the new manifests instead of the old ones. No data
changes:

* every entry is written EXISTING with the id of the snapshot that added its file and
  its data and file sequence numbers (spec: "Sequence Number Inheritance"), so deletes
  apply, time travel and incremental reads see what they saw before;
* delete manifests are listed as they are, except those without a live file (every
  entry deleted by an earlier commit: what a compaction leaves of the deletes it
  applied), which are dropped as Java's merging commits drop them; a spec whose data
  manifests are one manifest within the target size is left alone (Java's action skips
  it too);
* the snapshot summary says what changed (``manifests-created``, ``manifests-kept``,
  ``manifests-replaced``, ``entries-processed``, Java's keys) and carries the totals over.

Conflicts follow Java: the new manifests are written once, from the snapshot read; a
commit that lost a race applies them again on the new branch head, keeping every
manifest the other commit added, but fails with ``ValidationError`` (the new manifests
are deleted) when a manifest it rewrote is no longer in the head (a concurrent commit
rewrote or removed files of it, so the entries written may no longer be live).

For big tables the new manifests are written by a Spark job
(:mod:`icewright.spark.manifest_rewrite`) and handed over with
:meth:`RewriteManifests.use_rewrite`; the commit is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.reachability import DEFAULT_READ_WORKERS
from icewright.commit.snapshot_producer import (
    SnapshotKeywords,
    SnapshotOptions,
    SnapshotProducer,
    metadata_dir,
)
from icewright.commit.summary import SummaryBuilder
from icewright.commit.update import CommitResult
from icewright.commit.validation import snapshot_manifests
from icewright.errors import ValidationError
from icewright.manifest.clustering import (
    as_existing,
    cluster,
    partition_sort_key,
    write_rolling,
    writer_factory,
)
from icewright.manifest.data_file import ManifestContent, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.properties import read_property
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "ENTRIES_PROCESSED",
    "MANIFESTS_CREATED",
    "MANIFESTS_KEPT",
    "MANIFESTS_REPLACED",
    "ManifestRewrite",
    "RewriteManifests",
    "manifests_to_rewrite",
    "rewrite_manifests",
]

MANIFESTS_CREATED = "manifests-created"
MANIFESTS_KEPT = "manifests-kept"
MANIFESTS_REPLACED = "manifests-replaced"
ENTRIES_PROCESSED = "entries-processed"
TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"


@dataclass(frozen=True)
class ManifestRewrite:
    """The manifests a rewrite replaces (as the snapshot read lists them), the ones it
    wrote instead, and how many entries it carried over."""

    replaced: tuple[ManifestFile, ...] = ()
    created: tuple[ManifestFile, ...] = ()
    entries: int = 0


def manifests_to_rewrite(
    manifests: Sequence[ManifestFile], *, target_size_bytes: int, spec_id: int | None = None
) -> dict[int, list[ManifestFile]]:
    """The data manifests of ``manifests`` (a snapshot's) to rewrite, by partition spec
    id: those of ``spec_id`` (every spec when None), but not a spec's single manifest
    within ``target_size_bytes`` (nothing to gain)."""
    groups: dict[int, list[ManifestFile]] = {}
    for m in manifests:
        if m.content is ManifestContent.DATA and spec_id in (None, m.partition_spec_id):
            groups.setdefault(m.partition_spec_id, []).append(m)
    return {
        spec: found
        for spec, found in sorted(groups.items())
        if len(found) > 1 or found[0].manifest_length > target_size_bytes
    }


def _live(manifest: ManifestFile) -> bool:
    """Whether ``manifest`` may hold live (ADDED or EXISTING) entries."""
    return manifest.has_added_files() or manifest.has_existing_files()


def _count(manifests: Sequence[ManifestFile], what: str) -> int:
    total = 0
    for m in manifests:
        if m.added_files_count is None or m.existing_files_count is None:
            raise ValidationError(
                f"cannot rewrite manifests: the {what} manifest {m.manifest_path} has no "
                "file counts in its manifest list (a v1 list may leave them out), so that "
                "the rewrite keeps every file cannot be checked; nothing was changed"
            )
        total += m.added_files_count + m.existing_files_count
    return total


class RewriteManifests(SnapshotProducer):
    """Cluster a branch's data manifests by partition into manifests of the target size.

    ``spec_id`` rewrites only the manifests of that partition spec; ``target_size_bytes``
    defaults to the table's ``commit.manifest.target-size-bytes``. The new manifests are
    written by :meth:`plan` (or on the first commit attempt), from the branch head of the
    table it was built on, or handed over with :meth:`use_rewrite`::

        RewriteManifests(table).commit()
        RewriteManifests(table, spec_id=0, target_size_bytes=1 << 20).commit()

    With nothing to rewrite the commit changes nothing (``committed`` False).
    """

    def __init__(
        self,
        table: Table,
        *,
        spec_id: int | None = None,
        target_size_bytes: int | None = None,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        specs = table.metadata.specs_by_id()
        if spec_id is not None and (
            isinstance(spec_id, bool) or not isinstance(spec_id, int) or spec_id not in specs
        ):
            raise ValidationError(
                f"partition spec {spec_id!r} is not a spec of table {table.identifier}; "
                f"use one of {', '.join(map(str, sorted(specs)))}"
            )
        if target_size_bytes is None:
            target_size_bytes = read_property(table.metadata.properties, TARGET_SIZE_BYTES)
        elif (
            isinstance(target_size_bytes, bool)
            or not isinstance(target_size_bytes, int)
            or target_size_bytes < 1
        ):
            raise ValidationError(
                f"target_size_bytes must be a positive number of bytes, got {target_size_bytes!r}"
            )
        self.spec_id = spec_id
        self.target_size_bytes: int = target_size_bytes
        self._rewrite: ManifestRewrite | None = None
        self._handed_over: tuple[str, ...] = ()
        self._kept = 0

    # --- what to rewrite ---------------------------------------------------------------

    @property
    def rewrite(self) -> ManifestRewrite | None:
        """The planned (or handed over) rewrite; None before :meth:`plan`."""
        return self._rewrite

    @property
    def manifests_kept(self) -> int:
        """Data manifests the last attempt listed unchanged."""
        return self._kept

    def manifest_prefix(self, metadata: TableMetadata) -> str:
        """Where the manifests of this rewrite go: paths start with this (a Spark job
        writing them for :meth:`use_rewrite` adds its own unique ends)."""
        return f"{metadata_dir(metadata)}/{self._commit_uuid}-r"

    def selection(self, metadata: TableMetadata) -> dict[int, list[ManifestFile]]:
        """The data manifests of the branch head of ``metadata`` to rewrite, by spec id."""
        head = metadata.branch_head(self.branch)
        if head is None:
            return {}
        return manifests_to_rewrite(
            snapshot_manifests(self.table.io, head),
            target_size_bytes=self.target_size_bytes,
            spec_id=self.spec_id,
        )

    def plan(self, metadata: TableMetadata | None = None) -> ManifestRewrite:
        """Write the new manifests, here, from the branch head of ``metadata`` (default:
        the table this was built on); done once, later calls return the same plan."""
        if self._rewrite is not None:
            return self._rewrite
        base = self.table.metadata if metadata is None else metadata
        io = self.table.io
        replaced: list[ManifestFile] = []
        created: list[ManifestFile] = []
        entries = 0
        for spec_id, manifests in self.selection(base).items():
            spec = base.spec_by_id(spec_id)
            key = partition_sort_key(spec.partition_type(base.schema()))
            with ThreadPoolExecutor(min(DEFAULT_READ_WORKERS, len(manifests))) as pool:
                blobs = pool.map(lambda m: io.read(m.manifest_path), manifests)
                live = [
                    as_existing(e)
                    for m, data in zip(manifests, blobs, strict=True)
                    for e in read_manifest(data, m)
                    if e.is_live
                ]

            def store(w: ManifestWriter) -> ManifestFile:
                path = self.new_manifest_path(base)
                data, manifest = w.finish(path)
                io.create(path, data)
                return manifest

            created += write_rolling(
                cluster(live, key),
                new_writer=writer_factory(base, spec_id, self.snapshot_id),
                target_size_bytes=self.target_size_bytes,
                store=store,
            )
            replaced += manifests
            entries += len(live)
        self._rewrite = ManifestRewrite(tuple(replaced), tuple(created), entries)
        return self._rewrite

    def use_rewrite(self, rewrite: ManifestRewrite) -> RewriteManifests:
        """Commit manifests written elsewhere (a Spark job) in place of ``rewrite.replaced``.

        The new manifests must hold EXISTING entries only and have been written for this
        operation's :attr:`snapshot_id`; they are deleted if the commit fails.
        """
        if self._rewrite is not None:
            raise ValidationError("this rewrite already has its manifests")
        if not rewrite.replaced:
            raise ValidationError("a manifest rewrite needs the manifests it replaces")
        for m in rewrite.created:
            if (
                m.content is not ManifestContent.DATA
                or m.added_files_count
                or m.deleted_files_count
            ):
                raise ValidationError(
                    f"manifest {m.manifest_path}: a manifest rewrite adds data manifests of "
                    "EXISTING entries only"
                )
            if m.added_snapshot_id != self.snapshot_id:
                raise ValidationError(
                    f"manifest {m.manifest_path} was written for snapshot "
                    f"{m.added_snapshot_id}, not for this rewrite's {self.snapshot_id}"
                )
        self._rewrite = rewrite
        self._handed_over = tuple(m.manifest_path for m in rewrite.created)
        return self

    # --- the operation -----------------------------------------------------------------

    def operation(self) -> Operation:
        return Operation.REPLACE

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with the rewrite's snapshot; ``base`` itself when there is nothing to
        rewrite (no snapshot is added)."""
        if self._rewrite is None or not self._rewrite.replaced:
            # planned on the base of this attempt (an empty plan is made again: the
            # table may have moved on since)
            self._rewrite = None
            if not self.plan(base).replaced:
                return base
        return super().apply(base)

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        rewrite = self._rewrite
        assert rewrite is not None  # apply() planned it
        current = [] if parent is None else snapshot_manifests(self.table.io, parent)
        listed = {m.manifest_path for m in current}
        replaced = {m.manifest_path for m in rewrite.replaced}
        for path in replaced:
            if path not in listed:
                # Java: "Manifest is missing"
                raise ValidationError(
                    f"cannot rewrite manifests of {self.table.identifier}: manifest {path} "
                    f"is no longer in the head of branch {self.branch!r} (a concurrent "
                    "commit rewrote or removed its files); nothing was changed, run the "
                    "rewrite again"
                )
        # A manifest without live files (every entry DELETED by an earlier commit, as a
        # compaction leaves the delete manifests of the deletes it applied) is dropped, as
        # Iceberg Java's merging commits drop it: only the snapshot that wrote it lists it.
        kept = [
            m
            for m in current
            if m.content is ManifestContent.DATA and m.manifest_path not in replaced and _live(m)
        ]
        deletes = [m for m in current if m.content is ManifestContent.DELETES and _live(m)]
        old, new = _count(rewrite.replaced, "replaced"), _count(rewrite.created, "created")
        if old != new:
            raise ValidationError(
                "replaced and created manifests must have the same number of live files: "
                f"{new} (new), {old} (old)"
            )
        self._kept = len(kept)
        summary.set(MANIFESTS_CREATED, str(len(rewrite.created)))
        summary.set(MANIFESTS_KEPT, str(len(kept)))
        summary.set(MANIFESTS_REPLACED, str(len(rewrite.replaced)))
        summary.set(ENTRIES_PROCESSED, str(rewrite.entries))
        return [*rewrite.created, *kept, *deletes]

    def files_written(self) -> Sequence[str]:
        return [*super().files_written(), *self._handed_over]


def rewrite_manifests(
    table: Table,
    *,
    spec_id: int | None = None,
    target_size_bytes: int | None = None,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Rewrite ``table``'s data manifests clustered by partition and commit (see
    :class:`RewriteManifests`)."""
    op = RewriteManifests(
        table, spec_id=spec_id, target_size_bytes=target_size_bytes, options=options, **keywords
    )
    return op.commit()
