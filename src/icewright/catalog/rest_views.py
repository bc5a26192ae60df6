"""A view change in the REST spec's terms: the ``ViewUpdate`` list from base to new.

A REST server reassigns the ids of added schemas and view versions (Java's
``ViewMetadata.Builder`` reuses an equal one or takes the next free id), so an added
version refers to a schema added in the same commit as ``-1`` ("the one added last"),
and becomes current through ``set-current-view-version`` ``-1``.
"""

from __future__ import annotations

from typing import Any

from icewright.catalog.updates import (
    LAST_ADDED,
    AddSchema,
    AddViewVersion,
    RemoveProperties,
    SetCurrentViewVersion,
    SetLocation,
    SetProperties,
)
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["view_changes"]


def view_changes(base: ViewMetadata, new: ViewMetadata) -> list[dict[str, Any]]:
    """The view updates (JSON objects) that turn ``base`` into ``new``."""
    out: list[dict[str, Any]] = []
    if new.location != base.location:
        out.append(SetLocation(new.location).to_json())
    old_schema_ids = {s.schema_id for s in base.schemas}
    added_schemas = [s for s in new.schemas if s.schema_id not in old_schema_ids]
    last_schema = added_schemas[-1].schema_id if added_schemas else None
    for schema in added_schemas:
        out.append(AddSchema(schema).to_json())
    old_version_ids = {v.version_id for v in base.versions}
    added_last: int | None = None
    for version in new.versions:
        if version.version_id in old_version_ids:
            continue
        update = AddViewVersion(version).to_json()
        if version.schema_id == last_schema:
            update["view-version"]["schema-id"] = LAST_ADDED
        out.append(update)
        added_last = version.version_id
    if new.current_version_id != base.current_version_id:
        current = LAST_ADDED if new.current_version_id == added_last else new.current_version_id
        out.append(SetCurrentViewVersion(current).to_json())
    removed = sorted(set(base.properties) - set(new.properties))
    if removed:
        out.append(RemoveProperties(tuple(removed)).to_json())
    changed = {k: v for k, v in new.properties.items() if base.properties.get(k) != v}
    if changed:
        out.append(SetProperties(changed).to_json())
    return out
