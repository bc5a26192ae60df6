"""Manifest list writing and reading: sequence numbers, row ids, header, versions."""

from __future__ import annotations

import io
import re

import fastavro
import pytest

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.manifest import (
    UNASSIGNED_SEQ,
    ManifestContent,
    ManifestFile,
    ManifestListWriter,
    PartitionFieldSummary,
    read_manifest_list,
    write_manifest_list,
)
from icewright.manifest.avro_codec import open_container
from icewright.manifest.avro_encoder import BLOCK_BYTES

SNAPSHOT = 900


def manifest(path: str, **changes: object) -> ManifestFile:
    base = ManifestFile(
        manifest_path=path,
        manifest_length=1234,
        partition_spec_id=1,
        added_snapshot_id=SNAPSHOT,
        added_files_count=2,
        existing_files_count=1,
        deleted_files_count=0,
        added_rows_count=20,
        existing_rows_count=5,
        deleted_rows_count=0,
        partitions=(
            PartitionFieldSummary(True, False, b"\x01\x00\x00\x00", b"\x09\x00\x00\x00"),
            PartitionFieldSummary(False, None, None, None),
        ),
        key_metadata=b"k",
    )
    return base.replace(**changes)


def header(data: bytes) -> dict[str, str]:
    return dict(fastavro.reader(io.BytesIO(data)).metadata)


def test_v2_assigns_the_snapshot_sequence_number_to_new_manifests() -> None:
    new = manifest("new.avro")  # UNASSIGNED sequence numbers: written by this snapshot
    explicit_min = manifest("mixed.avro", min_sequence_number=3)
    old = manifest(
        "old.avro",
        added_snapshot_id=800,
        sequence_number=4,
        min_sequence_number=2,
        content=ManifestContent.DELETES,
    )
    data = write_manifest_list(
        format_version=2,
        snapshot_id=SNAPSHOT,
        parent_snapshot_id=800,
        sequence_number=5,
        manifests=[new, explicit_min, old],
    )
    got = read_manifest_list(data)
    assert got == [
        new.replace(sequence_number=5, min_sequence_number=5),
        explicit_min.replace(sequence_number=5),
        old,
    ]
    raw = [r for r in fastavro.reader(io.BytesIO(data)) if isinstance(r, dict)]
    assert [(r["sequence_number"], r["min_sequence_number"], r["content"]) for r in raw] == [
        (5, 5, 0),
        (5, 3, 0),
        (4, 2, 1),
    ]


def test_unassigned_manifest_of_another_snapshot_is_rejected() -> None:
    with pytest.raises(ValidationError, match="added by snapshot 1"):
        write_manifest_list(
            format_version=2,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=None,
            sequence_number=5,
            manifests=[manifest("m.avro", added_snapshot_id=1)],
        )


def test_v2_requires_counts() -> None:
    with pytest.raises(ValidationError, match="added_rows_count must be known"):
        write_manifest_list(
            format_version=2,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=None,
            sequence_number=5,
            manifests=[manifest("m.avro", added_rows_count=None)],
        )


def test_header_metadata() -> None:
    v2 = header(
        write_manifest_list(
            format_version=2,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=None,
            sequence_number=5,
            manifests=[],
        )
    )
    assert v2["snapshot-id"] == "900"
    assert v2["parent-snapshot-id"] == "null"
    assert v2["sequence-number"] == "5"
    assert v2["format-version"] == "2"
    v1 = header(
        write_manifest_list(
            format_version=1,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=899,
            sequence_number=0,
            manifests=[],
        )
    )
    assert v1["parent-snapshot-id"] == "899"
    assert v1["format-version"] == "1"
    assert "sequence-number" not in v1  # v1 has no sequence numbers


def test_v1_round_trip_reads_sequence_zero_and_data_content() -> None:
    m = manifest("m.avro", added_files_count=None, deleted_rows_count=None)
    data = write_manifest_list(
        format_version=1,
        snapshot_id=SNAPSHOT,
        parent_snapshot_id=None,
        sequence_number=0,
        manifests=[m],
    )
    raw = next(iter(fastavro.reader(io.BytesIO(data))))
    assert isinstance(raw, dict)
    assert "sequence_number" not in raw and "content" not in raw
    (got,) = read_manifest_list(data)
    assert got == m.replace(sequence_number=0, min_sequence_number=0)
    assert got.content is ManifestContent.DATA
    with pytest.raises(ValidationError, match="only list data manifests"):
        write_manifest_list(
            format_version=1,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=None,
            sequence_number=0,
            manifests=[m.replace(content=ManifestContent.DELETES)],
        )


def test_v3_assigns_first_row_ids_to_new_data_manifests() -> None:
    writer = ManifestListWriter(
        format_version=3,
        snapshot_id=SNAPSHOT,
        parent_snapshot_id=1,
        sequence_number=8,
        first_row_id=1000,
    )
    writer.add_all(
        [
            manifest("a.avro"),  # 20 added + 5 existing rows
            manifest(
                "kept.avro",
                added_snapshot_id=1,
                sequence_number=2,
                min_sequence_number=2,
                first_row_id=10,
            ),
            manifest("deletes.avro", content=ManifestContent.DELETES),
            manifest("b.avro", added_rows_count=7, existing_rows_count=0),
        ]
    )
    assert [m.first_row_id for m in writer.manifests] == [1000, 10, None, 1025]
    assert writer.next_row_id == 1032
    data = writer.to_bytes()
    assert header(data)["first-row-id"] == "1000"
    assert read_manifest_list(data) == list(writer.manifests)
    with pytest.raises(ValidationError, match="first_row_id"):
        ManifestListWriter(
            format_version=3, snapshot_id=1, parent_snapshot_id=None, sequence_number=1
        )


def test_unknown_version_and_corrupt_bytes() -> None:
    with pytest.raises(UnsupportedFormatVersion):
        ManifestListWriter(
            format_version=4, snapshot_id=1, parent_snapshot_id=None, sequence_number=1
        )
    with pytest.raises(InvalidMetadata, match=re.escape("s3://b/snap-1.avro")):
        read_manifest_list(b"Obj\x01garbage", path="s3://b/snap-1.avro")
    good = write_manifest_list(
        format_version=2,
        snapshot_id=SNAPSHOT,
        parent_snapshot_id=None,
        sequence_number=5,
        manifests=[manifest("m.avro")],
    )
    with pytest.raises(InvalidMetadata, match="manifest list"):
        read_manifest_list(good[:-30])


def test_field_ids_not_names_identify_fields() -> None:
    # Early writers named field 504 "added_data_files_count"; readers match by id.
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "int", "field-id": 502},
            {"name": "added_snapshot_id", "type": "long", "field-id": 503},
            {
                "name": "added_data_files_count",
                "type": ["null", "int"],
                "default": None,
                "field-id": 504,
            },
        ],
    }
    buf = io.BytesIO()
    record = {
        "manifest_path": "m",
        "manifest_length": 3,
        "partition_spec_id": 0,
        "added_snapshot_id": 4,
        "added_data_files_count": 6,
    }
    fastavro.writer(buf, schema, [record])
    (got,) = read_manifest_list(buf.getvalue())
    assert got.added_files_count == 6
    assert got.sequence_number == 0
    assert UNASSIGNED_SEQ == -1


def _list(version: int, manifests: list[ManifestFile], snapshot_id: int, **kw: object) -> bytes:
    return write_manifest_list(
        format_version=version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=None,
        sequence_number=snapshot_id,
        manifests=manifests,
        **kw,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("codec", ["deflate", "null"])
def test_a_parent_list_is_added_whole(version: int, codec: str) -> None:
    """A fast append's list is its new manifests and its parent's list: the parent's
    records are copied (their file sequence numbers and counts are already set), and
    every reader sees the same manifests as when they are decoded and encoded again."""
    old = [
        manifest(
            f"old-{n}.avro",
            added_snapshot_id=7,
            sequence_number=n,
            min_sequence_number=n,
        )
        for n in range(1, 700)  # more than one block of records
    ]
    parent = _list(version, old, 7)

    def child() -> ManifestListWriter:
        w = ManifestListWriter(
            format_version=version,
            snapshot_id=SNAPSHOT,
            parent_snapshot_id=7,
            sequence_number=800,
            codec=codec,
        )
        w.add(manifest("new.avro", sequence_number=UNASSIGNED_SEQ))
        return w

    writer = child()
    writer.add_list(parent, "parent.avro")
    assert not isinstance(writer._manifests[-1], ManifestFile)  # copied, not decoded
    data = writer.to_bytes()
    decoded = child()
    decoded.add_all(read_manifest_list(parent))
    assert read_manifest_list(data) == read_manifest_list(decoded.to_bytes())
    listed = [m.manifest_path for m in writer.manifests]
    assert [m.manifest_path for m in read_manifest_list(data)] == listed
    if version == 2:
        assert read_manifest_list(data) == list(writer.manifests)
    # fastavro, an independent reader, sees 700 records in blocks that frame them right.
    records = list(fastavro.reader(io.BytesIO(data)))
    assert [r["manifest_path"] for r in records] == ["new.avro", *(m.manifest_path for m in old)]
    if version == 2:
        assert records[0]["sequence_number"] == 800
        assert [r["sequence_number"] for r in records[1:]] == list(range(1, 700))


def test_a_list_of_another_schema_is_decoded_not_copied() -> None:
    """A v1 parent of a v2 list (an upgraded table), and a list another writer wrote with
    its own schema text, are read and written anew."""
    v1 = _list(1, [manifest("v1.avro", added_snapshot_id=7)], 7)
    writer = ManifestListWriter(
        format_version=2, snapshot_id=SNAPSHOT, parent_snapshot_id=7, sequence_number=3
    )
    writer.add_list(v1)
    (listed,) = read_manifest_list(writer.to_bytes())
    assert listed.manifest_path == "v1.avro"
    assert listed.sequence_number == 0  # v1 manifests read with sequence number 0

    v2 = _list(2, [manifest("other.avro", added_snapshot_id=7, sequence_number=2)], 7)
    records = list(fastavro.reader(io.BytesIO(v2)))
    schema = fastavro.reader(io.BytesIO(v2)).writer_schema
    schema["doc"] = "written by another engine"  # same records, other schema text
    other = io.BytesIO()
    fastavro.writer(other, schema, records, metadata=header(v2) | {"format-version": "2"})
    writer = ManifestListWriter(
        format_version=2, snapshot_id=SNAPSHOT, parent_snapshot_id=7, sequence_number=3
    )
    writer.add_list(other.getvalue())
    assert all(isinstance(m, ManifestFile) for m in writer._manifests)  # decoded
    assert read_manifest_list(writer.to_bytes()) == read_manifest_list(v2)


def test_a_long_chain_of_appends_copies_its_parents_blocks_as_stored() -> None:
    """Each commit lists its new manifest and its parent's list: the parent's blocks of
    half BLOCK_BYTES or more are written as stored (not compressed again), the smaller
    ones gather the new records until they are that big, and every reader sees every
    manifest, newest first."""
    where = "s3://bucket/warehouse/db.db/events/metadata/"  # paths as long as real ones
    data = _list(2, [manifest(f"{where}m-0.avro", added_snapshot_id=1, sequence_number=1)], 1)
    for n in range(1, 400):
        writer = ManifestListWriter(
            format_version=2, snapshot_id=n + 1, parent_snapshot_id=n, sequence_number=n + 1
        )
        writer.add(manifest(f"{where}m-{n}.avro", added_snapshot_id=n + 1, sequence_number=-1))
        writer.add_list(data)
        parent, data = data, writer.to_bytes()
    expected = [f"{where}m-{n}.avro" for n in reversed(range(400))]
    assert [m.manifest_path for m in read_manifest_list(data)] == expected
    assert [r["manifest_path"] for r in fastavro.reader(io.BytesIO(data))] == expected
    assert [m.sequence_number for m in read_manifest_list(data)] == list(range(400, 0, -1))

    blocks = open_container(data, "list")
    sizes = [b - a for a, b in zip((0, *blocks.block_ends), blocks.block_ends, strict=False)]
    assert len(sizes) > 4  # 400 records of ~100 bytes
    assert all(BLOCK_BYTES // 2 <= size < BLOCK_BYTES + 1000 for size in sizes[1:])
    assert sizes[0] < BLOCK_BYTES  # the newest records, still gathering
    # the blocks behind the first are the parent's, byte for byte as it stored them
    before = open_container(parent, "parent")
    copied = [data[a:b] for a, b in blocks.stored_blocks[1:]]
    assert copied == [parent[a:b] for a, b in before.stored_blocks[-len(copied) :]]
