"""Name-based schema evolution: union by name, and the name mapping's update.

Union by name evolves a table schema toward a writer's schema (Java's ``UnionByNameVisitor``).

Columns are matched by name, struct by struct (list elements and map keys and values
by their role). What the new schema has and the table lacks is added, as an optional
column with fresh ids (nested too); a matched column is widened where a promotion
allows (spec "Schema Evolution"), made optional where the new schema has it optional,
and takes a new doc. A narrower type in the new schema is ignored, and nothing is ever
dropped. Matching happens children first, as Java's partner visitor does, so added
fields get the same ids as in Java and pyiceberg.

:func:`update_name_mapping` keeps the ``schema.name-mapping.default`` property (which
reads files without field ids by column name) in step with renames and additions, as
Java's ``MappingUtil.update`` does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from icewright.errors import ValidationError
from icewright.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    is_promotion_allowed,
)

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from icewright.spec.schema import Schema

_ROOT_ID = -1  # the table's own struct, as in schema_update.ROOT_ID

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
"""Table property holding the name mapping; kept in step with renames and adds."""


class ColumnChanges(Protocol):
    """The schema changes a union applies: what it needs of
    :class:`~icewright.commit.schema_update.UpdateSchema` (named here, so this module
    does not import the class that calls it)."""

    def add_field(
        self,
        parent_id: int,
        name: str,
        field_type: IcebergType,
        *,
        doc: str | None = None,
        required: bool = False,
        initial_default: Any = None,
        write_default: Any = None,
    ) -> int: ...

    def make_column_optional(self, path: str) -> object: ...

    def update_column(self, path: str, new_type: PrimitiveType) -> object: ...

    def update_column_doc(self, path: str, doc: str | None) -> object: ...


def union_by_name(
    update: ColumnChanges,
    existing: Schema,
    new_schema: Schema,
    *,
    case_sensitive: bool = True,
    format_version: int = 2,
) -> None:
    """Record on ``update`` the changes that make ``existing`` a union with ``new_schema``."""
    _Union(update, existing, case_sensitive, format_version).struct(
        new_schema.as_struct(), _ROOT_ID
    )


def _kind(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return "primitive"


class _Union:
    def __init__(
        self, update: ColumnChanges, existing: Schema, case_sensitive: bool, format_version: int
    ) -> None:
        self._update = update
        self._existing = existing
        self._case_sensitive = case_sensitive
        self._format_version = format_version

    def _struct_of(self, field_id: int) -> StructType:
        if field_id == _ROOT_ID:
            return self._existing.as_struct()
        t = self._existing.find_field(field_id).field_type
        assert isinstance(t, StructType)  # the caller checked the kinds match
        return t

    def _partner(self, struct: StructType, name: str) -> NestedField | None:
        if self._case_sensitive:
            return struct.field_by_name(name)
        lowered = name.lower()
        return next((f for f in struct.fields if f.name.lower() == lowered), None)

    def struct(self, struct: StructType, partner_id: int) -> None:
        """Union the fields of ``struct`` into the existing struct with id ``partner_id``."""
        existing = self._struct_of(partner_id)
        pairs = [(f, self._partner(existing, f.name)) for f in struct.fields]
        # Children first (Java's SchemaWithPartnerVisitor is post-order): additions deep
        # inside matched columns take ids before this struct's own additions.
        for new, old in pairs:
            if old is not None:
                self._visit(new, old)
        for new, old in pairs:
            if old is None:
                self._update.add_field(
                    partner_id,
                    new.name,
                    new.field_type,
                    doc=new.doc,
                    required=False,  # Java adds union columns as optional
                    initial_default=new.initial_default,
                    write_default=new.write_default,
                )
            else:
                self._update_column(new, old)

    def _visit(self, new: NestedField, old: NestedField) -> None:
        """Recurse into a matched pair of nested types."""
        nt, ot = new.field_type, old.field_type
        if isinstance(nt, PrimitiveType):
            return  # primitive vs anything: handled by _update_column
        if _kind(nt) != _kind(ot):
            raise self._mismatch(new, old)
        if isinstance(nt, StructType):
            self.struct(nt, old.field_id)
        elif isinstance(nt, ListType) and isinstance(ot, ListType):
            self._visit(nt.element_field, ot.element_field)
            self._update_column(nt.element_field, ot.element_field)
        elif isinstance(nt, MapType) and isinstance(ot, MapType):
            self._visit(nt.key_field, ot.key_field)
            self._visit(nt.value_field, ot.value_field)
            self._update_column(nt.key_field, ot.key_field)
            self._update_column(nt.value_field, ot.value_field)

    def _update_column(self, new: NestedField, old: NestedField) -> None:
        name = self._existing.column_name(old.field_id)
        nt, ot = new.field_type, old.field_type
        if (_kind(nt) == "primitive") != (_kind(ot) == "primitive"):
            raise self._mismatch(new, old)
        if new.optional and old.required:
            self._update.make_column_optional(name)
        # A new type that promotes to the existing one is narrower: keep the table's.
        if (
            isinstance(nt, PrimitiveType)
            and nt != ot
            and not is_promotion_allowed(nt, ot, format_version=self._format_version)
        ):
            self._update.update_column(name, nt)  # raises unless a promotion
        if new.doc is not None and new.doc != old.doc:
            self._update.update_column_doc(name, new.doc)

    def _mismatch(self, new: NestedField, old: NestedField) -> ValidationError:
        name = self._existing.column_name(old.field_id)
        return ValidationError(
            f"union_by_name: column {name!r} is a {old.field_type} in the table but a "
            f"{new.field_type} in the new schema; these cannot be unified: rename the column in "
            "the new schema or change the table first"
        )


# --- name mapping (Java's MappingUtil.update) -----------------------------------


def update_name_mapping(
    mapping_json: str,
    names: Mapping[int, str],
    added: Mapping[int, Sequence[NestedField]],
) -> str | None:
    """The name mapping with changed fields' new names and added fields' entries.

    ``names``: field id -> (possibly new) name of each changed existing field; the old
    names stay, so files written before a rename still map. ``added``: parent id
    (:data:`_ROOT_ID` for the table) -> fields added there. A name now used by another
    field of the same struct is removed from the field that had it. Returns None (and
    logs) when the mapping cannot be parsed, so a broken mapping never blocks the update.
    """
    try:
        parsed = json.loads(mapping_json)
        if not isinstance(parsed, list):
            raise TypeError("a name mapping is a JSON list")
        result = _mapped_fields(parsed, _ROOT_ID, names, added)
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("could not update the name mapping %r: %s", mapping_json, e)
        return None
    return json.dumps(result, separators=(",", ":"))


def _mapped_fields(
    entries: list[Any],
    parent_id: int,
    names: Mapping[int, str],
    added: Mapping[int, Sequence[NestedField]],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in entries:
        e = dict(entry)
        fid = e.get("field-id")  # None for a name without an id
        field_names = list(e.get("names") or [])
        if isinstance(fid, int) and fid in names and names[fid] not in field_names:
            field_names.append(names[fid])
        e["names"] = field_names
        if isinstance(fid, int) and (e.get("fields") is not None or fid in added):
            e["fields"] = _mapped_fields(list(e.get("fields") or []), fid, names, added)
        out.append(e)
    new = list(added.get(parent_id, ()))
    taken = {names[e["field-id"]]: e["field-id"] for e in out if e.get("field-id") in names}
    taken.update({f.name: f.field_id for f in new})
    for e in out:
        fid = e.get("field-id")
        e["names"] = [n for n in e["names"] if taken.get(n, fid) == fid]
    return out + [_mapping_of(f.field_id, f.name, f.field_type) for f in new]


def _mapping_of(field_id: int, name: str, t: IcebergType) -> dict[str, Any]:
    entry: dict[str, Any] = {"field-id": field_id, "names": [name]}
    nested: list[dict[str, Any]] = []
    if isinstance(t, StructType):
        nested = [_mapping_of(f.field_id, f.name, f.field_type) for f in t.fields]
    elif isinstance(t, ListType):
        nested = [_mapping_of(t.element_id, "element", t.element_type)]
    elif isinstance(t, MapType):
        nested = [
            _mapping_of(t.key_id, "key", t.key_type),
            _mapping_of(t.value_id, "value", t.value_type),
        ]
    if nested:
        entry["fields"] = nested
    return entry
