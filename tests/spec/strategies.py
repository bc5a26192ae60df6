"""Hypothesis strategies for Iceberg types, schemas and values.

Importable by any test as ``tests.spec.strategies``:

* :func:`primitive_types` / :func:`storable_primitive_types`: primitive types (the
  latter only those with a binary and JSON single-value form).
* :func:`values_of`: valid Python values of a type (project conventions, see
  ``icewright.spec.values``), nested types included.
* :func:`nested_types`, :func:`schemas`: random nested types and schemas whose field ids
  are unique, with optional docs, defaults and identifier fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from icewright.spec.schema import Schema
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)
from icewright.spec.values import GeoPoint, decimal_from_unscaled, to_json_value

SIMPLE_TYPES: tuple[PrimitiveType, ...] = (
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
)
"""Every parameterless primitive type with a binary and JSON single-value form."""

NULL_ONLY_TYPES: tuple[PrimitiveType, ...] = (UnknownType(), VariantType())

CRS = st.sampled_from(["OGC:CRS84", "EPSG:4326", "srid:4326", "projjson:my_crs"])
ALGORITHMS = st.sampled_from(["spherical", "vincenty", "thomas", "andoyer", "karney"])


def decimal_types() -> st.SearchStrategy[DecimalType]:
    return st.integers(1, 38).flatmap(
        lambda p: st.builds(DecimalType, st.just(p), st.integers(0, p))
    )


def fixed_types() -> st.SearchStrategy[FixedType]:
    return st.builds(FixedType, st.integers(1, 32))


def geo_types() -> st.SearchStrategy[PrimitiveType]:
    return st.one_of(
        st.builds(GeometryType, st.none() | CRS),
        st.builds(GeographyType, st.none() | CRS, st.none()),
        st.builds(GeographyType, CRS, ALGORITHMS),
    )


def storable_primitive_types() -> st.SearchStrategy[PrimitiveType]:
    """Primitive types with both a binary and a JSON single-value form."""
    return st.one_of(st.sampled_from(SIMPLE_TYPES), decimal_types(), fixed_types())


def primitive_types() -> st.SearchStrategy[PrimitiveType]:
    """Every primitive type, v3 types included."""
    return st.one_of(storable_primitive_types(), st.sampled_from(NULL_ONLY_TYPES), geo_types())


# --- values ----------------------------------------------------------------------

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


def _decimal_values(t: DecimalType) -> st.SearchStrategy[Decimal]:
    bound = 10**t.precision - 1
    return st.integers(-bound, bound).map(lambda u: decimal_from_unscaled(u, t.scale))


def geo_points() -> st.SearchStrategy[GeoPoint]:
    coord = st.floats(allow_nan=False, allow_infinity=False)
    return st.builds(GeoPoint, coord, coord, st.none() | coord, st.none() | coord)


def values_of(t: IcebergType, *, nan: bool = False) -> st.SearchStrategy[Any]:
    """Valid non-null values of ``t`` (nested values may hold nulls in optional places)."""
    if isinstance(t, BooleanType):
        return st.booleans()
    if isinstance(t, IntegerType | DateType):
        return INT32
    if isinstance(t, TimeType):
        return st.integers(0, 86_400_000_000 - 1)
    if isinstance(t, LongType | TimestampType | TimestamptzType):
        return INT64
    if isinstance(t, TimestampNsType | TimestamptzNsType):
        return INT64
    if isinstance(t, FloatType):
        return st.floats(width=32, allow_nan=nan)
    if isinstance(t, DoubleType):
        return st.floats(allow_nan=nan)
    if isinstance(t, DecimalType):
        return _decimal_values(t)
    if isinstance(t, StringType):
        return st.text()
    if isinstance(t, UUIDType):
        return st.uuids()
    if isinstance(t, FixedType):
        return st.binary(min_size=t.length, max_size=t.length)
    if isinstance(t, BinaryType):
        return st.binary()
    if isinstance(t, GeometryType | GeographyType):
        return geo_points()
    if isinstance(t, StructType):
        # optional fields are left out rather than None: the JSON form drops null fields
        return st.fixed_dictionaries(
            {f.field_id: values_of(f.field_type, nan=nan) for f in t.fields if f.required},
            optional={
                f.field_id: values_of(f.field_type, nan=nan) for f in t.fields if not f.required
            },
        )
    if isinstance(t, ListType):
        element = values_of(t.element_type, nan=nan)
        return st.lists(element if t.element_required else st.none() | element, max_size=3)
    if isinstance(t, MapType):
        value = values_of(t.value_type, nan=nan)
        return st.dictionaries(
            values_of(t.key_type, nan=nan),
            value if t.value_required else st.none() | value,
            max_size=3,
        )
    raise ValueError(f"no values for {t}")


# --- nested types and schemas ----------------------------------------------------

NAMES = st.text(
    alphabet=st.characters(categories=("L", "N"), include_characters="_ -$é"),
    min_size=1,
    max_size=8,
)


def _requiredness(t: IcebergType) -> st.SearchStrategy[bool]:
    # spec "Primitive Types": unknown must be optional
    return st.just(False) if isinstance(t, UnknownType) else st.booleans()


def _field_shape(children: st.SearchStrategy[IcebergType]) -> st.SearchStrategy[NestedField]:
    return children.flatmap(
        lambda t: st.builds(
            NestedField,
            field_id=st.just(0),
            name=NAMES,
            field_type=st.just(t),
            required=_requiredness(t),
            doc=st.none() | st.text(max_size=10),
        )
    )


def _shapes(
    max_leaves: int, leaves: st.SearchStrategy[PrimitiveType] | None = None
) -> st.SearchStrategy[IcebergType]:
    """Types whose field ids are all 0: ids are assigned afterwards by :func:`_with_ids`."""

    def extend(children: st.SearchStrategy[IcebergType]) -> st.SearchStrategy[IcebergType]:
        struct = st.lists(_field_shape(children), max_size=3, unique_by=lambda f: f.name).map(
            lambda fs: StructType(*fs)
        )
        lists = children.flatmap(
            lambda t: st.builds(ListType, st.just(0), st.just(t), _requiredness(t))
        )
        maps = children.flatmap(
            lambda t: st.builds(
                MapType, st.just(0), primitive_keys(), st.just(0), st.just(t), _requiredness(t)
            )
        )
        return st.one_of(struct, lists, maps)

    base = primitive_types() if leaves is None else leaves
    return st.recursive(base, extend, max_leaves=max_leaves)


def primitive_keys() -> st.SearchStrategy[IcebergType]:
    """Map key types (storable primitives: keys are never null)."""
    return storable_primitive_types()


def _with_ids(t: IcebergType, ids: Iterator[int]) -> IcebergType:
    """A copy of ``t`` with field ids drawn from ``ids``, depth first."""
    if isinstance(t, StructType):
        return StructType(*(_field_with_ids(f, ids) for f in t.fields))
    if isinstance(t, ListType):
        element_id = next(ids)
        return ListType(element_id, _with_ids(t.element_type, ids), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next(ids), next(ids)
        key, value = _with_ids(t.key_type, ids), _with_ids(t.value_type, ids)
        return MapType(key_id, key, value_id, value, t.value_required)
    return t


def _field_with_ids(f: NestedField, ids: Iterator[int]) -> NestedField:
    field_id = next(ids)
    return NestedField(field_id, f.name, _with_ids(f.field_type, ids), f.required, f.doc)


def _count_ids(t: IcebergType) -> int:
    if isinstance(t, StructType):
        return sum(1 + _count_ids(f.field_type) for f in t.fields)
    if isinstance(t, ListType):
        return 1 + _count_ids(t.element_type)
    if isinstance(t, MapType):
        return 2 + _count_ids(t.key_type) + _count_ids(t.value_type)
    return 0


@st.composite
def _unique_ids(draw: st.DrawFn, count: int) -> list[int]:
    return draw(
        st.lists(st.integers(1, 2_147_483_447), min_size=count, max_size=count, unique=True)
    )


@st.composite
def nested_types(
    draw: st.DrawFn, max_leaves: int = 8, leaves: st.SearchStrategy[PrimitiveType] | None = None
) -> IcebergType:
    """A struct, list or map type with unique (random) field ids.

    ``leaves`` limits the primitive types used (default: every primitive type).
    """
    shape = draw(_shapes(max_leaves, leaves).filter(lambda t: not isinstance(t, PrimitiveType)))
    ids = draw(_unique_ids(_count_ids(shape)))
    return _with_ids(shape, iter(ids))


def _can_default(t: IcebergType) -> bool:
    # spec "Default values": unknown, variant, geometry and geography default to null
    return not isinstance(t, UnknownType | VariantType | GeometryType | GeographyType)


@st.composite
def _with_defaults(draw: st.DrawFn, f: NestedField) -> NestedField:
    t = f.field_type
    if isinstance(t, StructType):
        t = StructType(*(draw(_with_defaults(c)) for c in t.fields))
    initial = write = None
    if _can_default(t) and draw(st.booleans()):
        if isinstance(t, StructType):
            initial = write = {}  # a struct default holds no field values (spec)
        elif _nested_defaults_ok(t):
            initial = to_json_value(t, draw(values_of(t)))
            write = to_json_value(t, draw(values_of(t)))
    return NestedField(f.field_id, f.name, t, f.required, f.doc, initial, write)


def _nested_defaults_ok(t: IcebergType) -> bool:
    if isinstance(t, ListType):
        return _can_default(t.element_type) and _nested_defaults_ok(t.element_type)
    if isinstance(t, MapType):
        return all(_can_default(x) and _nested_defaults_ok(x) for x in (t.key_type, t.value_type))
    if isinstance(t, StructType):
        return all(
            _can_default(f.field_type) and _nested_defaults_ok(f.field_type) for f in t.fields
        )
    return True


def identifier_candidates(fields: tuple[NestedField, ...]) -> list[int]:
    """Ids of fields allowed as identifier fields (spec "Identifier Field IDs")."""
    out: list[int] = []
    for f in fields:
        t = f.field_type
        if not f.required:
            continue
        if isinstance(t, StructType):
            out += identifier_candidates(t.fields)
        elif isinstance(t, PrimitiveType) and not isinstance(
            t, FloatType | DoubleType | UnknownType | VariantType
        ):
            out.append(f.field_id)
    return out


@st.composite
def schemas(
    draw: st.DrawFn,
    max_leaves: int = 10,
    defaults: bool = True,
    identifiers: bool = True,
    leaves: st.SearchStrategy[PrimitiveType] | None = None,
) -> Schema:
    """A random schema: nested fields, unique ids, optional defaults and identifier fields.

    ``leaves`` limits the primitive types used (default: every primitive type).
    """
    children = _shapes(max_leaves // 2 or 1, leaves)
    shape = draw(st.lists(_field_shape(children), max_size=5, unique_by=lambda f: f.name))
    struct = StructType(*shape)
    ids = iter(draw(_unique_ids(_count_ids(struct))))
    fields = tuple(_field_with_ids(f, ids) for f in struct.fields)
    if defaults:
        fields = tuple(draw(_with_defaults(f)) for f in fields)
    identifier_ids: list[int] = []
    candidates = identifier_candidates(fields)
    if identifiers and candidates:
        identifier_ids = draw(st.lists(st.sampled_from(candidates), unique=True, max_size=3))
    schema_id = draw(st.integers(0, 1000))
    return Schema(*fields, schema_id=schema_id, identifier_field_ids=identifier_ids)


def map_types(t: IcebergType, fn: Callable[[IcebergType], None]) -> None:
    """Call ``fn`` on ``t`` and every type nested in it (test helper)."""
    fn(t)
    if isinstance(t, StructType):
        for f in t.fields:
            map_types(f.field_type, fn)
    elif isinstance(t, ListType):
        map_types(t.element_type, fn)
    elif isinstance(t, MapType):
        map_types(t.key_type, fn)
        map_types(t.value_type, fn)


def json_storable(t: IcebergType) -> bool:
    """Whether every value of ``t`` has a JSON single-value form (no geo/variant/unknown)."""
    found: list[IcebergType] = []
    map_types(t, lambda x: found.append(x) if not _can_default(x) else None)
    return not found
