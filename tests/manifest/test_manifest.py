"""Manifest writing and reading: round trips, header, inheritance, summaries, errors."""

from __future__ import annotations

import io
import json
import re
import struct
from typing import Any

import fastavro
import pytest

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.manifest import (
    UNASSIGNED_SEQ,
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestWriter,
    PartitionFieldSummary,
    manifest_entry_schema,
    read_manifest,
    read_manifest_metadata,
    write_manifest,
)
from icewright.spec.partitioning import PartitionField, PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.transforms import parse_transform
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

from .samples import (
    ALL_TYPES_SCHEMA,
    ALL_TYPES_SPEC,
    ALL_TYPES_VALUES,
    SCHEMA,
    SPEC,
    UNPARTITIONED,
    data_file,
)

SNAPSHOT = 7001


def avro_header(data: bytes) -> dict[str, str]:
    return dict(fastavro.reader(io.BytesIO(data)).metadata)


def raw_records(data: bytes) -> list[dict[str, Any]]:
    return [r for r in fastavro.reader(io.BytesIO(data)) if isinstance(r, dict)]


def partitioned_files(spec_id: int = SPEC.spec_id) -> list[DataFile]:
    return [
        data_file("s3://b/t/data/a.parquet", ("eu", 19000, 3, "abcd"), spec_id=spec_id),
        data_file("s3://b/t/data/b.parquet", (None, 19001, 15, None), spec_id=spec_id, records=5),
        data_file("s3://b/t/data/c.parquet", ("us", 18000, 0, "zz"), spec_id=spec_id, records=7),
        data_file("s3://b/t/data/d.parquet", ("ap", 20000, 9, "aaaa"), spec_id=spec_id, records=3),
    ]


def write_mixed(version: int, spec: PartitionSpec, files: list[DataFile]) -> tuple[bytes, Any]:
    """ADDED, ADDED with an explicit data sequence number, EXISTING and DELETED entries."""
    w = ManifestWriter(format_version=version, spec=spec, schema=SCHEMA, snapshot_id=SNAPSHOT)
    w.add(files[0])
    w.add(files[1], data_sequence_number=3 if version > 1 else None)
    w.existing(files[2], snapshot_id=5000, data_sequence_number=2, file_sequence_number=2)
    w.delete(files[3], data_sequence_number=4, file_sequence_number=5)
    return w.finish("s3://b/t/metadata/m0.avro")


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("partitioned", [True, False])
def test_round_trip_with_all_metrics(version: int, partitioned: bool) -> None:
    spec = SPEC if partitioned else UNPARTITIONED
    files = partitioned_files()
    if not partitioned:
        files = [f.replace(partition=(), spec_id=UNPARTITIONED.spec_id) for f in files]
    data, manifest = write_mixed(version, spec, files)

    assert manifest.manifest_path == "s3://b/t/metadata/m0.avro"
    assert manifest.manifest_length == len(data)
    assert manifest.partition_spec_id == spec.spec_id
    assert manifest.added_snapshot_id == SNAPSHOT
    assert manifest.sequence_number == UNASSIGNED_SEQ
    assert (manifest.added_files_count, manifest.added_rows_count) == (2, 15)
    assert (manifest.existing_files_count, manifest.existing_rows_count) == (1, 7)
    assert (manifest.deleted_files_count, manifest.deleted_rows_count) == (1, 3)
    # The lowest explicit data sequence number of a live entry (the DELETED one's 4 is not);
    # v1 stores none.
    assert manifest.min_sequence_number == (UNASSIGNED_SEQ if version == 1 else 2)
    assert manifest.partitions is not None
    assert len(manifest.partitions) == len(spec.fields)

    committed = manifest.replace(sequence_number=9, min_sequence_number=2)
    entries = read_manifest(data, committed)
    if version == 1:
        # v1 stores no sequence numbers: a v1 manifest list gives the manifest 0.
        entries = read_manifest(data, manifest.replace(sequence_number=0, min_sequence_number=0))
        expected_seqs = [(0, 0)] * 4
    else:
        expected_seqs = [(9, 9), (3, 9), (2, 2), (4, 5)]
    assert [e.status for e in entries] == [
        EntryStatus.ADDED,
        EntryStatus.ADDED,
        EntryStatus.EXISTING,
        EntryStatus.DELETED,
    ]
    assert [e.snapshot_id for e in entries] == [SNAPSHOT, SNAPSHOT, 5000, SNAPSHOT]
    assert [(e.sequence_number, e.file_sequence_number) for e in entries] == expected_seqs
    assert [e.data_file for e in entries] == files


def test_v3_fields_round_trip() -> None:
    files = partitioned_files()
    deletes = data_file(
        "s3://b/t/data/dv.puffin",
        ("eu", 19000, 3, "abcd"),
        content=FileContent.POSITION_DELETES,
        referenced_data_file=files[0].file_path,
        content_offset=4,
        content_size_in_bytes=40,
        sort_order_id=None,
    )
    w = ManifestWriter(
        format_version=3,
        spec=SPEC,
        schema=SCHEMA,
        snapshot_id=SNAPSHOT,
        content=ManifestContent.DELETES,
    )
    w.add(deletes)
    data, manifest = w.finish("m.avro")
    assert avro_header(data)["content"] == "deletes"
    (entry,) = read_manifest(data, manifest.replace(sequence_number=4, min_sequence_number=4))
    assert entry.data_file == deletes
    assert manifest.content is ManifestContent.DELETES


def test_header_metadata_and_embedded_schema() -> None:
    data, _ = write_mixed(2, SPEC, partitioned_files())
    header = avro_header(data)
    for key in ("schema", "schema-id", "partition-spec", "partition-spec-id", "format-version"):
        assert key in header
    assert json.loads(header["schema"]) == SCHEMA.to_json()
    assert header["schema-id"] == "3"
    assert json.loads(header["partition-spec"]) == [
        {"source-id": 4, "field-id": 1000, "name": "region", "transform": "identity"},
        {"source-id": 3, "field-id": 1001, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "field-id": 1002, "name": "id_bucket", "transform": "bucket[16]"},
        {"source-id": 2, "field-id": 1003, "name": "name_trunc", "transform": "truncate[4]"},
    ]
    assert header["partition-spec-id"] == "2"
    assert header["format-version"] == "2"
    assert header["content"] == "data"

    avro_schema = json.loads(header["avro.schema"])
    assert avro_schema == manifest_entry_schema(2, SPEC.partition_type(SCHEMA))
    assert [(f["name"], f["field-id"]) for f in avro_schema["fields"]] == [
        ("status", 0),
        ("snapshot_id", 1),
        ("sequence_number", 3),
        ("file_sequence_number", 4),
        ("data_file", 2),
    ]
    data_file_record = avro_schema["fields"][4]["type"]
    partition = next(f for f in data_file_record["fields"] if f["name"] == "partition")
    assert partition["field-id"] == 102
    assert [(f["name"], f["field-id"]) for f in partition["type"]["fields"]] == [
        ("region", 1000),
        ("ts_day", 1001),
        ("id_bucket", 1002),
        ("name_trunc", 1003),
    ]

    v1 = avro_header(write_mixed(1, SPEC, partitioned_files())[0])
    assert v1["format-version"] == "1"
    assert "content" not in v1  # the content key exists from v2 on


def test_read_manifest_metadata() -> None:
    data, _ = write_mixed(2, SPEC, partitioned_files())
    meta = read_manifest_metadata(data)
    assert meta.schema == SCHEMA
    assert meta.spec == SPEC
    assert meta.format_version == 2
    assert meta.content is ManifestContent.DATA
    schema, spec, version, content = meta
    assert (schema, spec, version, content) == tuple(meta)


def test_stored_form_follows_inheritance_rules() -> None:
    data, _ = write_mixed(2, SPEC, partitioned_files())
    stored = [
        (r["status"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"])
        for r in raw_records(data)
    ]
    assert stored == [
        (1, SNAPSHOT, None, None),  # ADDED: inherited at read
        (1, SNAPSHOT, 3, None),  # explicit data sequence number kept; file seq inherited
        (0, 5000, 2, 2),  # EXISTING keeps both
        (2, SNAPSHOT, 4, 5),  # DELETED keeps both, carries the deleting snapshot
    ]
    v1 = raw_records(write_mixed(1, SPEC, partitioned_files())[0])
    assert all("sequence_number" not in r for r in v1)
    assert all(r["data_file"]["block_size_in_bytes"] == 64 * 1024 * 1024 for r in v1)
    assert all("content" not in r["data_file"] for r in v1)


def test_inheritance_of_null_snapshot_id_and_sequence_numbers() -> None:
    # A manifest with every inheritable field null, as another writer may store it.
    schema = manifest_entry_schema(2, UNPARTITIONED.partition_type(SCHEMA))
    base = {
        "content": 0,
        "file_format": "PARQUET",
        "partition": {},
        "record_count": 2,
        "file_size_in_bytes": 10,
    }
    records = [
        {
            "status": s,
            "snapshot_id": None,
            "sequence_number": None,
            "file_sequence_number": None,
            "data_file": {**base, "file_path": f"f{s}"},
        }
        for s in (1, 0, 2)
    ]
    buf = io.BytesIO()
    fastavro.writer(buf, schema, records, metadata={"format-version": "2", "content": "data"})
    data = buf.getvalue()
    _, manifest = write_manifest(
        format_version=2,
        spec=UNPARTITIONED,
        schema=SCHEMA,
        snapshot_id=42,
        entries=[],
        manifest_path="m.avro",
    )
    manifest = manifest.replace(sequence_number=6, min_sequence_number=6, partition_spec_id=0)
    added, existing, deleted = read_manifest(data, manifest)
    assert [e.snapshot_id for e in (added, existing, deleted)] == [42, 42, 42]
    assert (added.sequence_number, added.file_sequence_number) == (6, 6)
    # Only ADDED entries inherit sequence numbers.
    assert (existing.sequence_number, existing.file_sequence_number) == (None, None)
    assert (deleted.sequence_number, deleted.file_sequence_number) == (None, None)
    # Sequence number 0 (a manifest from a v1 list) is given to every entry.
    zero = read_manifest(data, manifest.replace(sequence_number=0))
    assert all((e.sequence_number, e.file_sequence_number) == (0, 0) for e in zero)
    # Without the manifest list record nothing can be inherited.
    raw = read_manifest(data)
    assert [(e.snapshot_id, e.sequence_number) for e in raw] == [(None, None)] * 3
    # An uncommitted manifest has no sequence number to give yet.
    uncommitted = read_manifest(data, manifest.replace(sequence_number=UNASSIGNED_SEQ))
    assert uncommitted[0].sequence_number is None


def test_v1_manifest_reads_sequence_number_zero_without_a_manifest_list() -> None:
    data, _ = write_mixed(1, SPEC, partitioned_files())
    entries = read_manifest(data)
    assert {(e.sequence_number, e.file_sequence_number) for e in entries} == {(0, 0)}
    assert {e.data_file.spec_id for e in entries} == {SPEC.spec_id}  # from the header


def test_first_row_id_inheritance() -> None:
    files = [data_file(f"f{i}", ("eu", 1, 1, "a"), records=n) for i, n in enumerate((10, 5, 8, 3))]
    w = ManifestWriter(format_version=3, spec=SPEC, schema=SCHEMA, snapshot_id=SNAPSHOT)
    w.add(files[0].replace(first_row_id=77))  # new data files never keep a first_row_id
    w.delete(files[1], data_sequence_number=1, file_sequence_number=1)
    w.existing(
        files[2].replace(first_row_id=50),
        snapshot_id=1,
        data_sequence_number=1,
        file_sequence_number=1,
    )
    w.add(files[3])
    data, manifest = w.finish("m.avro")
    assert [r["data_file"]["first_row_id"] for r in raw_records(data)] == [None, None, 50, None]
    entries = read_manifest(data, manifest.replace(sequence_number=2, first_row_id=100))
    # Deleted entries take no row ids; assigned ids advance by record_count.
    assert [e.data_file.first_row_id for e in entries] == [100, None, 50, 110]
    no_ids = read_manifest(data, manifest.replace(sequence_number=2))
    assert [e.data_file.first_row_id for e in no_ids] == [None, None, 50, None]


def test_all_appendix_a_types_round_trip() -> None:
    df = data_file("f.parquet", ALL_TYPES_VALUES, spec_id=ALL_TYPES_SPEC.spec_id)
    nulls = df.replace(file_path="g.parquet", partition=(None,) * len(ALL_TYPES_VALUES))
    data, manifest = write_manifest(
        format_version=2,
        spec=ALL_TYPES_SPEC,
        schema=ALL_TYPES_SCHEMA,
        snapshot_id=1,
        entries=[
            ManifestEntry(status=EntryStatus.ADDED, data_file=df),
            ManifestEntry(status=EntryStatus.ADDED, data_file=nulls),
        ],
        manifest_path="m.avro",
    )
    got = read_manifest(data, manifest.replace(sequence_number=1))
    assert got[0].data_file.partition == ALL_TYPES_VALUES
    assert [type(v) for v in got[0].data_file.partition] == [type(v) for v in ALL_TYPES_VALUES]
    assert got[1].data_file.partition == (None,) * len(ALL_TYPES_VALUES)


def test_partition_summaries_with_nan_null_and_signed_zero() -> None:
    schema = Schema(
        NestedField(1, "x", DoubleType()),
        NestedField(2, "s", StringType()),
        NestedField(3, "n", LongType()),
    )
    spec = PartitionSpec(
        *(
            PartitionField(i, 999 + i, parse_transform("identity"), name)
            for i, name in ((1, "x"), (2, "s"), (3, "n"))
        )
    )
    values = [(0.0, "b", None), (float("nan"), None, None), (-0.0, "ab", None), (2.5, "c", None)]
    w = ManifestWriter(format_version=2, spec=spec, schema=schema, snapshot_id=1)
    for i, partition in enumerate(values):
        w.add(
            DataFile(
                file_path=f"f{i}",
                file_format=FileFormat.PARQUET,
                record_count=1,
                file_size_in_bytes=1,
                partition=partition,
            )
        )
    _, manifest = w.finish("m.avro")
    assert manifest.partitions == (
        # Appendix D: doubles are 8-byte little-endian; -0.0 bounds below +0.0.
        PartitionFieldSummary(
            contains_null=False,
            contains_nan=True,
            lower_bound=struct.pack("<d", -0.0),
            upper_bound=struct.pack("<d", 2.5),
        ),
        PartitionFieldSummary(
            contains_null=True, contains_nan=False, lower_bound=b"ab", upper_bound=b"c"
        ),
        PartitionFieldSummary(
            contains_null=True, contains_nan=False, lower_bound=None, upper_bound=None
        ),
    )
    # A deleted entry's partition also counts: the summary covers every entry.
    w2 = ManifestWriter(format_version=2, spec=spec, schema=schema, snapshot_id=1)
    w2.delete(
        DataFile(
            file_path="f",
            file_format=FileFormat.PARQUET,
            record_count=1,
            file_size_in_bytes=1,
            partition=(9.0, "z", 4),
        ),
        data_sequence_number=1,
        file_sequence_number=1,
    )
    summaries = w2.manifest_file("m", 1).partitions
    assert summaries is not None
    assert summaries[2].lower_bound == struct.pack("<q", 4)


@pytest.mark.parametrize("junk", [b"", b"not avro at all", b"Obj\x01\x00\x00\x00"])
def test_corrupt_bytes_raise_invalid_metadata_with_the_path(junk: bytes) -> None:
    with pytest.raises(InvalidMetadata, match=re.escape("s3://b/m.avro")):
        read_manifest(junk, path="s3://b/m.avro")
    with pytest.raises(InvalidMetadata, match=re.escape("s3://b/m.avro")):
        read_manifest_metadata(junk, path="s3://b/m.avro")


def test_truncated_manifest_raises_invalid_metadata() -> None:
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    with pytest.raises(InvalidMetadata, match=re.escape("s3://b/t/metadata/m0.avro")):
        read_manifest(data[: len(data) - 40], manifest)


def test_missing_header_entries_raise_invalid_metadata() -> None:
    buf = io.BytesIO()
    fastavro.writer(buf, manifest_entry_schema(2, UNPARTITIONED.partition_type(SCHEMA)), [])
    with pytest.raises(InvalidMetadata, match="no 'schema' entry"):
        read_manifest_metadata(buf.getvalue())


def test_writer_rejects_bad_entries_and_changes_nothing() -> None:
    w = ManifestWriter(format_version=2, spec=SPEC, schema=SCHEMA, snapshot_id=1)
    good = partitioned_files()[0]
    with pytest.raises(ValidationError, match="3 values but spec 2 has 4 fields"):
        w.add(good.replace(partition=("eu", 1, 2)))
    with pytest.raises(ValidationError, match="partition field 'ts_day'"):
        w.add(good.replace(partition=("eu", "2024-01-01", 2, "x")))
    with pytest.raises(ValidationError, match="spec_id 0"):
        w.add(good.replace(spec_id=0))
    with pytest.raises(ValidationError, match="cannot hold a position_deletes file"):
        w.add(good.replace(content=FileContent.POSITION_DELETES))
    with pytest.raises(ValidationError, match="must carry its data sequence number"):
        w.add_entry(ManifestEntry(status=EntryStatus.EXISTING, snapshot_id=1, data_file=good))
    with pytest.raises(ValidationError, match="must keep the id of the snapshot"):
        w.add_entry(ManifestEntry(status=EntryStatus.EXISTING, sequence_number=1, data_file=good))
    with pytest.raises(ValidationError, match="first_row_id exist only in format version 3"):
        w.add(good.replace(first_row_id=5))
    assert w.entries == ()
    data, manifest = w.finish("m.avro")
    assert read_manifest(data, manifest) == []
    assert manifest.added_files_count == 0


def test_writer_rejects_bad_configuration() -> None:
    with pytest.raises(ValidationError, match="v1 manifest can only hold data files"):
        ManifestWriter(
            format_version=1,
            spec=SPEC,
            schema=SCHEMA,
            snapshot_id=1,
            content=ManifestContent.DELETES,
        )
    with pytest.raises(UnsupportedFormatVersion):
        ManifestWriter(format_version=5, spec=SPEC, schema=SCHEMA, snapshot_id=1)


def test_reads_named_type_references_and_logical_types_of_other_writers() -> None:
    # The reference implementation defines a repeated type once and then refers to it by
    # name; dates and decimals carry logical types fastavro would otherwise convert.
    schema = manifest_entry_schema(2, UNPARTITIONED.partition_type(SCHEMA))
    data_file_record = schema["fields"][4]["type"]
    partition = next(f for f in data_file_record["fields"] if f["name"] == "partition")
    decimal = {
        "type": "fixed",
        "name": "decimal_9_2",
        "size": 4,
        "logicalType": "decimal",
        "precision": 9,
        "scale": 2,
    }
    partition["type"]["fields"] = [
        {"name": "a", "type": ["null", decimal], "default": None, "field-id": 1000},
        {"name": "b", "type": ["null", "decimal_9_2"], "default": None, "field-id": 1001},
        {
            "name": "d",
            "type": ["null", {"type": "int", "logicalType": "date"}],
            "default": None,
            "field-id": 1002,
        },
    ]
    record = {
        "status": 1,
        "snapshot_id": 5,
        "sequence_number": None,
        "file_sequence_number": None,
        "data_file": {
            "content": 0,
            "file_path": "f",
            "file_format": "parquet",
            "record_count": 1,
            "file_size_in_bytes": 1,
            "partition": {
                "a": (12345).to_bytes(4, "big", signed=True),
                "b": (-5).to_bytes(4, "big", signed=True),
                "d": -719162,
            },
        },
    }
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [record], metadata={"format-version": "2"})
    (entry,) = read_manifest(buf.getvalue())
    from decimal import Decimal

    assert entry.data_file.partition == (Decimal("123.45"), Decimal("-0.05"), -719162)
    assert entry.data_file.file_format.value == "PARQUET"  # lower case on disk is accepted
