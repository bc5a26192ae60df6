"""Delete file association (spec: "Scan Planning", the scope rules), on the index alone."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.errors import InvalidMetadata
from icewright.manifest import DataFile, EntryStatus, FileContent, FileFormat, ManifestEntry
from icewright.scan import DELETE_FILE_PATH_FIELD_ID, DeleteFileIndex, partition_key
from icewright.spec.partitioning import PartitionSpec, build_partition_spec
from tests.scan.support import SCHEMA

UNPARTITIONED = PartitionSpec(spec_id=0)
BY_REGION = build_partition_spec(SCHEMA, [("identity", "region")], spec_id=1)
BY_REGION_DAY = build_partition_spec(
    SCHEMA, [("identity", "region"), ("day", "ts")], spec_id=2, last_partition_id=1000
)
SPECS = {s.spec_id: s for s in (UNPARTITIONED, BY_REGION, BY_REGION_DAY)}

DATA_PATH = "s3://b/t/data/region=eu/a.parquet"
OTHER_PATH = "s3://b/t/data/region=eu/b.parquet"


def long_bytes(v: int) -> bytes:
    return struct.pack("<q", v)


def data_file(
    path: str = DATA_PATH, spec_id: int = 1, partition: tuple[Any, ...] = ("eu",), **kw: Any
) -> DataFile:
    return DataFile(
        file_path=path,
        file_format=FileFormat.PARQUET,
        record_count=10,
        file_size_in_bytes=1000,
        partition=partition,
        spec_id=spec_id,
        **kw,
    )


def delete_file(
    kind: str, name: str, spec_id: int = 1, partition: tuple[Any, ...] = ("eu",), **kw: Any
) -> DataFile:
    content = FileContent.POSITION_DELETES if kind == "pos" else FileContent.EQUALITY_DELETES
    if kind == "eq":
        kw.setdefault("equality_ids", (1,))
    return DataFile(
        content=content,
        file_path=f"s3://b/t/deletes/{name}.parquet",
        file_format=FileFormat.PARQUET,
        record_count=3,
        file_size_in_bytes=100,
        partition=partition,
        spec_id=spec_id,
        **kw,
    )


def entry(f: DataFile, seq: int, status: EntryStatus = EntryStatus.ADDED) -> ManifestEntry:
    return ManifestEntry(status=status, snapshot_id=1, sequence_number=seq, data_file=f)


def applies(delete: DataFile, delete_seq: int, data: DataFile, data_seq: int = 5) -> bool:
    index = DeleteFileIndex([entry(delete, delete_seq)], SPECS, [SCHEMA])
    found = index.for_data_file(data, data_seq)
    assert len(found) <= 1
    return bool(found)


# The spec's table, row by row: (delete kind, delete spec, delete partition,
# delete seq - data seq, applies?). The data file is in spec 1, partition ('eu',).
MATRIX = [
    # position deletes: data sequence number <= the delete's, same spec and partition
    ("pos", 1, ("eu",), -1, False),
    ("pos", 1, ("eu",), 0, True),
    ("pos", 1, ("eu",), 1, True),
    ("pos", 1, ("us",), 1, False),
    ("pos", 0, (), 1, False),  # an unpartitioned position delete is not global
    ("pos", 2, ("eu", 20000), 1, False),  # another spec, even with the same region
    # equality deletes: data sequence number strictly less, same spec and partition ...
    ("eq", 1, ("eu",), -1, False),
    ("eq", 1, ("eu",), 0, False),
    ("eq", 1, ("eu",), 1, True),
    ("eq", 1, ("us",), 1, False),
    ("eq", 2, ("eu", 20000), 1, False),
    # ... or the delete's spec is unpartitioned: a global delete
    ("eq", 0, (), -1, False),
    ("eq", 0, (), 0, False),
    ("eq", 0, (), 1, True),
]


@pytest.mark.parametrize(("kind", "spec_id", "partition", "delta", "expected"), MATRIX)
def test_association_matrix(
    kind: str, spec_id: int, partition: tuple[Any, ...], delta: int, expected: bool
) -> None:
    d = delete_file(kind, "d", spec_id=spec_id, partition=partition)
    assert applies(d, 5 + delta, data_file(), 5) is expected


@pytest.mark.parametrize(("kind", "expected"), [("pos", True), ("eq", True)])
def test_unpartitioned_table(kind: str, expected: bool) -> None:
    data = data_file(spec_id=0, partition=())
    assert applies(delete_file(kind, "d", spec_id=0, partition=()), 6, data) is expected
    # position deletes of the same commit apply, equality deletes do not
    assert applies(delete_file(kind, "d", spec_id=0, partition=()), 5, data) is (kind == "pos")


def test_file_scoped_position_deletes() -> None:
    data = data_file()
    referenced = delete_file("pos", "r", referenced_data_file=DATA_PATH)
    assert applies(referenced, 5, data)
    assert not applies(referenced, 4, data)
    assert not applies(delete_file("pos", "o", referenced_data_file=OTHER_PATH), 9, data)
    # equal file_path bounds pin one file, as referenced_data_file does
    pinned = {DELETE_FILE_PATH_FIELD_ID: DATA_PATH.encode()}
    assert applies(delete_file("pos", "p", lower_bounds=pinned, upper_bounds=pinned), 6, data)
    other = {DELETE_FILE_PATH_FIELD_ID: OTHER_PATH.encode()}
    assert not applies(delete_file("pos", "q", lower_bounds=other, upper_bounds=other), 6, data)


def test_file_path_bounds_prune_partition_scoped_position_deletes() -> None:
    data = data_file()
    inside = delete_file(
        "pos",
        "in",
        lower_bounds={DELETE_FILE_PATH_FIELD_ID: b"s3://b/t/data/region=eu/0"},
        upper_bounds={DELETE_FILE_PATH_FIELD_ID: OTHER_PATH.encode()},
    )
    assert applies(inside, 6, data)
    above = delete_file(
        "pos",
        "above",
        lower_bounds={DELETE_FILE_PATH_FIELD_ID: OTHER_PATH.encode()},
        upper_bounds={DELETE_FILE_PATH_FIELD_ID: b"s3://b/t/data/region=eu/z"},
    )
    assert not applies(above, 6, data)


def test_a_file_scoped_delete_in_another_partition_is_corrupt_metadata() -> None:
    bad = delete_file("pos", "bad", partition=("us",), referenced_data_file=DATA_PATH)
    with pytest.raises(InvalidMetadata, match="another partition"):
        applies(bad, 6, data_file())


def test_deleted_entries_are_not_indexed() -> None:
    d = delete_file("pos", "gone")
    index = DeleteFileIndex([entry(d, 9, EntryStatus.DELETED)], SPECS, [SCHEMA])
    assert index.is_empty
    assert index.for_data_file(data_file(), 1) == ()


def test_deletion_vector_replaces_position_delete_files() -> None:
    data = data_file()
    pos = delete_file("pos", "old")
    eq = delete_file("eq", "eq")
    dv = DataFile(
        content=FileContent.POSITION_DELETES,
        file_path="s3://b/t/deletes/dvs.puffin",
        file_format=FileFormat.PUFFIN,
        record_count=2,
        file_size_in_bytes=50,
        partition=("eu",),
        spec_id=1,
        referenced_data_file=DATA_PATH,
        content_offset=4,
        content_size_in_bytes=40,
    )
    index = DeleteFileIndex([entry(pos, 6), entry(eq, 7), entry(dv, 8)], SPECS, [SCHEMA])
    assert index.for_data_file(data, 5) == (eq, dv)
    assert index.for_data_file(data_file(OTHER_PATH), 5) == (eq, pos)
    twice = dv.replace(file_path="s3://b/t/deletes/dvs2.puffin")
    with pytest.raises(InvalidMetadata, match="two deletion vectors"):
        DeleteFileIndex([entry(dv, 8), entry(twice, 9)], SPECS, [SCHEMA])


def test_order_and_sequence_search() -> None:
    files = [(delete_file("pos", f"p{s}"), s) for s in (9, 3, 5, 7, 5)]
    eqs = [(delete_file("eq", f"e{s}"), s) for s in (4, 8, 5, 6)]
    glob = [(delete_file("eq", f"g{s}", spec_id=0, partition=()), s) for s in (10, 2)]
    index = DeleteFileIndex([entry(f, s) for f, s in files + eqs + glob], SPECS, [SCHEMA])
    got = index.for_data_file(data_file(), 5)
    names = [f.file_path.rsplit("/", 1)[1].split(".")[0] for f in got]
    # global equality, partition equality, then position deletes; each by sequence number
    assert names == ["g10", "e6", "e8", "p5", "p5", "p7", "p9"]
    assert index.has_equality_deletes and index.has_position_deletes
    assert len(index.referenced_delete_files()) == 11


def test_partition_equality_normalizes_floats() -> None:
    nan_a, nan_b = float("nan"), struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    assert partition_key(1, (nan_a,)) == partition_key(1, (nan_b,))
    assert partition_key(1, (0.0,)) != partition_key(1, (-0.0,))  # different bit layouts
    assert partition_key(1, (1.5,)) == partition_key(1, (1.5,))
    assert partition_key(1, ("a",)) != partition_key(2, ("a",))


# --- equality deletes pruned by column statistics (Java's canContainEqDeletesForFile) ------


def ranged(lo: int, hi: int) -> dict[str, Any]:
    return {"lower_bounds": {1: long_bytes(lo)}, "upper_bounds": {1: long_bytes(hi)}}


@pytest.mark.parametrize(
    ("delete_range", "expected"),
    [((20, 30), False), ((9, 30), True), ((0, 0), True), ((-5, -1), False), ((5, 5), True)],
)
def test_equality_delete_ranges(delete_range: tuple[int, int], expected: bool) -> None:
    data = data_file(**ranged(0, 9))
    assert applies(delete_file("eq", "e", **ranged(*delete_range)), 6, data) is expected


def test_equality_delete_nulls() -> None:
    # column 4 ("name") is optional: a delete of only nulls cannot touch a file without nulls
    nulls_only = delete_file(
        "eq", "n", equality_ids=(4,), value_counts={4: 3}, null_value_counts={4: 3}
    )
    no_nulls = data_file(value_counts={4: 10}, null_value_counts={4: 0})
    some_nulls = data_file(value_counts={4: 10}, null_value_counts={4: 2})
    unknown = data_file()
    assert not applies(nulls_only, 6, no_nulls)
    assert applies(nulls_only, 6, some_nulls)
    assert applies(nulls_only, 6, unknown)
    # and a file of only nulls is untouched by a delete without nulls
    only_null_data = data_file(value_counts={4: 10}, null_value_counts={4: 10})
    values = delete_file(
        "eq", "v", equality_ids=(4,), value_counts={4: 3}, null_value_counts={4: 0}
    )
    assert not applies(values, 6, only_null_data)
    assert applies(values, 6, some_nulls)


def test_equality_delete_on_a_dropped_column_still_applies() -> None:
    d = delete_file("eq", "x", equality_ids=(99,), **ranged(100, 200))
    assert applies(d, 6, data_file(**ranged(0, 9)))


# --- the index against a plain reading of the spec, on random files --------------------------

PARTITIONS: dict[int, list[tuple[Any, ...]]] = {
    0: [()],
    1: [("eu",), ("us",)],
    2: [("eu", 1), ("eu", 2)],
}


def spec_rule(delete: DataFile, dseq: int, data: DataFile, seq: int) -> bool:
    """The spec's rules, read literally (no statistics, no deletion vectors)."""
    same_partition = delete.spec_id == data.spec_id and delete.partition == data.partition
    if delete.content is FileContent.POSITION_DELETES:
        ref_ok = delete.referenced_data_file in (None, data.file_path)
        return ref_ok and seq <= dseq and same_partition
    global_delete = SPECS[delete.spec_id].is_unpartitioned
    return seq < dseq and (same_partition or global_delete)


@st.composite
def files(draw: st.DrawFn, kind: str, n: int) -> list[tuple[DataFile, int]]:
    out = []
    for i in range(draw(st.integers(0, n))):
        spec_id = draw(st.sampled_from([0, 1, 2]))
        partition = draw(st.sampled_from(PARTITIONS[spec_id]))
        seq = draw(st.integers(1, 6))
        if kind == "data":
            f = data_file(f"s3://b/t/data/{i}.parquet", spec_id, partition)
        else:
            k = draw(st.sampled_from(["pos", "eq"]))
            ref = None
            if k == "pos" and draw(st.booleans()):
                ref = f"s3://b/t/data/{draw(st.integers(0, n))}.parquet"
            f = delete_file(k, f"{kind}{i}", spec_id, partition, referenced_data_file=ref)
        out.append((f, seq))
    return out


@settings(max_examples=60, deadline=None)
@given(data=files("data", 8), deletes=files("deletes", 12))
def test_index_matches_the_spec_rules(
    data: list[tuple[DataFile, int]], deletes: list[tuple[DataFile, int]]
) -> None:
    # a referenced file in another partition is corrupt metadata: keep the draws consistent
    by_path = {f.file_path: f for f, _ in data}
    deletes = [
        (d, s)
        for d, s in deletes
        if d.referenced_data_file is None
        or (
            d.referenced_data_file in by_path
            and partition_key(d.spec_id, d.partition)
            == partition_key(
                by_path[d.referenced_data_file].spec_id, by_path[d.referenced_data_file].partition
            )
        )
    ]
    index = DeleteFileIndex([entry(d, s) for d, s in deletes], SPECS, [SCHEMA])
    for f, seq in data:
        expected = {d.file_path for d, dseq in deletes if spec_rule(d, dseq, f, seq)}
        got = index.for_data_file(f, seq)
        assert len(got) == len(set(got))
        assert {d.file_path for d in got} == expected
