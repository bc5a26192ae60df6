"""What a data file's Parquet footer says (field ids, the types columns were written with), and
reading files written without field ids through the table's name mapping (spec: "Column
Projection", Appendix C).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.spark.projection import _PRIVATE, _spark_type
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StructType,
)

__all__ = ["NAME_MAPPING_PROPERTY"]

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
"""Table property: how to find columns in files written without field ids."""
_ARROW_FIELD_ID = b"PARQUET:field_id"


def _arrow_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(_ARROW_FIELD_ID)
    return None if raw is None else int(raw)


def _arrow_children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [t.value_field]
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    return []


def _arrow_ids(fields: Sequence[pa.Field]) -> dict[int, pa.DataType]:
    out: dict[int, pa.DataType] = {}
    for f in fields:
        fid = _arrow_id(f)
        if fid is not None:
            out[fid] = f.type
        out.update(_arrow_ids(_arrow_children(f.type)))
    return out


def _written_type(arrow: pa.DataType, target: IcebergType) -> IcebergType:
    """The type a promoted column was written with, if the file predates the promotion."""
    if isinstance(target, LongType) and pa.types.is_int32(arrow):
        return IntegerType()
    if isinstance(target, DoubleType) and pa.types.is_float32(arrow):
        return FloatType()
    if (
        isinstance(target, DecimalType)
        and pa.types.is_decimal(arrow)
        and arrow.precision < target.precision
    ):
        return DecimalType(arrow.precision, arrow.scale)
    return target


def _read_footer(io: FileIO, path: str) -> pa.Schema:
    with io.open_input(path) as f:
        return pq.ParquetFile(f).schema_arrow


def _has_ids(footer: pa.Schema) -> bool:
    return any(_arrow_id(f) is not None for f in footer)


# --- files without field ids: the name mapping (spec: "Column Projection", Appendix C) --------


def _name_mapping(metadata: TableMetadata) -> list[Any] | None:
    text = metadata.properties.get(NAME_MAPPING_PROPERTY)
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except ValueError as e:
        raise ValidationError(
            f"table property {NAME_MAPPING_PROPERTY} is not valid JSON ({e}); fix or remove it"
        ) from None
    if not isinstance(parsed, list):
        raise ValidationError(f"table property {NAME_MAPPING_PROPERTY} must be a JSON list")
    return parsed


def _entries_by_id(entries: Sequence[Any] | None) -> dict[int, Mapping[str, Any]]:
    out: dict[int, Mapping[str, Any]] = {}
    for e in entries or ():
        if isinstance(e, Mapping) and isinstance(e.get("field-id"), int):
            out[e["field-id"]] = e
    return out


def _mapped_type(
    t: IcebergType,
    arrow: pa.DataType,
    entries: Sequence[Any] | None,
    spark3: bool,
    present: set[int],
) -> T.DataType:
    """The Spark type that reads ``t`` by the file's own names, found through the mapping."""
    by_id = _entries_by_id(entries)
    if isinstance(t, StructType):
        children = {c.name: c for c in _arrow_children(arrow)} if pa.types.is_struct(arrow) else {}
        fields = []
        for f in t.fields:
            entry = by_id.get(f.field_id, {})
            name = next((n for n in entry.get("names") or () if n in children), None)
            if name is None:
                # absent from this file: read under a name it does not have, which gives null
                fields.append(
                    T.StructField(f"{_PRIVATE}missing_{f.field_id}", _spark_type(f.field_type))
                )
                continue
            present.add(f.field_id)
            sub = _mapped_type(
                f.field_type, children[name].type, entry.get("fields"), spark3, present
            )
            fields.append(T.StructField(name, sub))
        return T.StructType(fields)
    kids = _arrow_children(arrow)
    if isinstance(t, ListType) and len(kids) == 1:
        present.add(t.element_id)
        sub_entries = by_id.get(t.element_id, {}).get("fields")
        return T.ArrayType(_mapped_type(t.element_type, kids[0].type, sub_entries, spark3, present))
    if isinstance(t, MapType) and len(kids) == 2:
        present.update((t.key_id, t.value_id))
        key = _mapped_type(
            t.key_type, kids[0].type, by_id.get(t.key_id, {}).get("fields"), spark3, present
        )
        value = _mapped_type(
            t.value_type, kids[1].type, by_id.get(t.value_id, {}).get("fields"), spark3, present
        )
        return T.MapType(key, value)
    return _spark_type(_written_type(arrow, t) if spark3 else t, ids=False)
