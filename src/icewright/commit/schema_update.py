"""Schema evolution as a pending update (Iceberg Java's ``SchemaUpdate``).

Spec, "Schema Evolution": columns are tracked by field id, so adding, dropping,
renaming and reordering columns, and the listed type promotions, never disturb data
already written. A new column gets an id above ``last-column-id``; any nested type it
brings gets fresh ids too (in Java's ``TypeUtil.assignFreshIds`` order).

Changes are recorded by field id against the schema the update was built from and
applied by :meth:`UpdateSchema.apply`. On a retry that schema must still be the
table's current one (same structure, same ``last-column-id``): a schema change by
another writer in between fails the commit clearly instead of being merged blindly,
while any other concurrent commit (an append, say) lets the update apply again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from icewright.catalog.base import Table
from icewright.commit.schema_checks import (
    allowed_promotions,
    check_not_sourced,
    check_partitions_and_order,
    names_by_id,
    subtree_ids,
)
from icewright.commit.union_by_name import NAME_MAPPING_PROPERTY, update_name_mapping
from icewright.commit.union_by_name import union_by_name as _union_by_name
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.spec.documents import StringMap
from icewright.spec.schema import Schema, check_format_version, fresh_ids
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    is_promotion_allowed,
)
from icewright.spec.values import to_json_value

ColumnPath: TypeAlias = str | tuple[str, ...]
"""A column: its dotted full name (``"loc.lat"``) or the tuple of its names."""

ROOT_ID = -1
"""The parent id of top-level columns (Java's ``TABLE_ROOT_ID``)."""

COLUMN_PROPERTY_PREFIXES = (
    "write.metadata.metrics.column.",
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
)
"""Table properties keyed by column name; renamed and dropped with their column (as Java)."""


@dataclass(frozen=True, slots=True)
class _Move:
    field_id: int
    kind: Literal["first", "before", "after"]
    reference_id: int | None = None


class UpdateSchema(PendingUpdate):
    """Evolve a table's schema; every method records a change and returns ``self``.

    For example ``update_schema(table).add_column("note", StringType()).commit()``. Columns
    are named by their dotted full names (``"loc.lat"``, ``"points.element.x"``) or tuples.
    """

    def __init__(
        self,
        table: Table,
        *,
        allow_incompatible_changes: bool = False,
        case_sensitive: bool = True,
    ) -> None:
        metadata = table.metadata
        schema = metadata.schema()
        self._table = table
        self._schema = schema
        self._format_version = metadata.format_version
        self._base_last_column_id = metadata.last_column_id
        self._last_column_id = max(metadata.last_column_id, schema.highest_field_id)
        self._names = names_by_id(schema)
        self._parents = {i: p for i in schema.field_ids() if (p := schema.parent_id(i)) is not None}
        self._deletes: dict[int, None] = {}  # an ordered set
        self._updates: dict[int, NestedField] = {}  # changed and added fields, by id
        self._adds: dict[int, list[int]] = {}  # parent id -> added field ids, in order
        self._added_names: dict[str, int] = {}
        self._moves: dict[int, list[_Move]] = {}
        # None keeps the current identifier fields (by id, so renames follow them)
        self._identifier_names: list[str] | None = None
        self._allow_incompatible = allow_incompatible_changes
        self._case_sensitive = case_sensitive

    # --- settings -------------------------------------------------------------

    @property
    def table(self) -> Table:
        """The table handle this update was built from."""
        return self._table

    @property
    def base_schema(self) -> Schema:
        """The schema this update was built from (the table's schema at that time)."""
        return self._schema

    def allow_incompatible_changes(self) -> UpdateSchema:
        """Allow changes that may break existing readers or data (e.g. requiring a column)."""
        self._allow_incompatible = True
        return self

    def case_sensitive(self, case_sensitive: bool) -> UpdateSchema:
        """Whether column names given to later calls match case-sensitively (default True)."""
        self._case_sensitive = case_sensitive
        return self

    # --- adding ---------------------------------------------------------------

    def add_column(
        self,
        path: ColumnPath,
        field_type: IcebergType,
        doc: str | None = None,
        required: bool = False,
        default: Any = None,
    ) -> UpdateSchema:
        """Add a column; a tuple path adds into a struct: ``("loc", "alt")``.

        A list or map parent adds into its element or value struct. ``default`` (a
        Python value: int, str, Decimal, ...) becomes the initial and write default,
        which needs table format v3. A required column needs a default or
        :meth:`allow_incompatible_changes`, because existing rows have no value for it.
        """
        if isinstance(path, str):
            if "." in path:
                raise ValidationError(
                    f"cannot add column {path!r}: a '.' in a name reads as a nested path; pass "
                    f"a tuple such as {tuple(path.split('.'))!r} to add into a struct, or "
                    f"({path!r},) for a top-level name that contains a dot"
                )
            parts: tuple[str, ...] = (path,)
        else:
            parts = tuple(path)
            _name(parts)  # validates the parts
        if not isinstance(field_type, IcebergType):
            raise ValidationError(
                f"cannot add column {'.'.join(parts)!r}: {field_type!r} is not an Iceberg type"
            )
        parent_id = ROOT_ID
        if len(parts) > 1:
            parent_name = ".".join(parts[:-1])
            holder = _struct_holder(self._require(parent_name, f"add {parts[-1]!r} to"))
            if not isinstance(holder.field_type, StructType):
                raise ValidationError(
                    f"cannot add column {parts[-1]!r} to {parent_name!r}: its type is "
                    f"{holder.field_type}, and columns can only be added to structs (including "
                    "struct list elements and map values)"
                )
            parent_id = holder.field_id
        initial = None
        if default is not None:
            try:
                initial = to_json_value(field_type, default)
            except ValidationError as e:
                raise ValidationError(
                    f"the default for new column {'.'.join(parts)!r} does not fit its type "
                    f"{field_type}: {e}"
                ) from None
        kwargs = {"initial_default": initial, "write_default": initial}
        self.add_field(parent_id, parts[-1], field_type, doc=doc, required=required, **kwargs)
        return self

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
    ) -> int:
        """Add a field to the struct with id ``parent_id`` (:data:`ROOT_ID`: the table).

        Defaults are in their JSON single-value form. Returns the new field id. This is
        the by-id form of :meth:`add_column` (used by union-by-name).
        """
        if not isinstance(name, str) or not name:
            raise ValidationError(f"a new column needs a non-empty name, got {name!r}")
        if parent_id != ROOT_ID and parent_id in self._deletes:
            raise ValidationError(
                f"cannot add {name!r} to column {self._names[parent_id]!r}: this update "
                "deletes that column"
            )
        full = name if parent_id == ROOT_ID else f"{self._names[parent_id]}.{name}"
        current = self._find(full)
        if current is not None and current.field_id not in self._deletes:
            raise ValidationError(
                f"cannot add column {full!r}: a column of that name already exists; choose "
                "another name, or rename or delete the existing column first"
            )
        if self._key(full) in self._added_names:
            raise ValidationError(f"cannot add column {full!r}: this update already adds it")
        if required and initial_default is None and not self._allow_incompatible:
            raise ValidationError(
                f"cannot add required column {full!r} without a default: rows already in the "
                "table have no value for it; add it as optional, give it a default (table "
                "format v3), or call allow_incompatible_changes()"
            )
        new_id = self._next_id()
        new_type = fresh_ids(field_type, self._next_id)
        self._updates[new_id] = NestedField(
            new_id, name, new_type, required, doc, initial_default, write_default
        )
        self._added_names[self._key(full)] = new_id
        if parent_id != ROOT_ID:
            self._parents[new_id] = parent_id
        self._adds.setdefault(parent_id, []).append(new_id)
        return new_id

    # --- changing existing columns ----------------------------------------------

    def delete_column(self, path: ColumnPath) -> UpdateSchema:
        """Drop a column (and everything nested in it).

        Refused for a source of the current partition spec or sort order, an identifier
        field, or a column this update also changes or adds into.
        """
        name = _name(path)
        f = self._require(name, "delete")
        if f.field_id in self._adds:
            raise ValidationError(
                f"cannot delete column {name!r}: this update adds columns into it; drop those "
                "additions or the deletion"
            )
        if f.field_id in self._updates:
            raise ValidationError(
                f"cannot delete column {name!r}: this update also changes it (name, type, doc or "
                "nullability); drop those changes or the deletion"
            )
        self._check_not_in_list_or_map(f, name, "delete")
        check_not_sourced(self._table.metadata, subtree_ids(f), self._names)
        self._deletes[f.field_id] = None
        return self

    def rename_column(self, path: ColumnPath, new_name: str) -> UpdateSchema:
        """Rename a column (its last name part: ``rename_column("loc.lat", "latitude")``)."""
        name = _name(path)
        f = self._require(name, "rename")
        if not isinstance(new_name, str) or not new_name:
            raise ValidationError(f"cannot rename column {name!r}: the new name must be non-empty")
        self._check_not_deleted(f, name, "rename")
        self._check_not_in_list_or_map(f, name, "rename")
        current = self._updates.get(f.field_id, f)
        self._updates[f.field_id] = dataclasses.replace(current, name=new_name)
        return self

    def update_column(self, path: ColumnPath, new_type: PrimitiveType) -> UpdateSchema:
        """Promote a column's type: int -> long, float -> double, decimal(P,S) -> decimal(P2,S)
        with P2 > P (spec "Schema Evolution"); from v3 also date -> timestamp(_ns)."""
        name = _name(path)
        f = self._find_for_update(name, "change the type of")
        self._check_not_deleted(f, name, "change the type of")
        if self._is_map_key(f.field_id):
            raise ValidationError(f"cannot change the type of {name!r}: map keys cannot change")
        if f.field_type == new_type:
            return self
        if not isinstance(new_type, PrimitiveType) or not is_promotion_allowed(
            f.field_type, new_type, format_version=self._format_version
        ):
            raise ValidationError(
                f"cannot change column {name!r} from {f.field_type} to {new_type}: the allowed "
                f"promotions are {allowed_promotions(self._format_version)}; write the data to "
                "a new column instead"
            )
        self._updates[f.field_id] = dataclasses.replace(f, field_type=new_type)
        return self

    def update_column_doc(self, path: ColumnPath, doc: str | None) -> UpdateSchema:
        """Set (or with None, clear) a column's doc string."""
        name = _name(path)
        f = self._find_for_update(name, "update the doc of")
        self._check_not_deleted(f, name, "update the doc of")
        if f.doc != doc:
            self._updates[f.field_id] = dataclasses.replace(f, doc=doc)
        return self

    def make_column_optional(self, path: ColumnPath) -> UpdateSchema:
        """Allow nulls in a column (always compatible)."""
        return self._set_required(_name(path), False)

    def require_column(self, path: ColumnPath) -> UpdateSchema:
        """Forbid nulls in a column: incompatible (existing rows may hold nulls) unless
        :meth:`allow_incompatible_changes` was called or the column is added here with a
        default."""
        return self._set_required(_name(path), True)

    def _set_required(self, name: str, required: bool) -> UpdateSchema:
        verb = "require" if required else "make optional"
        f = self._find_for_update(name, verb)
        if f.required == required:
            return self  # a no-op is allowed even when it would be incompatible
        if self._is_map_key(f.field_id):
            raise ValidationError(f"cannot make {name!r} optional: map keys are always required")
        defaulted_add = self._key(name) in self._added_names and f.initial_default is not None
        if required and not (defaulted_add or self._allow_incompatible):
            raise ValidationError(
                f"cannot make column {name!r} required: existing rows may hold nulls; call "
                "allow_incompatible_changes() if you know they do not"
            )
        self._check_not_deleted(f, name, verb)
        self._updates[f.field_id] = dataclasses.replace(f, required=required)
        return self

    # --- order ----------------------------------------------------------------

    def move_first(self, path: ColumnPath) -> UpdateSchema:
        """Move a column to the start of its struct."""
        name = _name(path)
        self._move(name, _Move(self._move_id(name, "move"), "first"))
        return self

    def move_before(self, path: ColumnPath, before: ColumnPath) -> UpdateSchema:
        """Move a column just before another column of the same struct."""
        return self._move_relative(_name(path), _name(before), "before")

    def move_after(self, path: ColumnPath, after: ColumnPath) -> UpdateSchema:
        """Move a column just after another column of the same struct."""
        return self._move_relative(_name(path), _name(after), "after")

    def _move_relative(
        self, name: str, other: str, kind: Literal["before", "after"]
    ) -> UpdateSchema:
        field_id = self._move_id(name, "move")
        other_id = self._move_id(other, f"move {name!r} {kind}")
        if field_id == other_id:
            raise ValidationError(f"cannot move column {name!r} {kind} itself")
        self._move(name, _Move(field_id, kind, other_id))
        return self

    def _move_id(self, name: str, verb: str) -> int:
        added = self._added_names.get(self._key(name))
        if added is not None:
            return added
        f = self._require(name, verb)
        self._check_not_deleted(f, name, verb)
        return f.field_id

    def _move(self, name: str, move: _Move) -> None:
        parent = self._parents.get(move.field_id)
        if parent is not None and not isinstance(
            self._schema.find_field(parent).field_type, StructType
        ):
            raise ValidationError(
                f"cannot move {name!r}: it is the element, key or value of a list or map, "
                "which have a fixed order"
            )
        if move.reference_id is not None and self._parents.get(move.reference_id) != parent:
            raise ValidationError(
                f"cannot move {name!r} {move.kind} {self._label(move.reference_id)!r}: they are "
                "in different structs; columns are only reordered within their own struct"
            )
        self._moves.setdefault(ROOT_ID if parent is None else parent, []).append(move)

    # --- identifier fields and union ------------------------------------------

    def set_identifier_fields(self, names: Iterable[str]) -> UpdateSchema:
        """Replace the identifier fields by these column names (existing or added here).

        Spec "Identifier Field IDs": each must be a required primitive, not float or
        double, nested only in required structs.
        """
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            _name(n)
        self._identifier_names = list(dict.fromkeys(names))
        return self

    def union_by_name(self, new_schema: Schema) -> UpdateSchema:
        """Evolve toward ``new_schema``, matching columns by name: add what is missing (as
        optional, nested too), widen types where a promotion allows, make optional what
        is optional there, take its docs. Never drops or narrows a column."""
        if not isinstance(new_schema, Schema):
            raise ValidationError(f"union_by_name needs a Schema, got {type(new_schema).__name__}")
        _union_by_name(
            self,
            self._schema,
            new_schema,
            case_sensitive=self._case_sensitive,
            format_version=self._format_version,
        )
        return self

    # --- the PendingUpdate contract ----------------------------------------------

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with the evolved schema added (or an identical one reused) and current.

        Raises :class:`ValidationError` if ``base``'s schema is no longer the one this
        update was built from, or if the change is invalid on ``base``.
        """
        current = base.schema()
        if not current.same_structure(self._schema):
            change = f"schema id {self._schema.schema_id} -> {current.schema_id}"
        elif base.last_column_id != self._base_last_column_id:
            change = f"last-column-id {self._base_last_column_id} -> {base.last_column_id}"
        else:
            change = ""
        if change:
            raise ValidationError(
                f"the table schema changed since this update was prepared ({change}); reload "
                "the table and prepare the schema change again"
            )
        new = self._evolved_schema()
        check_format_version(
            new, base.format_version, ": add the column as optional without a default"
        )
        for fid in self._deletes:
            check_not_sourced(base, subtree_ids(self._schema.find_field(fid)), self._names)
        check_partitions_and_order(base, new, self._names)

        last_column_id = max(base.last_column_id, new.highest_field_id)
        schema_id = next((s.schema_id for s in base.schemas if s.same_structure(new)), None)
        if schema_id == base.current_schema_id and last_column_id == base.last_column_id:
            return base  # nothing changes
        schemas = base.schemas
        if schema_id is None:
            # Java's reuseOrCreateNewSchemaId: an identical schema keeps its id, else max + 1
            schema_id = max(s.schema_id for s in base.schemas) + 1
            schemas = (*schemas, new.with_schema_id(schema_id))
        return dataclasses.replace(
            base,
            schemas=schemas,
            current_schema_id=schema_id,
            last_column_id=last_column_id,
            properties=self._updated_properties(base.properties, new),
            last_updated_ms=max(base.last_updated_ms, int(time.time() * 1000)),
        )

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this schema change alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])

    # --- building the schema --------------------------------------------------

    def _evolved_schema(self) -> Schema:
        self._check_identifier_deletes()
        fields = self._apply_struct(self._schema.fields, ROOT_ID)
        try:
            plain = Schema(*fields)
        except ValidationError as e:
            raise ValidationError(
                f"the evolved schema would be invalid: {e}; rename or delete one of the columns"
            ) from None
        ids = self._identifier_ids(plain)
        try:
            return Schema(*fields, identifier_field_ids=ids)
        except ValidationError as e:
            raise ValidationError(
                f"invalid identifier fields: {e}; call set_identifier_fields() with required "
                "primitive columns (not float or double) outside lists and maps"
            ) from None

    def _apply_struct(self, fields: Sequence[NestedField], parent_id: int) -> list[NestedField]:
        out: list[NestedField] = []
        for f in fields:
            if f.field_id in self._deletes:
                continue
            new_type = self._apply_type(f)
            changed = self._updates.get(f.field_id, f)
            if changed is f and new_type is f.field_type:
                out.append(f)
            else:
                out.append(dataclasses.replace(changed, field_type=new_type))
        out.extend(self._updates[i] for i in self._adds.get(parent_id, ()))
        for move in self._moves.get(parent_id, ()):
            out = self._moved(out, move)
        return out

    def _apply_type(self, f: NestedField) -> IcebergType:
        update = self._updates.get(f.field_id)
        if update is not None and update.field_type != f.field_type:
            return update.field_type  # a promotion (primitives only)
        t = f.field_type
        if isinstance(t, StructType):
            return StructType(*self._apply_struct(t.fields, f.field_id))
        if isinstance(t, ListType):
            element = self._updates.get(t.element_id, t.element_field)
            return ListType(t.element_id, self._apply_type(t.element_field), element.required)
        if isinstance(t, MapType):
            value = self._updates.get(t.value_id, t.value_field)
            return MapType(
                t.key_id, t.key_type, t.value_id, self._apply_type(t.value_field), value.required
            )
        return t

    def _moved(self, fields: list[NestedField], move: _Move) -> list[NestedField]:
        ids = [f.field_id for f in fields]
        if move.field_id not in ids or (
            move.reference_id is not None and move.reference_id not in ids
        ):
            missing = move.field_id if move.field_id not in ids else move.reference_id
            raise ValidationError(
                f"cannot move column {self._label(move.field_id)!r}: column "
                f"{self._label(missing or 0)!r} is deleted by this update"
            )
        moving = fields[ids.index(move.field_id)]
        rest = [f for f in fields if f.field_id != move.field_id]
        if move.kind == "first":
            at = 0
        else:
            at = [f.field_id for f in rest].index(move.reference_id or 0)
            at += 1 if move.kind == "after" else 0
        rest.insert(at, moving)
        return rest

    def _check_identifier_deletes(self) -> None:
        if self._identifier_names is not None:
            return  # replaced identifiers are resolved against the new schema
        for fid in self._schema.identifier_field_ids:
            node: int | None = fid
            while node is not None:
                if node in self._deletes:
                    raise ValidationError(
                        f"cannot delete column {self._names[node]!r}: identifier field "
                        f"{self._names[fid]!r} would go with it; call set_identifier_fields() "
                        "without it first"
                    )
                node = self._parents.get(node)

    def _identifier_ids(self, plain: Schema) -> tuple[int, ...]:
        if self._identifier_names is None:
            return self._schema.identifier_field_ids
        ids: list[int] = []
        for name in self._identifier_names:
            try:
                ids.append(plain.find_field(name, case_sensitive=self._case_sensitive).field_id)
                continue
            except ValidationError:
                pass
            old = self._find(name)  # a name from before a rename in this update
            if old is None or old.field_id not in plain.field_ids():
                raise ValidationError(
                    f"cannot use {name!r} as an identifier field: the evolved schema has no such "
                    "column; name an existing or added column"
                )
            ids.append(old.field_id)
        return tuple(dict.fromkeys(ids))

    def _updated_properties(self, props: Mapping[str, str], new: Schema) -> StringMap:
        out = dict(props)
        new_names = names_by_id(new)
        renamed = {
            old: new_names[fid]
            for fid, old in self._names.items()
            if fid in new_names and new_names[fid] != old
        }
        dropped = {old for fid, old in self._names.items() if fid not in new_names}
        if renamed or dropped:
            out = {}
            for key, value in props.items():
                prefix = next((p for p in COLUMN_PROPERTY_PREFIXES if key.startswith(p)), "")
                column = key[len(prefix) :]
                if not prefix:
                    out[key] = value
                elif column in renamed:
                    out[prefix + renamed[column]] = value
                elif column not in dropped:
                    out[key] = value
        mapping = props.get(NAME_MAPPING_PROPERTY)
        if mapping is not None and self._updates:
            added = {parent: [self._updates[i] for i in ids] for parent, ids in self._adds.items()}
            new_ids = self._added_ids()
            names = {fid: f.name for fid, f in self._updates.items() if fid not in new_ids}
            updated = update_name_mapping(mapping, names, added)
            if updated is not None:
                out[NAME_MAPPING_PROPERTY] = updated
        return StringMap(out)

    # --- lookups ---------------------------------------------------------------

    def _next_id(self) -> int:
        self._last_column_id += 1
        return self._last_column_id

    def _key(self, name: str) -> str:
        return name if self._case_sensitive else name.lower()

    def _added_ids(self) -> set[int]:
        return {i for ids in self._adds.values() for i in ids}

    def _label(self, field_id: int) -> str:
        if field_id in self._names:
            return self._names[field_id]
        return next((n for n, i in self._added_names.items() if i == field_id), str(field_id))

    def _find(self, name: str) -> NestedField | None:
        try:
            return self._schema.find_field(name, case_sensitive=self._case_sensitive)
        except ValidationError:
            return None

    def _require(self, name: str, verb: str) -> NestedField:
        f = self._find(name)
        if f is None:
            known = ", ".join(sorted(self._names.values()))
            raise ValidationError(
                f"cannot {verb} column {name!r}: the table has no such column (its columns are: "
                f"{known})"
            )
        return f

    def _find_for_update(self, name: str, verb: str) -> NestedField:
        existing = self._find(name)
        if existing is not None:
            return self._updates.get(existing.field_id, existing)
        added = self._added_names.get(self._key(name))
        if added is not None:
            return self._updates[added]
        return self._require(name, verb)  # raises

    def _check_not_deleted(self, f: NestedField, name: str, verb: str) -> None:
        if f.field_id in self._deletes:
            raise ValidationError(f"cannot {verb} column {name!r}: this update deletes it")

    def _is_map_key(self, field_id: int) -> bool:
        parent = self._parents.get(field_id)
        if parent is None:
            return False
        t = self._schema.find_field(parent).field_type
        return isinstance(t, MapType) and t.key_id == field_id

    def _check_not_in_list_or_map(self, f: NestedField, name: str, verb: str) -> None:
        parent = self._parents.get(f.field_id)
        if parent is not None and not isinstance(
            self._schema.find_field(parent).field_type, StructType
        ):
            raise ValidationError(
                f"cannot {verb} {name!r}: it is the element, key or value of the list or map "
                f"{self._names[parent]!r}; {verb} that column instead"
            )


def update_schema(
    table: Table, *, allow_incompatible_changes: bool = False, case_sensitive: bool = True
) -> UpdateSchema:
    """Start a schema change on ``table``; finish it with ``.commit()`` or in a transaction
    (``commit_updates(table, [schema_update, append])``)."""
    return UpdateSchema(
        table, allow_incompatible_changes=allow_incompatible_changes, case_sensitive=case_sensitive
    )


# --- helpers -------------------------------------------------------------------


def _name(path: ColumnPath) -> str:
    if isinstance(path, str) and path:
        return path
    if isinstance(path, tuple | list) and path and all(isinstance(p, str) and p for p in path):
        return ".".join(path)
    raise ValidationError(
        f"a column must be named by a non-empty dotted name or a tuple of names, got {path!r}"
    )


def _struct_holder(f: NestedField) -> NestedField:
    """The field whose struct receives added columns: a map's value, a list's element."""
    t = f.field_type
    if isinstance(t, MapType):
        return t.value_field
    if isinstance(t, ListType):
        return t.element_field
    return f
