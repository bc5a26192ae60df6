"""Table schemas (spec: "Schemas", JSON per Appendix C).

A :class:`Schema` is an immutable struct with a schema id and the ids of its
identifier fields. Lookups by field id and by dotted name cover nested fields.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.types import (
    DoubleType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    NestedType,
    PrimitiveType,
    StructType,
    VariantType,
    field_from_json,
    field_to_json,
)


class Schema:
    """An immutable table schema.

    >>> from icewright.spec.types import LongType, StringType
    >>> s = Schema(NestedField(1, "id", LongType(), required=True),
    ...            NestedField(2, "region", StringType()), identifier_field_ids=(1,))
    >>> s.find_field("region").field_id
    2
    """

    __slots__ = ("__dict__", "_fields", "identifier_field_ids", "schema_id")

    def __init__(
        self,
        *fields: NestedField,
        schema_id: int = 0,
        identifier_field_ids: tuple[int, ...] | list[int] = (),
    ) -> None:
        self._fields = tuple(fields)
        self.schema_id = schema_id
        self.identifier_field_ids = tuple(identifier_field_ids)
        self._validate()

    # --- structure ----------------------------------------------------------

    @property
    def fields(self) -> tuple[NestedField, ...]:
        """The top-level fields, in order."""
        return self._fields

    def as_struct(self) -> StructType:
        return StructType(*self._fields)

    @cached_property
    def _by_id(self) -> dict[int, NestedField]:
        index: dict[int, NestedField] = {}
        for _, f in walk_fields(self._fields):
            if f.field_id in index:
                raise ValidationError(
                    f"field id {f.field_id} is used twice ({index[f.field_id].name!r} and "
                    f"{f.name!r}): every field id in a schema must be unique"
                )
            index[f.field_id] = f
        return index

    @cached_property
    def _by_name(self) -> dict[str, int]:
        index: dict[str, int] = {}
        for path, f in walk_fields(self._fields):
            name = ".".join(path)
            if name in index:
                # two fields of one struct share a name, or a dotted name collides with
                # a nested path (Java rejects both: "multiple fields for name")
                raise ValidationError(
                    f"the column name {name!r} is used by field ids {index[name]} and "
                    f"{f.field_id}: full column names in a schema must be unique"
                )
            index[name] = f.field_id
        return index

    @cached_property
    def _parents(self) -> dict[int, int]:
        parents: dict[int, int] = {}

        def visit(parent: int | None, t: IcebergType) -> None:
            if isinstance(t, NestedType):
                for child in t.fields:
                    if parent is not None:
                        parents[child.field_id] = parent
                    visit(child.field_id, child.field_type)

        visit(None, self.as_struct())
        return parents

    @property
    def highest_field_id(self) -> int:
        """The largest field id in the schema, nested fields included (0 if empty)."""
        return max(self._by_id, default=0)

    def field_ids(self) -> frozenset[int]:
        return frozenset(self._by_id)

    def find_field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField:
        """The field with this id, or with this dotted name (``"a.b"``).

        Raises :class:`ValidationError` naming the known columns if there is none.
        """
        if isinstance(name_or_id, int):
            f = self._by_id.get(name_or_id)
            if f is None:
                raise ValidationError(f"schema {self.schema_id} has no field with id {name_or_id}")
            return f
        field_id = self._by_name.get(name_or_id)
        if field_id is None and not case_sensitive:
            lowered = {k.lower(): v for k, v in self._by_name.items()}
            field_id = lowered.get(name_or_id.lower())
        if field_id is None:
            known = ", ".join(sorted(self._by_name))
            raise ValidationError(f"no column named {name_or_id!r}; the columns are: {known}")
        return self._by_id[field_id]

    def find_type(self, name_or_id: str | int) -> IcebergType:
        return self.find_field(name_or_id).field_type

    def column_name(self, field_id: int) -> str:
        """The full dotted name of the field with this id."""
        for name, fid in self._by_name.items():
            if fid == field_id:
                return name
        raise ValidationError(f"schema {self.schema_id} has no field with id {field_id}")

    def parent_id(self, field_id: int) -> int | None:
        """The id of the struct/list/map field that holds this field, if nested."""
        return self._parents.get(field_id)

    def leaf_fields(self) -> Iterator[NestedField]:
        """Every field whose type is primitive, depth first, in schema order."""
        for _, f in walk_fields(self._fields):
            if isinstance(f.field_type, PrimitiveType):
                yield f

    # --- identity -----------------------------------------------------------

    def same_structure(self, other: Schema) -> bool:
        """Equal fields and identifier ids, ignoring the schema id."""
        return (
            self._fields == other._fields
            and self.identifier_field_ids == other.identifier_field_ids
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schema)
            and self.schema_id == other.schema_id
            and self.same_structure(other)
        )

    def __hash__(self) -> int:
        return hash((self.schema_id, self._fields, self.identifier_field_ids))

    def __repr__(self) -> str:
        return f"Schema({self.as_struct()}, schema_id={self.schema_id})"

    def with_schema_id(self, schema_id: int) -> Schema:
        return Schema(
            *self._fields, schema_id=schema_id, identifier_field_ids=self.identifier_field_ids
        )

    # --- JSON ---------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "struct",
            "schema-id": self.schema_id,
        }
        if self.identifier_field_ids:
            out["identifier-field-ids"] = list(self.identifier_field_ids)
        out["fields"] = [field_to_json(f) for f in self._fields]
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Schema:
        if not isinstance(obj, dict):
            raise ValidationError(f"a schema must be a JSON object, got {type(obj).__name__}")
        if obj.get("type", "struct") != "struct":
            raise ValidationError(f"a schema must be a struct, got type {obj.get('type')!r}")
        fields = obj.get("fields")
        if not isinstance(fields, list):
            raise ValidationError("a schema must have a 'fields' list")
        ids = obj.get("identifier-field-ids") or []
        if not isinstance(ids, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in ids
        ):
            raise ValidationError(f"identifier-field-ids must be a list of ints, got {ids!r}")
        schema_id = obj.get("schema-id", 0)
        if isinstance(schema_id, bool) or not isinstance(schema_id, int):
            raise ValidationError(f"schema-id must be an integer, got {schema_id!r}")
        return cls(
            *(field_from_json(f) for f in fields),
            schema_id=schema_id,
            identifier_field_ids=ids,
        )

    # --- checks -------------------------------------------------------------

    def _validate(self) -> None:
        names = [f.name for f in self._fields]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValidationError(f"duplicate column names in schema: {sorted(dupes)}")
        _ = self._by_id  # raises on duplicate ids
        _ = self._by_name  # raises on duplicate full names
        for fid in self.identifier_field_ids:
            self._check_identifier(fid)

    def _check_identifier(self, fid: int) -> None:
        """Spec "Identifier Field IDs": a required primitive, not float/double, nested only
        in required structs (never in a list or map)."""
        f = self._by_id.get(fid)
        if f is None:
            raise ValidationError(f"identifier field id {fid} is not a field of the schema")
        if not isinstance(f.field_type, PrimitiveType) or isinstance(f.field_type, VariantType):
            raise ValidationError(f"identifier field {f.name!r} must be a primitive type")
        if not f.required:
            raise ValidationError(f"identifier field {f.name!r} must be required")
        if isinstance(f.field_type, FloatType | DoubleType):
            raise ValidationError(f"identifier field {f.name!r} must not be a float or double")
        parent = self._parents.get(fid)
        while parent is not None:
            p = self._by_id[parent]
            if not isinstance(p.field_type, StructType):
                raise ValidationError(
                    f"identifier field {f.name!r} must not be nested in the list or map {p.name!r}"
                )
            if not p.required:
                raise ValidationError(
                    f"identifier field {f.name!r} must not be nested in the optional field "
                    f"{p.name!r}"
                )
            parent = self._parents.get(parent)


def walk_fields(
    fields: Sequence[NestedField], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], NestedField]]:
    """Depth-first (path, field) pairs of ``fields`` and every field nested in them; list
    elements and map keys/values by their role names (``element``, ``key``, ``value``)."""
    for f in fields:
        path = (*prefix, f.name)
        yield path, f
        t = f.field_type
        if isinstance(t, StructType | ListType | MapType):
            yield from walk_fields(t.fields, path)


def reassign_ids(t: IcebergType, new_id: Callable[[int], int]) -> IcebergType:
    """``t`` with every nested field id replaced by ``new_id(old id)``, called in Iceberg
    Java's ``TypeUtil.assignFreshIds`` order: a struct's own fields first, then each one's
    nested type; a list's element, a map's key then value, before going deeper.

    This order is the one every writer of fresh ids uses (new tables, replaced schemas,
    added columns, parsed schema text, Spark schemas), so the same columns always get the
    same ids as Java gives them.
    """
    if isinstance(t, StructType):
        ids = [new_id(f.field_id) for f in t.fields]
        return StructType(
            *[
                dataclasses.replace(f, field_id=i, field_type=reassign_ids(f.field_type, new_id))
                for i, f in zip(ids, t.fields, strict=True)
            ]
        )
    if isinstance(t, ListType):
        element_id = new_id(t.element_id)
        return ListType(element_id, reassign_ids(t.element_type, new_id), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = new_id(t.key_id), new_id(t.value_id)
        return MapType(
            key_id,
            reassign_ids(t.key_type, new_id),
            value_id,
            reassign_ids(t.value_type, new_id),
            t.value_required,
        )
    return t


def fresh_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """``t`` with every nested field id drawn from ``next_id``, in :func:`reassign_ids`'
    order: the fresh ids of a type built with placeholder ids (parsed schema text, a Spark
    type) or of a column being added (``UpdateSchema.addColumn``)."""
    return reassign_ids(t, lambda _old: next_id())


def assign_fresh_ids(schema: Schema) -> tuple[Schema, dict[int, int]]:
    """The schema renumbered 1..n in Iceberg's order (:func:`reassign_ids`), and the
    old-to-new id map.

    The result has schema id 0; identifier field ids follow their fields.
    """
    counter = itertools.count(1)
    id_map: dict[int, int] = {}

    def fresh(old: int) -> int:
        id_map[old] = new = next(counter)
        return new

    struct = reassign_ids(StructType(*schema.fields), fresh)
    assert isinstance(struct, StructType)
    identifiers = tuple(id_map[i] for i in schema.identifier_field_ids)
    return Schema(*struct.fields, schema_id=0, identifier_field_ids=identifiers), id_map


def assign_ids_like(schema: Schema, base: Schema, last_column_id: int) -> tuple[Schema, int]:
    """Java ``TypeUtil.assignFreshIds(schema, baseSchema, nextId)``, the ids of a replaced
    table's schema: a column whose full name is in ``base`` keeps that id; the others get
    ``last_column_id + 1`` and up in :func:`reassign_ids`' order. Returns the schema
    (identifier fields following their columns) and the new last column id."""
    counter = itertools.count(last_column_id + 1)
    last = last_column_id

    def id_for(old_id: int) -> int:
        nonlocal last
        try:
            return base.find_field(schema.column_name(old_id)).field_id
        except ValidationError:
            last = next(counter)
            return last

    struct = reassign_ids(StructType(*schema.fields), id_for)
    assert isinstance(struct, StructType)
    probe = Schema(*struct.fields)
    identifiers = tuple(
        probe.find_field(schema.column_name(i)).field_id for i in schema.identifier_field_ids
    )
    renumbered = Schema(*struct.fields, identifier_field_ids=identifiers)
    return renumbered, max(last, renumbered.highest_field_id)


def check_format_version(schema: Schema, format_version: int, hint: str = "") -> None:
    """Refuse what a table of ``format_version`` cannot hold: types of a later format
    version and, before v3, default values (spec Appendix E, "Version 3"). ``hint`` ends
    the message about a default value (what to do instead)."""
    for path, f in walk_fields(schema.fields):
        name = ".".join(path)
        t = f.field_type
        if isinstance(t, PrimitiveType) and t.min_format_version > format_version:
            raise ValidationError(
                f"column {name!r} has type {t}, which needs table format version "
                f"{t.min_format_version}; this table is v{format_version}"
            )
        if format_version < 3 and (f.initial_default is not None or f.write_default is not None):
            raise ValidationError(
                f"column {name!r} has a default value, which needs table format version 3; "
                f"this table is v{format_version}{hint}"
            )
