"""The shape every snapshot-producing operation shares (spec: "Commit Conflict Resolution
and Retry"; Iceberg Java's ``SnapshotProducer``).

A :class:`SnapshotProducer` is a :class:`~icewright.commit.update.PendingUpdate`:
:meth:`~SnapshotProducer.apply` reads metadata and writes only new, uniquely named
files, so it may run again on refreshed metadata; the one retry loop is
:func:`~icewright.commit.update.commit_updates`. Leaf operations state only their
``operation``, their ``validate`` rules and the manifests of the new snapshot.

Manifests for new files are written once and reused by every attempt; each attempt
writes its own manifest list, named after the snapshot id and the attempt.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
import uuid
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

from icewright import __version__
from icewright.catalog.base import Table
from icewright.commit import summary as keys
from icewright.commit.commit_keys import (
    RememberedCommit,
    find_commit_key,
    find_staged_commit_key,
    remember,
)
from icewright.commit.summary import SummaryBuilder, with_totals
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import ManifestFile
from icewright.manifest.manifest_list import ManifestListWriter
from icewright.spec.documents import StringMap
from icewright.spec.snapshots import MAIN_BRANCH, Operation, Snapshot, Summary
from icewright.spec.table_metadata import TableMetadata

log = logging.getLogger(__name__)

WRITE_METADATA_PATH = "write.metadata.path"
WAP_ENABLED = "write.wap.enabled"
"""Table property: staging snapshots with a ``wap.id`` is allowed (default false)."""


def wap_enabled(metadata: TableMetadata) -> bool:
    """Whether the table allows staged (write-audit-publish) snapshots."""
    return metadata.properties.get(WAP_ENABLED, "false").strip().lower() == "true"


def new_snapshot_id() -> int:
    """A random positive 63-bit id, as the spec asks of snapshot ids."""
    return secrets.randbits(63) or 1


def metadata_dir(metadata: TableMetadata) -> str:
    """Where manifests, manifest lists and metadata files go (``write.metadata.path``)."""
    custom = metadata.properties.get(WRITE_METADATA_PATH)
    return (custom or f"{metadata.location.rstrip('/')}/metadata").rstrip("/")


@dataclasses.dataclass(frozen=True)
class SnapshotOptions:
    """What every snapshot-producing operation is told besides its files: the branch it
    commits to, the commit key that makes it exactly-once (``icewright.commit-key``),
    extra snapshot summary properties, whether column names in its filters are
    case-sensitive, and a write-audit-publish id.

    With ``wap_id`` the snapshot is staged (Java's ``stageOnly`` with ``wap.id``): it is
    added with ``wap.id`` in its summary and the branch's head as its parent, and no
    branch moves; :meth:`icewright.commit.ManageSnapshots.publish` publishes it later.
    The table needs ``write.wap.enabled=true``.

    Give it as ``options=`` or give its fields as keywords of the same names (Java's
    ``toBranch``, ``set`` and ``caseSensitive``)::

        opts = SnapshotOptions(branch="audit", commit_key="load-42")
        FastAppend(table, files, options=opts)
        FastAppend(table, files, branch="audit", commit_key="load-42")  # the same
    """

    branch: str = MAIN_BRANCH
    commit_key: str | None = None
    snapshot_properties: Mapping[str, str] = dataclasses.field(default_factory=StringMap)
    case_sensitive: bool = True
    wap_id: str | None = None

    def __post_init__(self) -> None:
        if self.wap_id is not None and (not isinstance(self.wap_id, str) or not self.wap_id):
            raise ValidationError(f"a WAP id must be non-empty text, got {self.wap_id!r}")
        # kept as an immutable StringMap, which also refuses non-string entries
        if not isinstance(self.snapshot_properties, StringMap):
            props = StringMap(self.snapshot_properties or {})
            object.__setattr__(self, "snapshot_properties", props)

    @classmethod
    def of(cls, options: SnapshotOptions | None, keywords: SnapshotKeywords) -> SnapshotOptions:
        """``options`` (or the defaults) with the given ``keywords`` on top."""
        base = cls() if options is None else options
        fields: dict[str, Any] = dict(keywords)
        if "snapshot_properties" in fields:
            fields["snapshot_properties"] = fields["snapshot_properties"] or {}
        return dataclasses.replace(base, **fields) if fields else base


class SnapshotKeywords(TypedDict, total=False):
    """The fields of :class:`SnapshotOptions`, as keywords of an operation's constructor."""

    branch: str
    commit_key: str | None
    snapshot_properties: Mapping[str, str] | None
    case_sensitive: bool
    wap_id: str | None


class SnapshotProducer(PendingUpdate):
    """Base of the operations that add a snapshot to a branch.

    Every operation takes its :class:`SnapshotOptions` the same way: ``options=`` or the
    options' fields as keywords.
    """

    def __init__(
        self,
        table: Table,
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        self._table = table
        self.options = SnapshotOptions.of(options, keywords)
        self.snapshot_id = new_snapshot_id()
        self._commit_uuid = uuid.uuid4()
        self._manifest_count = 0
        self._written_manifests: list[str] = []
        self._manifest_lists: list[str] = []
        self._attempt = 0

    @property
    def branch(self) -> str:
        """The branch this operation commits to."""
        return self.options.branch

    @property
    def commit_key(self) -> str | None:
        """The commit key recorded with the snapshot (None: not keyed)."""
        return self.options.commit_key

    @property
    def wap_id(self) -> str | None:
        """The write-audit-publish id this operation stages its snapshot under (None: the
        snapshot goes on :attr:`branch`)."""
        return self.options.wap_id

    @property
    def case_sensitive(self) -> bool:
        """Whether column names in this operation's filters are case-sensitive."""
        return self.options.case_sensitive

    # --- what leaf operations state -------------------------------------------------

    @abstractmethod
    def operation(self) -> Operation:
        """The snapshot's operation."""

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """Raise ``ValidationError`` if this operation conflicts with ``base``."""

    @abstractmethod
    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        """Every manifest of the new snapshot; records the changes in ``summary``."""

    def list_manifests(
        self,
        base: TableMetadata,
        parent: Snapshot | None,
        summary: SummaryBuilder,
        writer: ManifestListWriter,
    ) -> None:
        """Add every manifest of the new snapshot to its list's ``writer``: those of
        :meth:`manifests`, in order (an operation that keeps a whole list may copy it)."""
        writer.add_all(self.manifests(base, parent, summary))

    # --- shared machinery -----------------------------------------------------------

    @property
    def table(self) -> Table:
        return self._table

    @property
    def written_manifests(self) -> tuple[str, ...]:
        """The manifests this producer wrote so far, in order, over all attempts.

        Each came from :meth:`new_manifest_path`; subclasses that rewrite manifests
        (filtering, merging) use it to find the ones the committed snapshot does not list.
        """
        return tuple(self._written_manifests)

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
        if self.wap_id is not None and not wap_enabled(base):
            raise ValidationError(
                f"staging a snapshot with wap.id needs table property {WAP_ENABLED}=true "
                f"(as Iceberg Java requires): create the table with --property {WAP_ENABLED}=true "
                "or set it with icewright.commit.UpdateProperties"
            )
        parent = base.branch_head(self.branch)
        self.validate(base, parent)
        builder = SummaryBuilder(
            schema=base.schema(),
            partition_limit=int(base.properties.get(keys.PARTITION_SUMMARY_LIMIT, "0")),
        )
        sequence_number = base.last_sequence_number + 1 if base.format_version >= 2 else 0
        writer = ManifestListWriter(
            format_version=base.format_version,
            snapshot_id=self.snapshot_id,
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=sequence_number,
        )
        self.list_manifests(base, parent, builder, writer)

        self._attempt += 1
        list_path = (
            f"{metadata_dir(base)}/snap-{self.snapshot_id}-{self._attempt}-{self._commit_uuid}.avro"
        )
        self._table.io.create(list_path, writer.to_bytes())
        self._manifest_lists.append(list_path)

        props = builder.build()
        props.update(self.options.snapshot_properties)
        props[keys.ENGINE_NAME] = "icewright"
        props[keys.ENGINE_VERSION] = __version__
        if self.commit_key is not None:
            props[keys.COMMIT_KEY] = self.commit_key
        if self.wap_id is not None:
            props[keys.STAGED_WAP_ID] = self.wap_id
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
        new = base.add_snapshot(snapshot)
        if self.wap_id is None:
            new = new.set_branch_snapshot(self.snapshot_id, self.branch, timestamp_ms=now)
        if self.commit_key is None:
            return new
        # Recorded in the same metadata file, so that expiring the snapshot later does
        # not forget the key (icewright.commit.commit_keys).
        props = remember(new.properties, self.commit_key, self.snapshot_id, now)
        return dataclasses.replace(new, properties=StringMap(props))

    def already_committed(self, base: TableMetadata) -> Snapshot | RememberedCommit | None:
        if self.commit_key is None:
            return None
        if self.wap_id is not None:
            return find_staged_commit_key(base, self.commit_key)
        return find_commit_key(base, self.branch, self.commit_key)

    def result_snapshot(self, metadata: TableMetadata) -> Snapshot | None:
        return metadata.snapshot_by_id(self.snapshot_id)

    def files_written(self) -> Sequence[str]:
        return [*self._manifest_lists, *self._written_manifests]

    def files_not_committed(self) -> Sequence[str]:
        return self._manifest_lists[:-1]

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this operation alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])
