"""Partition spec evolution and sort order replacement (spec: "Partition Evolution",
"Sorting"; Iceberg Java's ``BaseUpdatePartitionSpec`` and ``BaseReplaceSortOrder``).

Both are metadata-only :class:`~icewright.commit.update.PendingUpdate` objects. They
record what the caller asked for and resolve column names against the metadata given
to :meth:`apply`, so inside a :class:`~icewright.commit.transaction.Transaction` they
see columns added by earlier updates.

Retry rule: the first :meth:`apply` remembers the default spec (or sort order) it
started from and the field id each column name resolved to. A later attempt, on
refreshed metadata, fails with ``ValidationError`` if another writer changed the
default spec (or sort order) or if a name now means another column, because the
requested change was planned against a state that no longer holds.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from icewright.catalog.base import Table
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import ValidationError
from icewright.spec.partitioning import (
    PARTITION_DATA_ID_START,
    PartitionField,
    PartitionSpec,
    check_source_column,
)
from icewright.spec.schema import Schema
from icewright.spec.sorting import (
    UNSORTED_SORT_ORDER,
    NullOrder,
    SortDirection,
    SortField,
    SortOrder,
    default_null_order,
)
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.transforms import (
    VOID,
    BucketTransform,
    Transform,
    TruncateTransform,
    parse_transform,
)

__all__ = ["ReplaceSortOrder", "UpdatePartitionSpec"]

_KNOWN = "identity, bucket[N], truncate[W], year, month, day, hour or void"


def _now_ms() -> int:
    return int(time.time() * 1000)


def to_transform(transform: str | Transform) -> Transform:
    """A known transform from its spec string (``"bucket[16]"``) or a Transform."""
    if isinstance(transform, Transform):
        parsed = transform
    elif isinstance(transform, str):
        parsed = parse_transform(transform)
    else:
        raise ValidationError(f"a transform must be a string such as 'day', got {transform!r}")
    if parsed.is_unknown:
        raise ValidationError(f"unknown transform {transform!r}: use {_KNOWN}")
    return parsed


class _Bindings:
    """Column names resolved on the first attempt, checked again on every retry."""

    def __init__(self, case_sensitive: bool) -> None:
        self.case_sensitive = case_sensitive
        self._ids: dict[str, int] = {}

    def resolve(self, schema: Schema, name: str) -> int:
        field_id = schema.find_field(name, self.case_sensitive).field_id
        first = self._ids.setdefault(name, field_id)
        if first != field_id:
            raise ValidationError(
                f"column {name!r} now refers to field id {field_id}, but this update was "
                f"prepared when it was field id {first}: the schema changed concurrently; "
                "load the table again and rebuild the update"
            )
        return field_id


def _changed_since_prepared(what: str, before: object, now: object) -> ValidationError:
    return ValidationError(
        f"the table's default {what} changed since this update was prepared ({before} -> "
        f"{now}); another writer evolved it concurrently: load the table again and rebuild "
        "the update"
    )


# --- partition specs ----------------------------------------------------------


def _partition_name(transform: Transform, column: str) -> str:
    """Java ``BaseUpdatePartitionSpec.PartitionNameGenerator`` (bucket and truncate keep
    their argument, unlike names given when a table is created)."""
    if transform.is_identity:
        return column
    if isinstance(transform, BucketTransform):
        return f"{column}_bucket_{transform.num_buckets}"
    if isinstance(transform, TruncateTransform):
        return f"{column}_trunc_{transform.width}"
    if transform.is_void:
        return column + "_null"
    return f"{column}_{transform}"


@dataclass(frozen=True, slots=True)
class _Add:
    source: str
    transform: Transform
    name: str | None


@dataclass(frozen=True, slots=True)
class _Remove:
    name: str | None
    source: str | None = None
    transform: Transform | None = None


@dataclass(frozen=True, slots=True)
class _Rename:
    name: str
    new_name: str


class _SpecBuilder:
    """One replay of the requested changes on one base (Java's update state)."""

    def __init__(self, base: TableMetadata, bindings: _Bindings) -> None:
        self.base = base
        self.bindings = bindings
        self.schema = base.schema()
        self.spec = base.spec()
        self.by_name = {f.name: f for f in self.spec.fields}
        self.by_transform = {(f.source_id, str(f.transform)): f for f in self.spec.fields}
        self.adds: list[PartitionField] = []
        self.added_by_name: dict[str, PartitionField] = {}
        self.added_by_transform: dict[tuple[int, str], PartitionField] = {}
        self.added_time_fields: dict[int, PartitionField] = {}
        self.deletes: set[int] = set()
        self.renames: dict[str, str] = {}
        self.last_id = base.last_partition_id

    def resolve(self, source: str, transform: Transform) -> tuple[int, tuple[int, str]]:
        source_id = self.bindings.resolve(self.schema, source)
        check_source_column(self.schema, source_id, transform, f"partition field on {source!r}")
        return source_id, (source_id, str(transform))

    def _recycle_or_create(
        self, source_id: int, transform: Transform, name: str | None
    ) -> tuple[int, str | None]:
        # v2: a field with the same source and transform in any earlier spec gets its id
        # (and name) back, so old and new data files share partition field ids.
        if self.base.format_version >= 2:
            for spec in self.base.partition_specs:
                for f in spec.fields:
                    if (
                        f.source_id == source_id
                        and f.transform == transform
                        and (name is None or f.name == name)
                    ):
                        return f.field_id, f.name
        self.last_id += 1
        return self.last_id, name

    def add(self, op: _Add) -> None:
        if op.name is not None and op.name in self.added_by_name:
            raise ValidationError(f"cannot add partition field {op.name!r} twice")
        source_id, key = self.resolve(op.source, op.transform)
        existing = self.by_transform.get(key)
        if existing is not None and existing.field_id in self.deletes:
            # Removing and re-adding the same field restores it (Java rewriteDeleteAndAddField).
            self.deletes.discard(existing.field_id)
            if op.name is not None and op.name != existing.name:
                self.rename(_Rename(existing.name, op.name))
            return
        if existing is not None:
            raise ValidationError(
                f"cannot add partition field {op.transform}({op.source}): the spec already has "
                f"it as {existing.name!r}"
            )
        if key in self.added_by_transform:
            raise ValidationError(
                f"cannot add partition field {op.transform}({op.source}) twice in one update"
            )
        field_id, name = self._recycle_or_create(source_id, op.transform, op.name)
        if name is None:
            name = _partition_name(op.transform, self.schema.column_name(source_id))
        new = PartitionField(source_id, field_id, op.transform, name)
        if op.transform.dedup_name == "time":
            clash = self.added_time_fields.get(source_id)
            if clash is not None:
                raise ValidationError(
                    f"redundant partition field {name!r} ({op.transform}) conflicts with "
                    f"{clash.name!r} ({clash.transform}) added in the same update"
                )
            self.added_time_fields[source_id] = new
        self.added_by_transform[key] = new
        old = self.by_name.get(name)
        if old is not None and old.field_id not in self.deletes:
            if not old.transform.is_void:
                raise ValidationError(
                    f"cannot add partition field {name!r}: the spec already has a field of that "
                    "name; pass another name"
                )
            self.rename(_Rename(old.name, f"{old.name}_{old.field_id}"))
        elif old is not None:
            self.renames[old.name] = f"{old.name}_{old.field_id}"
        self.added_by_name[name] = new
        self.adds.append(new)

    def remove(self, op: _Remove) -> None:
        if op.name is not None:
            if op.name in self.added_by_name:
                raise ValidationError(f"cannot remove partition field {op.name!r} added here")
            found = self.by_name.get(op.name)
            what = repr(op.name)
        else:
            assert op.source is not None and op.transform is not None
            _, key = self.resolve(op.source, op.transform)
            if key in self.added_by_transform:
                raise ValidationError(f"cannot remove {op.transform}({op.source}) added here")
            found = self.by_transform.get(key)
            what = f"{op.transform}({op.source})"
        if found is None:
            raise ValidationError(
                f"cannot remove partition field {what}: the default spec has no such field; "
                f"its fields are {sorted(self.by_name)}"
            )
        if found.name in self.renames:
            raise ValidationError(f"cannot rename and remove partition field {found.name!r}")
        self.deletes.add(found.field_id)

    def rename(self, op: _Rename) -> None:
        taken = self.by_name.get(op.new_name)
        if taken is not None and taken.transform.is_void:
            # A void field left by a v1 removal makes room for the new name.
            self.rename(_Rename(taken.name, f"{taken.name}_{taken.field_id}"))
        if op.name in self.added_by_name:
            raise ValidationError(f"cannot rename partition field {op.name!r} added here")
        found = self.by_name.get(op.name)
        if found is None:
            raise ValidationError(
                f"cannot rename partition field {op.name!r}: the default spec has no such "
                f"field; its fields are {sorted(self.by_name)}"
            )
        if found.field_id in self.deletes:
            raise ValidationError(f"cannot remove and rename partition field {op.name!r}")
        self.renames[op.name] = op.new_name

    def build(self) -> PartitionSpec:
        fields: list[PartitionField] = []
        for f in self.spec.fields:
            name = self.renames.get(f.name, f.name)
            if f.field_id not in self.deletes:
                fields.append(PartitionField(f.source_id, f.field_id, f.transform, name))
            elif self.base.format_version < 2:
                # v1 field ids are positional (1000 + index), so a removed field stays as
                # void to keep the ids of the fields after it (Java's v1 rule).
                fields.append(PartitionField(f.source_id, f.field_id, VOID, name))
        fields.extend(self.adds)
        return PartitionSpec(*fields, spec_id=self.spec.spec_id)


def with_default_spec(base: TableMetadata, spec: PartitionSpec) -> TableMetadata:
    """``base`` with ``spec`` as the default, reusing the id of an equivalent spec.

    As Java's ``TableMetadata.Builder``: an existing spec with the same fields (names,
    transforms, sources) is made default again; otherwise the spec gets the highest id
    plus one and ``last-partition-id`` grows to cover its field ids.
    """
    spec.check_compatible(base.schema())
    for existing in base.partition_specs:
        if existing.compatible_with(spec):
            if existing.spec_id == base.default_spec_id:
                return base
            return _touch(dataclasses.replace(base, default_spec_id=existing.spec_id))
    if base.format_version == 1:
        for pos, f in enumerate(spec.fields):
            if f.field_id != PARTITION_DATA_ID_START + pos:
                raise ValidationError(
                    f"a v1 table needs partition field ids 1000, 1001, ... in order, but field "
                    f"{f.name!r} would get id {f.field_id}; upgrade the table to format v2 first"
                )
    new_id = max(s.spec_id for s in base.partition_specs) + 1
    new = spec.with_spec_id(new_id)
    return _touch(
        dataclasses.replace(
            base,
            partition_specs=(*base.partition_specs, new),
            default_spec_id=new_id,
            last_partition_id=max(base.last_partition_id, new.last_assigned_field_id),
        )
    )


def _touch(metadata: TableMetadata) -> TableMetadata:
    """Stamp a changed metadata with the time of the change (never moving backwards)."""
    return metadata.with_last_updated(max(metadata.last_updated_ms, _now_ms()))


class UpdatePartitionSpec(PendingUpdate):
    """Evolve the default partition spec (Java ``table.updateSpec()``).

    >>> # UpdatePartitionSpec(table).add_field("ts", "day").remove_field("region").commit()

    New partition field ids continue from ``last-partition-id``; in v2 a field that an
    earlier spec had (same source and transform) gets its old id back. Removed fields
    disappear in v2 and become ``void`` in v1. The new spec becomes the default; if an
    equivalent spec exists its id is reused.
    """

    def __init__(self, table: Table, *, case_sensitive: bool = True) -> None:
        self._table = table
        self._ops: list[_Add | _Remove | _Rename] = []
        self._bindings = _Bindings(case_sensitive)
        self._prepared: PartitionSpec | None = None

    def add_field(
        self, source: str, transform: str | Transform, name: str | None = None
    ) -> UpdatePartitionSpec:
        """Partition by ``transform(source)``; ``name`` defaults as in Java (``ts_day``,
        ``id_bucket_16``, ``name_trunc_4``; identity keeps the column name)."""
        if name is not None and (not isinstance(name, str) or not name):
            raise ValidationError(f"a partition field name must be a non-empty string: {name!r}")
        self._ops.append(_Add(_column(source), to_transform(transform), name))
        return self

    def add_identity(self, source: str) -> UpdatePartitionSpec:
        """Partition by the column's value."""
        return self.add_field(source, "identity")

    def remove_field(
        self, name: str, transform: str | Transform | None = None
    ) -> UpdatePartitionSpec:
        """Remove the partition field named ``name``; with ``transform``, ``name`` is a
        source column and the field ``transform(name)`` is removed (Java's term form)."""
        if transform is None:
            self._ops.append(_Remove(_column(name)))
        else:
            self._ops.append(_Remove(None, _column(name), to_transform(transform)))
        return self

    def rename_field(self, name: str, new_name: str) -> UpdatePartitionSpec:
        """Rename a partition field of the default spec."""
        self._ops.append(_Rename(_column(name), _column(new_name)))
        return self

    def new_spec(self, base: TableMetadata) -> PartitionSpec:
        """The spec these changes make from ``base``'s default spec (id not yet assigned)."""
        spec = base.spec()
        unknown = [f.name for f in spec.fields if f.transform.is_unknown]
        if unknown:
            raise ValidationError(
                f"cannot evolve partition spec {spec.spec_id}: fields {unknown} use transforms "
                "icewright does not know"
            )
        builder = _SpecBuilder(base, self._bindings)
        for op in self._ops:
            if isinstance(op, _Add):
                builder.add(op)
            elif isinstance(op, _Remove):
                builder.remove(op)
            else:
                builder.rename(op)
        return builder.build()

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with the evolved spec as default; fails if the default spec changed
        since the first attempt."""
        if self._prepared is None:
            self._prepared = base.spec()
        elif base.spec() != self._prepared:
            raise _changed_since_prepared("partition spec", self._prepared, base.spec())
        return with_default_spec(base, self.new_spec(base))

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this update alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])


def _column(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"expected a non-empty column or field name, got {name!r}")
    return name


# --- sort orders ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SortKey:
    column: str
    transform: Transform
    direction: SortDirection
    null_order: NullOrder


def with_default_sort_order(base: TableMetadata, order: SortOrder) -> TableMetadata:
    """``base`` with ``order`` as default, reusing the id of an identical order (Java's
    ``reuseOrCreateNewSortOrderId``: the unsorted order is always id 0)."""
    order.check_compatible(base.schema())
    if order.is_unsorted:
        new_id = 0
        orders = base.sort_orders
        if all(o.order_id != 0 for o in orders):
            # A table created sorted lists no unsorted order; add it (Java does too).
            orders = (*orders, UNSORTED_SORT_ORDER)
    else:
        same = [o for o in base.sort_orders if o.same_order(order)]
        if same:
            new_id, orders = same[0].order_id, base.sort_orders
        else:
            new_id = max([0, *(o.order_id for o in base.sort_orders)]) + 1
            orders = (*base.sort_orders, order.with_order_id(new_id))
    if new_id == base.default_sort_order_id and orders == base.sort_orders:
        return base
    return _touch(dataclasses.replace(base, sort_orders=orders, default_sort_order_id=new_id))


class ReplaceSortOrder(PendingUpdate):
    """Replace the default sort order (Java ``table.replaceSortOrder()``).

    >>> # ReplaceSortOrder(table).asc("region").desc("ts", "nulls-first").commit()

    With no keys the table becomes unsorted (order id 0). An order identical to an
    existing one reuses its id.
    """

    def __init__(self, table: Table, *, case_sensitive: bool = True) -> None:
        self._table = table
        self._keys: list[_SortKey] = []
        self._bindings = _Bindings(case_sensitive)
        self._prepared: SortOrder | None = None

    def _key(
        self,
        column: str,
        direction: SortDirection,
        null_order: NullOrder | str | None,
        transform: str | Transform,
    ) -> ReplaceSortOrder:
        nulls = default_null_order(direction) if null_order is None else _null_order(null_order)
        self._keys.append(_SortKey(_column(column), to_transform(transform), direction, nulls))
        return self

    def asc(
        self,
        column: str,
        null_order: NullOrder | str | None = None,
        *,
        transform: str | Transform = "identity",
    ) -> ReplaceSortOrder:
        """Sort ascending by ``transform(column)``; nulls first unless told otherwise."""
        return self._key(column, SortDirection.ASC, null_order, transform)

    def desc(
        self,
        column: str,
        null_order: NullOrder | str | None = None,
        *,
        transform: str | Transform = "identity",
    ) -> ReplaceSortOrder:
        """Sort descending by ``transform(column)``; nulls last unless told otherwise."""
        return self._key(column, SortDirection.DESC, null_order, transform)

    def new_order(self, base: TableMetadata) -> SortOrder:
        """The order these keys make against ``base``'s schema (id not yet assigned)."""
        schema = base.schema()
        fields = []
        for key in self._keys:
            source_id = self._bindings.resolve(schema, key.column)
            check_source_column(schema, source_id, key.transform, f"sort key {key.column!r}")
            fields.append(SortField(source_id, key.transform, key.direction, key.null_order))
        return SortOrder(*fields, order_id=1) if fields else SortOrder(order_id=0)

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with the new default sort order; fails if the default order changed
        since the first attempt."""
        if self._prepared is None:
            self._prepared = base.sort_order()
        elif base.sort_order() != self._prepared:
            raise _changed_since_prepared("sort order", self._prepared, base.sort_order())
        return with_default_sort_order(base, self.new_order(base))

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this update alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])


def _null_order(value: NullOrder | str) -> NullOrder:
    try:
        return NullOrder(str(value).strip().lower())
    except ValueError:
        raise ValidationError(
            f"null order must be 'nulls-first' or 'nulls-last', got {value!r}"
        ) from None
