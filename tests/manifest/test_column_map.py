"""ColumnMap: a data file's metrics map, immutable and compact."""

from __future__ import annotations

import pickle
import sys

import pytest

from icewright.manifest import ColumnMap

from .samples import data_file


def test_it_is_the_mapping_it_was_given() -> None:
    m = ColumnMap({3: b"c", 1: b"a"})
    expected = {1: b"a", 3: b"c"}
    assert m == expected and expected == m  # dict.__eq__ gives way to ours
    assert list(m) == [3, 1] and len(m) == 2 and 1 in m and 2 not in m
    assert m[3] == b"c" and m.get(2) is None and m.get(2, b"") == b""
    with pytest.raises(KeyError):
        m[2]
    assert m != {1: b"a"} and m != {1: b"a", 3: b"x"} and m != [(3, b"c"), (1, b"a")]
    assert ColumnMap([(1, 5), (1, 6)]) == {1: 6}  # as dict() takes pairs
    assert list(m.items()) == [(3, b"c"), (1, b"a")] and list(m.values()) == [b"c", b"a"]
    assert (1, b"a") in m.items() and (1, b"c") not in m.items() and len(m.items()) == 2
    assert b"c" in m.values() and m.keys() == {1, 3}
    assert repr(m) == "ColumnMap({3: b'c', 1: b'a'})"


def test_it_cannot_change_and_pickles_as_its_items() -> None:
    m = ColumnMap({1: 10})
    with pytest.raises(TypeError):
        m[2] = 3  # type: ignore[index]
    with pytest.raises(AttributeError):
        m.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(m)
    again = pickle.loads(pickle.dumps(m))
    assert type(again) is ColumnMap and again == m


def test_maps_of_the_same_columns_share_their_index() -> None:
    a, b = ColumnMap({1: 10, 2: 20}), ColumnMap({1: 11, 2: 21})
    assert a._index is b._index and a != b
    assert ColumnMap({2: 20, 1: 10}) == a  # other order, other index, same items
    # smaller than a dict of the same items
    assert sys.getsizeof(a) + sys.getsizeof(a._values) < sys.getsizeof({1: 10, 2: 20})


def test_a_data_file_keeps_its_maps_as_column_maps() -> None:
    counts = {1: 10, 2: 10}
    f = data_file("s3://b/t/a.parquet", ("eu", 1, 1, None), value_counts=counts)
    assert type(f.value_counts) is ColumnMap and f.value_counts == counts
    counts[3] = 1  # the caller's dict is not the file's
    assert 3 not in f.value_counts
    assert f.replace(record_count=2).value_counts is f.value_counts
    assert ColumnMap.of(f.value_counts) is f.value_counts


def test_sorted_items_are_how_a_manifest_stores_the_map() -> None:
    m = ColumnMap({30: 3, 2: 2, 11: 1})
    assert m.sorted_items() == [(2, 2), (11, 1), (30, 3)] == sorted({30: 3, 2: 2, 11: 1}.items())
