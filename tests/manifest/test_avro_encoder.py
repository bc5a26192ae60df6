"""icewright's own Avro encoding and decoding of manifests and manifest lists.

The oracle is fastavro: for random entries and manifest files, the bytes icewright's
encoder writes decode with fastavro to the same records as fastavro's own writer makes
of the same data (and are in fact the same bytes), and icewright's compiled decoder
reads lists written by fastavro, with any field order, as the fastavro-based reader does.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import uuid
from decimal import Decimal
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.errors import InvalidMetadata, ValidationError
from icewright.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    ManifestListWriter,
    ManifestWriter,
    PartitionFieldSummary,
    manifest_list_schema,
    read_manifest,
    read_manifest_list,
)
from icewright.manifest.avro_codec import open_avro, open_container, write_avro
from icewright.manifest.avro_encoder import EncodeError, int_bytes, long_bytes
from icewright.manifest.manifest_list import ManifestListReader
from icewright.manifest.manifest_list import _manifest_files as manifest_files_from_records

from .samples import ALL_TYPES_SCHEMA, ALL_TYPES_SPEC, ALL_TYPES_VALUES, SCHEMA, SPEC, data_file

LONG = st.integers(-(2**63), 2**63 - 1)
INT = st.integers(-(2**31), 2**31 - 1)
COUNT = st.integers(0, 2**63 - 1)


# --- primitives: the Avro spec's zigzag varints -----------------------------------------


@given(LONG)
def test_long_is_the_zigzag_varint_of_the_avro_spec(n: int) -> None:
    # Avro spec, "Binary Encoding": zigzag, then 7 bits at a time, low group first.
    zigzag = (n << 1) ^ (n >> 63)
    expected = bytearray()
    while True:
        group, zigzag = zigzag & 0x7F, zigzag >> 7
        expected.append(group | (0x80 if zigzag else 0))
        if not zigzag:
            break
    assert long_bytes(n) == bytes(expected)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, "long", n)
    assert long_bytes(n) == out.getvalue()


@pytest.mark.parametrize("bad", [2**63, -(2**63) - 1, 1.0, "1", None, True])
def test_long_refuses_what_is_not_a_64_bit_integer(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        long_bytes(bad)


@pytest.mark.parametrize("bad", [2**31, -(2**31) - 1, 2.0, True])
def test_int_refuses_what_is_not_a_32_bit_integer(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        int_bytes(bad)


# --- manifests ---------------------------------------------------------------------------


def _decimal(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    limit = 10**precision - 1
    # From text: exact, whatever the context precision (scaleb would round to 28 digits).
    return st.integers(-limit, limit).map(lambda n: Decimal(f"{n}E-{scale}"))


_PARTITION_VALUES = st.tuples(
    st.booleans(),
    INT,
    LONG,
    st.floats(width=32),
    st.floats(),
    _decimal(9, 2),
    INT,
    st.integers(0, 86_400_000_000 - 1),
    LONG,
    LONG,
    st.text(),
    st.uuids(),
    st.binary(min_size=3, max_size=3),
    st.binary(),
    _decimal(9, 2),
    _decimal(38, 10),
)


@st.composite
def _partitions(draw: st.DrawFn) -> tuple[Any, ...]:
    values = draw(_PARTITION_VALUES)
    nulls = draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    return tuple(None if null else v for v, null in zip(values, nulls, strict=True))


def _maps(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[int, Any] | None]:
    return st.none() | st.dictionaries(st.integers(0, 10_000), values, max_size=6)


@st.composite
def _entries(draw: st.DrawFn, version: int) -> ManifestEntry:
    v3 = version >= 3
    df = DataFile(
        file_path=draw(st.text(min_size=1)),
        file_format=draw(st.sampled_from(FileFormat)),
        partition=draw(_partitions()),
        record_count=draw(COUNT),
        file_size_in_bytes=draw(COUNT),
        column_sizes=draw(_maps(COUNT)),
        value_counts=draw(_maps(COUNT)),
        null_value_counts=draw(_maps(COUNT)),
        nan_value_counts=draw(_maps(COUNT)),
        lower_bounds=draw(_maps(st.binary(max_size=16))),
        upper_bounds=draw(_maps(st.binary(max_size=16))),
        key_metadata=draw(st.none() | st.binary(max_size=8)),
        split_offsets=draw(st.none() | st.lists(LONG, max_size=4).map(tuple)),
        sort_order_id=draw(st.none() | INT),
        spec_id=ALL_TYPES_SPEC.spec_id,
        referenced_data_file=draw(st.none() | st.text()) if version >= 2 else None,
        first_row_id=draw(st.none() | COUNT) if v3 else None,
        content_offset=(offset := draw(st.none() | COUNT)) if v3 else None,
        content_size_in_bytes=draw(COUNT) if v3 and offset is not None else None,
    )
    status = draw(st.sampled_from(EntryStatus))
    sequence = draw(st.integers(0, 2**63 - 1))
    return ManifestEntry(
        status=status,
        snapshot_id=draw(st.integers(1, 2**63 - 1)),
        sequence_number=sequence,
        file_sequence_number=draw(st.none() | st.just(sequence)),
        data_file=df,
    )


def _fastavro_manifest(writer: ManifestWriter, codec: str) -> bytes:
    # What the writer wrote before icewright encoded manifests itself: fastavro's writer
    # on dict records.
    records = [writer._entry_record(e) for e in writer.entries]
    return write_avro(writer._avro_schema, records, writer.metadata(), codec)


def _records(data: bytes) -> str:
    # fastavro's records without logical types (dates and timestamps out of Python's range
    # stay ints); repr, because records holding NaN compare equal only by their text.
    return repr(open_avro(data, "test")[2])


@settings(max_examples=40)
@given(
    st.sampled_from([1, 2, 3]).flatmap(
        lambda v: st.tuples(st.just(v), st.lists(_entries(v), max_size=8))
    ),
    st.sampled_from(["deflate", "null"]),
)
def test_manifest_bytes_match_fastavro_writer(
    case: tuple[int, list[ManifestEntry]], codec: str
) -> None:
    version, entries = case
    writer = ManifestWriter(
        format_version=version,
        spec=ALL_TYPES_SPEC,
        schema=ALL_TYPES_SCHEMA,
        snapshot_id=77,
        codec=codec,
    )
    for entry in entries:
        writer.add_entry(entry)
    ours, theirs = writer.to_bytes(), _fastavro_manifest(writer, codec)
    assert _records(ours) == _records(theirs)
    # The same encoding, byte for byte, and the same header (schema, codec, metadata).
    mine, reference = open_container(ours, "ours"), open_container(theirs, "fastavro")
    assert mine.body == reference.body
    assert mine.metadata == reference.metadata
    assert mine.block_counts == reference.block_counts
    assert repr(read_manifest(ours)) == repr(read_manifest(theirs))


def test_a_large_manifest_is_split_into_blocks_that_read_back(tmp_path: Any) -> None:
    writer = ManifestWriter(format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=5)
    files = [
        data_file(f"s3://b/{i:05d}.parquet", ("eu", 19000 + i, i % 16, "abcd")) for i in range(600)
    ]
    for f in files:
        writer.add(f)
    data = writer.to_bytes()
    container = open_container(data, "manifest")
    assert len(container.block_counts) > 1  # more than one 16 kB block
    assert [e.data_file for e in read_manifest(data)] == files
    assert container.body == open_container(_fastavro_manifest(writer, "deflate"), "x").body


def test_other_codecs_go_through_fastavro() -> None:
    writer = ManifestWriter(
        format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=5, codec="bzip2"
    )
    f = data_file("s3://b/a.parquet", ("eu", 19000, 3, "abcd"))
    writer.add(f)
    data = writer.to_bytes()
    assert fastavro.reader(io.BytesIO(data)).metadata["avro.codec"] == "bzip2"
    assert [e.data_file for e in read_manifest(data)] == [f]
    bad = ManifestWriter(format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=5, codec="nope")
    bad.add(f)
    with pytest.raises(ValidationError, match="unknown Avro codec 'nope'"):
        bad.to_bytes()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"column_sizes": {1: "many"}}, "column_sizes"),
        ({"value_counts": {1: 2**63}}, "value_counts"),
        ({"lower_bounds": {1: "text, not bytes"}}, "lower_bounds"),
        ({"upper_bounds": {"1": b"x"}}, "upper_bounds"),
        ({"records": 2**64}, "record_count"),
        ({"sort_order_id": 2**31}, "sort_order_id"),
        ({"split_offsets": (1.5,)}, None),  # DataFile itself refuses this
    ],
)
def test_a_value_that_does_not_fit_is_refused_naming_its_field(
    changes: dict[str, Any], field: str | None
) -> None:
    writer = ManifestWriter(format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=5)
    good = data_file("s3://b/good.parquet", ("eu", 19000, 3, "abcd"))
    writer.add(good)
    with pytest.raises(ValidationError) as caught:
        bad = data_file("s3://b/bad.parquet", ("eu", 19000, 3, "abcd"), **changes)
        writer.add(bad)
    if field is not None:
        assert "s3://b/bad.parquet" in str(caught.value)
        assert field in str(caught.value)
    # Nothing was added: the writer still holds only the good file.
    assert [e.data_file for e in writer.entries] == [good]
    assert [e.data_file for e in read_manifest(writer.to_bytes())] == [good]


def test_a_wrong_partition_value_names_the_partition_field() -> None:
    writer = ManifestWriter(
        format_version=2, spec=ALL_TYPES_SPEC, schema=ALL_TYPES_SCHEMA, snapshot_id=5
    )
    values = list(ALL_TYPES_VALUES)
    values[6] = "2024-01-01"  # a date must be int days
    with pytest.raises(ValidationError, match="partition field 'dt'"):
        writer.add(data_file("s3://b/x.parquet", tuple(values), spec_id=ALL_TYPES_SPEC.spec_id))
    values[6] = 19000
    values[3] = 1e300  # not representable as a 32-bit float
    with pytest.raises(ValidationError, match="partition"):
        writer.add(data_file("s3://b/x.parquet", tuple(values), spec_id=ALL_TYPES_SPEC.spec_id))
    assert writer.entries == ()


def test_encode_error_carries_the_field_path() -> None:
    error = EncodeError("data_file.column_sizes", "expected an integer")
    assert error.path == "data_file.column_sizes"
    assert str(error) == "data_file.column_sizes: expected an integer"


# --- manifest lists ----------------------------------------------------------------------


@st.composite
def _manifest_files(draw: st.DrawFn, version: int) -> ManifestFile:
    count = st.none() | INT if version == 1 else INT
    # Row counts small enough that v3's first_row_id assignment (a running sum) stays a long.
    rows = st.integers(0, 2**48)
    rows = st.none() | rows if version == 1 else rows
    summaries = st.builds(
        PartitionFieldSummary,
        contains_null=st.booleans(),
        contains_nan=st.none() | st.booleans(),
        lower_bound=st.none() | st.binary(max_size=16),
        upper_bound=st.none() | st.binary(max_size=16),
    )
    return ManifestFile(
        manifest_path=draw(st.text(min_size=1)),
        manifest_length=draw(COUNT),
        partition_spec_id=draw(INT),
        added_snapshot_id=draw(st.integers(1, 2**63 - 1)),
        content=ManifestContent.DATA if version == 1 else draw(st.sampled_from(ManifestContent)),
        sequence_number=draw(st.integers(0, 2**63 - 1)),
        min_sequence_number=draw(st.integers(0, 2**63 - 1)),
        added_files_count=draw(count),
        existing_files_count=draw(count),
        deleted_files_count=draw(count),
        added_rows_count=draw(rows),
        existing_rows_count=draw(rows),
        deleted_rows_count=draw(rows),
        partitions=draw(st.none() | st.lists(summaries, max_size=4).map(tuple)),
        key_metadata=draw(st.none() | st.binary(max_size=8)),
        first_row_id=draw(st.none() | COUNT) if version >= 3 else None,
    )


def _list_writer(version: int, codec: str = "deflate") -> ManifestListWriter:
    return ManifestListWriter(
        format_version=version,
        snapshot_id=9,
        parent_snapshot_id=8,
        sequence_number=10,
        first_row_id=0 if version >= 3 else None,
        codec=codec,
    )


def _fastavro_list(writer: ManifestListWriter) -> bytes:
    records = [writer._record(m) for m in writer.manifests]
    schema = manifest_list_schema(writer.format_version)
    return write_avro(schema, records, writer.metadata(), writer.codec)


def _read_with_fastavro(data: bytes) -> list[ManifestFile]:
    # The reader before the compiled decoder: fastavro records, then ManifestFile.
    _, writer_schema, records = open_avro(data, "list")
    return manifest_files_from_records(records, writer_schema, "list")


@settings(max_examples=40)
@given(
    st.sampled_from([1, 2, 3]).flatmap(
        lambda v: st.tuples(st.just(v), st.lists(_manifest_files(v), max_size=12))
    ),
    st.sampled_from(["deflate", "null"]),
)
def test_manifest_list_bytes_match_fastavro_and_decode_alike(
    case: tuple[int, list[ManifestFile]], codec: str
) -> None:
    version, manifests = case
    writer = _list_writer(version, codec)
    writer.add_all(manifests)
    ours, theirs = writer.to_bytes(), _fastavro_list(writer)
    assert _records(ours) == _records(theirs)
    assert open_container(ours, "ours").body == open_container(theirs, "fastavro").body
    # The compiled decoder reads both as the fastavro-based reader does.
    expected = _read_with_fastavro(theirs)
    assert read_manifest_list(ours) == expected
    assert read_manifest_list(theirs) == expected
    if version >= 2:
        assert expected == list(writer.manifests)


def _foreign_list(fields: list[dict[str, Any]], records: list[dict[str, Any]]) -> bytes:
    schema = {"type": "record", "name": "manifest_file", "fields": fields}
    out = io.BytesIO()
    fastavro.writer(out, schema, records, metadata={"format-version": "2"}, codec="deflate")
    return out.getvalue()


def test_a_list_from_another_writer_is_read_by_field_id() -> None:
    # Fields in another order, another name for 504 (as old Java wrote it), an unknown
    # field, and no key_metadata: matched by field id, as Iceberg readers must.
    summary = {
        "type": "record",
        "name": "r508",
        "fields": [
            {"name": "upper_bound", "type": ["null", "bytes"], "field-id": 511},
            {"name": "contains_null", "type": "boolean", "field-id": 509},
            {"name": "lower_bound", "type": ["null", "bytes"], "field-id": 510},
        ],
    }
    fields = [
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
        {"name": "extra", "type": ["null", "double"], "field-id": 9999},
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "sequence_number", "type": "long", "field-id": 515},
        {"name": "min_sequence_number", "type": "long", "field-id": 516},
        {"name": "added_data_files_count", "type": "int", "field-id": 504},
        {"name": "existing_files_count", "type": "int", "field-id": 505},
        {"name": "deleted_files_count", "type": "int", "field-id": 506},
        {"name": "added_rows_count", "type": "long", "field-id": 512},
        {"name": "existing_rows_count", "type": "long", "field-id": 513},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514},
        {
            "name": "partitions",
            "type": ["null", {"type": "array", "items": summary, "element-id": 508}],
            "field-id": 507,
        },
    ]
    record = {
        "added_snapshot_id": 2**62,
        "extra": 1.5,
        "manifest_path": "s3://b/m.avro",
        "partition_spec_id": 3,
        "manifest_length": 4096,
        "content": 1,
        "sequence_number": 7,
        "min_sequence_number": 6,
        "added_data_files_count": 2,
        "existing_files_count": 0,
        "deleted_files_count": 1,
        "added_rows_count": 20,
        "existing_rows_count": 0,
        "deleted_rows_count": 5,
        "partitions": [{"upper_bound": b"z", "contains_null": True, "lower_bound": None}],
    }
    expected = ManifestFile(
        manifest_path="s3://b/m.avro",
        manifest_length=4096,
        partition_spec_id=3,
        added_snapshot_id=2**62,
        content=ManifestContent.DELETES,
        sequence_number=7,
        min_sequence_number=6,
        added_files_count=2,
        existing_files_count=0,
        deleted_files_count=1,
        added_rows_count=20,
        existing_rows_count=0,
        deleted_rows_count=5,
        partitions=(PartitionFieldSummary(True, None, None, b"z"),),
    )
    assert read_manifest_list(_foreign_list(fields, [record])) == [expected]
    # A field type the compiled decoder does not handle (an enum): fastavro reads it.
    fields[1] = {
        "name": "extra",
        "type": {"type": "enum", "name": "e", "symbols": ["A", "B"]},
        "field-id": 9999,
    }
    assert read_manifest_list(_foreign_list(fields, [{**record, "extra": "B"}])) == [expected]


def test_a_corrupt_list_is_invalid_metadata() -> None:
    writer = _list_writer(2, codec="null")
    writer.add(_manifest("s3://b/m.avro", 10))
    data = writer.to_bytes()
    broken = (
        data[:-20],  # cut inside the last block
        data[:30],  # cut inside the header
        b"Obj\x01" + b"\xff" * 40,  # a varint that never ends
        data.replace(b"s3://", b"s3:\xff/"),  # a path that is not UTF-8
    )
    for bad in broken:
        with pytest.raises(InvalidMetadata, match=re.escape("s3://b/snap.avro")):
            read_manifest_list(bad, "s3://b/snap.avro")
    fields = [
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
    ]
    record = {
        "manifest_path": "m",
        "manifest_length": 1,
        "partition_spec_id": 0,
        "content": 5,  # neither data (0) nor deletes (1)
        "added_snapshot_id": 1,
    }
    with pytest.raises(InvalidMetadata, match="content"):
        read_manifest_list(_foreign_list(fields, [record]))


def _manifest(path: str, sequence: int, added: int = 1) -> ManifestFile:
    return ManifestFile(
        manifest_path=path,
        manifest_length=1000 + sequence,
        partition_spec_id=0,
        added_snapshot_id=sequence,
        sequence_number=sequence,
        min_sequence_number=sequence,
        added_files_count=added,
        existing_files_count=0,
        deleted_files_count=0,
        added_rows_count=10 * added,
        existing_rows_count=0,
        deleted_rows_count=0,
        partitions=(PartitionFieldSummary(False, False, struct.pack("<i", sequence), None),),
    )


def _list(manifests: list[ManifestFile], codec: str = "deflate") -> bytes:
    writer = _list_writer(2, codec)
    writer.add_all(manifests)
    return writer.to_bytes()


def test_reader_reuses_a_shared_tail_and_reads_exactly_what_is_there() -> None:
    # A history of fast appends ([new, *parent]), then a list whose middle changed, then
    # one sharing nothing: every read equals a fresh read.
    history = [_manifest(f"s3://b/m{i}.avro", i) for i in range(400)]
    lists = [_list(list(reversed(history[: n + 1]))) for n in (0, 1, 2, 150, 399)]
    changed = [history[399], _manifest("s3://b/rewritten.avro", 500, 7), *reversed(history[:300])]
    lists += [_list(changed), _list([_manifest("s3://b/other.avro", 1)]), _list([]), lists[2]]
    reader = ManifestListReader()
    for data in lists:
        assert reader.read(data) == read_manifest_list(data) == _read_with_fastavro(data)


def test_a_rewritten_list_reuses_the_bytes_it_was_read_from() -> None:
    parent = [_manifest(f"s3://b/m{i}.avro", i) for i in range(50)]
    read = read_manifest_list(_list(parent))
    child = _list([_manifest("s3://b/new.avro", 60), *read])
    # The child's records after the new one are the parent's, byte for byte ...
    parent_body = open_container(_list(parent), "parent").body
    assert open_container(child, "child").body.endswith(parent_body)
    # ... and equal to encoding them afresh.
    fresh = _list([_manifest("s3://b/new.avro", 60), *parent])
    assert open_container(child, "child").body == open_container(fresh, "fresh").body
    # A manifest changed by replace() is encoded again, not copied.
    changed = read[0].replace(manifest_length=1)
    assert read_manifest_list(_list([changed]))[0].manifest_length == 1


def test_float_partition_summaries_and_nan_flags_round_trip() -> None:
    nan = struct.pack("<d", math.nan)
    m = _manifest("s3://b/f.avro", 3).replace(
        partitions=(PartitionFieldSummary(True, True, nan, struct.pack("<d", -0.0)),)
    )
    assert read_manifest_list(_list([m])) == [m]
    assert (
        json.loads(fastavro.reader(io.BytesIO(_list([m]))).metadata["avro.schema"])["name"]
        == "manifest_file"
    )


def test_uuid_and_fixed_partition_values_round_trip() -> None:
    writer = ManifestWriter(
        format_version=2, spec=ALL_TYPES_SPEC, schema=ALL_TYPES_SCHEMA, snapshot_id=5
    )
    values = list(ALL_TYPES_VALUES)
    values[11] = uuid.UUID(int=2**128 - 1)
    f = data_file("s3://b/u.parquet", tuple(values), spec_id=ALL_TYPES_SPEC.spec_id)
    writer.add(f)
    assert [e.data_file for e in read_manifest(writer.to_bytes())] == [f]
    assert FileContent.DATA is read_manifest(writer.to_bytes())[0].data_file.content
