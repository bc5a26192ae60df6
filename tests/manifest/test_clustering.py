"""Manifests clustered by partition: the sort key keeps the values' order, the rolling
writer keeps the target size, and a writer's length never undercounts its file."""

from __future__ import annotations

import os
import uuid
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.manifest.clustering import as_existing, cluster, partition_sort_key, write_rolling
from icewright.manifest.data_file import DataFile, EntryStatus, ManifestEntry, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DecimalType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType())
)
SPEC = build_partition_spec(SCHEMA, [("identity", "region")])


def _nulls_first(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, v) for v in values)


def _struct(*types: Any) -> StructType:
    return StructType(*(NestedField(1000 + i, f"f{i}", t) for i, t in enumerate(types)))


LONGS = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))
DOUBLES = st.one_of(st.none(), st.floats(allow_nan=False).map(lambda f: f + 0.0))
TEXT = st.one_of(st.none(), st.text(max_size=6))
BLOBS = st.one_of(st.none(), st.binary(max_size=6))
DECIMALS = st.one_of(st.none(), st.integers(-(10**12), 10**12).map(lambda u: Decimal(u).scaleb(-2)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LONGS, TEXT, DOUBLES), min_size=2, max_size=20))
def test_the_key_orders_like_the_tuples(values: list[tuple[Any, ...]]) -> None:
    key = partition_sort_key(_struct(LongType(), StringType(), DoubleType()))
    by_key = sorted(values, key=key)
    assert [_nulls_first(v) for v in by_key] == sorted(_nulls_first(v) for v in values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(BLOBS, DECIMALS), min_size=2, max_size=20))
def test_bytes_and_decimals_order_too(values: list[tuple[Any, ...]]) -> None:
    key = partition_sort_key(_struct(BinaryType(), DecimalType(14, 2)))
    by_key = sorted(values, key=key)
    assert [_nulls_first(v) for v in by_key] == sorted(_nulls_first(v) for v in values)
    # equal tuples, equal keys; different tuples, different keys
    assert len({key(v) for v in values}) == len(set(values))


def test_booleans_and_uuids() -> None:
    key = partition_sort_key(_struct(BooleanType(), UUIDType()))
    ids = sorted(uuid.uuid4() for _ in range(5))
    values = [(True, ids[0]), (False, ids[3]), (None, None), (False, ids[1])]
    assert sorted(values, key=key) == [(None, None), (False, ids[1]), (False, ids[3]), values[0]]


def _entry(i: int, region: str | None) -> ManifestEntry:
    return ManifestEntry(
        status=EntryStatus.ADDED,
        snapshot_id=7,
        sequence_number=3,
        file_sequence_number=4,
        data_file=DataFile(
            file_path=f"s3://b/t/data/{os.urandom(6).hex()}-{i}.parquet",
            file_format="parquet",
            record_count=i,
            file_size_in_bytes=1000 + i,
            partition=(region,),
            column_sizes={1: i, 2: 10},
            lower_bounds={1: os.urandom(8)},
            upper_bounds={1: os.urandom(8)},
        ),
    )


def test_entries_become_existing_with_their_ids_and_sequence_numbers() -> None:
    entry = _entry(1, "eu")
    existing = as_existing(entry)
    assert existing.status is EntryStatus.EXISTING
    assert (existing.snapshot_id, existing.sequence_number, existing.file_sequence_number) == (
        7,
        3,
        4,
    )
    assert existing.data_file is entry.data_file


def _writer() -> ManifestWriter:
    return ManifestWriter(format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=99)


def test_length_never_undercounts_the_file() -> None:
    writer = _writer()
    for i in range(3000):
        writer.add_entry(as_existing(_entry(i, f"r{i % 9}")))
        if i % 97 == 0:
            assert writer.length() >= len(writer.to_bytes())
    assert writer.length() >= len(writer.to_bytes()) > writer.length() - 20_000
    # the blocks length() compressed are copied: the file is what a fresh writer writes
    again = _writer()
    for e in writer.entries:
        again.add_entry(e)
    assert len(again.to_bytes()) == len(writer.to_bytes())
    assert read_manifest(writer.to_bytes()) == read_manifest(again.to_bytes())


def test_rolling_manifests_stay_under_the_target() -> None:
    regions = [None, "ap", "eu", "us"]
    entries = cluster(
        [as_existing(_entry(i, regions[i % 4])) for i in range(2000)],
        partition_sort_key(SPEC.partition_type(SCHEMA)),
    )
    stored: dict[str, bytes] = {}

    def store(writer: ManifestWriter) -> ManifestFile:
        path = f"m{len(stored)}.avro"
        stored[path], manifest = writer.finish(path)
        return manifest

    target = 40_000
    written = write_rolling(entries, new_writer=_writer, target_size_bytes=target, store=store)
    assert len(written) > 3
    assert all(m.manifest_length == len(stored[m.manifest_path]) <= target for m in written)
    # all but the last are full: another entry would not have fitted
    assert all(m.manifest_length > target - 20_000 for m in written[:-1])
    back = [e for m in written for e in read_manifest(stored[m.manifest_path], m)]
    assert [e.data_file.file_path for e in back] == [e.data_file.file_path for e in entries]
    assert [e.data_file.partition for e in back] == sorted(
        (e.data_file.partition for e in entries), key=lambda p: (p[0] is not None, p[0])
    )
    assert sum(m.existing_files_count or 0 for m in written) == len(entries)


def test_one_entry_bigger_than_the_target_gets_a_manifest_of_its_own() -> None:
    entries = [as_existing(_entry(i, "eu")) for i in range(3)]
    written = write_rolling(
        entries,
        new_writer=_writer,
        target_size_bytes=10,
        store=lambda w: w.finish("m.avro")[1],
    )
    assert [m.existing_files_count for m in written] == [1, 1, 1]
