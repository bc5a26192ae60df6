"""Rows as Spark sends them to a write task, made into exactly the table's Arrow types.

:func:`arrow_field` gives Iceberg's Parquet mapping (Appendix A) as Arrow fields with
their field ids; :func:`null_problems` finds nulls in required fields a reader could see;
:func:`conform_all` casts a batch's columns to the table's Arrow schema (hidden nulls under
a null parent get a placeholder, since Arrow refuses them in non-nullable fields).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from icewright.arrow import FIELD_ID, type_to_arrow
from icewright.spec.types import (
    BinaryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)

__all__ = ["arrow_field", "conform_all", "null_problems"]


def arrow_field(f: NestedField) -> pa.Field:
    return pa.field(
        f.name,
        _arrow_type(f.field_type),
        nullable=not f.required,
        metadata={FIELD_ID: str(f.field_id).encode()},
    )


def _arrow_type(t: IcebergType) -> pa.DataType:
    """Iceberg's Parquet mapping as Arrow types (uuid with Parquet's UUID annotation).

    Strings, binary and lists keep the 32-bit offsets Spark sends (casting to the
    ``large_`` types would copy every batch; Parquet does not tell them apart).
    """
    if isinstance(t, UUIDType) and hasattr(pa, "uuid"):
        return pa.uuid()
    if isinstance(t, StringType):
        return pa.string()
    if isinstance(t, BinaryType):
        return pa.binary()
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(arrow_field(t.key_field), arrow_field(t.value_field))
    return type_to_arrow(t)


def null_problems(
    array: pa.Array, f: NestedField, path: str, parent_valid: pa.Array | None
) -> list[str]:
    """Names of required fields that hold a null where their parent is present."""
    problems: list[str] = []
    valid = array.is_valid()
    if f.required:
        nulls = pc.invert(valid)
        if parent_valid is not None:
            nulls = pc.and_(parent_valid, nulls)
        if pc.any(nulls).as_py():
            problems.append(path)
    present = valid if parent_valid is None else pc.and_(parent_valid, valid)
    t = f.field_type
    if isinstance(t, StructType):
        for i, child in enumerate(t.fields):
            problems += null_problems(array.field(i), child, f"{path}.{child.name}", present)
    elif isinstance(t, ListType):
        # flatten() skips null lists and honours slicing (unlike .values)
        problems += null_problems(array.flatten(), t.element_field, f"{path}.element", None)
    elif isinstance(t, MapType):
        _, (values,) = _rebased(array, array.items)  # .items is the whole child array
        problems += null_problems(values, t.value_field, f"{path}.value", None)
    return problems


def conform_all(batch: pa.RecordBatch, schema: pa.Schema) -> tuple[list[pa.Array], str | None]:
    """The batch's data columns as ``schema``'s, or a message naming a misfit column."""
    arrays = []
    for i, target in enumerate(schema):
        try:
            arrays.append(_conform(batch.column(i), target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            return [], f"column {target.name!r} has a value that does not fit {target.type}: {e}"
    return arrays, None


def _conform(array: pa.Array, target: pa.Field) -> pa.Array:
    """``array`` (as Spark sent it) as an array of exactly ``target.type``.

    Arrow refuses to cast a column holding nulls to a non-nullable field, even nulls
    that only sit under a null parent struct or list (which Parquet never stores). Those
    hidden nulls get a placeholder value; nulls a reader could see were refused before.
    """
    t = target.type
    if pa.types.is_struct(t):
        children = [
            _required(_conform(array.field(i), t.field(i)), t.field(i)) for i in range(t.num_fields)
        ]
        return pa.StructArray.from_arrays(
            children, fields=[t.field(i) for i in range(t.num_fields)], mask=_nulls(array)
        )
    if pa.types.is_list(t):
        element = t.value_field
        offsets, (values,) = _rebased(array, array.values)
        values = _required(_conform(values, element), element)
        return pa.ListArray.from_arrays(offsets, values, type=t, mask=_nulls(array))
    if pa.types.is_map(t):
        offsets, (keys, items) = _rebased(array, array.keys, array.items)
        keys = _conform(keys, t.key_field)
        items = _required(_conform(items, t.item_field), t.item_field)
        return pa.MapArray.from_arrays(offsets, keys, items, type=t, mask=_nulls(array))
    if isinstance(t, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(t, array.cast(t.storage_type))
    return array.cast(t)


def _rebased(array: pa.Array, *children: pa.Array) -> tuple[pa.Array, list[pa.Array]]:
    """Offsets from 0 and the children they cover (a slice's offsets start later)."""
    offsets = array.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    rebased = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return rebased, [c.slice(start, end - start) for c in children]


def _nulls(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _required(array: pa.Array, target: pa.Field) -> pa.Array:
    """Fill the (hidden) nulls of a non-nullable field with a placeholder."""
    if target.nullable or array.null_count == 0:
        return array
    t = target.type
    if pa.types.is_struct(t):
        children = [_required(array.field(i), t.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(
            children, fields=[t.field(i) for i in range(t.num_fields)]
        )
    if pa.types.is_list(t):
        offsets, (values,) = _rebased(array, array.values)
        return pa.ListArray.from_arrays(offsets, values, type=t)
    if pa.types.is_map(t):
        offsets, (keys, items) = _rebased(array, array.keys, array.items)
        return pa.MapArray.from_arrays(offsets, keys, items, type=t)
    if isinstance(t, pa.ExtensionType):
        storage = _required(array.storage, pa.field("v", t.storage_type, nullable=False))
        return pa.ExtensionArray.from_storage(t, storage)
    return pc.fill_null(array, _placeholder(t))


def _placeholder(t: pa.DataType) -> pa.Scalar:
    if pa.types.is_fixed_size_binary(t):
        return pa.scalar(bytes(t.byte_width), t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.scalar(b"", t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False, t)
    return pa.array([0], pa.int64()).cast(t)[0]  # numbers, decimals, dates, times
