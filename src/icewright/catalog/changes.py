"""A commit as the spec's updates and requirements: derive them, and apply them.

Operations build whole new metadata (a pure ``apply(base)``); :func:`table_changes`
turns the step from base to new into the update list that Iceberg Java's
``TableMetadata.Builder`` would have recorded for it, with the requirements that
guard it. Diffing in one place, rather than having each operation record its
changes, keeps every operation (and every future one) correct by construction:
an operation cannot forget to record a change it made.

:func:`apply_updates` is the one function that applies updates to a base, for
the catalogs that write metadata files themselves (a REST server applies them on
its side).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

from icewright.catalog.requirements import Requirement, requirements_for
from icewright.catalog.updates import (
    LAST_ADDED,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    MetadataUpdate,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    UpgradeFormatVersion,
)
from icewright.errors import ValidationError
from icewright.spec.documents import FrozenMap, StringMap
from icewright.spec.snapshots import MAIN_BRANCH, SnapshotLogEntry
from icewright.spec.table_metadata import TableMetadata

__all__ = ["TableChanges", "apply_updates", "table_changes"]


@dataclass(frozen=True, slots=True)
class TableChanges:
    """One table commit in the spec's terms."""

    requirements: tuple[Requirement, ...]
    updates: tuple[MetadataUpdate, ...]


def table_changes(base: TableMetadata | None, new: TableMetadata) -> TableChanges:
    """The updates that turn ``base`` (None: a new table) into ``new``, and their guards."""
    updates = _diff(base, new)
    return TableChanges(tuple(requirements_for(base, updates)), tuple(updates))


def _diff(base: TableMetadata | None, new: TableMetadata) -> list[MetadataUpdate]:
    out: list[MetadataUpdate] = []
    if (base is None or base.table_uuid != new.table_uuid) and new.table_uuid is not None:
        out.append(AssignUUID(new.table_uuid))
    if base is None or base.format_version != new.format_version:
        out.append(UpgradeFormatVersion(new.format_version))
    old_schemas = {} if base is None else {s.schema_id: s for s in base.schemas}
    for schema in new.schemas:
        if schema.schema_id not in old_schemas:
            out.append(AddSchema(schema, new.last_column_id))
    if base is None or base.current_schema_id != new.current_schema_id:
        out.append(SetCurrentSchema(new.current_schema_id))
    old_specs = {} if base is None else base.specs_by_id()
    for spec in new.partition_specs:
        if spec.spec_id not in old_specs:
            out.append(AddPartitionSpec(spec))
    if base is None or base.default_spec_id != new.default_spec_id:
        out.append(SetDefaultSpec(new.default_spec_id))
    old_orders = {} if base is None else {o.order_id: o for o in base.sort_orders}
    for order in new.sort_orders:
        if order.order_id not in old_orders:
            out.append(AddSortOrder(order))
    if base is None or base.default_sort_order_id != new.default_sort_order_id:
        out.append(SetDefaultSortOrder(new.default_sort_order_id))
    if base is None or base.location != new.location:
        out.append(SetLocation(new.location))
    old_props = {} if base is None else dict(base.properties)
    changed = {k: v for k, v in new.properties.items() if old_props.get(k) != v}
    if changed:
        out.append(SetProperties(changed))
    removed = tuple(k for k in old_props if k not in new.properties)
    if removed:
        out.append(RemoveProperties(removed))
    old_refs = {} if base is None else dict(base.refs)
    # Refs go before the snapshots they pointed at can be removed, and after the
    # snapshots they now point at are added (as Java's builder orders its changes).
    for name in old_refs:
        if name not in new.refs:
            out.append(RemoveSnapshotRef(name))
    old_ids = set() if base is None else {s.snapshot_id for s in base.snapshots}
    for snapshot in new.snapshots:
        if snapshot.snapshot_id not in old_ids:
            out.append(AddSnapshot(snapshot, new.format_version))
    # main last, so that a branch created at the new snapshot is in place first.
    for name in sorted(new.refs, key=lambda n: (n == MAIN_BRANCH, n)):
        if old_refs.get(name) != new.refs[name]:
            out.append(SetSnapshotRef(name, new.refs[name]))
    new_ids = {s.snapshot_id for s in new.snapshots}
    gone = tuple(sid for sid in sorted(old_ids) if sid not in new_ids)
    if gone:
        out.append(RemoveSnapshots(gone))
    out.extend(_statistics_diff(base, new, gone))
    if base is not None:
        removed_specs = tuple(i for i in old_specs if i not in new.specs_by_id())
        if removed_specs:
            out.append(RemovePartitionSpecs(removed_specs))
        new_schema_ids = {s.schema_id for s in new.schemas}
        removed_schemas = tuple(i for i in old_schemas if i not in new_schema_ids)
        if removed_schemas:
            out.append(RemoveSchemas(removed_schemas))
    return out


def _statistics_diff(
    base: TableMetadata | None, new: TableMetadata, gone: Sequence[int]
) -> list[MetadataUpdate]:
    out: list[MetadataUpdate] = []
    old_stats = {} if base is None else {s.snapshot_id: s for s in base.statistics}
    new_stats = {s.snapshot_id: s for s in new.statistics}
    for sid, stats in new_stats.items():
        if old_stats.get(sid) != stats:
            out.append(SetStatistics(stats))
    # remove-snapshots drops the statistics of removed snapshots by itself.
    out.extend(RemoveStatistics(s) for s in old_stats if s not in new_stats and s not in gone)
    old_parts = {} if base is None else {s.snapshot_id: s for s in base.partition_statistics}
    new_parts = {s.snapshot_id: s for s in new.partition_statistics}
    for sid, part in new_parts.items():
        if old_parts.get(sid) != part:
            out.append(SetPartitionStatistics(part))
    out.extend(
        RemovePartitionStatistics(s) for s in old_parts if s not in new_parts and s not in gone
    )
    return out


def apply_updates(
    base: TableMetadata, updates: Sequence[MetadataUpdate], timestamp_ms: int | None = None
) -> TableMetadata:
    """``base`` with ``updates`` applied in order, as a REST server applies a commit.

    ``timestamp_ms`` (default: now) stamps ``last-updated-ms`` and the snapshot-log
    entry of a ``main`` that moves to a snapshot not added in this commit; a
    snapshot added here is logged with its own timestamp. A change that cannot
    apply (a ref to a missing snapshot, an unknown schema id) raises
    ``ValidationError``.
    """
    now = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    m = base
    added: dict[str, int] = {}
    added_snapshots: dict[int, int] = {}
    for u in updates:
        if isinstance(u, AssignUUID):
            if m.table_uuid is not None and m.table_uuid != u.uuid:
                raise ValidationError(
                    f"cannot assign uuid {u.uuid}: the table already has uuid {m.table_uuid}"
                )
            m = dataclasses.replace(m, table_uuid=u.uuid)
        elif isinstance(u, UpgradeFormatVersion):
            if u.format_version < m.format_version:
                raise ValidationError(
                    f"cannot downgrade format version {m.format_version} to {u.format_version}"
                )
            next_row_id = m.next_row_id
            if u.format_version >= 3 and next_row_id is None:
                next_row_id = 0
            m = dataclasses.replace(m, format_version=u.format_version, next_row_id=next_row_id)
        elif isinstance(u, AddSchema):
            if any(s.schema_id == u.schema.schema_id for s in m.schemas):
                raise ValidationError(f"schema id {u.schema.schema_id} already exists")
            last = max(m.last_column_id, u.schema.highest_field_id, u.last_column_id or 0)
            m = dataclasses.replace(m, schemas=(*m.schemas, u.schema), last_column_id=last)
            added["schema"] = u.schema.schema_id
        elif isinstance(u, SetCurrentSchema):
            sid = _resolve(u.schema_id, added, "schema")
            m.schema_by_id(sid)  # raises on an unknown id
            m = dataclasses.replace(m, current_schema_id=sid)
        elif isinstance(u, AddPartitionSpec):
            if u.spec.spec_id in m.specs_by_id():
                raise ValidationError(f"partition spec id {u.spec.spec_id} already exists")
            last = max([m.last_partition_id, *(f.field_id for f in u.spec.fields)])
            m = dataclasses.replace(
                m, partition_specs=(*m.partition_specs, u.spec), last_partition_id=last
            )
            added["spec"] = u.spec.spec_id
        elif isinstance(u, SetDefaultSpec):
            spec_id = _resolve(u.spec_id, added, "spec")
            m.spec_by_id(spec_id)
            m = dataclasses.replace(m, default_spec_id=spec_id)
        elif isinstance(u, AddSortOrder):
            if any(o.order_id == u.sort_order.order_id for o in m.sort_orders):
                raise ValidationError(f"sort order id {u.sort_order.order_id} already exists")
            m = dataclasses.replace(m, sort_orders=(*m.sort_orders, u.sort_order))
            added["sort-order"] = u.sort_order.order_id
        elif isinstance(u, SetDefaultSortOrder):
            order_id = _resolve(u.sort_order_id, added, "sort-order")
            m = dataclasses.replace(m, default_sort_order_id=order_id)
        elif isinstance(u, SetLocation):
            m = dataclasses.replace(m, location=u.location)
        elif isinstance(u, SetProperties):
            m = dataclasses.replace(m, properties=StringMap({**m.properties, **u.updates}))
        elif isinstance(u, RemoveProperties):
            drop = set(u.removals)
            m = dataclasses.replace(
                m, properties=StringMap({k: v for k, v in m.properties.items() if k not in drop})
            )
        elif isinstance(u, AddSnapshot):
            m = m.add_snapshot(u.snapshot)
            added_snapshots[u.snapshot.snapshot_id] = u.snapshot.timestamp_ms
        elif isinstance(u, SetSnapshotRef):
            stamp = added_snapshots.get(u.ref.snapshot_id, now)
            m = m.set_ref(u.ref_name, u.ref, stamp)
        elif isinstance(u, RemoveSnapshotRef):
            refs = FrozenMap((k, v) for k, v in m.refs.items() if k != u.ref_name)
            current = None if u.ref_name == MAIN_BRANCH else m.current_snapshot_id
            m = dataclasses.replace(m, refs=refs, current_snapshot_id=current)
        elif isinstance(u, RemoveSnapshots):
            m = _remove_snapshots(m, set(u.snapshot_ids))
        elif isinstance(u, SetStatistics):
            sid = u.statistics.snapshot_id
            kept = tuple(s for s in m.statistics if s.snapshot_id != sid)
            m = dataclasses.replace(m, statistics=(*kept, u.statistics))
        elif isinstance(u, RemoveStatistics):
            m = dataclasses.replace(
                m, statistics=tuple(s for s in m.statistics if s.snapshot_id != u.snapshot_id)
            )
        elif isinstance(u, SetPartitionStatistics):
            sid = u.partition_statistics.snapshot_id
            kept_p = tuple(s for s in m.partition_statistics if s.snapshot_id != sid)
            m = dataclasses.replace(m, partition_statistics=(*kept_p, u.partition_statistics))
        elif isinstance(u, RemovePartitionStatistics):
            m = dataclasses.replace(
                m,
                partition_statistics=tuple(
                    s for s in m.partition_statistics if s.snapshot_id != u.snapshot_id
                ),
            )
        elif isinstance(u, RemovePartitionSpecs):
            if m.default_spec_id in u.spec_ids:
                raise ValidationError(
                    f"cannot remove the default partition spec {m.default_spec_id}"
                )
            drop_specs = set(u.spec_ids)
            m = dataclasses.replace(
                m,
                partition_specs=tuple(s for s in m.partition_specs if s.spec_id not in drop_specs),
            )
        elif isinstance(u, RemoveSchemas):
            if m.current_schema_id in u.schema_ids:
                raise ValidationError(f"cannot remove the current schema {m.current_schema_id}")
            drop_schemas = set(u.schema_ids)
            m = dataclasses.replace(
                m, schemas=tuple(s for s in m.schemas if s.schema_id not in drop_schemas)
            )
        else:
            raise ValidationError(f"metadata update {u.action!r} does not apply to a table")
    return m.with_last_updated(max(m.last_updated_ms, now))


def _resolve(value: int, added: dict[str, int], what: str) -> int:
    if value != LAST_ADDED:
        return value
    if what not in added:
        raise ValidationError(f"set {what} -1 (the last added) but this commit added no {what}")
    return added[what]


def _remove_snapshots(m: TableMetadata, ids: set[int]) -> TableMetadata:
    """``m`` without the snapshots ``ids``, their refs, statistics and log entries."""
    remaining = {s.snapshot_id for s in m.snapshots} - ids
    log: list[SnapshotLogEntry] = []
    for entry in m.snapshot_log:
        # Java's builder drops the log up to the last removed entry, so the log never
        # claims an older snapshot was current across a gap.
        if entry.snapshot_id in remaining:
            log.append(entry)
        else:
            log.clear()
    refs = FrozenMap((k, v) for k, v in m.refs.items() if v.snapshot_id in remaining)
    current = m.current_snapshot_id if m.current_snapshot_id in remaining else None
    return dataclasses.replace(
        m,
        snapshots=tuple(s for s in m.snapshots if s.snapshot_id in remaining),
        refs=refs,
        current_snapshot_id=current,
        snapshot_log=tuple(log),
        statistics=tuple(s for s in m.statistics if s.snapshot_id in remaining),
        partition_statistics=tuple(s for s in m.partition_statistics if s.snapshot_id in remaining),
    )
