"""The metadata updates of the REST catalog specification, as data.

Each class is one ``action`` of ``rest-catalog-open-api.yaml``'s
``TableUpdate``/``ViewUpdate`` (Iceberg 1.10); ``to_json`` writes the object a
REST server reads and :func:`update_from_json` parses one. A commit is a list
of these plus the requirements that guard it
(:mod:`icewright.catalog.requirements`): the metadata-file catalogs apply them
to the base with :func:`icewright.catalog.changes.apply_updates`, a REST
catalog sends them and the server applies them.

``-1`` as ``schema-id``, ``spec-id`` or ``sort-order-id`` means "the one added
last in this commit", as the specification says.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from icewright.errors import ValidationError
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from icewright.spec.sorting import SortOrder
from icewright.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icewright.spec.view_metadata import ViewVersion

__all__ = [
    "LAST_ADDED",
    "AddPartitionSpec",
    "AddSchema",
    "AddSnapshot",
    "AddSortOrder",
    "AddViewVersion",
    "AssignUUID",
    "MetadataUpdate",
    "RemovePartitionSpecs",
    "RemovePartitionStatistics",
    "RemoveProperties",
    "RemoveSchemas",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "SetCurrentSchema",
    "SetCurrentViewVersion",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetPartitionStatistics",
    "SetProperties",
    "SetSnapshotRef",
    "SetStatistics",
    "UpgradeFormatVersion",
    "update_from_json",
]

LAST_ADDED = -1
"""The id that names the schema, spec, sort order or view version added last."""


class MetadataUpdate:
    """One change to table or view metadata (the spec's ``BaseUpdate``)."""

    action: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """The JSON object a REST server reads (``action`` first)."""
        return {"action": self.action, **self._fields()}

    def _fields(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class AssignUUID(MetadataUpdate):
    action: ClassVar[str] = "assign-uuid"
    uuid: uuid.UUID

    def _fields(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}


@dataclass(frozen=True, slots=True)
class UpgradeFormatVersion(MetadataUpdate):
    action: ClassVar[str] = "upgrade-format-version"
    format_version: int

    def _fields(self) -> dict[str, Any]:
        return {"format-version": self.format_version}


@dataclass(frozen=True, slots=True)
class AddSchema(MetadataUpdate):
    """``last-column-id`` is deprecated in the spec but still read by older servers."""

    action: ClassVar[str] = "add-schema"
    schema: Schema
    last_column_id: int | None = None

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": self.schema.to_json()}
        if self.last_column_id is not None:
            out["last-column-id"] = self.last_column_id
        return out


@dataclass(frozen=True, slots=True)
class SetCurrentSchema(MetadataUpdate):
    action: ClassVar[str] = "set-current-schema"
    schema_id: int

    def _fields(self) -> dict[str, Any]:
        return {"schema-id": self.schema_id}


@dataclass(frozen=True, slots=True)
class AddPartitionSpec(MetadataUpdate):
    action: ClassVar[str] = "add-spec"
    spec: PartitionSpec

    def _fields(self) -> dict[str, Any]:
        return {"spec": self.spec.to_json()}


@dataclass(frozen=True, slots=True)
class SetDefaultSpec(MetadataUpdate):
    action: ClassVar[str] = "set-default-spec"
    spec_id: int

    def _fields(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id}


@dataclass(frozen=True, slots=True)
class AddSortOrder(MetadataUpdate):
    action: ClassVar[str] = "add-sort-order"
    sort_order: SortOrder

    def _fields(self) -> dict[str, Any]:
        return {"sort-order": self.sort_order.to_json()}


@dataclass(frozen=True, slots=True)
class SetDefaultSortOrder(MetadataUpdate):
    action: ClassVar[str] = "set-default-sort-order"
    sort_order_id: int

    def _fields(self) -> dict[str, Any]:
        return {"sort-order-id": self.sort_order_id}


@dataclass(frozen=True, slots=True)
class AddSnapshot(MetadataUpdate):
    action: ClassVar[str] = "add-snapshot"
    snapshot: Snapshot
    format_version: int = field(default=2, compare=False)

    def _fields(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot.to_json(self.format_version)}


@dataclass(frozen=True, slots=True)
class SetSnapshotRef(MetadataUpdate):
    action: ClassVar[str] = "set-snapshot-ref"
    ref_name: str
    ref: SnapshotRef

    def _fields(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name, **self.ref.to_json()}


@dataclass(frozen=True, slots=True)
class RemoveSnapshotRef(MetadataUpdate):
    action: ClassVar[str] = "remove-snapshot-ref"
    ref_name: str

    def _fields(self) -> dict[str, Any]:
        return {"ref-name": self.ref_name}


@dataclass(frozen=True, slots=True)
class RemoveSnapshots(MetadataUpdate):
    action: ClassVar[str] = "remove-snapshots"
    snapshot_ids: tuple[int, ...]

    def _fields(self) -> dict[str, Any]:
        return {"snapshot-ids": list(self.snapshot_ids)}


@dataclass(frozen=True, slots=True)
class SetLocation(MetadataUpdate):
    action: ClassVar[str] = "set-location"
    location: str

    def _fields(self) -> dict[str, Any]:
        return {"location": self.location}


@dataclass(frozen=True, slots=True)
class SetProperties(MetadataUpdate):
    action: ClassVar[str] = "set-properties"
    updates: Mapping[str, str]

    def _fields(self) -> dict[str, Any]:
        return {"updates": dict(self.updates)}


@dataclass(frozen=True, slots=True)
class RemoveProperties(MetadataUpdate):
    action: ClassVar[str] = "remove-properties"
    removals: tuple[str, ...]

    def _fields(self) -> dict[str, Any]:
        return {"removals": list(self.removals)}


@dataclass(frozen=True, slots=True)
class SetStatistics(MetadataUpdate):
    action: ClassVar[str] = "set-statistics"
    statistics: StatisticsFile

    def _fields(self) -> dict[str, Any]:
        # snapshot-id is deprecated (it repeats the file's own) but required by 1.5-1.7 servers.
        return {"snapshot-id": self.statistics.snapshot_id, "statistics": self.statistics.to_json()}


@dataclass(frozen=True, slots=True)
class RemoveStatistics(MetadataUpdate):
    action: ClassVar[str] = "remove-statistics"
    snapshot_id: int

    def _fields(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}


@dataclass(frozen=True, slots=True)
class SetPartitionStatistics(MetadataUpdate):
    action: ClassVar[str] = "set-partition-statistics"
    partition_statistics: PartitionStatisticsFile

    def _fields(self) -> dict[str, Any]:
        return {"partition-statistics": self.partition_statistics.to_json()}


@dataclass(frozen=True, slots=True)
class RemovePartitionStatistics(MetadataUpdate):
    action: ClassVar[str] = "remove-partition-statistics"
    snapshot_id: int

    def _fields(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}


@dataclass(frozen=True, slots=True)
class RemovePartitionSpecs(MetadataUpdate):
    action: ClassVar[str] = "remove-partition-specs"
    spec_ids: tuple[int, ...]

    def _fields(self) -> dict[str, Any]:
        return {"spec-ids": list(self.spec_ids)}


@dataclass(frozen=True, slots=True)
class RemoveSchemas(MetadataUpdate):
    action: ClassVar[str] = "remove-schemas"
    schema_ids: tuple[int, ...]

    def _fields(self) -> dict[str, Any]:
        return {"schema-ids": list(self.schema_ids)}


@dataclass(frozen=True, slots=True)
class AddViewVersion(MetadataUpdate):
    action: ClassVar[str] = "add-view-version"
    view_version: ViewVersion

    def _fields(self) -> dict[str, Any]:
        return {"view-version": self.view_version.to_json()}


@dataclass(frozen=True, slots=True)
class SetCurrentViewVersion(MetadataUpdate):
    action: ClassVar[str] = "set-current-view-version"
    view_version_id: int

    def _fields(self) -> dict[str, Any]:
        return {"view-version-id": self.view_version_id}


# --- parsing -------------------------------------------------------------------


def _int(o: Mapping[str, Any], key: str) -> int:
    value = o.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(
            f"metadata update {o.get('action')!r} needs integer {key!r}, got {value!r}"
        )
    return value


def _str(o: Mapping[str, Any], key: str) -> str:
    value = o.get(key)
    if not isinstance(value, str):
        raise ValidationError(
            f"metadata update {o.get('action')!r} needs string {key!r}, got {value!r}"
        )
    return value


def _ints(o: Mapping[str, Any], key: str) -> tuple[int, ...]:
    value = o.get(key)
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ValidationError(
            f"metadata update {o.get('action')!r} needs a list of integers {key!r}"
        )
    return tuple(value)


def _ref(o: Mapping[str, Any]) -> SetSnapshotRef:
    ref = SnapshotRef.from_json({k: v for k, v in o.items() if k not in ("action", "ref-name")})
    if ref.type not in (SnapshotRefType.BRANCH, SnapshotRefType.TAG):  # pragma: no cover
        raise ValidationError(f"unknown reference type {ref.type!r}")
    return SetSnapshotRef(_str(o, "ref-name"), ref)


def _properties(o: Mapping[str, Any]) -> SetProperties:
    updates = o.get("updates")
    if not isinstance(updates, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in updates.items()
    ):
        raise ValidationError("set-properties needs 'updates', an object of strings")
    return SetProperties(dict(updates))


def _removals(o: Mapping[str, Any]) -> RemoveProperties:
    removals = o.get("removals")
    if not isinstance(removals, list) or not all(isinstance(k, str) for k in removals):
        raise ValidationError("remove-properties needs 'removals', a list of strings")
    return RemoveProperties(tuple(removals))


_PARSERS: dict[str, Callable[[Mapping[str, Any]], MetadataUpdate]] = {
    "assign-uuid": lambda o: AssignUUID(uuid.UUID(_str(o, "uuid"))),
    "upgrade-format-version": lambda o: UpgradeFormatVersion(_int(o, "format-version")),
    "add-schema": lambda o: AddSchema(
        Schema.from_json(o.get("schema")),
        _int(o, "last-column-id") if o.get("last-column-id") is not None else None,
    ),
    "set-current-schema": lambda o: SetCurrentSchema(_int(o, "schema-id")),
    "add-spec": lambda o: AddPartitionSpec(PartitionSpec.from_json(o.get("spec"))),
    "set-default-spec": lambda o: SetDefaultSpec(_int(o, "spec-id")),
    "add-sort-order": lambda o: AddSortOrder(SortOrder.from_json(o.get("sort-order"))),
    "set-default-sort-order": lambda o: SetDefaultSortOrder(_int(o, "sort-order-id")),
    "add-snapshot": lambda o: AddSnapshot(Snapshot.from_json(o.get("snapshot"))),
    "set-snapshot-ref": _ref,
    "remove-snapshot-ref": lambda o: RemoveSnapshotRef(_str(o, "ref-name")),
    "remove-snapshots": lambda o: RemoveSnapshots(_ints(o, "snapshot-ids")),
    "set-location": lambda o: SetLocation(_str(o, "location")),
    "set-properties": _properties,
    "remove-properties": _removals,
    "set-statistics": lambda o: SetStatistics(StatisticsFile.from_json(o.get("statistics"))),
    "remove-statistics": lambda o: RemoveStatistics(_int(o, "snapshot-id")),
    "set-partition-statistics": lambda o: SetPartitionStatistics(
        PartitionStatisticsFile.from_json(o.get("partition-statistics"))
    ),
    "remove-partition-statistics": lambda o: RemovePartitionStatistics(_int(o, "snapshot-id")),
    "remove-partition-specs": lambda o: RemovePartitionSpecs(_ints(o, "spec-ids")),
    "remove-schemas": lambda o: RemoveSchemas(_ints(o, "schema-ids")),
    "add-view-version": lambda o: AddViewVersion(ViewVersion.from_json(o.get("view-version"))),
    "set-current-view-version": lambda o: SetCurrentViewVersion(_int(o, "view-version-id")),
}


def update_from_json(obj: Any) -> MetadataUpdate:
    """Parse one update object; ``ValidationError`` names an unknown action or a bad field."""
    if not isinstance(obj, Mapping):
        raise ValidationError(f"a metadata update must be a JSON object, got {obj!r}")
    action = obj.get("action")
    parse = _PARSERS.get(action) if isinstance(action, str) else None
    if parse is None:
        raise ValidationError(
            f"unknown metadata update action {action!r}; known: {', '.join(sorted(_PARSERS))}"
        )
    return parse(obj)
