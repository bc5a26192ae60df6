"""Partition specs (spec: "Partitioning", "Partition Evolution"; JSON per Appendix C).

A :class:`PartitionSpec` is an immutable list of :class:`PartitionField`; it is
schema-free (fields refer to source columns by id), so methods that need types
take the :class:`~icewright.spec.schema.Schema`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.transforms import (
    BucketTransform,
    Transform,
    TruncateTransform,
    parse_transform,
)
from icewright.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
)

PARTITION_DATA_ID_START = 1000
"""Partition field ids start here (spec: "Partition Evolution")."""


def _json_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be a JSON integer, got {value!r}")
    return value


def parse_source_ids(obj: dict[str, Any], what: str) -> tuple[int, ...]:
    """The ``source-ids`` (v3) or ``source-id`` of a partition or sort field object."""
    if "source-ids" in obj:
        ids = obj["source-ids"]
        if not isinstance(ids, list) or not ids:
            raise ValidationError(
                f"{what}: source-ids must be a non-empty list of ints, got {ids!r}"
            )
        return tuple(_json_int(i, f"{what} source-ids entry") for i in ids)
    if "source-id" not in obj:
        raise ValidationError(f"{what} has neither 'source-id' nor 'source-ids': {obj!r}")
    return (_json_int(obj["source-id"], f"{what} source-id"),)


def source_ids_json(source_ids: tuple[int, ...]) -> dict[str, Any]:
    """Appendix C: one source is written as ``source-id``, several only as ``source-ids``."""
    if len(source_ids) > 1:
        return {"source-ids": list(source_ids)}
    return {"source-id": source_ids[0]}


def check_source_column(
    schema: Schema, source_id: int, transform: Transform, what: str
) -> IcebergType | None:
    """Check a partition or sort source column; returns its type (None if void and dropped).

    Spec ("Partitioning"): the source must be a primitive, not inside a list or map,
    and the transform must accept its type. Unknown transforms are not checked.
    """
    try:
        f = schema.find_field(source_id)
    except ValidationError:
        if transform.is_void or transform.is_unknown:
            # A void field may outlive its dropped source column; unknown ones are ignored.
            return None
        raise ValidationError(
            f"{what}: source column id {source_id} is not in schema {schema.schema_id}; "
            "use an existing column (or replace the field's transform with void)"
        ) from None
    parent = schema.parent_id(source_id)
    while parent is not None:
        if isinstance(schema.find_type(parent), ListType | MapType):
            raise ValidationError(
                f"{what}: source column {schema.column_name(source_id)!r} is inside a list or "
                "map; partition and sort sources may only be nested in structs"
            )
        parent = schema.parent_id(parent)
    if not isinstance(f.field_type, PrimitiveType):
        raise ValidationError(
            f"{what}: source column {schema.column_name(source_id)!r} has type {f.field_type}, "
            "but the source must be a primitive type"
        )
    if not transform.is_unknown and not transform.can_transform(f.field_type):
        raise ValidationError(
            f"{what}: transform {transform} cannot be applied to column "
            f"{schema.column_name(source_id)!r} of type {f.field_type}"
        )
    return f.field_type


@dataclass(frozen=True, slots=True)
class PartitionField:
    """One field of a partition spec.

    ``source_ids`` holds every source column id (v3 multi-argument transforms);
    it defaults to ``(source_id,)``, and ``source_id`` is always its first entry.
    """

    source_id: int
    field_id: int
    transform: Transform
    name: str
    source_ids: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.source_ids:
            object.__setattr__(self, "source_ids", (self.source_id,))
        elif self.source_ids[0] != self.source_id:
            raise ValidationError(
                f"partition field {self.name!r}: source_id {self.source_id} must be the first "
                f"of source_ids {list(self.source_ids)}"
            )
        if not isinstance(self.transform, Transform):
            raise ValidationError(
                f"partition field {self.name!r}: {self.transform!r} is not a Transform"
            )
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError(
                f"partition field {self.field_id}: the name must be a non-empty string"
            )

    def to_json(self) -> dict[str, Any]:
        """Appendix C partition field object."""
        return {
            **source_ids_json(self.source_ids),
            "field-id": self.field_id,
            "name": self.name,
            "transform": str(self.transform),
        }

    @classmethod
    def from_json(cls, obj: Any, default_field_id: int | None = None) -> PartitionField:
        """Parse a partition field object; ``default_field_id`` is used if v1 omits the id."""
        if not isinstance(obj, dict):
            raise ValidationError(f"a partition field must be a JSON object, got {obj!r}")
        name = obj.get("name")
        if not isinstance(name, str):
            raise ValidationError(f"partition field name must be a string, got {name!r}")
        transform = obj.get("transform")
        if not isinstance(transform, str):
            raise ValidationError(f"partition field {name!r}: transform must be a string")
        ids = parse_source_ids(obj, f"partition field {name!r}")
        if "field-id" in obj:
            field_id = _json_int(obj["field-id"], f"partition field {name!r} field-id")
        elif default_field_id is not None:
            field_id = default_field_id
        else:
            raise ValidationError(f"partition field {name!r} is missing 'field-id'")
        return cls(ids[0], field_id, parse_transform(transform), name, ids)


class PartitionSpec:
    """An immutable partition spec: ordered partition fields and a spec id.

    >>> from icewright.spec.transforms import BucketTransform
    >>> spec = PartitionSpec(PartitionField(1, 1000, BucketTransform(16), "id_bucket"))
    >>> spec.to_json()["fields"][0]["transform"]
    'bucket[16]'
    """

    __slots__ = ("_fields", "spec_id")
    _fields: tuple[PartitionField, ...]
    spec_id: int

    def __init__(self, *fields: PartitionField, spec_id: int = 0) -> None:
        names: set[str] = set()
        ids: set[int] = set()
        for f in fields:
            if not isinstance(f, PartitionField):
                raise ValidationError(f"{f!r} is not a PartitionField")
            if f.name in names:
                raise ValidationError(
                    f"partition spec {spec_id}: the partition name {f.name!r} is used more than "
                    "once; every partition field needs its own name"
                )
            if f.field_id in ids:
                raise ValidationError(
                    f"partition spec {spec_id}: partition field id {f.field_id} is used twice"
                )
            names.add(f.name)
            ids.add(f.field_id)
        object.__setattr__(self, "_fields", tuple(fields))
        object.__setattr__(self, "spec_id", _json_int(spec_id, "spec-id"))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PartitionSpec is immutable; build a new one")

    # --- structure ----------------------------------------------------------

    @property
    def fields(self) -> tuple[PartitionField, ...]:
        """The partition fields, in partition-tuple order."""
        return self._fields

    def __iter__(self) -> Iterator[PartitionField]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    @property
    def is_unpartitioned(self) -> bool:
        """True with no fields, or only void fields (Java ``isUnpartitioned``)."""
        return all(f.transform.is_void for f in self._fields)

    @property
    def is_partitioned(self) -> bool:
        """True when some field is not void."""
        return not self.is_unpartitioned

    @property
    def last_assigned_field_id(self) -> int:
        """The highest partition field id, or 999 when there are no fields."""
        return max((f.field_id for f in self._fields), default=PARTITION_DATA_ID_START - 1)

    @property
    def has_unknown_transform(self) -> bool:
        """Writers must not commit data with such a spec (spec: "Partitioning")."""
        return any(f.transform.is_unknown for f in self._fields)

    def fields_by_source_id(self, source_id: int) -> tuple[PartitionField, ...]:
        """The fields that read the source column ``source_id``."""
        return tuple(f for f in self._fields if source_id in f.source_ids)

    def identity_source_ids(self) -> frozenset[int]:
        """Source column ids of the identity fields."""
        return frozenset(f.source_id for f in self._fields if f.transform.is_identity)

    def with_spec_id(self, spec_id: int) -> PartitionSpec:
        """A copy with another spec id."""
        return PartitionSpec(*self._fields, spec_id=spec_id)

    def partition_type(self, schema: Schema) -> StructType:
        """The partition tuple's struct: field ids and names of the spec, result types, optional.

        A source column that no longer exists yields ``unknown`` (as Iceberg Java does).
        """
        out: list[NestedField] = []
        for f in self._fields:
            try:
                source: IcebergType | None = schema.find_type(f.source_id)
            except ValidationError:
                source = None
            result = UnknownType() if source is None else f.transform.result_type(source)
            out.append(NestedField(f.field_id, f.name, result, required=False))
        return StructType(*out)

    # --- comparison ---------------------------------------------------------

    def compatible_with(self, other: PartitionSpec) -> bool:
        """Spec equivalence: same fields in order with equal source ids, transforms and names.

        Field ids and spec ids are ignored.
        """
        if len(self._fields) != len(other._fields):
            return False
        return all(
            a.source_ids == b.source_ids
            and str(a.transform) == str(b.transform)
            and a.name == b.name
            for a, b in zip(self._fields, other._fields, strict=True)
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PartitionSpec)
            and self.spec_id == other.spec_id
            and self._fields == other._fields
        )

    def __hash__(self) -> int:
        return hash((self.spec_id, self._fields))

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{f.name}={f.transform}({','.join(map(str, f.source_ids))})#{f.field_id}"
            for f in self._fields
        )
        return f"PartitionSpec([{inner}], spec_id={self.spec_id})"

    # --- validation ---------------------------------------------------------

    def check_compatible(self, schema: Schema) -> None:
        """Raise :class:`ValidationError` unless this spec fits ``schema``.

        Every source column exists (void and unknown fields may outlive theirs), is a
        primitive outside lists and maps and fits the transform, and no partition
        name equals a schema column other than the field's own source.
        """
        for f in self._fields:
            what = f"partition field {f.name!r}"
            for sid in f.source_ids:
                check_source_column(schema, sid, f.transform, what)
            try:
                clash = schema.find_field(f.name)
            except ValidationError:
                continue
            if clash.field_id not in f.source_ids:
                raise ValidationError(
                    f"{what} has the name of schema column id {clash.field_id}, which is not its "
                    "source; rename the partition field"
                )

    def check_writable(self) -> None:
        """Raise :class:`ValidationError` if data may not be written with this spec.

        Spec ("Partitioning"): writers must not commit data using a spec with a field
        whose transform is unknown.
        """
        unknown = [f"{f.name!r} ({f.transform})" for f in self._fields if f.transform.is_unknown]
        if unknown:
            raise ValidationError(
                f"partition spec {self.spec_id} has fields with transforms icewright does not "
                f"know: {', '.join(unknown)}; data cannot be written with it. Evolve the table "
                "to a spec without them first"
            )

    # --- JSON ---------------------------------------------------------------

    def fields_to_json(self) -> list[dict[str, Any]]:
        """The bare field list (v1's deprecated ``partition-spec``)."""
        return [f.to_json() for f in self._fields]

    def to_json(self) -> dict[str, Any]:
        """The Appendix C object form with ``spec-id`` and ``fields``."""
        return {"spec-id": self.spec_id, "fields": self.fields_to_json()}

    @classmethod
    def from_fields_json(cls, fields: Any, spec_id: int = 0) -> PartitionSpec:
        """Parse a bare field list; missing (v1) field ids are assigned from 1000 on.

        Like the reference implementation, an id-less field gets one more than the
        highest id assigned so far in this spec.
        """
        if not isinstance(fields, list):
            raise ValidationError(f"partition spec fields must be a JSON list, got {fields!r}")
        last = PARTITION_DATA_ID_START - 1
        parsed: list[PartitionField] = []
        for obj in fields:
            pf = PartitionField.from_json(obj, default_field_id=last + 1)
            last = max(last, pf.field_id)
            parsed.append(pf)
        return cls(*parsed, spec_id=spec_id)

    @classmethod
    def from_json(cls, obj: Any) -> PartitionSpec:
        """Parse the Appendix C object form (a bare list is accepted as spec 0)."""
        if isinstance(obj, list):
            return cls.from_fields_json(obj, 0)
        if not isinstance(obj, dict):
            raise ValidationError(f"a partition spec must be a JSON object, got {obj!r}")
        if "fields" not in obj:
            raise ValidationError(f"partition spec JSON is missing 'fields': {obj!r}")
        spec_id = _json_int(obj.get("spec-id", 0), "partition spec spec-id")
        return cls.from_fields_json(obj["fields"], spec_id)

    # --- paths --------------------------------------------------------------

    def partition_to_path(self, partition: Sequence[Any], schema: Schema) -> str:
        """Hive-style ``name=value/...`` path of a partition tuple (Java ``partitionToPath``).

        Names and values are escaped like Java's ``URLEncoder`` (UTF-8, space as ``+``).
        """
        if len(partition) != len(self._fields):
            raise ValidationError(
                f"partition tuple has {len(partition)} values but spec {self.spec_id} has "
                f"{len(self._fields)} fields"
            )
        ptype = self.partition_type(schema)
        parts = []
        for f, pt, value in zip(self._fields, ptype.fields, partition, strict=True):
            text = f.transform.to_human_string(pt.field_type, value)
            parts.append(f"{url_encode(f.name)}={url_encode(text)}")
        return "/".join(parts)


UNPARTITIONED_PARTITION_SPEC = PartitionSpec(spec_id=0)
"""The spec with no fields, id 0."""

_URL_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def url_encode(text: str) -> str:
    """``java.net.URLEncoder.encode(text, "UTF-8")``: ``a-zA-Z0-9.-*_`` kept, space as ``+``."""
    out = []
    for b in text.encode("utf-8"):
        if b in _URL_SAFE:
            out.append(chr(b))
        elif b == 0x20:
            out.append("+")
        else:
            out.append(f"%{b:02X}")
    return "".join(out)


# --- building specs by column name --------------------------------------------

_DEFAULT_SUFFIX = {
    "bucket": "_bucket",
    "truncate": "_trunc",
    "year": "_year",
    "month": "_month",
    "day": "_day",
    "hour": "_hour",
    "void": "_null",
}


def make_transform(name: str, arg: int | None = None) -> Transform:
    """A transform from its name and optional argument (``("bucket", 16)``)."""
    if name in ("bucket", "truncate"):
        if arg is None:
            raise ValidationError(f"{name} needs an argument, e.g. ({name!r}, 'col', 16)")
        return BucketTransform(arg) if name == "bucket" else TruncateTransform(arg)
    if arg is not None:
        raise ValidationError(f"transform {name!r} takes no argument, got {arg!r}")
    t = parse_transform(name)
    if t.is_unknown:
        raise ValidationError(
            f"unknown transform {name!r}: use identity, bucket, truncate, year, month, day, "
            "hour or void"
        )
    return t


def default_partition_name(transform: Transform, column: str) -> str:
    """The name Iceberg Java's ``PartitionSpec.Builder`` gives a field by default."""
    if transform.is_identity:
        return column
    if isinstance(transform, BucketTransform):
        return column + "_bucket"
    if isinstance(transform, TruncateTransform):
        return column + "_trunc"
    return column + _DEFAULT_SUFFIX[str(transform)]


def build_partition_spec(
    schema: Schema,
    fields: Iterable[tuple[str, str] | tuple[str, str, int] | tuple[str, str, int | None, str]],
    spec_id: int = 0,
    last_partition_id: int = PARTITION_DATA_ID_START - 1,
) -> PartitionSpec:
    """Build a spec from ``(transform, column[, arg[, name]])`` tuples, e.g.
    ``[("day", "ts"), ("bucket", "id", 16), ("identity", "region")]``.

    Field ids are assigned from ``last_partition_id + 1``; names default as in Java
    (``id_bucket``, ``name_trunc``, ``ts_day``, ``col_null``; identity keeps the
    column name). Raises :class:`ValidationError` for an unknown column, a transform
    that does not fit the column, a repeated or conflicting name, or a redundant
    field (two time transforms, or the same transform, on one column).
    """
    next_id = last_partition_id
    out: list[PartitionField] = []
    names: set[str] = set()
    dedup: dict[tuple[int, str], PartitionField] = {}
    for entry in fields:
        if not isinstance(entry, tuple) or not 2 <= len(entry) <= 4:
            raise ValidationError(
                f"partition field {entry!r} must be (transform, column[, arg[, name]])"
            )
        tname, column = entry[0], entry[1]
        arg = entry[2] if len(entry) > 2 else None
        transform = make_transform(str(tname).strip().lower(), arg)
        source = schema.find_field(column)
        full_name = schema.column_name(source.field_id)
        name = entry[3] if len(entry) > 3 else default_partition_name(transform, full_name)
        if not isinstance(name, str) or not name:
            raise ValidationError(f"partition field for {column!r}: the name must be non-empty")
        check_source_column(schema, source.field_id, transform, f"partition field {name!r}")
        try:
            clash: NestedField | None = schema.find_field(name)
        except ValidationError:
            clash = None
        if clash is not None:
            # Java: identity and void may reuse their own source's name; nothing else may
            # take a schema column's name.
            own = clash.field_id == source.field_id
            if not ((transform.is_identity or transform.is_void) and own):
                raise ValidationError(
                    f"cannot name a {transform} partition field {name!r}: a schema column has "
                    "that name; pass a different name as the fourth tuple element"
                )
        if name in names:
            raise ValidationError(f"partition name {name!r} is used more than once")
        names.add(name)
        next_id += 1
        pf = PartitionField(source.field_id, next_id, transform, name)
        if transform.is_identity or transform.dedup_name == "time":
            key = (source.field_id, transform.dedup_name)
            if key in dedup:
                raise ValidationError(
                    f"redundant partition field {name!r} ({transform}) conflicts with "
                    f"{dedup[key].name!r} ({dedup[key].transform}) on column {full_name!r}"
                )
            dedup[key] = pf
        out.append(pf)
    return PartitionSpec(*out, spec_id=spec_id)
