"""A new table's metadata: :func:`new_table_metadata` numbers the schema's fields fresh
(:func:`icewright.spec.schema.assign_fresh_ids`), remaps the partition spec and sort
order to the new ids, and checks the types the format version allows.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping

from icewright.errors import UnsupportedFormatVersion, ValidationError
from icewright.spec.documents import StringMap, join_ids
from icewright.spec.partitioning import PARTITION_DATA_ID_START, PartitionField, PartitionSpec
from icewright.spec.schema import Schema, assign_fresh_ids, check_format_version
from icewright.spec.sorting import SortField, SortOrder
from icewright.spec.table_metadata import (
    DEFAULT_FORMAT_VERSION,
    INITIAL_SORT_ORDER_ID,
    RESERVED_PROPERTIES,
    SUPPORTED_WRITE_FORMAT_VERSIONS,
    TableMetadata,
)

__all__ = ["new_table_metadata"]


def new_table_metadata(
    schema: Schema,
    partition_spec: PartitionSpec,
    sort_order: SortOrder,
    location: str,
    properties: Mapping[str, str] | None = None,
    *,
    format_version: int = DEFAULT_FORMAT_VERSION,
    table_uuid: uuid.UUID | None = None,
    last_updated_ms: int | None = None,
) -> TableMetadata:
    """Metadata for a new, empty table.

    The schema gets fresh field ids 1..n in the order Iceberg assigns them
    (Java ``TypeUtil.assignFreshIds``, pyiceberg ``assign_fresh_schema_ids``):
    a struct's own fields are numbered first, then each field's nested type in
    turn; a list numbers its element, a map its key then value, before going
    deeper. The partition spec and sort order are remapped to the new ids;
    partition field ids restart at 1000 and the spec and schema get id 0, a
    sorted order id 1. Properties in :data:`RESERVED_PROPERTIES` are not
    stored (``format-version`` must then agree with ``format_version``).
    """
    if format_version not in SUPPORTED_WRITE_FORMAT_VERSIONS:
        raise UnsupportedFormatVersion(
            f"cannot create a table with format-version {format_version}: icewright creates "
            f"tables with format versions {join_ids(SUPPORTED_WRITE_FORMAT_VERSIONS)}"
        )
    if not isinstance(location, str) or not location:
        raise ValidationError(f"a table needs a non-empty location, got {location!r}")
    props = dict(properties or {})
    requested = props.get("format-version")
    if requested is not None and requested != str(format_version):
        raise ValidationError(
            f"property format-version={requested!r} disagrees with format_version="
            f"{format_version}; pass the format version once"
        )
    stored = StringMap({k: v for k, v in props.items() if k not in RESERVED_PROPERTIES})

    fresh_schema, id_map = assign_fresh_ids(schema)
    check_format_version(fresh_schema, format_version)
    new_fields = []
    for pos, pf in enumerate(partition_spec.fields):
        ids = _remap_ids(pf.source_ids, id_map, f"partition field {pf.name!r}")
        new_fields.append(
            PartitionField(ids[0], PARTITION_DATA_ID_START + pos, pf.transform, pf.name, (*ids,))
        )
    fresh_spec = PartitionSpec(*new_fields, spec_id=0)
    sort_fields = []
    for sf in sort_order.fields:
        ids = _remap_ids(sf.source_ids, id_map, f"sort field {sf.transform}")
        sort_fields.append(SortField(ids[0], sf.transform, sf.direction, sf.null_order, (*ids,)))
    # Id 0 is reserved for the unsorted order; a new table's sorted order is 1.
    fresh_order = SortOrder(*sort_fields, order_id=INITIAL_SORT_ORDER_ID if sort_fields else 0)
    fresh_spec.check_compatible(fresh_schema)
    fresh_order.check_compatible(fresh_schema)

    return TableMetadata(
        format_version=format_version,
        table_uuid=table_uuid or uuid.uuid4(),
        location=location.rstrip("/") if len(location) > 1 else location,
        last_sequence_number=0,
        last_updated_ms=int(time.time() * 1000) if last_updated_ms is None else last_updated_ms,
        last_column_id=fresh_schema.highest_field_id,
        schemas=(fresh_schema,),
        current_schema_id=fresh_schema.schema_id,
        partition_specs=(fresh_spec,),
        default_spec_id=fresh_spec.spec_id,
        last_partition_id=fresh_spec.last_assigned_field_id,
        properties=stored,
        sort_orders=(fresh_order,),
        default_sort_order_id=fresh_order.order_id,
    )


def _remap_ids(source_ids: tuple[int, ...], id_map: Mapping[int, int], what: str) -> list[int]:
    for sid in source_ids:
        if sid not in id_map:
            raise ValidationError(f"{what} refers to column id {sid}, which is not in the schema")
    return [id_map[sid] for sid in source_ids]
