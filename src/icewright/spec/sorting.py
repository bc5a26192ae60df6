"""Sort orders (spec: "Sorting"; JSON per Appendix C "Sort Orders").

A :class:`SortOrder` is an immutable list of :class:`SortField`; order id 0 is
reserved for the unsorted order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.partitioning import (
    check_source_column,
    make_transform,
    parse_source_ids,
    source_ids_json,
)
from icewright.spec.schema import Schema
from icewright.spec.transforms import IDENTITY, Transform, parse_transform


class SortDirection(StrEnum):
    """``asc`` or ``desc``."""

    ASC = "asc"
    DESC = "desc"

    def __str__(self) -> str:
        return self.value


class NullOrder(StrEnum):
    """``nulls-first`` or ``nulls-last``."""

    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"

    def __str__(self) -> str:
        return self.value


def _direction(value: Any) -> SortDirection:
    try:
        return SortDirection(str(value).strip().lower())
    except ValueError:
        raise ValidationError(f"sort direction must be 'asc' or 'desc', got {value!r}") from None


def _null_order(value: Any) -> NullOrder:
    try:
        return NullOrder(str(value).strip().lower())
    except ValueError:
        raise ValidationError(
            f"null order must be 'nulls-first' or 'nulls-last', got {value!r}"
        ) from None


def default_null_order(direction: SortDirection) -> NullOrder:
    """Java's default: nulls first when ascending, nulls last when descending."""
    return NullOrder.NULLS_FIRST if direction is SortDirection.ASC else NullOrder.NULLS_LAST


@dataclass(frozen=True, slots=True)
class SortField:
    """One sort key: a transform of source column(s), a direction and a null order.

    ``source_ids`` defaults to ``(source_id,)``; ``source_id`` is always its first entry.
    """

    source_id: int
    transform: Transform = IDENTITY
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder = NullOrder.NULLS_FIRST
    source_ids: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.source_ids:
            object.__setattr__(self, "source_ids", (self.source_id,))
        elif self.source_ids[0] != self.source_id:
            raise ValidationError(
                f"sort field: source_id {self.source_id} must be the first of source_ids "
                f"{list(self.source_ids)}"
            )
        if not isinstance(self.transform, Transform):
            raise ValidationError(f"sort field: {self.transform!r} is not a Transform")
        object.__setattr__(self, "direction", _direction(self.direction))
        object.__setattr__(self, "null_order", _null_order(self.null_order))

    def to_json(self) -> dict[str, Any]:
        """Appendix C sort field object."""
        return {
            "transform": str(self.transform),
            **source_ids_json(self.source_ids),
            "direction": self.direction.value,
            "null-order": self.null_order.value,
        }

    @classmethod
    def from_json(cls, obj: Any) -> SortField:
        """Parse an Appendix C sort field object (``source-id`` or v3 ``source-ids``)."""
        if not isinstance(obj, dict):
            raise ValidationError(f"a sort field must be a JSON object, got {obj!r}")
        for key in ("transform", "direction", "null-order"):
            if key not in obj:
                raise ValidationError(f"sort field JSON is missing {key!r}: {obj!r}")
        if not isinstance(obj["transform"], str):
            raise ValidationError(
                f"sort field transform must be a string, got {obj['transform']!r}"
            )
        ids = parse_source_ids(obj, "sort field")
        return cls(
            ids[0],
            parse_transform(obj["transform"]),
            _direction(obj["direction"]),
            _null_order(obj["null-order"]),
            ids,
        )

    def satisfies(self, other: SortField) -> bool:
        """Whether data sorted by this field is also sorted by ``other`` (Java semantics)."""
        return (
            self.source_ids == other.source_ids
            and self.direction == other.direction
            and self.null_order == other.null_order
            and self.transform.satisfies_order_of(other.transform)
        )


class SortOrder:
    """An immutable sort order: sort fields in priority order and an order id.

    An order with fields may not use id 0, which is reserved for the unsorted order.
    """

    __slots__ = ("_fields", "order_id")
    _fields: tuple[SortField, ...]
    order_id: int

    def __init__(self, *fields: SortField, order_id: int = 1) -> None:
        if isinstance(order_id, bool) or not isinstance(order_id, int):
            raise ValidationError(f"sort order-id must be an integer, got {order_id!r}")
        for f in fields:
            if not isinstance(f, SortField):
                raise ValidationError(f"{f!r} is not a SortField")
        if fields and order_id == 0:
            raise ValidationError(
                "sort order id 0 is reserved for the unsorted order; give a sorted order id >= 1"
            )
        if not fields and order_id != 0:
            raise ValidationError(
                f"an unsorted order (no fields) must have order id 0, got {order_id}"
            )
        object.__setattr__(self, "_fields", tuple(fields))
        object.__setattr__(self, "order_id", order_id)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("SortOrder is immutable; build a new one")

    @property
    def fields(self) -> tuple[SortField, ...]:
        """The sort fields, most significant first."""
        return self._fields

    def __iter__(self) -> Iterator[SortField]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    @property
    def is_unsorted(self) -> bool:
        """True for the unsorted order (no fields)."""
        return not self._fields

    @property
    def is_sorted(self) -> bool:
        """True when the order has fields."""
        return bool(self._fields)

    @property
    def has_unknown_transform(self) -> bool:
        """True when a field uses a transform icewright does not know."""
        return any(f.transform.is_unknown for f in self._fields)

    def with_order_id(self, order_id: int) -> SortOrder:
        """A copy with another order id."""
        return SortOrder(*self._fields, order_id=order_id)

    def same_order(self, other: SortOrder) -> bool:
        """Equal fields, ignoring the order id."""
        return self._fields == other._fields

    def satisfies(self, other: SortOrder) -> bool:
        """Whether data sorted by this order is also sorted by ``other`` (Java semantics)."""
        if other.is_unsorted:
            return True
        if len(other._fields) > len(self._fields):
            return False
        return all(a.satisfies(b) for a, b in zip(self._fields, other._fields, strict=False))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SortOrder)
            and self.order_id == other.order_id
            and self._fields == other._fields
        )

    def __hash__(self) -> int:
        return hash((self.order_id, self._fields))

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{f.transform}({','.join(map(str, f.source_ids))}) {f.direction} {f.null_order}"
            for f in self._fields
        )
        return f"SortOrder([{inner}], order_id={self.order_id})"

    def check_compatible(self, schema: Schema) -> None:
        """Raise :class:`ValidationError` unless every field's source fits ``schema``."""
        for i, f in enumerate(self._fields):
            for sid in f.source_ids:
                check_source_column(schema, sid, f.transform, f"sort field {i} ({f.transform})")

    def to_json(self) -> dict[str, Any]:
        """Appendix C object form with ``order-id`` and ``fields``."""
        return {"order-id": self.order_id, "fields": [f.to_json() for f in self._fields]}

    @classmethod
    def from_json(cls, obj: Any) -> SortOrder:
        """Parse the Appendix C object form with ``order-id`` and ``fields``."""
        if not isinstance(obj, dict):
            raise ValidationError(f"a sort order must be a JSON object, got {obj!r}")
        if "order-id" not in obj or "fields" not in obj:
            raise ValidationError(f"sort order JSON needs 'order-id' and 'fields': {obj!r}")
        order_id = obj["order-id"]
        if isinstance(order_id, bool) or not isinstance(order_id, int):
            raise ValidationError(f"sort order-id must be an integer, got {order_id!r}")
        fields = obj["fields"]
        if not isinstance(fields, list):
            raise ValidationError(f"sort order fields must be a JSON list, got {fields!r}")
        return cls(*(SortField.from_json(f) for f in fields), order_id=order_id)


UNSORTED_SORT_ORDER = SortOrder(order_id=0)
"""The unsorted order: id 0, no fields."""


def build_sort_order(
    schema: Schema,
    fields: Iterable[str | tuple[str, ...] | tuple[str, str, str] | tuple[str, str, str, str]],
    order_id: int = 1,
) -> SortOrder:
    """Build a sort order by column name.

    Each entry is ``"col"``, ``(col,)``, ``(col, direction)``, ``(col, direction,
    null_order)`` or ``(col, direction, null_order, transform)`` where transform is a
    spec string such as ``"bucket[4]"``. The null order defaults as in Java:
    nulls-first for asc, nulls-last for desc. An empty list gives the unsorted order.
    """
    out: list[SortField] = []
    for entry in fields:
        parts: tuple[str, ...] = (entry,) if isinstance(entry, str) else tuple(entry)
        if not 1 <= len(parts) <= 4:
            raise ValidationError(
                f"sort field {entry!r} must be (column[, direction[, null_order[, transform]]])"
            )
        column = parts[0]
        direction = _direction(parts[1]) if len(parts) > 1 else SortDirection.ASC
        nulls = _null_order(parts[2]) if len(parts) > 2 else default_null_order(direction)
        if len(parts) > 3:
            transform = parse_transform(parts[3])
            if transform.is_unknown:
                transform = make_transform(parts[3])  # raises with the list of known names
        else:
            transform = IDENTITY
        source = schema.find_field(column)
        check_source_column(schema, source.field_id, transform, f"sort field {column!r}")
        out.append(SortField(source.field_id, transform, direction, nulls))
    if not out:
        return UNSORTED_SORT_ORDER
    return SortOrder(*out, order_id=order_id)
