"""What a schema change must not break, checked on the evolved schema against the table
(Iceberg Java's ``SchemaUpdate`` refuses the same): the current partition spec's and sort
order's source columns stay and no column takes a partition field's name. (That the types
and defaults fit the format version is :func:`icewright.spec.schema.check_format_version`.)
"""

from __future__ import annotations

from collections.abc import Mapping

from icewright.errors import ValidationError
from icewright.spec.schema import Schema, walk_fields
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import ListType, MapType, NestedField, StructType

__all__ = [
    "allowed_promotions",
    "check_not_sourced",
    "check_partitions_and_order",
    "names_by_id",
    "subtree_ids",
]


def allowed_promotions(format_version: int) -> str:
    """The type promotions a table of ``format_version`` allows, as text for errors."""
    text = "int -> long, float -> double, decimal(P,S) -> decimal(P2,S) with P2 > P"
    if format_version >= 3:
        text += ", date -> timestamp or timestamp_ns, unknown -> any type"
    return text


def names_by_id(schema: Schema) -> dict[int, str]:
    """Every field's full dotted name by its id."""
    return {f.field_id: ".".join(path) for path, f in walk_fields(schema.fields)}


def subtree_ids(f: NestedField) -> set[int]:
    """The id of ``f`` and of every field nested in it."""
    ids = {f.field_id}
    if isinstance(f.field_type, StructType | ListType | MapType):
        ids.update(g.field_id for _, g in walk_fields(f.field_type.fields))
    return ids


def check_not_sourced(metadata: TableMetadata, ids: set[int], names: Mapping[int, str]) -> None:
    """Java refuses a schema in which the current spec's or sort order's source is gone."""
    spec = metadata.spec()
    for pf in spec.fields:
        used = [sid for sid in pf.source_ids if sid in ids]
        if used and not pf.transform.is_void:
            raise ValidationError(
                f"cannot delete column {names.get(used[0], used[0])!r}: it is the source of "
                f"partition field {pf.name!r} of the table's current partition spec (spec id "
                f"{spec.spec_id}); remove that partition field first (partition spec evolution), "
                "then delete the column"
            )
    order = metadata.sort_order()
    for sf in order.fields:
        used = [sid for sid in sf.source_ids if sid in ids]
        if used:
            raise ValidationError(
                f"cannot delete column {names.get(used[0], used[0])!r}: the table's sort order "
                f"(order id {order.order_id}) sorts by it; replace the sort order first, then "
                "delete the column"
            )


def check_partitions_and_order(
    base: TableMetadata, new: Schema, old_names: Mapping[int, str]
) -> None:
    """Java rebuilds every spec against the new schema: the default spec and sort order
    must still fit it, and no added or renamed column may take a partition field's name
    (``old_names``: the full names of the columns before the change, by id)."""
    new_names = names_by_id(new)
    for spec in base.partition_specs:
        for pf in spec.fields:
            try:
                column = new.find_field(pf.name)
            except ValidationError:
                continue
            fid = column.field_id
            if fid in pf.source_ids or old_names.get(fid) == new_names[fid]:
                continue  # the field's own source, or a column this update left alone
            if any(sid in new_names for sid in pf.source_ids):
                raise ValidationError(
                    f"column {new_names[fid]!r} would have the name of partition field "
                    f"{pf.name!r} (partition spec {spec.spec_id}), which comes from another "
                    "column; choose another column name"
                )
    try:
        base.spec().check_compatible(new)
        base.sort_order().check_compatible(new)
    except ValidationError as e:
        raise ValidationError(
            f"the schema change does not fit the table's partition spec or sort order: {e}"
        ) from None
