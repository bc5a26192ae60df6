"""The commit requirements of the REST catalog specification, as data.

A requirement is what must still hold of the table's current metadata for a
commit's updates to apply (``TableRequirement``/``ViewRequirement`` in
``rest-catalog-open-api.yaml``). :func:`requirements_for` derives them from the
base and the updates the way Iceberg Java's ``UpdateRequirements`` does, so a
REST server refuses exactly the commits Java's would; :func:`check_requirements`
is the same check made by the client (or a metadata-file catalog) on metadata it
holds, raising :class:`~icewright.errors.CommitFailed` like a server's 409.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from icewright.catalog.updates import (
    AddPartitionSpec,
    AddSchema,
    MetadataUpdate,
    RemovePartitionSpecs,
    RemoveSchemas,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetSnapshotRef,
)
from icewright.errors import CommitFailed, ValidationError
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = [
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUUID",
    "AssertViewUUID",
    "Requirement",
    "check_requirements",
    "requirement_from_json",
    "requirements_for",
]


class Requirement:
    """One condition on the current metadata (the spec's ``TableRequirement``)."""

    type: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """The JSON object a REST server reads (``type`` first)."""
        return {"type": self.type, **self._fields()}

    def _fields(self) -> dict[str, Any]:
        return {}

    def violation(self, current: TableMetadata | None) -> str | None:
        """Why ``current`` (None: no table) fails this requirement, or None if it holds."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class AssertCreate(Requirement):
    """The table must not exist yet."""

    type: ClassVar[str] = "assert-create"

    def violation(self, current: TableMetadata | None) -> str | None:
        return None if current is None else "the table already exists"


def _missing() -> str:
    return "the table does not exist"


@dataclass(frozen=True, slots=True)
class AssertTableUUID(Requirement):
    type: ClassVar[str] = "assert-table-uuid"
    uuid: uuid.UUID

    def _fields(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}

    def violation(self, current: TableMetadata | None) -> str | None:
        if current is None:
            return _missing()
        if current.table_uuid != self.uuid:
            return f"table uuid is {current.table_uuid}, expected {self.uuid}"
        return None


@dataclass(frozen=True, slots=True)
class AssertRefSnapshotId(Requirement):
    """The ref points at ``snapshot_id``; None asserts that the ref does not exist."""

    type: ClassVar[str] = "assert-ref-snapshot-id"
    ref: str
    snapshot_id: int | None

    def _fields(self) -> dict[str, Any]:
        return {"ref": self.ref, "snapshot-id": self.snapshot_id}

    def violation(self, current: TableMetadata | None) -> str | None:
        if current is None:
            return _missing()
        ref = current.refs.get(self.ref)
        actual = None if ref is None else ref.snapshot_id
        if actual == self.snapshot_id:
            return None
        if self.snapshot_id is None:
            return f"branch or tag {self.ref!r} was created concurrently"
        if actual is None:
            return f"branch or tag {self.ref!r} is missing, expected {self.snapshot_id}"
        return f"branch {self.ref!r} has changed: expected id {self.snapshot_id} != {actual}"


@dataclass(frozen=True, slots=True)
class _IntRequirement(Requirement):
    """A requirement that one integer of the metadata is still ``value``."""

    key: ClassVar[str]
    what: ClassVar[str]
    value: int

    def _fields(self) -> dict[str, Any]:
        return {self.key: self.value}

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        raise NotImplementedError

    def violation(self, current: TableMetadata | None) -> str | None:
        if current is None:
            return _missing()
        actual = self.read(current)
        if actual != self.value:
            return f"{self.what} changed: expected {self.value} != {actual}"
        return None


@dataclass(frozen=True, slots=True)
class AssertCurrentSchemaId(_IntRequirement):
    type: ClassVar[str] = "assert-current-schema-id"
    key: ClassVar[str] = "current-schema-id"
    what: ClassVar[str] = "current schema"

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        return metadata.current_schema_id


@dataclass(frozen=True, slots=True)
class AssertLastAssignedFieldId(_IntRequirement):
    type: ClassVar[str] = "assert-last-assigned-field-id"
    key: ClassVar[str] = "last-assigned-field-id"
    what: ClassVar[str] = "last assigned field id"

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        return metadata.last_column_id


@dataclass(frozen=True, slots=True)
class AssertLastAssignedPartitionId(_IntRequirement):
    type: ClassVar[str] = "assert-last-assigned-partition-id"
    key: ClassVar[str] = "last-assigned-partition-id"
    what: ClassVar[str] = "last assigned partition id"

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        return metadata.last_partition_id


@dataclass(frozen=True, slots=True)
class AssertDefaultSpecId(_IntRequirement):
    type: ClassVar[str] = "assert-default-spec-id"
    key: ClassVar[str] = "default-spec-id"
    what: ClassVar[str] = "default partition spec"

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        return metadata.default_spec_id


@dataclass(frozen=True, slots=True)
class AssertDefaultSortOrderId(_IntRequirement):
    type: ClassVar[str] = "assert-default-sort-order-id"
    key: ClassVar[str] = "default-sort-order-id"
    what: ClassVar[str] = "default sort order"

    @staticmethod
    def read(metadata: TableMetadata) -> int:
        return metadata.default_sort_order_id


@dataclass(frozen=True, slots=True)
class AssertViewUUID(Requirement):
    type: ClassVar[str] = "assert-view-uuid"
    uuid: uuid.UUID

    def _fields(self) -> dict[str, Any]:
        return {"uuid": str(self.uuid)}

    def violation(self, current: TableMetadata | None) -> str | None:  # pragma: no cover
        raise ValidationError("assert-view-uuid applies to views; use view_violation")

    def view_violation(self, current: ViewMetadata) -> str | None:
        """Why ``current`` is not the asserted view, or None."""
        if str(current.view_uuid) != str(self.uuid):
            return f"view uuid is {current.view_uuid}, expected {self.uuid}"
        return None


def requirements_for(
    base: TableMetadata | None, updates: Sequence[MetadataUpdate]
) -> list[Requirement]:
    """The requirements that guard ``updates`` made on ``base`` (None: a create).

    As Java's ``UpdateRequirements.forUpdateTable``: the table's uuid always; for each
    ref moved, its snapshot at the base (once per ref); the last assigned field and
    partition ids when schemas or specs are added; the current schema, default spec
    and default sort order when they are changed or when schemas/specs are removed.
    """
    if base is None:
        return [AssertCreate()]
    out: list[Requirement] = []
    if base.table_uuid is not None:
        out.append(AssertTableUUID(base.table_uuid))
    seen: set[str] = set()

    def once(key: str, requirement: Requirement) -> None:
        if key not in seen:
            seen.add(key)
            out.append(requirement)

    for update in updates:
        if isinstance(update, SetSnapshotRef):
            ref = base.refs.get(update.ref_name)
            once(
                f"ref:{update.ref_name}",
                AssertRefSnapshotId(update.ref_name, None if ref is None else ref.snapshot_id),
            )
        elif isinstance(update, AddSchema):
            once("field-id", AssertLastAssignedFieldId(base.last_column_id))
        elif isinstance(update, SetCurrentSchema | RemoveSchemas):
            once("schema", AssertCurrentSchemaId(base.current_schema_id))
        elif isinstance(update, AddPartitionSpec):
            once("partition-id", AssertLastAssignedPartitionId(base.last_partition_id))
        elif isinstance(update, SetDefaultSpec | RemovePartitionSpecs):
            once("spec", AssertDefaultSpecId(base.default_spec_id))
        elif isinstance(update, SetDefaultSortOrder):
            once("sort-order", AssertDefaultSortOrderId(base.default_sort_order_id))
    return out


def check_requirements(
    identifier: object, current: TableMetadata | None, requirements: Sequence[Requirement]
) -> None:
    """Raise ``CommitFailed`` (a lost race, safe to retry) if any requirement fails."""
    for requirement in requirements:
        why = requirement.violation(current)
        if why is not None:
            raise CommitFailed(
                f"commit to {identifier} refused, requirement {requirement.type} failed: {why}; "
                "reload the table and retry"
            )


def _uuid_of(o: Mapping[str, Any]) -> uuid.UUID:
    try:
        return uuid.UUID(str(o["uuid"]))
    except (KeyError, ValueError) as e:
        raise ValidationError(f"requirement {o.get('type')!r} needs a 'uuid': {e}") from e


def _int_of(o: Mapping[str, Any], key: str) -> int:
    value = o.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"requirement {o.get('type')!r} needs integer {key!r}, got {value!r}")
    return value


def _ref_of(o: Mapping[str, Any]) -> AssertRefSnapshotId:
    ref, sid = o.get("ref"), o.get("snapshot-id")
    if not isinstance(ref, str) or not (
        sid is None or (isinstance(sid, int) and not isinstance(sid, bool))
    ):
        raise ValidationError(
            f"assert-ref-snapshot-id needs 'ref' and 'snapshot-id', got {dict(o)}"
        )
    return AssertRefSnapshotId(ref, sid)


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Requirement]] = {
    "assert-create": lambda o: AssertCreate(),
    "assert-table-uuid": lambda o: AssertTableUUID(_uuid_of(o)),
    "assert-view-uuid": lambda o: AssertViewUUID(_uuid_of(o)),
    "assert-ref-snapshot-id": _ref_of,
    "assert-current-schema-id": lambda o: AssertCurrentSchemaId(_int_of(o, "current-schema-id")),
    "assert-last-assigned-field-id": lambda o: AssertLastAssignedFieldId(
        _int_of(o, "last-assigned-field-id")
    ),
    "assert-last-assigned-partition-id": lambda o: AssertLastAssignedPartitionId(
        _int_of(o, "last-assigned-partition-id")
    ),
    "assert-default-spec-id": lambda o: AssertDefaultSpecId(_int_of(o, "default-spec-id")),
    "assert-default-sort-order-id": lambda o: AssertDefaultSortOrderId(
        _int_of(o, "default-sort-order-id")
    ),
}


def requirement_from_json(obj: Any) -> Requirement:
    """Parse one requirement object; ``ValidationError`` names an unknown type."""
    if not isinstance(obj, Mapping):
        raise ValidationError(f"a requirement must be a JSON object, got {obj!r}")
    kind = obj.get("type")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise ValidationError(
            f"unknown requirement type {kind!r}; known: {', '.join(sorted(_PARSERS))}"
        )
    return parse(obj)
