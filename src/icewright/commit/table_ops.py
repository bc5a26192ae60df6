"""Table-level operations: create, create-or-replace, register, drop.

Create, register and drop delegate to the catalog. REPLACE TABLE follows Iceberg
Java's ``TableMetadata.buildReplacement``: the table keeps its uuid, snapshots,
branches and tags, logs and properties; the new schema, partition spec and sort order
become current (a column whose full name exists in the current schema keeps its field
id, other columns get ids above ``last-column-id``; partition field ids are reused for
the same source and transform), given properties are set on top of the existing ones,
and ``main`` is removed so the table has no current snapshot. It is a
:class:`~icewright.commit.update.PendingUpdate` (:class:`ReplaceTable`), so a lost race
rebuilds the replacement on the refreshed table (last writer wins, as in Java).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from icewright.catalog.base import Catalog, IdentifierLike, Table
from icewright.catalog.identifier import Identifier
from icewright.commit.properties import check_metrics_properties
from icewright.commit.refs import drop_ref
from icewright.commit.spec_update import with_default_sort_order, with_default_spec
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import (
    NoSuchTable,
    TableAlreadyExists,
    UnsupportedFormatVersion,
    ValidationError,
)
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.partitioning import (
    PARTITION_DATA_ID_START,
    UNPARTITIONED_PARTITION_SPEC,
    PartitionField,
    PartitionSpec,
    build_partition_spec,
)
from icewright.spec.properties import check_properties
from icewright.spec.schema import Schema, assign_ids_like, check_format_version
from icewright.spec.snapshots import (
    MAIN_BRANCH,
)
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortField, SortOrder, build_sort_order
from icewright.spec.table_metadata import (
    RESERVED_PROPERTIES,
    SUPPORTED_WRITE_FORMAT_VERSIONS,
    TableMetadata,
)
from icewright.spec.transforms import VOID

__all__ = [
    "ReplaceTable",
    "build_replacement",
    "create_or_replace_table",
    "create_table",
    "drop_table",
    "order_of",
    "register_table",
    "spec_of",
]

SpecLike = PartitionSpec | Sequence[tuple[Any, ...]] | None
"""A :class:`PartitionSpec` on the given schema, or ``build_partition_spec`` tuples
such as ``[("day", "ts"), ("bucket", "id", 16)]``."""
OrderLike = SortOrder | Sequence[Any] | None
"""A :class:`SortOrder` on the given schema, or ``build_sort_order`` entries such as
``["region", ("ts", "desc")]``."""


def spec_of(schema: Schema, spec: SpecLike) -> PartitionSpec:
    """The partition spec ``spec`` describes on ``schema`` (None: unpartitioned)."""
    if spec is None:
        return UNPARTITIONED_PARTITION_SPEC
    if isinstance(spec, PartitionSpec):
        return spec
    return build_partition_spec(schema, list(spec))


def order_of(schema: Schema, order: OrderLike) -> SortOrder:
    """The sort order ``order`` describes on ``schema`` (None: unsorted)."""
    if order is None:
        return UNSORTED_SORT_ORDER
    if isinstance(order, SortOrder):
        return order
    return build_sort_order(schema, list(order))


def create_table(  # noqa: PLR0917 - positional order of the documented API
    catalog: Catalog,
    identifier: IdentifierLike,
    schema: Schema,
    spec: SpecLike = None,
    sort_order: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int = 2,
    if_not_exists: bool = False,
) -> Table:
    """Create a table (format version 1 or 2) and return its handle.

    The schema gets fresh field ids 1..n (spec and order are remapped to them). With
    ``if_not_exists`` an existing table of that name is loaded and returned unchanged
    (a view of that name still raises ``TableAlreadyExists``).
    """
    try:
        return catalog.create_table(
            identifier,
            schema,
            spec_of(schema, spec),
            order_of(schema, sort_order),
            location,
            properties,
            format_version,
        )
    except TableAlreadyExists:
        if not if_not_exists:
            raise
        try:
            return catalog.load_table(identifier)
        except NoSuchTable:
            pass  # the name belongs to a view: report the original error
        raise


def create_or_replace_table(  # noqa: PLR0917 - same order as create_table
    catalog: Catalog,
    identifier: IdentifierLike,
    schema: Schema,
    spec: SpecLike = None,
    sort_order: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int | None = None,
) -> Table:
    """Create the table, or REPLACE it if it exists (keeping its uuid and history).

    ``format_version`` defaults to 2 for a new table and to the current version for a
    replaced one (which can only be upgraded). ``location`` defaults to the current one.
    """
    check_properties(properties)
    ident = Identifier.parse(identifier)
    try:
        table = catalog.load_table(ident)
    except NoSuchTable:
        try:
            return create_table(
                catalog, ident, schema, spec, sort_order, properties, location, format_version or 2
            )
        except TableAlreadyExists as created:
            try:
                table = catalog.load_table(ident)  # created concurrently: replace it
            except NoSuchTable:
                raise created from None
    return (
        ReplaceTable(
            table,
            schema,
            spec,
            sort_order,
            properties=properties,
            location=location,
            format_version=format_version,
        )
        .commit()
        .table
    )


def register_table(catalog: Catalog, identifier: IdentifierLike, metadata_location: str) -> Table:
    """Add an existing table to the catalog by its current metadata file."""
    return catalog.register_table(identifier, metadata_location)


def drop_table(catalog: Catalog, identifier: IdentifierLike, purge: bool = False) -> None:
    """Remove a table from the catalog; with ``purge`` also delete its data and metadata."""
    catalog.drop_table(identifier, purge=purge)


class ReplaceTable(PendingUpdate):
    """REPLACE TABLE as a pending update (see the module docstring)."""

    def __init__(
        self,
        table: Table,
        schema: Schema,
        spec: SpecLike = None,
        sort_order: OrderLike = None,
        *,
        properties: Mapping[str, str] | None = None,
        location: str | None = None,
        format_version: int | None = None,
    ) -> None:
        self._table = table
        self.schema = schema
        self.spec = spec_of(schema, spec)
        self.sort_order = order_of(schema, sort_order)
        self.properties = dict(properties or {})
        self.location = location
        self.format_version = format_version

    def apply(self, base: TableMetadata) -> TableMetadata:
        """The replacement built on ``base``."""
        return build_replacement(
            base,
            self.schema,
            self.spec,
            self.sort_order,
            properties=self.properties,
            location=self.location,
            format_version=self.format_version,
        )

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit the replacement (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])


def build_replacement(
    base: TableMetadata,
    schema: Schema,
    spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
    sort_order: SortOrder = UNSORTED_SORT_ORDER,
    *,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int | None = None,
) -> TableMetadata:
    """``base`` replaced by a table of ``schema``, ``spec`` and ``sort_order`` (Java
    ``TableMetadata.buildReplacement``); ``spec`` and ``sort_order`` refer to ``schema``."""
    version = _target_version(base, properties or {}, format_version)
    if base.format_version == 1:
        for pos, f in enumerate(spec.fields):
            if f.field_id != PARTITION_DATA_ID_START + pos:
                raise ValidationError(
                    f"a v1 table needs partition field ids 1000, 1001, ... in order; field "
                    f"{f.name!r} has {f.field_id}"
                )
    fresh, last_column_id = assign_ids_like(schema, base.schema(), base.last_column_id)
    check_format_version(fresh, version)
    # Partition ids follow the base's format rules (v1: positional, with voids), as in Java.
    metadata = dataclasses.replace(
        base, format_version=version, table_uuid=base.table_uuid or uuid.uuid4()
    )
    metadata = _with_schema(metadata, fresh, last_column_id)
    by_name = {
        sid: fresh.find_field(schema.column_name(sid)).field_id for sid in schema.field_ids()
    }
    new_spec = _reassign_partition_ids(base, _remap_spec(spec, by_name))
    metadata = with_default_spec(metadata, new_spec)
    metadata = with_default_sort_order(metadata, _remap_order(sort_order, by_name))
    props = {**base.properties}
    props.update({k: v for k, v in (properties or {}).items() if k not in RESERVED_PROPERTIES})
    check_metrics_properties(props, metadata)
    target = base.location if location is None else location.rstrip("/") or location
    metadata = dataclasses.replace(metadata, properties=StringMap(props), location=target)
    metadata = drop_ref(metadata, MAIN_BRANCH)
    return metadata.with_last_updated(max(base.last_updated_ms, int(time.time() * 1000)))


def _target_version(
    base: TableMetadata, properties: Mapping[str, str], format_version: int | None
) -> int:
    requested = properties.get("format-version")
    if requested is not None:
        try:
            from_props = int(requested)
        except ValueError:
            raise ValidationError(
                f"property format-version={requested!r} is not a number"
            ) from None
        if format_version is not None and from_props != format_version:
            raise ValidationError(
                f"property format-version={requested!r} disagrees with format_version="
                f"{format_version}; pass the format version once"
            )
        format_version = from_props
    version = base.format_version if format_version is None else format_version
    if version not in SUPPORTED_WRITE_FORMAT_VERSIONS:
        raise UnsupportedFormatVersion(
            f"cannot replace a table as format version {version}: icewright writes versions "
            f"{', '.join(map(str, SUPPORTED_WRITE_FORMAT_VERSIONS))}"
        )
    if version < base.format_version:
        raise ValidationError(
            f"cannot downgrade a v{base.format_version} table to v{version} while replacing it"
        )
    return version


def _with_schema(base: TableMetadata, schema: Schema, last_column_id: int) -> TableMetadata:
    """``schema`` as current, reusing the id of an identical schema (Java's
    ``reuseOrCreateNewSchemaId``)."""
    for existing in base.schemas:
        if existing.same_structure(schema):
            return dataclasses.replace(
                base, current_schema_id=existing.schema_id, last_column_id=last_column_id
            )
    new = schema.with_schema_id(max(s.schema_id for s in base.schemas) + 1)
    return dataclasses.replace(
        base,
        schemas=(*base.schemas, new),
        current_schema_id=new.schema_id,
        last_column_id=last_column_id,
    )


def _remap(source_ids: Iterable[int], by_name: Mapping[int, int], what: str) -> tuple[int, ...]:
    out = []
    for sid in source_ids:
        if sid not in by_name:
            raise ValidationError(f"{what} refers to column id {sid}, which is not in the schema")
        out.append(by_name[sid])
    return tuple(out)


def _remap_spec(spec: PartitionSpec, by_name: Mapping[int, int]) -> PartitionSpec:
    fields = []
    for f in spec.fields:
        ids = _remap(f.source_ids, by_name, f"partition field {f.name!r}")
        fields.append(PartitionField(ids[0], f.field_id, f.transform, f.name, ids))
    return PartitionSpec(*fields)


def _remap_order(order: SortOrder, by_name: Mapping[int, int]) -> SortOrder:
    fields = []
    for f in order.fields:
        ids = _remap(f.source_ids, by_name, f"sort field {f.transform}")
        fields.append(SortField(ids[0], f.transform, f.direction, f.null_order, ids))
    return SortOrder(*fields, order_id=1) if fields else UNSORTED_SORT_ORDER


def _reassign_partition_ids(base: TableMetadata, spec: PartitionSpec) -> PartitionSpec:
    """Java ``reassignPartitionIds``. v2: a field keeps the highest id any spec gave its
    source and transform; new ones count up from ``last-partition-id``. v1: the current
    spec's fields keep their positions (replaced ones become void) and new fields follow."""
    last = [base.last_partition_id]

    def next_id() -> int:
        last[0] += 1
        return last[0]

    if base.format_version > 1:
        known: dict[tuple[int, str], int] = {}
        for s in base.partition_specs:
            for f in s.fields:
                key = (f.source_id, str(f.transform))
                known[key] = max(known.get(key, f.field_id), f.field_id)
        fields = [
            PartitionField(
                f.source_id,
                known.get((f.source_id, str(f.transform))) or next_id(),
                f.transform,
                f.name,
                f.source_ids,
            )
            for f in spec.fields
        ]
        return PartitionSpec(*fields)
    new = {(f.source_id, str(f.transform)): f for f in spec.fields}
    new_names = {f.name for f in spec.fields}
    fields = []
    for old in base.spec().fields:
        match = new.pop((old.source_id, str(old.transform)), None)
        if match is not None:
            fields.append(
                PartitionField(match.source_id, old.field_id, match.transform, match.name)
            )
        else:
            name = f"{old.name}_{old.field_id}" if old.name in new_names else old.name
            fields.append(PartitionField(old.source_id, old.field_id, VOID, name))
    fields.extend(PartitionField(f.source_id, next_id(), f.transform, f.name) for f in new.values())
    return PartitionSpec(*fields)
