"""Snapshots, summaries, references, history logs and statistics files."""

from __future__ import annotations

import dataclasses

import pytest

from icewright.errors import InvalidMetadata, ValidationError
from icewright.spec.documents import (
    FrozenMap,
    StringMap,
)
from icewright.spec.snapshots import (
    MAIN_BRANCH,
    MetadataLogEntry,
    Operation,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
    Summary,
)
from icewright.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile

# The snapshot example of Appendix C ("Table Metadata and Snapshots").
SPEC_SNAPSHOT = {
    "snapshot-id": 3051729675574597004,
    "timestamp-ms": 1515100955770,
    "summary": {"operation": "append"},
    "manifest-list": "s3://b/wh/.../s1.avro",
    "schema-id": 0,
}


# --- summary ----------------------------------------------------------------


def test_summary_is_an_immutable_string_mapping_with_operation() -> None:
    s = Summary(Operation.APPEND, {"added-records": "3", "added-data-files": "1"})
    assert s.operation is Operation.APPEND
    assert s["operation"] == "append"
    assert dict(s) == {"operation": "append", "added-records": "3", "added-data-files": "1"}
    assert s.properties() == {"added-records": "3", "added-data-files": "1"}
    assert next(iter(s.to_json())) == "operation"
    with pytest.raises(TypeError):
        s["x"] = "y"  # type: ignore[index]
    assert hash(s) == hash(Summary("append", {"added-data-files": "1", "added-records": "3"}))


@pytest.mark.parametrize("op", ["append", "replace", "overwrite", "delete"])
def test_summary_accepts_the_four_spec_operations(op: str) -> None:
    assert Summary.from_json({"operation": op}).operation.value == op  # type: ignore[union-attr]


def test_summary_rejects_unknown_operation_and_non_string_values() -> None:
    with pytest.raises(ValidationError, match="append, replace, overwrite, delete"):
        Summary("merge")
    with pytest.raises(InvalidMetadata, match="unknown snapshot operation"):
        Summary.from_json({"operation": "merge"})
    with pytest.raises(InvalidMetadata, match="added-records"):
        Summary.from_json({"operation": "append", "added-records": 3})
    with pytest.raises(ValidationError, match="conflicts"):
        Summary("append", {"operation": "delete"})


def test_summary_without_operation_reads_as_overwrite_and_empty_as_none() -> None:
    # Java's SnapshotParser: a non-empty summary without operation is "overwrite".
    summary = Summary.from_json({"added-records": "1"})
    assert summary is not None
    assert summary.operation is Operation.OVERWRITE
    assert Summary.from_json({}) is None


# --- snapshot ---------------------------------------------------------------


def test_spec_example_snapshot_round_trips_for_v2_with_sequence_number() -> None:
    snap = Snapshot.from_json({**SPEC_SNAPSHOT, "sequence-number": 7})
    assert snap.snapshot_id == 3051729675574597004
    assert snap.sequence_number == 7
    assert snap.operation is Operation.APPEND
    assert snap.schema_id == 0
    assert snap.to_json(2) == {**SPEC_SNAPSHOT, "sequence-number": 7}


def test_v1_snapshot_defaults_sequence_number_to_zero_and_writes_none() -> None:
    snap = Snapshot.from_json(SPEC_SNAPSHOT)
    assert snap.sequence_number == 0  # Appendix E: "must default to 0"
    assert snap.to_json(1) == SPEC_SNAPSHOT
    assert "sequence-number" not in snap.to_json(1)


def test_v1_snapshot_with_inline_manifests_and_no_summary_is_kept() -> None:
    obj = {"snapshot-id": 5, "timestamp-ms": 10, "manifests": ["a.avro", "b.avro"]}
    snap = Snapshot.from_json(obj)
    assert snap.manifests == ("a.avro", "b.avro")
    assert snap.manifest_list is None
    assert snap.summary is None
    assert snap.operation is None
    assert snap.to_json(1) == obj


def test_v3_snapshot_keeps_row_lineage_and_key_id() -> None:
    obj = {
        "sequence-number": 2,
        "snapshot-id": 9,
        "parent-snapshot-id": 8,
        "timestamp-ms": 100,
        "summary": {"operation": "append"},
        "manifest-list": "s3://x/snap.avro",
        "schema-id": 0,
        "first-row-id": 100,
        "added-rows": 50,
        "key-id": "k1",
    }
    snap = Snapshot.from_json(obj)
    assert (snap.first_row_id, snap.added_rows, snap.key_id) == (100, 50, "k1")
    assert snap.to_json(3) == obj


def test_manifest_list_wins_over_inline_manifests_like_java() -> None:
    # Spec: "manifests ... Must be omitted if manifest-list is present". A reader
    # that finds both uses the manifest list (as Java's SnapshotParser does); a
    # writer may not produce both.
    obj = {"snapshot-id": 1, "timestamp-ms": 1, "manifest-list": "x", "manifests": ["m"]}
    snap = Snapshot.from_json(obj)
    assert (snap.manifest_list, snap.manifests) == ("x", None)
    with pytest.raises(ValidationError, match="both"):
        Snapshot(snapshot_id=1, timestamp_ms=1, manifest_list="x", manifests=("m",))


def test_snapshot_is_frozen() -> None:
    snap = Snapshot.from_json(SPEC_SNAPSHOT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.snapshot_id = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"timestamp-ms": 1, "manifest-list": "x"}, "'snapshot-id'"),
        ({"snapshot-id": 1, "manifest-list": "x"}, "'timestamp-ms'"),
        ({"snapshot-id": 1, "timestamp-ms": 1}, "'manifests'"),
        ({"snapshot-id": "1", "timestamp-ms": 1, "manifest-list": "x"}, "integer"),
        ({"snapshot-id": 1, "timestamp-ms": 1, "manifest-list": 3}, "string"),
        ({"snapshot-id": 2**63, "timestamp-ms": 1, "manifest-list": "x"}, "out of range"),
        ([1, 2], "JSON object"),
    ],
)
def test_malformed_snapshot_json_raises_invalid_metadata(obj: object, message: str) -> None:
    with pytest.raises(InvalidMetadata, match=message):
        Snapshot.from_json(obj)


# --- references -------------------------------------------------------------


def test_branch_with_retention_round_trips() -> None:
    obj = {
        "snapshot-id": 123456789000,
        "type": "branch",
        "min-snapshots-to-keep": 3,
        "max-snapshot-age-ms": 86400000,
        "max-ref-age-ms": 604800000,
    }
    ref = SnapshotRef.from_json(obj)
    assert ref.is_branch and not ref.is_tag
    assert ref.type is SnapshotRefType.BRANCH
    assert ref.min_snapshots_to_keep == 3
    assert ref.to_json() == obj


def test_spec_example_tag_round_trips() -> None:
    obj = {"snapshot-id": 123456789000, "type": "tag", "max-ref-age-ms": 10000000}
    ref = SnapshotRef.from_json(obj)
    assert ref.is_tag
    assert ref.to_json() == obj


@pytest.mark.parametrize("field", ["min_snapshots_to_keep", "max_snapshot_age_ms"])
def test_tag_cannot_carry_branch_retention(field: str) -> None:
    with pytest.raises(ValidationError, match="branches only"):
        SnapshotRef(1, SnapshotRefType.TAG, **{field: 5})
    key = field.replace("_", "-")
    with pytest.raises(InvalidMetadata, match="branches only"):
        SnapshotRef.from_json({"snapshot-id": 1, "type": "tag", key: 5})


def test_retention_values_must_be_positive_and_type_known() -> None:
    with pytest.raises(ValidationError, match="positive"):
        SnapshotRef(1, min_snapshots_to_keep=0)
    with pytest.raises(ValidationError, match="positive"):
        SnapshotRef(1, max_ref_age_ms=-5)
    with pytest.raises(InvalidMetadata, match="neither 'branch' nor 'tag'"):
        SnapshotRef.from_json({"snapshot-id": 1, "type": "label"})
    with pytest.raises(InvalidMetadata, match="'type'"):
        SnapshotRef.from_json({"snapshot-id": 1})
    assert MAIN_BRANCH == "main"


# --- logs -------------------------------------------------------------------


def test_log_entries_round_trip() -> None:
    s = {"timestamp-ms": 1515100955770, "snapshot-id": 30517296}
    m = {"timestamp-ms": 1515100955770, "metadata-file": "s3://bucket/.../v1.json"}
    assert SnapshotLogEntry.from_json(s) == SnapshotLogEntry(1515100955770, 30517296)
    assert SnapshotLogEntry.from_json(s).to_json() == s
    assert MetadataLogEntry.from_json(m).metadata_file == "s3://bucket/.../v1.json"
    assert MetadataLogEntry.from_json(m).to_json() == m
    with pytest.raises(InvalidMetadata, match="'metadata-file'"):
        MetadataLogEntry.from_json({"timestamp-ms": 1})


# --- immutable maps ---------------------------------------------------------


def test_frozen_and_string_maps() -> None:
    m = FrozenMap({"a": 1})
    assert m == {"a": 1}
    assert hash(m) == hash(FrozenMap([("a", 1)]))
    with pytest.raises(ValidationError, match="strings only"):
        StringMap({"a": 1})  # type: ignore[dict-item]


# --- statistics -------------------------------------------------------------

STATS = {
    "snapshot-id": 3055729675574597004,
    "statistics-path": "s3://bucket/t/metadata/stats.puffin",
    "file-size-in-bytes": 413,
    "file-footer-size-in-bytes": 42,
    "key-metadata": "a2V5",
    "blob-metadata": [
        {
            "type": "apache-datasketches-theta-v1",
            "snapshot-id": 3055729675574597004,
            "sequence-number": 1,
            "fields": [1, 2],
            "properties": {"ndv": "1024"},
        },
        {"type": "custom", "snapshot-id": 1, "sequence-number": 1, "fields": []},
    ],
}


def test_statistics_file_round_trips_with_blob_metadata() -> None:
    stats = StatisticsFile.from_json(STATS)
    assert stats.file_footer_size_in_bytes == 42
    assert stats.key_metadata == "a2V5"
    assert stats.blob_metadata[0] == BlobMetadata(
        "apache-datasketches-theta-v1", 3055729675574597004, 1, (1, 2), StringMap({"ndv": "1024"})
    )
    assert stats.blob_metadata[1].properties == {}
    assert stats.to_json() == STATS


def test_partition_statistics_round_trip() -> None:
    obj = {"snapshot-id": 1, "statistics-path": "s3://x/p.parquet", "file-size-in-bytes": 43}
    assert PartitionStatisticsFile.from_json(obj).to_json() == obj


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({k: v for k, v in STATS.items() if k != "blob-metadata"}, "'blob-metadata'"),
        ({**STATS, "file-footer-size-in-bytes": None}, "'file-footer-size-in-bytes'"),
        ({**STATS, "blob-metadata": [{"type": "t", "snapshot-id": 1, "fields": []}]}, "sequence"),
        ({**STATS, "file-size-in-bytes": -1}, "non-negative"),
    ],
)
def test_malformed_statistics_raise_invalid_metadata(obj: object, message: str) -> None:
    with pytest.raises(InvalidMetadata, match=message):
        StatisticsFile.from_json(obj)
