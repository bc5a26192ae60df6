"""Several updates committed as one metadata commit (Iceberg Java's ``Transaction``).

:class:`Transaction` hands out update objects (schema, spec, sort order, properties,
location, format version, appends, references, or any
:class:`~icewright.commit.update.PendingUpdate` via :meth:`Transaction.add`), remembers
them in order, and :meth:`Transaction.commit` runs
:func:`~icewright.commit.update.commit_updates` once: every update applies to the
metadata the previous ones produced, and a lost race re-applies them all on the
refreshed table.

As Java's metadata builder does, a snapshot that an update in the transaction made
current on ``main`` but a later update replaced is dropped from ``snapshot-log``: the
log records only the states readers could see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TypeVar

from icewright.catalog.base import Table
from icewright.commit.append import FastAppend
from icewright.commit.commit_keys import RememberedCommit
from icewright.commit.properties import SetLocation, UpdateProperties, UpgradeFormatVersion
from icewright.commit.refs import ManageSnapshots
from icewright.commit.schema_update import UpdateSchema
from icewright.commit.snapshot_producer import SnapshotProducer
from icewright.commit.spec_update import ReplaceSortOrder, UpdatePartitionSpec
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile
from icewright.spec.snapshots import MAIN_BRANCH, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = ["Transaction"]

U = TypeVar("U", bound=PendingUpdate)


class _Start(PendingUpdate):
    """Records which snapshots the base of each attempt already has."""

    def __init__(self) -> None:
        self.snapshot_ids: frozenset[int] = frozenset()
        self.log_length = 0

    def apply(self, base: TableMetadata) -> TableMetadata:
        self.snapshot_ids = frozenset(s.snapshot_id for s in base.snapshots)
        self.log_length = len(base.snapshot_log)
        return base


class _Finish(PendingUpdate):
    """Drops intermediate snapshots from the new ``snapshot-log`` entries (Java's
    ``intermediateSnapshotIdSet``) and answers for the transaction's last update."""

    def __init__(self, start: _Start, last: PendingUpdate) -> None:
        self._start = start
        self._last = last

    def apply(self, base: TableMetadata) -> TableMetadata:
        old = base.snapshot_log[: self._start.log_length]
        new = base.snapshot_log[self._start.log_length :]
        kept = tuple(
            e
            for e in new
            if e.snapshot_id in self._start.snapshot_ids
            or e.snapshot_id == base.current_snapshot_id
        )
        if len(kept) == len(new):
            return base
        return dataclasses.replace(base, snapshot_log=(*old, *kept))

    def already_committed(self, base: TableMetadata) -> Snapshot | RememberedCommit | None:
        return self._last.already_committed(base)

    def result_snapshot(self, metadata: TableMetadata) -> Snapshot | None:
        return self._last.result_snapshot(metadata)


class Transaction:
    """Collects updates to one table and commits them together.

    >>> # tx = Transaction(table)
    >>> # tx.update_properties().set("owner", "etl")
    >>> # tx.append(files)
    >>> # result = tx.commit()

    Also a context manager: leaving the ``with`` block without an exception commits,
    and the :class:`CommitResult` is in :attr:`result`.
    """

    def __init__(self, table: Table) -> None:
        self._table = table
        self._updates: list[PendingUpdate] = []
        self.result: CommitResult | None = None

    @property
    def table(self) -> Table:
        """The table handle the transaction started from."""
        return self._table

    @property
    def updates(self) -> Sequence[PendingUpdate]:
        """The updates so far, in commit order."""
        return tuple(self._updates)

    @property
    def metadata(self) -> TableMetadata:
        """The table metadata as the metadata-only updates so far would leave it.

        Snapshot-producing updates (appends, cherry-picks) are skipped: applying them
        writes files. Use this to write data files for a schema or spec changed in
        the transaction.
        """
        metadata = self._table.metadata
        for update in self._updates:
            if not _writes_files(update):
                metadata = update.apply(metadata)
        return metadata

    def _preview(self) -> Table:
        return dataclasses.replace(self._table, metadata=self.metadata)

    def add(self, update: U) -> U:
        """Add any pending update (built on this transaction's table) and return it."""
        if self.result is not None:
            raise ValidationError("this transaction is already committed; start a new one")
        if not isinstance(update, PendingUpdate):
            raise ValidationError(f"expected a PendingUpdate, got {type(update).__name__}")
        self._updates.append(update)
        return update

    def update_schema(
        self, *, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        """A schema update, built on the schema the earlier updates produce."""
        return self.add(
            UpdateSchema(
                self._preview(),
                allow_incompatible_changes=allow_incompatible_changes,
                case_sensitive=case_sensitive,
            )
        )

    def update_spec(self, *, case_sensitive: bool = True) -> UpdatePartitionSpec:
        """A partition spec update."""
        return self.add(UpdatePartitionSpec(self._table, case_sensitive=case_sensitive))

    def replace_sort_order(self, *, case_sensitive: bool = True) -> ReplaceSortOrder:
        """A sort order replacement."""
        return self.add(ReplaceSortOrder(self._table, case_sensitive=case_sensitive))

    def update_properties(self) -> UpdateProperties:
        """A table property update."""
        return self.add(UpdateProperties(self._table))

    def set_properties(self, properties: Mapping[str, str]) -> UpdateProperties:
        """Set several table properties (a shortcut for :meth:`update_properties`)."""
        update = self.update_properties()
        for key, value in properties.items():
            update.set(key, value)
        return update

    def set_location(self, location: str) -> SetLocation:
        """A table location change."""
        return self.add(SetLocation(self._table, location))

    def upgrade_format_version(self, format_version: int = 2) -> UpgradeFormatVersion:
        """A format version upgrade."""
        return self.add(UpgradeFormatVersion(self._table, format_version))

    def append(
        self,
        files: Iterable[DataFile] = (),
        *,
        branch: str = MAIN_BRANCH,
        commit_key: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        wap_id: str | None = None,
    ) -> FastAppend:
        """A fast append; its files may use specs added earlier in the transaction."""
        return self.add(
            FastAppend(
                self._preview(),
                files,
                branch=branch,
                commit_key=commit_key,
                snapshot_properties=snapshot_properties,
                wap_id=wap_id,
            )
        )

    def manage_snapshots(self) -> ManageSnapshots:
        """Branch, tag, rollback and cherry-pick changes."""
        return self.add(ManageSnapshots(self._table))

    def commit(self) -> CommitResult:
        """Commit every update in one metadata commit (one retry loop for all)."""
        if self.result is not None:
            raise ValidationError("this transaction is already committed; start a new one")
        if not self._updates:
            raise ValidationError("the transaction has no updates to commit")
        start = _Start()
        self.result = commit_updates(
            self._table, [start, *self._updates, _Finish(start, self._updates[-1])]
        )
        return self.result

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self.result is None and self._updates:
            self.commit()


def _writes_files(update: PendingUpdate) -> bool:
    if isinstance(update, SnapshotProducer):
        return True
    if isinstance(update, ManageSnapshots):
        return update.writes_files
    return False
