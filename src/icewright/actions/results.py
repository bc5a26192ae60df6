"""Typed results of the actions: what each verb committed (or found already committed).

Every result is frozen. :class:`ActionResult` describes one snapshot-producing commit;
:class:`RewriteResult` adds what a compaction did per file group,
:class:`ManifestRewriteResult` what a manifest rewrite did, :class:`ViewResult`
describes a committed view version and :class:`WaitResult` the snapshots a wait found.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from icewright.commit.summary import (
    ADDED_DATA_FILES,
    ADDED_RECORDS,
    DELETED_DATA_FILES,
    DELETED_RECORDS,
)

if TYPE_CHECKING:
    from icewright.catalog.base import Table
    from icewright.commit.update import CommitResult
    from icewright.spec.schema import Schema
    from icewright.spec.snapshots import Snapshot

__all__ = [
    "ActionResult",
    "GroupFailure",
    "ManifestRewriteResult",
    "ReferenceResult",
    "RewriteResult",
    "RowChangeResult",
    "ViewResult",
    "WaitResult",
    "to_jsonable",
]


def _count(summary: Mapping[str, str], key: str) -> int:
    try:
        return int(summary.get(key, "0"))
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionResult:
    """What one action committed.

    ``committed`` is False when nothing new was committed: the commit key was already on
    the table (the snapshot found is described), or there was nothing to do (``snapshot_id``
    is then the table's current one, possibly None). File and record counts are the
    snapshot summary's (``added-data-files``, ``deleted-data-files``, ``added-records``,
    ``deleted-records``). ``timings`` holds seconds per phase (``plan``, ``write``,
    ``commit``, ``total``; only the phases that ran).
    """

    table: str
    metadata_location: str
    committed: bool
    snapshot_id: int | None = None
    sequence_number: int | None = None
    operation: str | None = None
    summary: Mapping[str, str] = field(default_factory=dict)
    files_added: int = 0
    files_removed: int = 0
    records_added: int = 0
    records_removed: int = 0
    timings: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def describing(
        cls,
        table: Table,
        snapshot: Snapshot | None,
        *,
        committed: bool,
        timings: Mapping[str, float],
        **more: Any,
    ) -> Self:
        """A result naming ``snapshot`` of ``table`` (None: no snapshot) without counting its
        files and records as this action's: the table's state when the action added no
        snapshot of its own (``more``: a subclass's own fields)."""
        return cls(
            table=str(table.identifier),
            metadata_location=table.metadata_location,
            committed=committed,
            snapshot_id=None if snapshot is None else snapshot.snapshot_id,
            sequence_number=None if snapshot is None else snapshot.sequence_number,
            operation=None if snapshot is None else str(snapshot.operation),
            summary={} if snapshot is None else dict(snapshot.summary or {}),
            timings=dict(timings),
            **more,
        )

    @classmethod
    def from_commit(cls, result: CommitResult, timings: Mapping[str, float]) -> ActionResult:
        """The result of a commit engine commit, with the action's timings."""
        summary = dict(result.summary)
        return cls(
            table=str(result.table.identifier),
            metadata_location=result.metadata_location,
            committed=result.committed,
            snapshot_id=result.snapshot_id,
            sequence_number=result.sequence_number,
            operation=None if result.operation is None else str(result.operation),
            summary=summary,
            files_added=_count(summary, ADDED_DATA_FILES),
            files_removed=_count(summary, DELETED_DATA_FILES),
            records_added=_count(summary, ADDED_RECORDS),
            records_removed=_count(summary, DELETED_RECORDS),
            timings=dict(timings),
        )


@dataclass(frozen=True, slots=True)
class GroupFailure:
    """A rewrite file group that did not land, and why (its files stay as they were)."""

    partition: tuple[object, ...]
    spec_id: int
    file_count: int
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteResult(ActionResult):
    """A compaction: the last commit's snapshot, totals over every commit of the run.

    ``commits`` lists each commit's own result (one unless partial progress was asked
    for); ``groups_rewritten`` counts the file groups that landed, ``failed_groups`` the
    ones that conflicted (with partial progress the rest still land). A run with no
    candidate files commits nothing (``committed`` False, ``groups_rewritten`` 0).
    """

    groups_rewritten: int = 0
    failed_groups: tuple[GroupFailure, ...] = ()
    commits: tuple[ActionResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestRewriteResult(ActionResult):
    """A manifest rewrite: its snapshot and what it did to the manifests.

    ``manifests_replaced`` data manifests were rewritten as ``manifests_created`` ones
    holding the same ``entries_processed`` live files; ``manifests_kept`` were listed as
    they were (other specs' or, after a retry, ones another commit added), delete
    manifests not counted. ``distributed`` says whether a Spark job wrote the manifests.
    Nothing to rewrite: ``committed`` False and every count 0.
    """

    manifests_replaced: int = 0
    manifests_created: int = 0
    manifests_kept: int = 0
    entries_processed: int = 0
    distributed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RowChangeResult(ActionResult):
    """A merge or a row-level delete: the snapshot, and what happened to rows.

    ``mode`` is how it was written (``copy-on-write`` or ``merge-on-read``);
    ``rows_inserted``, ``rows_updated`` and ``rows_deleted`` count source and target rows
    as Spark SQL's MERGE reports them; ``delete_files_added`` counts position delete
    files, ``files_read`` the data files the job read. When the commit key was already on
    the table the row counts are 0 (the job did not run again).
    """

    mode: str = "copy-on-write"
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    delete_files_added: int = 0
    files_read: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceResult:
    """What a verb on a snapshot reference did (publish, rollback, tag, branch, ...).

    ``ref`` is the reference it changed (``main`` for publish, rollback and
    set-current); ``snapshot_id`` is where it points now (None once dropped) and
    ``previous_snapshot_id`` where it pointed before (None if it did not exist).
    ``committed`` is False when the table already was as asked. ``created_snapshot`` is
    True when a cherry-pick re-applied changes as a new snapshot. ``refs`` maps every
    reference of the table to its snapshot afterwards.
    """

    table: str
    metadata_location: str
    committed: bool
    ref: str
    snapshot_id: int | None
    previous_snapshot_id: int | None
    created_snapshot: bool = False
    refs: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewResult:
    """A committed view version."""

    view: str
    metadata_location: str
    version_id: int
    schema: Schema = field(repr=False)
    referenced_tables: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitResult:
    """What :func:`~icewright.actions.wait_for_snapshot` saw.

    ``snapshots`` are the branch's snapshots newer than the given one that pass the
    filters, oldest first; ``timed_out`` is True (and ``snapshots`` empty) when none
    came before the timeout. ``latest_snapshot_id`` is the branch head last seen (pass it
    as ``after_snapshot_id`` to wait for the next one).
    """

    table: str
    snapshots: tuple[Snapshot, ...]
    timed_out: bool
    latest_snapshot_id: int | None
    metadata_location: str | None
    polls: int
    waited_seconds: float

    @property
    def found(self) -> bool:
        """True when at least one matching snapshot arrived."""
        return bool(self.snapshots)


# --- JSON documents ---------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """``value`` (an action's result, or anything in one) as JSON-able data.

    Dataclasses become objects of their fields, mappings objects with string keys,
    tuples/lists/sets arrays; enums their value; decimals, uuids and dates their text;
    bytes base64; non-finite floats their text. A catalog ``Table``/``View`` handle becomes
    its name; objects with a ``to_json`` returning a dict (schemas, snapshots, specs) use
    it. The one converter of the command's ``--json`` output, the Airflow operators'
    XCom values and any other orchestrator's metadata.
    """
    from icewright.catalog.base import Catalog, Table, View
    from icewright.io.base import FileIO

    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Table | View):
        return str(value.identifier)
    if isinstance(value, Catalog | FileIO):
        return None
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and (not dataclasses.is_dataclass(value) or _prefers_to_json(value)):
        try:
            out = to_json()
        except TypeError:
            out = None
        if isinstance(out, dict | list):
            return to_jsonable(out)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        result: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            result[f.name] = to_jsonable(getattr(value, f.name))
        for name in _EXTRA_PROPERTIES.get(type(value).__name__, ()):
            result[name] = to_jsonable(getattr(value, name))
        return result
    if isinstance(value, Mapping):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset):
        return [to_jsonable(v) for v in value]
    return str(value)


_EXTRA_PROPERTIES: dict[str, tuple[str, ...]] = {"WaitResult": ("found",)}
"""Computed properties worth showing next to a result's fields."""


def _prefers_to_json(value: Any) -> bool:
    """Spec dataclasses whose JSON form (Appendix C) reads better than their fields."""
    return type(value).__name__ in ("Snapshot", "PartitionSpec", "SortOrder", "SnapshotRef")
