"""Iceberg types (spec: "Schemas and Data Types"; JSON form per Appendix C).

Every type is an immutable value: two types are equal when they are the same
Iceberg type. Primitive types render to their canonical JSON string with
``str()``; nested types serialize to JSON objects through :func:`type_to_json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from icewright.errors import ValidationError

JsonValue: TypeAlias = Any
"""A value as :func:`json.loads` returns it."""


class IcebergType:
    """Base class of every Iceberg type."""

    __slots__ = ()

    @property
    def is_primitive(self) -> bool:
        return isinstance(self, PrimitiveType)

    @property
    def is_nested(self) -> bool:
        return isinstance(self, NestedType)


class PrimitiveType(IcebergType):
    """A type that is not nested. ``str()`` gives the canonical JSON string."""

    __slots__ = ()
    name: ClassVar[str] = ""
    min_format_version: ClassVar[int] = 1

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class BooleanType(PrimitiveType):
    __slots__ = ()
    name = "boolean"


class IntegerType(PrimitiveType):
    """32-bit signed integer (``int``)."""

    __slots__ = ()
    name = "int"


class LongType(PrimitiveType):
    """64-bit signed integer (``long``)."""

    __slots__ = ()
    name = "long"


class FloatType(PrimitiveType):
    __slots__ = ()
    name = "float"


class DoubleType(PrimitiveType):
    __slots__ = ()
    name = "double"


class DateType(PrimitiveType):
    """Calendar date, days from 1970-01-01."""

    __slots__ = ()
    name = "date"


class TimeType(PrimitiveType):
    """Time of day, microseconds from midnight."""

    __slots__ = ()
    name = "time"


class TimestampType(PrimitiveType):
    """Timestamp without zone, microseconds from the epoch."""

    __slots__ = ()
    name = "timestamp"


class TimestamptzType(PrimitiveType):
    """Timestamp with zone (stored as UTC), microseconds from the epoch."""

    __slots__ = ()
    name = "timestamptz"


class TimestampNsType(PrimitiveType):
    """Timestamp without zone, nanoseconds from the epoch (v3)."""

    __slots__ = ()
    name = "timestamp_ns"
    min_format_version = 3


class TimestamptzNsType(PrimitiveType):
    """Timestamp with zone, nanoseconds from the epoch (v3)."""

    __slots__ = ()
    name = "timestamptz_ns"
    min_format_version = 3


class StringType(PrimitiveType):
    __slots__ = ()
    name = "string"


class UUIDType(PrimitiveType):
    __slots__ = ()
    name = "uuid"


class BinaryType(PrimitiveType):
    __slots__ = ()
    name = "binary"


class UnknownType(PrimitiveType):
    """The v3 ``unknown`` type: always null, never stored in data files."""

    __slots__ = ()
    name = "unknown"
    min_format_version = 3


class VariantType(PrimitiveType):
    """The v3 semi-structured ``variant`` type.

    The spec says a variant is neither primitive nor nested; it is modelled as a
    leaf here because, like a primitive, it has no child field ids.
    """

    __slots__ = ()
    name = "variant"
    min_format_version = 3


class FixedType(PrimitiveType):
    """Fixed-length byte array, ``fixed[L]``."""

    __slots__ = ("length",)
    name = "fixed"

    def __init__(self, length: int) -> None:
        if length <= 0:
            raise ValidationError(f"fixed[{length}]: the length must be a positive number of bytes")
        self.length = length

    def __str__(self) -> str:
        return f"fixed[{self.length}]"

    def __repr__(self) -> str:
        return f"FixedType({self.length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FixedType) and other.length == self.length

    def __hash__(self) -> int:
        return hash(("fixed", self.length))


class DecimalType(PrimitiveType):
    """Fixed-point decimal, ``decimal(P,S)``; precision at most 38."""

    __slots__ = ("precision", "scale")
    name = "decimal"
    MAX_PRECISION: ClassVar[int] = 38

    def __init__(self, precision: int, scale: int) -> None:
        if not 1 <= precision <= self.MAX_PRECISION:
            raise ValidationError(
                f"decimal({precision},{scale}): precision must be between 1 and "
                f"{self.MAX_PRECISION}"
            )
        self.precision = precision
        self.scale = scale

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def __repr__(self) -> str:
        return f"DecimalType({self.precision}, {self.scale})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DecimalType)
            and other.precision == self.precision
            and other.scale == self.scale
        )

    def __hash__(self) -> int:
        return hash(("decimal", self.precision, self.scale))


DEFAULT_CRS = "OGC:CRS84"
DEFAULT_EDGE_ALGORITHM = "spherical"
EDGE_ALGORITHMS = frozenset({"spherical", "vincenty", "thomas", "andoyer", "karney"})


class GeometryType(PrimitiveType):
    """The v3 ``geometry(C)`` type; ``crs`` is None when the JSON omits it."""

    __slots__ = ("crs",)
    name = "geometry"
    min_format_version = 3

    def __init__(self, crs: str | None = None) -> None:
        self.crs = crs

    def __str__(self) -> str:
        return "geometry" if self.crs is None else f"geometry({self.crs})"

    def __repr__(self) -> str:
        return f"GeometryType({self.crs!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GeometryType) and (other.crs or DEFAULT_CRS) == (
            self.crs or DEFAULT_CRS
        )

    def __hash__(self) -> int:
        return hash(("geometry", self.crs or DEFAULT_CRS))


class GeographyType(PrimitiveType):
    """The v3 ``geography(C, A)`` type; omitted parameters stay None."""

    __slots__ = ("algorithm", "crs")
    name = "geography"
    min_format_version = 3

    def __init__(self, crs: str | None = None, algorithm: str | None = None) -> None:
        if algorithm is not None and algorithm not in EDGE_ALGORITHMS:
            raise ValidationError(
                f"geography edge algorithm {algorithm!r} is not one of {sorted(EDGE_ALGORITHMS)}"
            )
        self.crs = crs
        self.algorithm = algorithm

    def __str__(self) -> str:
        if self.crs is None and self.algorithm is None:
            return "geography"
        if self.algorithm is None:
            return f"geography({self.crs})"
        return f"geography({self.crs or DEFAULT_CRS}, {self.algorithm})"

    def __repr__(self) -> str:
        return f"GeographyType({self.crs!r}, {self.algorithm!r})"

    def _key(self) -> tuple[str, str]:
        return (self.crs or DEFAULT_CRS, self.algorithm or DEFAULT_EDGE_ALGORITHM)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GeographyType) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(("geography", *self._key()))


# --- nested types -----------------------------------------------------------


class NestedType(IcebergType):
    """A struct, list or map: a type whose children carry field ids."""

    __slots__ = ()

    @property
    def fields(self) -> tuple[NestedField, ...]:
        """The child fields, in order (a list's element, a map's key and value)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class NestedField:
    """A named field of a struct (or a list element / map key or value).

    ``initial_default`` and ``write_default`` hold the JSON single-value form
    (Appendix D) exactly as read, so they are written back unchanged.
    """

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    # defaults may be JSON objects/arrays (unhashable): equality uses them, hashing not
    initial_default: JsonValue = field(default=None, hash=False)
    write_default: JsonValue = field(default=None, hash=False)

    def __post_init__(self) -> None:
        _check_unknown_optional(self.field_type, self.required, f"field {self.name!r}")

    @property
    def optional(self) -> bool:
        return not self.required


def _check_unknown_optional(t: IcebergType, required: bool, what: str) -> None:
    # spec "Primitive Types": unknown "must be optional with null defaults"
    if required and isinstance(t, UnknownType):
        raise ValidationError(f"{what} has type unknown and must be optional, not required")


@dataclass(frozen=True, slots=True)
class StructType(NestedType):
    """An ordered tuple of named, typed fields."""

    struct_fields: tuple[NestedField, ...] = field(default_factory=tuple)

    def __init__(self, *fields: NestedField) -> None:
        object.__setattr__(self, "struct_fields", tuple(fields))

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return self.struct_fields

    def field_by_name(self, name: str) -> NestedField | None:
        for f in self.struct_fields:
            if f.name == name:
                return f
        return None

    def field_by_id(self, field_id: int) -> NestedField | None:
        for f in self.struct_fields:
            if f.field_id == field_id:
                return f
        return None

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {f.field_type}" for f in self.struct_fields)
        return f"struct<{inner}>"


@dataclass(frozen=True, slots=True)
class ListType(NestedType):
    """A list whose elements all have one type; the element has its own field id."""

    element_id: int
    element_type: IcebergType
    element_required: bool = True

    def __post_init__(self) -> None:
        _check_unknown_optional(self.element_type, self.element_required, "a list element")

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.element_field,)

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


@dataclass(frozen=True, slots=True)
class MapType(NestedType):
    """A map; keys are always required, key and value have their own field ids."""

    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = True

    def __post_init__(self) -> None:
        _check_unknown_optional(self.key_type, True, "a map key")
        _check_unknown_optional(self.value_type, self.value_required, "a map value")

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.key_field, self.value_field)

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


# --- JSON codec (Appendix C) ------------------------------------------------

_SIMPLE_TYPES: dict[str, PrimitiveType] = {
    t.name: t
    for t in (
        BooleanType(),
        IntegerType(),
        LongType(),
        FloatType(),
        DoubleType(),
        DateType(),
        TimeType(),
        TimestampType(),
        TimestamptzType(),
        TimestampNsType(),
        TimestamptzNsType(),
        StringType(),
        UUIDType(),
        BinaryType(),
        UnknownType(),
        VariantType(),
    )
}

# Type names match case-insensitively, as in Iceberg Java (Types.fromTypeName); a CRS keeps
# its case, an edge algorithm is lowercased.
_FIXED = re.compile(r"^fixed\s*\[\s*(\d+)\s*\]$", re.IGNORECASE)
_DECIMAL = re.compile(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$", re.IGNORECASE)
_GEOMETRY = re.compile(r"^geometry\s*(?:\(\s*([^,()]+?)\s*\))?$", re.IGNORECASE)
_GEOGRAPHY = re.compile(
    r"^geography\s*(?:\(\s*([^,()]+?)\s*(?:,\s*([A-Za-z]+)\s*)?\))?$", re.IGNORECASE
)


def parse_primitive(text: str) -> PrimitiveType:
    """Parse a primitive type string such as ``"long"`` or ``"decimal(9, 2)"``."""
    s = text.strip()
    simple = _SIMPLE_TYPES.get(s.lower())
    if simple is not None:
        return simple
    if m := _FIXED.match(s):
        return FixedType(int(m.group(1)))
    if m := _DECIMAL.match(s):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    if m := _GEOMETRY.match(s):
        return GeometryType(m.group(1))
    if m := _GEOGRAPHY.match(s):
        algorithm = m.group(2)
        return GeographyType(m.group(1), algorithm.lower() if algorithm else None)
    raise ValidationError(
        f"unknown Iceberg type {text!r}: expected a primitive such as 'long', "
        "'decimal(9,2)' or 'fixed[16]', or a struct, list or map object"
    )


def _require(obj: dict[str, Any], key: str, kind: str) -> Any:
    if key not in obj:
        raise ValidationError(f"{kind} JSON is missing {key!r}: {obj!r}")
    return obj[key]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be an integer, got {value!r}")
    return value


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"{what} must be true or false, got {value!r}")
    return value


def field_from_json(obj: Any) -> NestedField:
    """Parse one struct field object."""
    if not isinstance(obj, dict):
        raise ValidationError(f"a struct field must be a JSON object, got {obj!r}")
    name = _require(obj, "name", "struct field")
    if not isinstance(name, str):
        raise ValidationError(f"a field name must be a string, got {name!r}")
    doc = obj.get("doc")
    if doc is not None and not isinstance(doc, str):
        raise ValidationError(f"field {name!r}: doc must be a string, got {doc!r}")
    return NestedField(
        field_id=_int(_require(obj, "id", "struct field"), f"field {name!r} id"),
        name=name,
        field_type=type_from_json(_require(obj, "type", "struct field")),
        required=_bool(_require(obj, "required", "struct field"), f"field {name!r} required"),
        doc=doc,
        initial_default=obj.get("initial-default"),
        write_default=obj.get("write-default"),
    )


def field_to_json(f: NestedField) -> dict[str, Any]:
    """Serialize one struct field object (optional keys only when set)."""
    out: dict[str, Any] = {
        "id": f.field_id,
        "name": f.name,
        "required": f.required,
        "type": type_to_json(f.field_type),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = f.initial_default
    if f.write_default is not None:
        out["write-default"] = f.write_default
    return out


def type_from_json(obj: Any) -> IcebergType:
    """Parse a type from its Appendix C JSON form."""
    if isinstance(obj, str):
        return parse_primitive(obj)
    if not isinstance(obj, dict):
        raise ValidationError(f"a type must be a JSON string or object, got {obj!r}")
    kind = obj.get("type")
    if kind == "struct":
        fields = _require(obj, "fields", "struct")
        if not isinstance(fields, list):
            raise ValidationError(f"struct fields must be a JSON list, got {fields!r}")
        return StructType(*(field_from_json(f) for f in fields))
    if kind == "list":
        return ListType(
            element_id=_int(_require(obj, "element-id", "list"), "list element-id"),
            element_type=type_from_json(_require(obj, "element", "list")),
            element_required=_bool(
                _require(obj, "element-required", "list"), "list element-required"
            ),
        )
    if kind == "map":
        return MapType(
            key_id=_int(_require(obj, "key-id", "map"), "map key-id"),
            key_type=type_from_json(_require(obj, "key", "map")),
            value_id=_int(_require(obj, "value-id", "map"), "map value-id"),
            value_type=type_from_json(_require(obj, "value", "map")),
            value_required=_bool(_require(obj, "value-required", "map"), "map value-required"),
        )
    raise ValidationError(f"unknown nested type {kind!r}: expected struct, list or map")


def type_to_json(t: IcebergType) -> Any:
    """Serialize a type to its Appendix C JSON form."""
    if isinstance(t, PrimitiveType):
        return str(t)
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {
            "type": "list",
            "element-id": t.element_id,
            "element": type_to_json(t.element_type),
            "element-required": t.element_required,
        }
    if isinstance(t, MapType):
        return {
            "type": "map",
            "key-id": t.key_id,
            "key": type_to_json(t.key_type),
            "value-id": t.value_id,
            "value": type_to_json(t.value_type),
            "value-required": t.value_required,
        }
    raise TypeError(f"not an Iceberg type: {t!r}")


# --- promotion (spec: "Schema Evolution") -----------------------------------


def is_promotion_allowed(
    source: IcebergType, target: IcebergType, *, format_version: int = 3
) -> bool:
    """Whether a column of type ``source`` may be changed to ``target``.

    Valid promotions: int -> long, float -> double, decimal(P,S) -> decimal(P',S)
    with P' > P; from v3 also date -> timestamp/timestamp_ns and unknown -> any type.
    Equal types are allowed.
    """
    if source == target:
        return True
    if isinstance(source, UnknownType):
        return format_version >= 3
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        return target.scale == source.scale and target.precision >= source.precision
    if isinstance(source, DateType):
        return format_version >= 3 and isinstance(target, TimestampType | TimestampNsType)
    return False
