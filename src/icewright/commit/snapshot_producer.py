"""The shape every snapshot-producing operation shares (spec: "Commit Conflict Resolution
and Retry"; Iceberg Java's ``SnapshotProducer``).

An operation is a :class:`SnapshotProducer`: :meth:`~SnapshotProducer.apply` is pure
with respect to the table (it reads metadata and writes only new, uniquely named
files) and may run again on refreshed metadata; :meth:`~SnapshotProducer.commit` is
the one retry loop. Leaf operations state only their ``operation``, their
``validate`` rules and the manifests of the new snapshot.

Files and outcomes:

* manifests for new files are written once and reused by every attempt;
* each attempt writes its own manifest list;
* after success, the manifest lists of losing attempts are deleted;
* after a definite failure (retries exhausted, or a validation error) every file
  this commit wrote is deleted;
* after ``CommitStateUnknown`` (or any unexpected error) nothing is deleted, because
  the new metadata may already be the table's current state.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

from icewright import __version__
from icewright.catalog.base import Table
from icewright.commit import summary as keys
from icewright.commit.retry import RetryPolicy
from icewright.commit.summary import SummaryBuilder, with_totals
from icewright.errors import CommitFailed, CommitStateUnknown, IcewrightError, ValidationError
from icewright.manifest.data_file import ManifestFile
from icewright.manifest.manifest_list import ManifestListWriter
from icewright.spec.snapshots import MAIN_BRANCH, Operation, Snapshot, Summary
from icewright.spec.table_metadata import TableMetadata

log = logging.getLogger(__name__)

WRITE_METADATA_PATH = "write.metadata.path"


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What a commit did: the snapshot it made (or found, for a repeated commit key)."""

    table: Table
    snapshot_id: int
    sequence_number: int
    operation: Operation | None
    summary: Mapping[str, str]
    metadata_location: str
    committed: bool
    """False when a snapshot with the same commit key was already on the branch."""


def new_snapshot_id() -> int:
    """A random positive 63-bit id, as the spec asks of snapshot ids."""
    return secrets.randbits(63) or 1


def metadata_dir(metadata: TableMetadata) -> str:
    """Where manifests, manifest lists and metadata files go (``write.metadata.path``)."""
    custom = metadata.properties.get(WRITE_METADATA_PATH)
    return (custom or f"{metadata.location.rstrip('/')}/metadata").rstrip("/")


def find_commit_key(metadata: TableMetadata, branch: str, commit_key: str) -> Snapshot | None:
    """The snapshot in ``branch``'s history whose summary holds ``commit_key``."""
    snapshot = metadata.snapshot_for_ref(branch)
    seen: set[int] = set()
    while snapshot is not None and snapshot.snapshot_id not in seen:
        seen.add(snapshot.snapshot_id)
        if snapshot.summary is not None and snapshot.summary.get(keys.COMMIT_KEY) == commit_key:
            return snapshot
        parent = snapshot.parent_snapshot_id
        snapshot = metadata.snapshot_by_id(parent) if parent is not None else None
    return None


class SnapshotProducer(ABC):
    """Base of the operations that add a snapshot to a branch."""

    def __init__(
        self,
        table: Table,
        *,
        branch: str = MAIN_BRANCH,
        commit_key: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        self._table = table
        self.branch = branch
        self.commit_key = commit_key
        self.snapshot_id = new_snapshot_id()
        self._commit_uuid = uuid.uuid4()
        self._snapshot_properties = dict(snapshot_properties or {})
        self._manifest_count = 0
        self._written_manifests: list[str] = []
        self._manifest_lists: list[str] = []
        self._attempt = 0

    # --- what leaf operations state -------------------------------------------------

    @abstractmethod
    def operation(self) -> Operation:
        """The snapshot's operation."""

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:  # noqa: B027
        """Raise ``ValidationError`` if this operation conflicts with ``base``."""

    @abstractmethod
    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        """Every manifest of the new snapshot; records the changes in ``summary``."""

    # --- shared machinery -----------------------------------------------------------

    @property
    def table(self) -> Table:
        return self._table

    def new_manifest_path(self, metadata: TableMetadata) -> str:
        """A unique location for a manifest this commit writes, remembered for cleanup."""
        self._manifest_count += 1
        path = f"{metadata_dir(metadata)}/{self._commit_uuid}-m{self._manifest_count - 1}.avro"
        self._written_manifests.append(path)
        return path

    def apply(self, base: TableMetadata) -> TableMetadata:
        """The new table metadata: ``base`` with this operation's snapshot on the branch.

        Writes the attempt's manifest list (and, the first time, new manifests).
        """
        if base.format_version not in (1, 2):
            raise ValidationError(
                f"icewright writes format versions 1 and 2; this table is v{base.format_version}"
            )
        base.spec().check_writable()
        parent = base.snapshot_for_ref(self.branch)
        self.validate(base, parent)
        builder = SummaryBuilder(
            schema=base.schema(),
            partition_limit=int(base.properties.get(keys.PARTITION_SUMMARY_LIMIT, "0")),
        )
        manifests = self.manifests(base, parent, builder)

        sequence_number = base.last_sequence_number + 1 if base.format_version >= 2 else 0
        self._attempt += 1
        list_path = (
            f"{metadata_dir(base)}/snap-{self.snapshot_id}-{self._attempt}-{self._commit_uuid}.avro"
        )
        writer = ManifestListWriter(
            format_version=base.format_version,
            snapshot_id=self.snapshot_id,
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=sequence_number,
        )
        writer.add_all(manifests)
        self._table.io.create(list_path, writer.to_bytes())
        self._manifest_lists.append(list_path)

        props = builder.build()
        props.update(self._snapshot_properties)
        props[keys.ENGINE_NAME] = "icewright"
        props[keys.ENGINE_VERSION] = __version__
        if self.commit_key is not None:
            props[keys.COMMIT_KEY] = self.commit_key
        previous = dict(parent.summary) if parent and parent.summary is not None else None
        if parent is not None and previous is None:
            previous = {}  # a parent without a summary: totals are unknown
        props = with_totals(props, previous)
        props.pop("operation", None)

        now = int(time.time() * 1000)
        snapshot = Snapshot(
            snapshot_id=self.snapshot_id,
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=sequence_number,
            timestamp_ms=now,
            manifest_list=list_path,
            summary=Summary(self.operation(), props),
            schema_id=base.current_schema_id,
        )
        return base.add_snapshot(snapshot).set_branch_snapshot(
            self.snapshot_id, self.branch, timestamp_ms=now
        )

    def commit(self) -> CommitResult:
        """Apply and swap the catalog pointer, retrying lost races per ``commit.retry.*``."""
        policy = RetryPolicy.from_properties(self._table.metadata.properties)
        committed_list: list[str] = []

        def attempt(n: int) -> CommitResult:
            table = self._table if n == 1 else self._table.refresh()
            self._table = table
            if self.commit_key is not None:
                found = find_commit_key(table.metadata, self.branch, self.commit_key)
                if found is not None:
                    return _result(table, found, committed=False)
            # The committer records the base file in the metadata log (as Java's builder
            # does), so the handle returned below holds exactly what the catalog stores.
            new_metadata = self.apply(table.metadata).with_previous_metadata(
                table.metadata_location, table.metadata.last_updated_ms
            )
            try:
                location = table.catalog.commit_table(
                    table.identifier, table.metadata_location, new_metadata
                )
            except CommitFailed:
                log.info("commit of snapshot %s lost a race (attempt %d)", self.snapshot_id, n)
                raise
            committed_list.append(self._manifest_lists[-1])
            new_table = dataclasses.replace(
                table, metadata=new_metadata, metadata_location=location
            )
            self._table = new_table
            snapshot = new_metadata.snapshot_by_id(self.snapshot_id)
            assert snapshot is not None
            return _result(new_table, snapshot, committed=True)

        try:
            result = policy.run(attempt)
        except CommitStateUnknown:
            log.warning(
                "the outcome of snapshot %s is unknown: keeping every file it wrote",
                self.snapshot_id,
            )
            raise
        except (CommitFailed, IcewrightError):
            self._delete(self._manifest_lists + self._written_manifests)
            raise
        self._delete([p for p in self._manifest_lists if p not in committed_list])
        if not result.committed:
            self._delete(self._written_manifests)
        return result

    def _delete(self, paths: list[str]) -> None:
        if not paths:
            return
        for path, error in self._table.io.delete_many(paths):
            log.warning("could not delete uncommitted file %s: %s", path, error)


def _result(table: Table, snapshot: Snapshot, *, committed: bool) -> CommitResult:
    return CommitResult(
        table=table,
        snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number,
        operation=snapshot.operation,
        summary=dict(snapshot.summary or {}),
        metadata_location=table.metadata_location,
        committed=committed,
    )
