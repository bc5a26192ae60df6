"""Watching a table branch for new snapshots: the orchestrator-neutral core.

:func:`icewright.actions.wait_for_snapshot` loops over it; so do the Airflow sensor
(:mod:`icewright.sensors.snapshot`) and triggers (:mod:`icewright.providers.triggers`),
and any other orchestrator's sensor can (nothing here imports one).

A :class:`SnapshotWatch` remembers the last metadata location it looked at. Each
:meth:`~SnapshotWatch.poll` reads only the catalog pointer
(``Catalog.table_metadata_location``); the metadata file is read only when the pointer
moved. New snapshots are the branch's ancestry after a :class:`Watermark` (spec:
"Snapshots": every snapshot but the first names its ``parent-snapshot-id``; spec: "Snapshot
References": a branch names its head), oldest first, kept when they pass a
:class:`SnapshotFilter`.

A watermark that is no longer on the branch (expired, or the branch was rolled back past
it) must not make old snapshots look new: then only snapshots with a larger
``sequence-number`` (format v2 and later) or, for v1 tables whose sequence numbers are all
0, a later ``timestamp-ms`` count. A bare snapshot id (``Watermark(id)``, no order
information) that left the branch counts every snapshot of the branch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_OPERATIONS",
    "PollResult",
    "SnapshotFilter",
    "SnapshotWatch",
    "Watermark",
    "new_snapshots",
    "snapshot_record",
]

DEFAULT_OPERATIONS: tuple[str, ...] = ("append", "overwrite", "delete")
"""Operations that wake a watcher by default: ``replace`` (compaction) changes no data."""

_KNOWN_OPERATIONS = frozenset({"append", "replace", "overwrite", "delete"})


@dataclass(frozen=True, slots=True)
class Watermark:
    """The last snapshot a watcher has seen: snapshots after it are new.

    ``sequence_number`` and ``timestamp_ms`` guard against the snapshot leaving the
    branch (expiry, rollback): see the module docstring.
    """

    snapshot_id: int
    sequence_number: int = 0
    timestamp_ms: int = 0

    @classmethod
    def of(cls, snapshot: Snapshot) -> Watermark:
        """The watermark at ``snapshot``."""
        return cls(snapshot.snapshot_id, snapshot.sequence_number, snapshot.timestamp_ms)

    def to_json(self) -> dict[str, int]:
        """A JSON-able dict (an orchestrator's state: an XCom, asset state, a sensor cursor, a
        file)."""
        return {
            "snapshot_id": self.snapshot_id,
            "sequence_number": self.sequence_number,
            "timestamp_ms": self.timestamp_ms,
        }

    @classmethod
    def from_json(cls, obj: object) -> Watermark | None:
        """The watermark ``obj`` holds (what :meth:`to_json` wrote, or a bare snapshot id);
        None for None."""
        if obj is None:
            return None
        if isinstance(obj, bool):
            raise ValidationError(f"a snapshot watermark must be a dict or an id, got {obj!r}")
        if isinstance(obj, int | str):
            return cls(snapshot_id=_as_int(obj, "snapshot id"))
        if isinstance(obj, Mapping) and "snapshot_id" in obj:
            return cls(
                snapshot_id=_as_int(obj["snapshot_id"], "snapshot_id"),
                sequence_number=_as_int(obj.get("sequence_number", 0), "sequence_number"),
                timestamp_ms=_as_int(obj.get("timestamp_ms", 0), "timestamp_ms"),
            )
        raise ValidationError(
            f"a snapshot watermark must be a dict with 'snapshot_id' or an id, got {obj!r}"
        )


def _as_int(value: object, what: str) -> int:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        raise ValidationError(f"{what} must be an integer, got {value!r}") from None


@dataclass(frozen=True, slots=True)
class SnapshotFilter:
    """Which new snapshots count.

    A snapshot passes when its operation is one of ``operations`` (None: any), every
    ``summary_filters`` key has that value in its summary, its ``added-records`` is at
    least ``min_added_records``, and its ``timestamp-ms`` is after ``min_timestamp_ms``.
    """

    operations: tuple[str, ...] | None = DEFAULT_OPERATIONS
    summary_filters: tuple[tuple[str, str], ...] = ()
    min_added_records: int | None = None
    min_timestamp_ms: int | None = None

    @classmethod
    def build(
        cls,
        operations: Iterable[str] | str | None = DEFAULT_OPERATIONS,
        summary_filters: Mapping[str, object] | None = None,
        min_added_records: int | None = None,
        min_timestamp_ms: int | None = None,
    ) -> SnapshotFilter:
        """A filter from user arguments, checked (a typo in an operation name would
        otherwise make a sensor wait forever)."""
        ops: tuple[str, ...] | None
        if operations is None:
            ops = None
        else:
            ops = (operations,) if isinstance(operations, str) else tuple(map(str, operations))
            unknown = [o for o in ops if o not in _KNOWN_OPERATIONS]
            if unknown or not ops:
                raise ValidationError(
                    f"operations {list(ops)!r} must be a non-empty list of "
                    f"{', '.join(sorted(_KNOWN_OPERATIONS))} (or None for any)"
                )
        if summary_filters is not None and not isinstance(summary_filters, Mapping):
            raise ValidationError(
                "summary_filters must be a mapping of summary key to value, "
                f"got {summary_filters!r}"
            )
        pairs = tuple((str(k), str(v)) for k, v in (summary_filters or {}).items())
        if min_added_records is not None:
            min_added_records = _as_int(min_added_records, "min_added_records")
            if min_added_records < 0:
                raise ValidationError(f"min_added_records must be >= 0, got {min_added_records}")
        if min_timestamp_ms is not None:
            min_timestamp_ms = _as_int(min_timestamp_ms, "min_timestamp_ms")
        return cls(ops, pairs, min_added_records, min_timestamp_ms)

    def passes(self, snapshot: Snapshot) -> bool:
        """True when ``snapshot`` counts."""
        summary: Mapping[str, str] = snapshot.summary or {}
        if self.operations is not None and str(snapshot.operation) not in self.operations:
            return False
        if any(summary.get(k) != v for k, v in self.summary_filters):
            return False
        if self.min_timestamp_ms is not None and snapshot.timestamp_ms <= self.min_timestamp_ms:
            return False
        if self.min_added_records is not None:
            try:
                added = int(summary.get("added-records", "0"))
            except ValueError:
                return False
            if added < self.min_added_records:
                return False
        return True


def new_snapshots(metadata: TableMetadata, branch: str, after: Watermark | None) -> list[Snapshot]:
    """The branch's ancestry after ``after``, oldest first (every snapshot with None)."""
    chain: list[Snapshot] = []
    snapshot = metadata.snapshot_for_ref(branch)
    seen: set[int] = set()
    reached = False
    while snapshot is not None and snapshot.snapshot_id not in seen:
        if after is not None and snapshot.snapshot_id == after.snapshot_id:
            reached = True
            break
        seen.add(snapshot.snapshot_id)
        chain.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)
    chain.reverse()
    if after is None or reached:
        return chain
    # The watermark left the branch: fall back to order (module docstring).
    if after.sequence_number > 0:
        return [s for s in chain if s.sequence_number > after.sequence_number]
    if after.timestamp_ms > 0:
        return [s for s in chain if s.timestamp_ms > after.timestamp_ms]
    return chain


def snapshot_record(snapshot: Snapshot) -> dict[str, Any]:
    """A JSON-able description of ``snapshot`` (sensor results, trigger events, asset event
    metadata)."""
    summary = dict(snapshot.summary or {})
    try:
        added = int(summary.get("added-records", "0"))
    except ValueError:
        added = 0
    return {
        "snapshot_id": snapshot.snapshot_id,
        "parent_snapshot_id": snapshot.parent_snapshot_id,
        "sequence_number": snapshot.sequence_number,
        "operation": None if snapshot.operation is None else str(snapshot.operation),
        "timestamp_ms": snapshot.timestamp_ms,
        "added_records": added,
        "summary": summary,
    }


@dataclass(frozen=True, slots=True)
class PollResult:
    """What one :meth:`SnapshotWatch.poll` saw.

    ``changed`` is False when the pointer had not moved (nothing else was read);
    ``snapshots`` are the new snapshots passing the filter, oldest first; ``head`` is the
    branch head's watermark (None for a branch without snapshots), ``examined`` how
    many new snapshots there were before filtering and ``passed_over`` those the filter
    left out.
    """

    changed: bool
    metadata_location: str
    snapshots: tuple[Snapshot, ...] = ()
    head: Watermark | None = None
    examined: int = 0
    passed_over: tuple[Snapshot, ...] = ()

    @property
    def found(self) -> bool:
        """True when at least one snapshot passed the filter."""
        return bool(self.snapshots)

    def records(self) -> list[dict[str, Any]]:
        """:func:`snapshot_record` of each snapshot found."""
        return [snapshot_record(s) for s in self.snapshots]


@dataclass
class SnapshotWatch:
    """Polls one table branch for snapshots newer than ``after`` passing ``filter``.

    ``last_location`` is the metadata location last read with no snapshot found; a poll
    that finds the pointer still there reads nothing else. ``after`` does not move by
    itself: callers that announce snapshots advance it with :meth:`advance`.
    """

    catalog: Catalog
    table: Identifier
    branch: str = "main"
    after: Watermark | None = None
    filter: SnapshotFilter = field(default_factory=SnapshotFilter)
    last_location: str | None = None

    @classmethod
    def open(
        cls,
        catalog: Catalog,
        table: str | Sequence[str] | Identifier,
        *,
        branch: str = "main",
        after: Watermark | None = None,
        filter: SnapshotFilter | None = None,
        last_location: str | None = None,
    ) -> SnapshotWatch:
        """A watch on ``table`` (a name such as ``"sales.orders"``)."""
        from icewright.catalog import Identifier

        if not branch or not isinstance(branch, str):
            raise ValidationError(f"branch must be a non-empty ref name, got {branch!r}")
        ident = table if isinstance(table, Identifier) else Identifier.parse(table)
        return cls(catalog, ident, branch, after, filter or SnapshotFilter(), last_location)

    def resolve_after(self, snapshot_id: int) -> Watermark:
        """A watermark for a user-given snapshot id, with its sequence number and time when
        the table still has that snapshot (so expiry later cannot turn old snapshots new)."""
        metadata = self.catalog.load_table(self.table).metadata
        snapshot = metadata.snapshot_by_id(snapshot_id)
        return Watermark(snapshot_id) if snapshot is None else Watermark.of(snapshot)

    def resolve_known(self, after_snapshot_id: int | None = None) -> Watermark | None:
        """:meth:`resolve_after` for an id the table must have, and a check that the
        watched branch exists (``main`` of a table without snapshots is fine): else
        :class:`ValidationError`, as a sensor would otherwise wait for what cannot come, or
        count the whole history as new. One metadata read, none for ``main`` without an
        id."""
        if after_snapshot_id is None and self.branch == "main":
            return None
        metadata = self.catalog.load_table(self.table).metadata
        if self.branch != "main" and self.branch not in metadata.refs:
            known = ", ".join(sorted(metadata.refs)) or "none"
            raise ValidationError(
                f"{self.table} has no branch {self.branch!r} (its refs: {known}): watch an "
                "existing branch, or create it first"
            )
        if after_snapshot_id is None:
            return None
        snapshot = metadata.snapshot_by_id(after_snapshot_id)
        if snapshot is None:
            raise ValidationError(
                f"snapshot {after_snapshot_id} is not in the history of {self.table} (expired, "
                "or never one of its snapshots): give a snapshot id the table has, or use "
                "since_previous_run=True"
            )
        return Watermark.of(snapshot)

    def head(self) -> Watermark | None:
        """The branch head now (one metadata read)."""
        loaded = self.catalog.load_table(self.table)
        snapshot = loaded.metadata.snapshot_for_ref(self.branch)
        return None if snapshot is None else Watermark.of(snapshot)

    def poll(self) -> PollResult:
        """Read the pointer; when it moved, the new snapshots that pass the filter."""
        location = self.catalog.table_metadata_location(self.table)
        if location == self.last_location:
            return PollResult(changed=False, metadata_location=location)
        loaded = self.catalog.load_table(self.table)
        metadata = loaded.metadata
        found = new_snapshots(metadata, self.branch, self.after)
        matched = tuple(s for s in found if self.filter.passes(s))
        kept = {s.snapshot_id for s in matched}
        head_snapshot = metadata.snapshot_for_ref(self.branch)
        head = None if head_snapshot is None else Watermark.of(head_snapshot)
        if not matched:
            self.last_location = loaded.metadata_location
        return PollResult(
            changed=True,
            metadata_location=loaded.metadata_location,
            snapshots=matched,
            head=head,
            examined=len(found),
            passed_over=tuple(s for s in found if s.snapshot_id not in kept),
        )

    def advance(self, result: PollResult) -> None:
        """Move ``after`` to the head ``result`` saw (its snapshots are announced)."""
        if result.head is not None:
            self.after = result.head
        self.last_location = result.metadata_location


def stable_digest(obj: object) -> str:
    """A short, stable digest of a JSON-able value (watermark keys)."""
    import hashlib

    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
