"""Incremental scans: the rows a range of snapshots appended, or the range's changelog.

A range ``(start, end]`` is the snapshots after ``start`` up to and including ``end``
along ``end``'s ancestry (Iceberg Java's ``IncrementalAppendScan`` options
``start-snapshot-id``, exclusive, and ``end-snapshot-id``, inclusive). ``start`` must be
an ancestor of ``end``, or, as in Java, the parent of one after expiry removed it (a job
that read up to ``start`` reads on from there: nothing after it was lost); without it the
range starts at ``end``'s first snapshot (if expiry removed the start of that history,
what it appended is gone: an error, where Java and pyiceberg read from the oldest
snapshot left).

:func:`plan_appends` reads only what the range's snapshots added: for each snapshot, the
data manifests it wrote, and in them the entries it ADDED (a merged manifest also lists
older files as EXISTING; those are left out). Planning never reads the manifests of
the rest of the table, and looks the range's manifests up in the end snapshot's manifest
list, reading a snapshot's own list only when a later snapshot rewrote one of its
manifests. ``replace`` snapshots (compaction) change no rows and are skipped, as Java's
scan skips them; an ``overwrite`` or ``delete`` snapshot removed rows that appends
cannot express, so it is a :class:`ValidationError` naming it.

:func:`plan_changelog` describes the range as Spark's changelog view does (Java's
``IncrementalChangelogScan``): per snapshot, in order, the rows of the data files it
added (``INSERT``) and of the data files it removed (``DELETE``, with the delete files
that applied to them before). A snapshot that added delete files (merge-on-read) is a
:class:`ValidationError`, as in Java: its deleted rows are not listed as files.

No delete file applies to rows appended in an append-only range: position deletes of
older snapshots name older files, and equality deletes apply only to data files with a
smaller sequence number; so an append plan's tasks carry no delete files.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE, Expression
from icewright.io.base import FileIO
from icewright.manifest.data_file import EntryStatus, ManifestContent, ManifestEntry, ManifestFile
from icewright.manifest.manifest_reader import read_manifest
from icewright.scan.delete_index import DeleteFileIndex
from icewright.scan.planner import ManifestJob, ManifestPlanner, manifest_planner
from icewright.scan.tasks import FileScanTask, ScanMetrics, ScanPlan
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "ChangeType",
    "ChangelogTask",
    "SnapshotRange",
    "check_appends_only",
    "iter_changelog_groups",
    "plan_appends",
    "plan_changelog",
    "snapshot_range",
]

ADDED_DATA_FILES = "added-data-files"
"""The snapshot summary's count of data files added (spec: "Optional Snapshot Summary
Fields")."""


@dataclass(frozen=True, slots=True)
class SnapshotRange:
    """The snapshots after ``start_exclusive`` up to ``end``, oldest first."""

    start_exclusive: int | None
    end: int
    snapshots: tuple[Snapshot, ...]


def _lookup(metadata: TableMetadata, value: int | str, what: str, *, expired: bool = False) -> int:
    """A snapshot id given as an id or as the name of a branch or tag; with ``expired`` an
    id no longer in the table is returned as it is (the caller checks it)."""
    if isinstance(value, str):
        ref = metadata.refs.get(value)
        if ref is None:
            text = value.strip()
            if text.lstrip("-").isdigit():
                return _lookup(metadata, int(text), what, expired=expired)
            raise ValidationError(
                f"the {what} of the range, {value!r}, is neither a snapshot id nor a branch or "
                f"tag of the table (its references: {', '.join(sorted(metadata.refs)) or 'none'})"
            )
        return ref.snapshot_id
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"the {what} of the range must be a snapshot id, got {value!r}")
    if not expired and metadata.snapshot_by_id(value) is None:
        raise ValidationError(_missing(value, what))
    return value


def _missing(snapshot_id: int, what: str) -> str:
    return (
        f"the {what} of the range, snapshot {snapshot_id}, is not in the table (it may have "
        "expired); icewright snapshots TABLE lists the snapshots"
    )


def snapshot_range(
    metadata: TableMetadata, start: int | str | None, end: int | str | None = None
) -> SnapshotRange:
    """The range ``(start, end]`` (``end`` default: ``main``'s current snapshot; either
    may be a branch or tag name). ``start`` equal to ``end`` is an empty range; a
    ``start`` that is not an ancestor of ``end`` (nor the expired parent of one) is a
    :class:`ValidationError`."""
    if end is None:
        if metadata.current_snapshot_id is None:
            raise ValidationError("the table has no snapshot: there is no range to read")
        end_id = metadata.current_snapshot_id
    else:
        end_id = _lookup(metadata, end, "end")
    start_id = None if start is None else _lookup(metadata, start, "start", expired=True)
    chain: list[Snapshot] = []
    snapshot = metadata.snapshot_by_id(end_id)
    seen: set[int] = set()
    while snapshot is not None and snapshot.snapshot_id != start_id:
        if snapshot.snapshot_id in seen:
            break
        seen.add(snapshot.snapshot_id)
        chain.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)
    if start_id is not None and (snapshot is None or snapshot.snapshot_id != start_id):
        if snapshot is None and chain and chain[-1].parent_snapshot_id == start_id:
            # An expired start whose child is still here: Java's isParentAncestorOf.
            return SnapshotRange(start_id, end_id, tuple(reversed(chain)))
        if metadata.snapshot_by_id(start_id) is None:
            raise ValidationError(_missing(start_id, "start"))
        raise ValidationError(
            f"snapshot {start_id} is not an ancestor of snapshot {end_id}: a range runs along "
            "one line of history (start an ancestor of end)"
        )
    oldest = chain[-1] if chain else None
    if start_id is None and oldest is not None and oldest.parent_snapshot_id is not None:
        raise ValidationError(
            f"the history of snapshot {end_id} before snapshot {oldest.snapshot_id} was "
            "expired, so what it appended cannot be read as a range: start the range at a "
            f"snapshot still in the table (snapshot {oldest.snapshot_id} or later)"
        )
    return SnapshotRange(start_id, end_id, tuple(reversed(chain)))


def _added_manifests(
    planner: ManifestPlanner, snapshot: Snapshot, content: ManifestContent
) -> list[Any]:
    """The manifests of ``content`` that ``snapshot`` wrote (inline v1 manifests: all)."""
    out: list[Any] = []
    for m in planner.manifests(snapshot):
        if isinstance(m, str):
            if content is ManifestContent.DATA:
                out.append(m)
        elif m.content is content and m.added_snapshot_id == snapshot.snapshot_id:
            out.append(m)
    return out


def _listed_at_end(
    planner: ManifestPlanner, end: Snapshot | None, appends: list[Snapshot]
) -> dict[int, list[Any]]:
    """The data manifests each of ``appends`` wrote, found in one manifest list, ``end``'s,
    rather than in each snapshot's own: a snapshot's manifests stay listed until a later
    one rewrites them. A snapshot is answered only when the files its manifests there
    added add up to its summary's ``added-data-files``: then none of its manifests was
    rewritten (a missing one would fall short), and the result is what its own list
    gives. The others (a manifest merged or compacted later, no count) are left to their
    own lists. Reading one list instead of one per snapshot is what makes a range of many
    small appends cheap: decoding manifest lists is most of its planning."""
    if len(appends) < 2 or end is None or end.manifest_list is None:
        return {}
    found: dict[int, list[Any]] = {s.snapshot_id: [] for s in appends}
    for m in planner.manifests(end):
        if isinstance(m, ManifestFile) and m.content is ManifestContent.DATA:
            mine = found.get(m.added_snapshot_id)
            if mine is not None:
                mine.append(m)
    out: dict[int, list[Any]] = {}
    for snapshot in appends:
        counts = [m.added_files_count for m in found[snapshot.snapshot_id]]
        added = None if snapshot.summary is None else snapshot.summary.get(ADDED_DATA_FILES)
        if added is None or not added.isdigit() or None in counts:
            continue
        if sum(c for c in counts if c is not None) == int(added):
            out[snapshot.snapshot_id] = found[snapshot.snapshot_id]
    return out


def _entries(
    planner: ManifestPlanner, snapshot: Snapshot, manifests: list[Any], status: EntryStatus
) -> list[ManifestEntry]:
    """The entries of ``manifests`` that ``snapshot`` made with ``status`` and the scan's
    filter may match."""
    sid = snapshot.snapshot_id
    if status is EntryStatus.ADDED:
        jobs = []
        for m in manifests:
            if isinstance(m, str):
                jobs.append(ManifestJob(partial(planner.fetch_inline, m, snapshot), planner.read))
            elif m.has_added_files() and planner.keep_manifest(m):
                jobs.append(ManifestJob(partial(planner.fetch, m), planner.read))
        return [
            e
            for r in planner.read_all(jobs)
            for e in r.entries
            if e.status is EntryStatus.ADDED and e.snapshot_id == sid
        ]
    out = []
    for m in manifests:
        if isinstance(m, str) or not m.has_deleted_files():
            continue
        for e in read_manifest(planner.io.read(m.manifest_path), m):
            if e.status is EntryStatus.DELETED and e.snapshot_id == sid:
                out.append(e)
    return out


def _planner_for(
    metadata: TableMetadata,
    io: FileIO,
    *,
    row_filter: Expression,
    projected_schema: Schema | None,
    case_sensitive: bool,
) -> ManifestPlanner:
    # Java's incremental scans bind to the table's current schema.
    return manifest_planner(
        metadata,
        io,
        None,
        row_filter=row_filter,
        case_sensitive=case_sensitive,
        projected_schema=projected_schema,
    )


def check_appends_only(snapshots: SnapshotRange) -> None:
    """Raise :class:`ValidationError` naming the first snapshot of the range that removed
    rows (an ``overwrite`` or ``delete``): an incremental read of appends cannot express
    it."""
    for snapshot in snapshots.snapshots:
        op = snapshot.operation
        if op not in (Operation.APPEND, Operation.REPLACE):
            raise ValidationError(
                f"snapshot {snapshot.snapshot_id} in the range is an {op} (it removed rows, "
                "which an incremental read of appends cannot express): read the range's "
                "changelog instead (changelog=True, an 'iceberg-changelog:' source or "
                "icewright read --changelog), or start the range after it"
            )


def plan_appends(
    metadata: TableMetadata,
    io: FileIO,
    snapshots: SnapshotRange,
    *,
    row_filter: Expression = ALWAYS_TRUE,
    projected_schema: Schema | None = None,
    case_sensitive: bool = True,
) -> ScanPlan:
    """The files the range's snapshots appended (see the module docstring)."""
    planner = _planner_for(
        metadata,
        io,
        row_filter=row_filter,
        projected_schema=projected_schema,
        case_sensitive=case_sensitive,
    )
    check_appends_only(snapshots)
    entries: list[ManifestEntry] = []
    manifests = 0
    appends = [s for s in snapshots.snapshots if s.operation is not Operation.REPLACE]
    listed = _listed_at_end(planner, metadata.snapshot_by_id(snapshots.end), appends)
    for snapshot in appends:
        added = listed.get(snapshot.snapshot_id)
        if added is None:
            added = _added_manifests(planner, snapshot, ManifestContent.DATA)
        manifests += len(added)
        entries += _entries(planner, snapshot, added, EntryStatus.ADDED)
    empty = DeleteFileIndex([], planner.specs, metadata.schemas)
    tasks = tuple(planner.tasks(entries, empty))
    end = metadata.snapshot_by_id(snapshots.end)
    metrics = ScanMetrics(
        total_data_manifests=manifests,
        scanned_data_manifests=manifests,
        result_data_files=len(tasks),
    )
    return ScanPlan(end, planner.schema, planner.projected_schema, planner.expr, tasks, metrics)


class ChangeType(enum.StrEnum):
    """What a changelog row records (Spark's ``_change_type``)."""

    INSERT = "INSERT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class ChangelogTask:
    """A data file whose rows a snapshot of the range inserted or deleted; ``ordinal`` is
    the snapshot's position in the range (Spark's ``_change_ordinal``)."""

    change_type: ChangeType
    ordinal: int
    snapshot_id: int
    task: FileScanTask


def plan_changelog(
    metadata: TableMetadata,
    io: FileIO,
    snapshots: SnapshotRange,
    *,
    row_filter: Expression = ALWAYS_TRUE,
    projected_schema: Schema | None = None,
    case_sensitive: bool = True,
) -> tuple[ScanPlan, tuple[ChangelogTask, ...]]:
    """The range's changes (see the module docstring): a plan for the schema and
    filter, and the tasks with what each records."""
    planner = _planner_for(
        metadata,
        io,
        row_filter=row_filter,
        projected_schema=projected_schema,
        case_sensitive=case_sensitive,
    )
    out: list[ChangelogTask] = []
    ordinal = 0
    for snapshot in snapshots.snapshots:
        if snapshot.operation is Operation.REPLACE:
            continue
        if _added_manifests(planner, snapshot, ManifestContent.DELETES):
            raise ValidationError(
                f"snapshot {snapshot.snapshot_id} in the range added delete files "
                "(merge-on-read): a changelog lists rows of added and removed data files "
                "only, as Iceberg Java's; compact the table or start the range after it"
            )
        data = _added_manifests(planner, snapshot, ManifestContent.DATA)
        sid = snapshot.snapshot_id
        empty = DeleteFileIndex([], planner.specs, metadata.schemas)
        for task in planner.tasks(_entries(planner, snapshot, data, EntryStatus.ADDED), empty):
            out.append(ChangelogTask(ChangeType.INSERT, ordinal, sid, task))
        removed = _entries(planner, snapshot, data, EntryStatus.DELETED)
        if removed:
            index = _deletes_before(planner, metadata, snapshot)
            for task in planner.tasks(removed, index):
                out.append(ChangelogTask(ChangeType.DELETE, ordinal, sid, task))
        ordinal += 1
    end = metadata.snapshot_by_id(snapshots.end)
    tasks = tuple(c.task for c in out)
    metrics = ScanMetrics(result_data_files=len(tasks))
    plan = ScanPlan(end, planner.schema, planner.projected_schema, planner.expr, tasks, metrics)
    return plan, tuple(out)


def _deletes_before(
    planner: ManifestPlanner, metadata: TableMetadata, snapshot: Snapshot
) -> DeleteFileIndex:
    """The delete files live in ``snapshot``'s parent: those that applied to the rows of
    the files ``snapshot`` removed."""
    parent_id = snapshot.parent_snapshot_id
    parent = None if parent_id is None else metadata.snapshot_by_id(parent_id)
    entries: list[ManifestEntry] = []
    if parent is not None:
        jobs = [
            ManifestJob(
                partial(planner.fetch, m, all_metrics=True), partial(planner.read, all_metrics=True)
            )
            for m in planner.manifests(parent)
            if isinstance(m, ManifestFile) and m.content is ManifestContent.DELETES
        ]
        entries = [e for r in planner.read_all(jobs) for e in r.entries]
    return DeleteFileIndex(entries, planner.specs, metadata.schemas)


def iter_changelog_groups(
    changes: tuple[ChangelogTask, ...],
) -> Iterator[tuple[ChangeType, int, int, tuple[FileScanTask, ...]]]:
    """The changelog's tasks grouped by (change type, ordinal, snapshot), in order."""
    groups: dict[tuple[ChangeType, int, int], list[FileScanTask]] = {}
    for c in changes:
        groups.setdefault((c.change_type, c.ordinal, c.snapshot_id), []).append(c.task)
    for (kind, ordinal, sid), tasks in groups.items():
        yield kind, ordinal, sid, tuple(tasks)
