"""Column maps: a data file's metrics, one value per column (field) id.

A manifest stores six such maps per data file (spec: "Data File Fields", ``column_sizes``
to ``upper_bounds``). A plan of a big table holds a million files, so their form matters:
a ``dict`` of four columns takes 224 bytes before its values. The files of one table
mostly describe the same columns, so a :class:`ColumnMap` keeps only its values (a tuple)
and shares the index from column id to position with every map of the same ids: 120
bytes for four columns, and one fewer object to build when a manifest is decoded.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from functools import lru_cache
from typing import Any, TypeVar

__all__ = ["ColumnMap"]

V = TypeVar("V")


@lru_cache(maxsize=4096)
def _index_of(ids: tuple[int, ...]) -> dict[int, int]:
    # shared by every map of these ids, in this order; never changed once made
    return {column: i for i, column in enumerate(ids)}


class ColumnMap(Mapping[int, V]):
    """An immutable mapping from column (field) id to one metric of a data file.

    Compares equal to any mapping of the same items (a ``dict`` included), iterates in the
    order the columns were given, and pickles as its items.
    """

    __slots__ = ("_index", "_values")

    _index: dict[int, int]
    _values: tuple[V, ...]

    def __init__(self, items: Mapping[int, V] | Iterable[tuple[int, V]] = ()) -> None:
        pairs = items if items.__class__ is dict else dict(items)  # read, not kept
        self._index = _index_of(tuple(pairs))
        self._values = tuple(pairs.values())

    @classmethod
    def of(cls, items: Mapping[int, V]) -> ColumnMap[V]:
        """``items`` as a column map: itself when it is one already (it cannot change)."""
        return items if isinstance(items, ColumnMap) else cls(items)

    def __getitem__(self, column: int) -> V:
        return self._values[self._index[column]]

    def get(self, column: int, default: Any = None) -> Any:
        """The value of ``column``, or ``default`` when the map has none."""
        at = self._index.get(column)
        return default if at is None else self._values[at]

    def __contains__(self, column: object) -> bool:
        return column in self._index

    def __iter__(self) -> Iterator[int]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._values)

    def items(self) -> ItemsView[int, V]:
        """The (column id, value) pairs, in the map's order (iterated without lookups)."""
        return _Items(self)

    def sorted_items(self) -> list[tuple[int, V]]:
        """The (column id, value) pairs sorted by column id, as a manifest stores them."""
        return sorted(zip(self._index, self._values, strict=True))

    def values(self) -> ValuesView[V]:
        """The values, in the map's order."""
        return _Values(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ColumnMap) and other._index is self._index:
            return self._values == other._values
        if isinstance(other, Mapping):
            return len(other) == len(self._values) and dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to dicts, which are not hashable

    def __repr__(self) -> str:
        return f"ColumnMap({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ColumnMap, (dict(self.items()),))


class _Items(ItemsView[int, V]):
    __slots__ = ()
    _mapping: ColumnMap[V]

    def __len__(self) -> int:
        return len(self._mapping._values)

    def __iter__(self) -> Iterator[tuple[int, V]]:
        return zip(self._mapping._index, self._mapping._values, strict=True)


class _Values(ValuesView[V]):
    __slots__ = ()
    _mapping: ColumnMap[V]

    def __iter__(self) -> Iterator[V]:
        return iter(self._mapping._values)
