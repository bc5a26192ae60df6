"""Apache Iceberg Java 1.10.2, the reference implementation, reads icewright's files.

One Java batch reads the v1 and v2 manifest lists and every manifest icewright
writes; each manifest file and each entry must match what icewright reads back.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from icewright.manifest import (
    ManifestEntry,
    ManifestFile,
    read_manifest,
    read_manifest_list,
)

from .samples import (
    ALL_TYPES_SPEC_NO_FIXED,
    ALL_TYPES_VALUES_NO_FIXED,
    SCHEMA,
    SPEC,
    write_snapshot,
)

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def java_value(value: Any) -> Any:
    """A partition value as the Java peer encodes it in JSON."""
    if isinstance(value, Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def java_manifest_file(m: ManifestFile) -> dict[str, Any]:
    return {
        "path": m.manifest_path,
        "length": m.manifest_length,
        "partition_spec_id": m.partition_spec_id,
        "content": m.content.name.lower(),
        "sequence_number": m.sequence_number,
        "min_sequence_number": m.min_sequence_number,
        "added_snapshot_id": m.added_snapshot_id,
        "added_files_count": m.added_files_count,
        "existing_files_count": m.existing_files_count,
        "deleted_files_count": m.deleted_files_count,
        "added_rows_count": m.added_rows_count,
        "existing_rows_count": m.existing_rows_count,
        "deleted_rows_count": m.deleted_rows_count,
        "partitions": None
        if m.partitions is None
        else [
            {
                "contains_null": p.contains_null,
                "contains_nan": p.contains_nan,
                "lower_bound": p.lower_bound,
                "upper_bound": p.upper_bound,
            }
            for p in m.partitions
        ],
        "key_metadata": m.key_metadata,
        "first_row_id": m.first_row_id,
    }


def java_entry(e: ManifestEntry) -> dict[str, Any]:
    df = e.data_file

    def plain(mapping: Any) -> dict[int, Any] | None:
        return None if mapping is None else dict(mapping)

    return {
        "status": e.status.name.lower(),
        "snapshot_id": e.snapshot_id,
        "data_sequence_number": e.sequence_number,
        "file_sequence_number": e.file_sequence_number,
        "content": df.content.name.lower(),
        "file_path": df.file_path,
        "file_format": df.file_format.value.lower(),
        "spec_id": df.spec_id,
        "partition_values": [java_value(v) for v in df.partition],
        "record_count": df.record_count,
        "file_size_in_bytes": df.file_size_in_bytes,
        "column_sizes": plain(df.column_sizes),
        "value_counts": plain(df.value_counts),
        "null_value_counts": plain(df.null_value_counts),
        "nan_value_counts": plain(df.nan_value_counts),
        "lower_bounds": plain(df.lower_bounds),
        "upper_bounds": plain(df.upper_bounds),
        "key_metadata": df.key_metadata,
        "split_offsets": None if df.split_offsets is None else list(df.split_offsets),
        "equality_ids": None if df.equality_ids is None else list(df.equality_ids),
        "sort_order_id": df.sort_order_id,
        "first_row_id": df.first_row_id,
    }


def test_iceberg_java_reads_what_icewright_writes(
    tmp_path: Path,
    iceberg_java: Any,
) -> None:
    snapshots = {}
    for version in (1, 2):
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        list_path, _, files = write_snapshot(
            folder, version, (ALL_TYPES_SPEC_NO_FIXED, ALL_TYPES_VALUES_NO_FIXED)
        )
        ours = read_manifest_list(list_path.read_bytes())
        snapshots[version] = (list_path, ours, files)

    with iceberg_java.batch() as batch:
        pending = {}
        for version, (list_path, ours, _) in snapshots.items():
            java_list = batch.read_manifest_list(
                list_path, snapshot_id=77, sequence_number=3 if version >= 2 else 0
            )
            java_manifests = [
                batch.read_manifest(
                    m.manifest_path,
                    snapshot_id=m.added_snapshot_id,
                    sequence_number=m.sequence_number,
                    spec_id=m.partition_spec_id,
                    content=m.content.name.lower(),
                    schema_json=SCHEMA.to_json(),
                    specs_json=[SPEC.to_json()],
                )
                if m.content.name == "DELETES"
                else batch.read_manifest(
                    m.manifest_path,
                    snapshot_id=m.added_snapshot_id,
                    sequence_number=m.sequence_number,
                    spec_id=m.partition_spec_id,
                )
                for m in ours
            ]
            pending[version] = (java_list, java_manifests)

    for version, (_, ours, files) in snapshots.items():
        java_list, java_manifests = pending[version]
        assert java_list.value == [java_manifest_file(m) for m in ours]
        assert len(ours) == (4 if version >= 2 else 3)
        for manifest, java_manifest in zip(ours, java_manifests, strict=True):
            entries = read_manifest(files[manifest.manifest_path], manifest)
            java_entries = java_manifest.value["entries"]
            assert [
                {k: j[k] for k in java_entry(e)} for e, j in zip(entries, java_entries, strict=True)
            ] == [java_entry(e) for e in entries]
            assert entries
