"""Branches, tags, rollback, cherry-pick and write-audit-publish (spec: "Snapshot
References"; Iceberg Java's ``SnapshotManager``, ``UpdateSnapshotReferencesOperation``,
``SetSnapshotOperation``, ``CherryPickOperation`` and ``WapUtil``).

:class:`ManageSnapshots` collects reference changes and replays them, in the order
they were asked for, on the metadata each commit attempt starts from. Every rule is
checked again on that metadata (a branch to create must not exist, a rollback target
must be an ancestor, a fast-forward must go forward), so a lost race either re-applies
cleanly or fails with ``ValidationError``. Choices where Java leaves room: a branch or
tag created without a snapshot id points at the snapshot that is current when the
change is applied; a cherry-pick or publish looks its snapshot up then too.

Write-audit-publish: :class:`StagedAppend` adds a snapshot carrying ``wap.id`` without
moving any branch (Java's ``stageOnly``; the table needs ``write.wap.enabled=true``);
:meth:`ManageSnapshots.publish` cherry-picks it onto ``main`` with ``published-wap-id``
and refuses a WAP id that an ancestor of ``main`` already carries.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from icewright.catalog.base import Table
from icewright.commit import summary as keys
from icewright.commit.append import FastAppend
from icewright.commit.snapshot_producer import WAP_ENABLED, SnapshotProducer
from icewright.commit.summary import SummaryBuilder
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile, EntryStatus, ManifestContent, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.documents import (
    FrozenMap,
)
from icewright.spec.snapshots import (
    MAIN_BRANCH,
    Operation,
    Snapshot,
    SnapshotRef,
    SnapshotRefType,
)
from icewright.spec.table_metadata import TableMetadata

__all__ = ["WAP_ENABLED", "ManageSnapshots", "StagedAppend", "ancestor_ids", "drop_ref"]

Step = Callable[[TableMetadata, int], TableMetadata]


def _now_ms() -> int:
    return int(time.time() * 1000)


def ancestor_ids(metadata: TableMetadata, snapshot_id: int | None) -> list[int]:
    """``snapshot_id`` and its ancestors, newest first (stops at an expired parent)."""
    out: list[int] = []
    snapshot = None if snapshot_id is None else metadata.snapshot_by_id(snapshot_id)
    while snapshot is not None and snapshot.snapshot_id not in out:
        out.append(snapshot.snapshot_id)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)
    return out


def _summary(snapshot: Snapshot | None) -> Mapping[str, str]:
    return {} if snapshot is None or snapshot.summary is None else snapshot.summary


def _check_wap_publish(metadata: TableMetadata, picked: Snapshot) -> str | None:
    """The picked snapshot's WAP id; ``ValidationError`` if ``main`` already has it
    (Java ``WapUtil.validateWapPublish``)."""
    wap_id = _summary(picked).get(keys.STAGED_WAP_ID)
    if not wap_id:
        return None
    for sid in ancestor_ids(metadata, metadata.current_snapshot_id):
        s = _summary(metadata.snapshot_by_id(sid))
        if wap_id in (s.get(keys.STAGED_WAP_ID), s.get(keys.PUBLISHED_WAP_ID)):
            raise ValidationError(
                f"WAP id {wap_id!r} is already published (snapshot {sid} on main); "
                "a WAP id is published once: stage the data again under a new id"
            )
    return wap_id


def _manifests(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    if snapshot.manifest_list is None:
        raise ValidationError(
            f"snapshot {snapshot.snapshot_id} lists its manifests inline (an early v1 table); "
            "it cannot be cherry-picked"
        )
    return read_manifest_list(io.read(snapshot.manifest_list), snapshot.manifest_list)


def _changes(io: FileIO, snapshot: Snapshot) -> tuple[list[DataFile], list[DataFile]]:
    """The data files a snapshot added and removed (Java ``SnapshotChanges``)."""
    added: list[DataFile] = []
    removed: list[DataFile] = []
    sid = snapshot.snapshot_id
    for m in _manifests(io, snapshot):
        if m.added_snapshot_id != sid or m.content is not ManifestContent.DATA:
            continue
        for e in read_manifest(io.read(m.manifest_path), m):
            if e.snapshot_id == sid and e.status is EntryStatus.ADDED:
                added.append(e.data_file)
            elif e.snapshot_id == sid and e.status is EntryStatus.DELETED:
                removed.append(e.data_file)
    return added, removed


# --- staged appends (write-audit-publish) -----------------------------------------


class StagedAppend(FastAppend):
    """A fast append staged for write-audit-publish: ``FastAppend`` with ``wap_id``
    (:class:`~icewright.commit.snapshot_producer.SnapshotOptions`), kept as a name of
    its own. The snapshot is added with ``wap.id`` in its summary, its parent is
    ``main``'s head, and no branch moves.

    Publish it later with ``ManageSnapshots(table).publish(wap_id).commit()``.
    """

    def __init__(
        self,
        table: Table,
        files: Iterable[DataFile] = (),
        *,
        wap_id: str,
        commit_key: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(wap_id, str) or not wap_id:
            raise ValidationError(f"a staged append needs a non-empty wap_id, got {wap_id!r}")
        super().__init__(
            table,
            files,
            commit_key=commit_key,
            snapshot_properties=snapshot_properties,
            wap_id=wap_id,
        )


# --- cherry-pick ----------------------------------------------------------------------


class _CherryPick(FastAppend):
    """A new snapshot on ``main`` that re-applies a picked snapshot's changes: its added
    files (an append), or its added and removed files (a dynamic overwrite)."""

    def __init__(self, table: Table, picked: Snapshot) -> None:
        self.picked = picked
        published = _summary(picked).get(keys.STAGED_WAP_ID)
        props = {keys.SOURCE_SNAPSHOT_ID: str(picked.snapshot_id)}
        if published:
            props[keys.PUBLISHED_WAP_ID] = published
        op = picked.operation
        self.is_overwrite = (
            op is Operation.OVERWRITE
            and _summary(picked).get(keys.REPLACE_PARTITIONS, "false").lower() == "true"
        )
        self.requires_fast_forward = op is not Operation.APPEND and not self.is_overwrite
        added: list[DataFile] = []
        self.removed: list[DataFile] = []
        if not self.requires_fast_forward:
            added, self.removed = _changes(table.io, picked)
        super().__init__(table, added, snapshot_properties=props)
        self._rewritten: dict[str, tuple[ManifestFile, tuple[DataFile, ...]]] = {}
        self._last_manifests: set[str] = set()

    def operation(self) -> Operation:
        return Operation.OVERWRITE if self.is_overwrite else Operation.APPEND

    def validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        pid = self.picked.snapshot_id
        _check_wap_publish(base, self.picked)  # first, as Java checks it when picking
        ancestors = ancestor_ids(base, base.current_snapshot_id)
        if pid in ancestors:
            raise ValidationError(
                f"cannot cherry-pick snapshot {pid}: it is already an ancestor of main"
            )
        for sid in ancestors:
            if _summary(base.snapshot_by_id(sid)).get(keys.SOURCE_SNAPSHOT_ID) == str(pid):
                raise ValidationError(
                    f"cannot cherry-pick snapshot {pid}: it was already cherry-picked onto main "
                    f"as snapshot {sid}"
                )
        if self.is_overwrite:
            self._check_replaced_partitions(base, ancestors)

    def _check_replaced_partitions(self, base: TableMetadata, ancestors: list[int]) -> None:
        """Java ``validateReplacedPartitions``: no file added since the picked overwrite's
        parent may land in a partition it replaces."""
        parent_id = self.picked.parent_snapshot_id
        if parent_id is not None and parent_id not in ancestors:
            raise ValidationError(
                f"cannot cherry-pick overwrite {self.picked.snapshot_id}: it is based on "
                f"snapshot {parent_id}, which is not an ancestor of main"
            )
        replaced = {(f.spec_id, f.partition) for f in self._files}
        for sid in ancestors:
            if sid == parent_id:
                break
            snapshot = base.snapshot_by_id(sid)
            assert snapshot is not None
            for m in _manifests(self.table.io, snapshot):
                if m.added_snapshot_id != sid or m.content is not ManifestContent.DATA:
                    continue
                for e in read_manifest(self.table.io.read(m.manifest_path), m):
                    f = e.data_file
                    if e.status is EntryStatus.ADDED and (f.spec_id, f.partition) in replaced:
                        raise ValidationError(
                            f"cannot cherry-pick overwrite {self.picked.snapshot_id}: snapshot "
                            f"{sid} added {f.file_path} to replaced partition {f.partition}"
                        )

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        out = super().manifests(base, parent, summary)
        if self.removed:
            out = self._delete_removed(base, out, summary)
        self._last_manifests = {m.manifest_path for m in out}
        return out

    def _delete_removed(
        self, base: TableMetadata, manifests: list[ManifestFile], summary: SummaryBuilder
    ) -> list[ManifestFile]:
        """Rewrite the manifests holding files the picked overwrite removed; each rewrite
        is done once and reused by later attempts (Java's filtered-manifest cache)."""
        wanted = {f.file_path for f in self.removed}
        found: set[str] = set()
        out = []
        for m in manifests:
            if m.added_snapshot_id == self.snapshot_id or m.content is not ManifestContent.DATA:
                out.append(m)
                continue
            if m.manifest_path not in self._rewritten:
                self._rewritten[m.manifest_path] = self._filter(base, m, wanted)
            kept, deleted = self._rewritten[m.manifest_path]
            for f in deleted:
                summary.deleted_file(base.spec_by_id(f.spec_id), f)
                found.add(f.file_path)
            out.append(kept)
        missing = sorted(wanted - found)
        if missing:
            raise ValidationError(
                f"cannot cherry-pick overwrite {self.picked.snapshot_id}: files it removed are "
                f"no longer in the table: {', '.join(missing[:5])}"
            )
        return out

    def _filter(
        self, base: TableMetadata, m: ManifestFile, wanted: set[str]
    ) -> tuple[ManifestFile, tuple[DataFile, ...]]:
        entries = read_manifest(self.table.io.read(m.manifest_path), m)
        if not any(e.is_live and e.data_file.file_path in wanted for e in entries):
            return m, ()
        writer = ManifestWriter(
            format_version=base.format_version,
            spec=base.spec_by_id(m.partition_spec_id),
            schema=base.schema(),
            snapshot_id=self.snapshot_id,
        )
        deleted = []
        for e in entries:
            seq = e.sequence_number or 0
            if not e.is_live:
                continue  # earlier deletes are not carried forward
            if e.data_file.file_path in wanted:
                writer.delete(
                    e.data_file,
                    data_sequence_number=seq,
                    file_sequence_number=e.file_sequence_number,
                )
                deleted.append(e.data_file)
            else:
                writer.existing(
                    e.data_file,
                    snapshot_id=e.snapshot_id or m.added_snapshot_id,
                    data_sequence_number=seq,
                    file_sequence_number=e.file_sequence_number,
                )
        path = self.new_manifest_path(base)
        data, manifest = writer.finish(path)
        self.table.io.create(path, data)
        return manifest, tuple(deleted)

    def files_not_committed(self) -> Sequence[str]:
        stale = [
            m.manifest_path
            for m, _ in self._rewritten.values()
            if m.added_snapshot_id == self.snapshot_id
            and m.manifest_path not in self._last_manifests
        ]
        return [*super().files_not_committed(), *stale]


# --- the reference manager ------------------------------------------------------------


def _name(name: object, what: str = "reference") -> str:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"a {what} name must be a non-empty string, got {name!r}")
    return name


def _snapshot_id(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"a snapshot id must be an integer, got {value!r}")
    return value


def _require_snapshot(metadata: TableMetadata, snapshot_id: int) -> Snapshot:
    snapshot = metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise ValidationError(
            f"the table has no snapshot {snapshot_id} (it may have expired); "
            "use table.metadata.snapshots to list the snapshots"
        )
    return snapshot


def _require_ref(metadata: TableMetadata, name: str, kind: SnapshotRefType | None) -> SnapshotRef:
    ref = metadata.refs.get(name)
    if ref is None:
        what = "reference" if kind is None else str(kind)
        raise ValidationError(
            f"the table has no {what} named {name!r}; its references are {sorted(metadata.refs)}"
        )
    if kind is not None and ref.type is not kind:
        raise ValidationError(f"{name!r} is a {ref.type}, not a {kind}")
    return ref


def drop_ref(metadata: TableMetadata, name: str) -> TableMetadata:
    """``metadata`` without reference ``name``; dropping ``main`` clears the current
    snapshot (only REPLACE TABLE does that)."""
    refs = FrozenMap((k, v) for k, v in metadata.refs.items() if k != name)
    if name == MAIN_BRANCH:
        return dataclasses.replace(metadata, refs=refs, current_snapshot_id=None)
    return dataclasses.replace(metadata, refs=refs)


class ManageSnapshots(PendingUpdate):
    """Create, move and remove branches and tags; roll back; cherry-pick; publish.

    >>> # ManageSnapshots(table).create_tag("v1", snap_id).create_branch("audit").commit()

    Each method returns ``self``; :meth:`commit` applies every change in one metadata
    commit. ``main`` cannot be removed or renamed.
    """

    def __init__(self, table: Table) -> None:
        self._table = table
        self._steps: list[tuple[Step, bool]] = []
        self._producers: dict[str, SnapshotProducer] = {}
        self._used: set[str] = set()

    @property
    def writes_files(self) -> bool:
        """Whether applying may write manifests (a cherry-pick or an empty new branch)."""
        return any(writes for _, writes in self._steps)

    def _add(self, step: Step, writes: bool = False) -> ManageSnapshots:
        self._steps.append((step, writes))
        return self

    # --- branches and tags ---------------------------------------------------------

    def create_branch(
        self,
        name: str,
        snapshot_id: int | None = None,
        *,
        min_snapshots_to_keep: int | None = None,
        max_snapshot_age_ms: int | None = None,
        max_ref_age_ms: int | None = None,
    ) -> ManageSnapshots:
        """Create branch ``name`` at ``snapshot_id`` (default: main's current snapshot; on
        a table without snapshots, an empty snapshot is made for it, as Java does)."""
        name = _name(name, "branch")
        sid = None if snapshot_id is None else _snapshot_id(snapshot_id)
        ref = SnapshotRef(
            0, SnapshotRefType.BRANCH, min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms
        )

        def step(m: TableMetadata, now: int) -> TableMetadata:
            if name in m.refs:
                raise ValidationError(f"cannot create branch {name!r}: the reference exists")
            target = sid if sid is not None else m.current_snapshot_id
            if target is None:
                producer = self._producer(
                    f"branch:{name}", lambda: FastAppend(self._handle(m), branch=name)
                )
                m = producer.apply(m)
                return m.set_ref(
                    name, dataclasses.replace(ref, snapshot_id=m.refs[name].snapshot_id), now
                )
            _require_snapshot(m, target)
            return m.set_ref(name, dataclasses.replace(ref, snapshot_id=target), now)

        return self._add(step, writes=sid is None)

    def create_tag(
        self, name: str, snapshot_id: int | None = None, *, max_ref_age_ms: int | None = None
    ) -> ManageSnapshots:
        """Create tag ``name`` at ``snapshot_id`` (default: main's current snapshot)."""
        name = _name(name, "tag")
        sid = None if snapshot_id is None else _snapshot_id(snapshot_id)
        SnapshotRef(0, SnapshotRefType.TAG, max_ref_age_ms=max_ref_age_ms)  # checks the value

        def step(m: TableMetadata, now: int) -> TableMetadata:
            if name in m.refs:
                raise ValidationError(f"cannot create tag {name!r}: the reference exists")
            target = sid if sid is not None else m.current_snapshot_id
            if target is None:
                raise ValidationError(f"cannot create tag {name!r}: the table has no snapshot")
            _require_snapshot(m, target)
            tag = SnapshotRef(target, SnapshotRefType.TAG, max_ref_age_ms=max_ref_age_ms)
            return m.set_ref(name, tag, now)

        return self._add(step)

    def remove_branch(self, name: str) -> ManageSnapshots:
        """Remove a branch (never ``main``); its snapshots stay until expired."""
        name = _name(name, "branch")
        if name == MAIN_BRANCH:
            raise ValidationError("the main branch cannot be removed")

        def step(m: TableMetadata, now: int) -> TableMetadata:
            _require_ref(m, name, SnapshotRefType.BRANCH)
            return drop_ref(m, name)

        return self._add(step)

    def remove_tag(self, name: str) -> ManageSnapshots:
        """Remove a tag."""
        name = _name(name, "tag")

        def step(m: TableMetadata, now: int) -> TableMetadata:
            _require_ref(m, name, SnapshotRefType.TAG)
            return drop_ref(m, name)

        return self._add(step)

    def rename_branch(self, name: str, new_name: str) -> ManageSnapshots:
        """Rename a branch (not ``main``), keeping its snapshot and retention settings."""
        name, new_name = _name(name, "branch"), _name(new_name, "branch")
        if name == MAIN_BRANCH:
            raise ValidationError("the main branch cannot be renamed")

        def step(m: TableMetadata, now: int) -> TableMetadata:
            ref = _require_ref(m, name, SnapshotRefType.BRANCH)
            if new_name in m.refs:
                raise ValidationError(f"cannot rename {name!r} to {new_name!r}: that ref exists")
            return drop_ref(m, name).set_ref(new_name, ref, now)

        return self._add(step)

    def replace_branch(self, name: str, target: int | str) -> ManageSnapshots:
        """Point branch ``name`` at a snapshot id, or at the head of ref ``target`` (by
        name; the branch is then created if missing, as Java's ``replaceBranch(from, to)``)."""
        name = _name(name, "branch")
        if isinstance(target, str):
            return self._move_branch(name, _name(target), fast_forward=False)
        sid = _snapshot_id(target)

        def step(m: TableMetadata, now: int) -> TableMetadata:
            ref = _require_ref(m, name, SnapshotRefType.BRANCH)
            _require_snapshot(m, sid)
            return m.set_ref(name, dataclasses.replace(ref, snapshot_id=sid), now)

        return self._add(step)

    def fast_forward(self, branch: str, to: str) -> ManageSnapshots:
        """Move ``branch`` to the head of ref ``to``, only if ``branch``'s head is an
        ancestor of it (creates ``branch`` there if it does not exist)."""
        return self._move_branch(_name(branch, "branch"), _name(to), fast_forward=True)

    def _move_branch(self, name: str, to: str, *, fast_forward: bool) -> ManageSnapshots:
        def step(m: TableMetadata, now: int) -> TableMetadata:
            target = _require_ref(m, to, None).snapshot_id
            ref = m.refs.get(name)
            if ref is None:
                branch = SnapshotRef(target, SnapshotRefType.BRANCH)
                return m.set_ref(name, branch, now)
            if not ref.is_branch:
                raise ValidationError(f"{name!r} is a tag, not a branch")
            if ref.snapshot_id == target:
                return m
            if fast_forward and ref.snapshot_id not in ancestor_ids(m, target):
                raise ValidationError(
                    f"cannot fast-forward {name!r} to {to!r}: the head of {name!r} "
                    f"({ref.snapshot_id}) is not an ancestor of {to!r} ({target})"
                )
            return m.set_ref(name, dataclasses.replace(ref, snapshot_id=target), now)

        return self._add(step)

    def replace_tag(self, name: str, snapshot_id: int) -> ManageSnapshots:
        """Point tag ``name`` at another snapshot."""
        name, sid = _name(name, "tag"), _snapshot_id(snapshot_id)

        def step(m: TableMetadata, now: int) -> TableMetadata:
            ref = _require_ref(m, name, SnapshotRefType.TAG)
            _require_snapshot(m, sid)
            return m.set_ref(name, dataclasses.replace(ref, snapshot_id=sid), now)

        return self._add(step)

    def _retention(self, name: str, setting: str, value: int) -> ManageSnapshots:
        name = _name(name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValidationError(f"{setting} must be a positive integer, got {value!r}")

        def step(m: TableMetadata, now: int) -> TableMetadata:
            ref = _require_ref(m, name, None)
            settings = {
                "min_snapshots_to_keep": ref.min_snapshots_to_keep,
                "max_snapshot_age_ms": ref.max_snapshot_age_ms,
                "max_ref_age_ms": ref.max_ref_age_ms,
                setting: value,
            }
            # SnapshotRef refuses branch-only settings on a tag.
            return m.set_ref(name, SnapshotRef(ref.snapshot_id, ref.type, **settings), now)

        return self._add(step)

    def set_min_snapshots_to_keep(self, branch: str, count: int) -> ManageSnapshots:
        """Branch retention: keep at least ``count`` snapshots of ``branch`` when expiring."""
        return self._retention(branch, "min_snapshots_to_keep", count)

    def set_max_snapshot_age_ms(self, branch: str, age_ms: int) -> ManageSnapshots:
        """Branch retention: the age after which ``branch``'s snapshots may expire."""
        return self._retention(branch, "max_snapshot_age_ms", age_ms)

    def set_max_ref_age_ms(self, name: str, age_ms: int) -> ManageSnapshots:
        """Reference retention: the age after which the branch or tag itself expires."""
        return self._retention(name, "max_ref_age_ms", age_ms)

    # --- main's current snapshot ---------------------------------------------------

    def set_current_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Make ``snapshot_id`` main's current snapshot (any snapshot of the table)."""
        return self._set_current(_snapshot_id(snapshot_id), rollback=False)

    def rollback_to(self, snapshot_id: int) -> ManageSnapshots:
        """Roll main back to ``snapshot_id``, which must be an ancestor of its head."""
        return self._set_current(_snapshot_id(snapshot_id), rollback=True)

    def rollback_to_time(self, timestamp_ms: int) -> ManageSnapshots:
        """Roll main back to its newest ancestor committed strictly before ``timestamp_ms``."""
        ts = _snapshot_id(timestamp_ms)

        def step(m: TableMetadata, now: int) -> TableMetadata:
            found = None
            for sid in ancestor_ids(m, m.current_snapshot_id):
                s = m.snapshot_by_id(sid)
                if (
                    s is not None
                    and s.timestamp_ms < ts
                    and (found is None or s.timestamp_ms > found.timestamp_ms)
                ):
                    found = s
            if found is None:
                raise ValidationError(
                    f"cannot roll back: main has no snapshot older than {ts} (epoch ms)"
                )
            return m.set_branch_snapshot(found.snapshot_id, MAIN_BRANCH, now)

        return self._add(step)

    def _set_current(self, sid: int, *, rollback: bool) -> ManageSnapshots:
        def step(m: TableMetadata, now: int) -> TableMetadata:
            _require_snapshot(m, sid)
            if rollback and sid not in ancestor_ids(m, m.current_snapshot_id):
                raise ValidationError(
                    f"cannot roll back to snapshot {sid}: it is not an ancestor of main's "
                    "current snapshot (use set_current_snapshot to jump to any snapshot)"
                )
            return m.set_branch_snapshot(sid, MAIN_BRANCH, now)

        return self._add(step)

    # --- cherry-pick and publish ---------------------------------------------------

    def cherry_pick(self, snapshot_id: int) -> ManageSnapshots:
        """Apply a snapshot's changes to main (Java ``cherrypick``).

        A snapshot whose parent is main's head is fast-forwarded to (no new snapshot).
        Otherwise an append becomes a new snapshot re-adding its files, with
        ``source-snapshot-id`` (and ``published-wap-id``) in the summary; a dynamic
        overwrite (``replace-partitions=true``) likewise, only if no file landed in its
        partitions since its parent. Anything else must be a fast-forward.
        """
        sid = _snapshot_id(snapshot_id)
        return self._add(lambda m, now: self._pick(m, now, sid), writes=True)

    def publish(self, wap_id: str) -> ManageSnapshots:
        """Publish the snapshot staged with ``wap_id`` (the earliest, if several) to main."""
        wap = _name(wap_id, "WAP id")

        def step(m: TableMetadata, now: int) -> TableMetadata:
            for s in m.snapshots:
                if _summary(s).get(keys.STAGED_WAP_ID) == wap:
                    return self._pick(m, now, s.snapshot_id)
            raise ValidationError(f"no snapshot of the table was staged with wap.id {wap!r}")

        return self._add(step, writes=True)

    def _pick(self, m: TableMetadata, now: int, sid: int) -> TableMetadata:
        picked = _require_snapshot(m, sid)
        current = m.current_snapshot_id
        if picked.parent_snapshot_id == current and sid != current:
            _check_wap_publish(m, picked)
            return m.set_branch_snapshot(sid, MAIN_BRANCH, now)
        pick = self._producer(f"pick:{sid}", lambda: _CherryPick(self._handle(m), picked))
        assert isinstance(pick, _CherryPick)
        if pick.requires_fast_forward:
            raise ValidationError(
                f"cannot cherry-pick snapshot {sid} ({picked.operation}): only appends and "
                "dynamic overwrites can be re-applied; anything else needs main's head to be "
                "its parent (a fast-forward)"
            )
        return pick.apply(m)

    # --- the pending update --------------------------------------------------------

    def _handle(self, metadata: TableMetadata) -> Table:
        return dataclasses.replace(self._table, metadata=metadata)

    def _producer(self, key: str, make: Callable[[], SnapshotProducer]) -> SnapshotProducer:
        if key not in self._producers:
            self._producers[key] = make()
        self._used.add(key)
        return self._producers[key]

    def apply(self, base: TableMetadata) -> TableMetadata:
        """Every requested change, in order, on ``base``."""
        self._used = set()
        now = _now_ms()
        metadata = base
        for step, _ in self._steps:
            metadata = step(metadata, now)
        if metadata is base:
            return base
        return metadata.with_last_updated(max(metadata.last_updated_ms, now))

    def files_written(self) -> Sequence[str]:
        return [p for u in self._producers.values() for p in u.files_written()]

    def files_not_committed(self) -> Sequence[str]:
        out: list[str] = []
        for key, producer in self._producers.items():
            used = key in self._used
            out.extend(producer.files_not_committed() if used else producer.files_written())
        return out

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit every change in one metadata commit (on ``table``, or the table it was
        built on)."""
        return commit_updates(table or self._table, [self])
