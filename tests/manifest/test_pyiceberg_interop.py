"""pyiceberg 0.12 as an independent oracle for manifests and manifest lists.

Both directions: pyiceberg reads what icewright writes and agrees on every field, and
icewright reads what pyiceberg writes (through a real ``SqlCatalog`` table on SQLite)
and agrees with what pyiceberg reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from pyiceberg import manifest as pyi_manifest
from pyiceberg import schema as pyi_schema
from pyiceberg import transforms as pyi_transforms
from pyiceberg import types as pyi_types
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.partitioning import PartitionField as PyiPartitionField
from pyiceberg.partitioning import PartitionSpec as PyiPartitionSpec
from pyiceberg.typedef import Record

from icewright.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    PartitionFieldSummary,
    read_manifest,
    read_manifest_list,
    read_manifest_metadata,
)

from .samples import write_snapshot

pytestmark = pytest.mark.interop


# --- pyiceberg objects as icewright values ---------------------------------------------


def record_tuple(record: Record) -> tuple[Any, ...]:
    return tuple(record[i] for i in range(len(record)))


def optional_dict(value: Any) -> dict[int, Any] | None:
    return None if value is None else dict(value)


def from_pyi_data_file(d: Any) -> DataFile:
    return DataFile(
        content=FileContent(int(d.content)),
        file_path=d.file_path,
        file_format=FileFormat.parse(d.file_format.value),
        partition=record_tuple(d.partition),
        record_count=d.record_count,
        file_size_in_bytes=d.file_size_in_bytes,
        column_sizes=optional_dict(d.column_sizes),
        value_counts=optional_dict(d.value_counts),
        null_value_counts=optional_dict(d.null_value_counts),
        nan_value_counts=optional_dict(d.nan_value_counts),
        lower_bounds=optional_dict(d.lower_bounds),
        upper_bounds=optional_dict(d.upper_bounds),
        key_metadata=d.key_metadata,
        split_offsets=None if d.split_offsets is None else tuple(d.split_offsets),
        equality_ids=None if d.equality_ids is None else tuple(d.equality_ids),
        sort_order_id=d.sort_order_id,
        spec_id=d.spec_id,
    )


def from_pyi_entry(e: Any) -> ManifestEntry:
    return ManifestEntry(
        status=EntryStatus(int(e.status)),
        snapshot_id=e.snapshot_id,
        sequence_number=e.sequence_number,
        file_sequence_number=e.file_sequence_number,
        data_file=from_pyi_data_file(e.data_file),
    )


def from_pyi_manifest_file(m: Any) -> ManifestFile:
    return ManifestFile(
        manifest_path=m.manifest_path,
        manifest_length=m.manifest_length,
        partition_spec_id=m.partition_spec_id,
        content=ManifestContent(int(m.content)),
        sequence_number=m.sequence_number,
        min_sequence_number=m.min_sequence_number,
        added_snapshot_id=m.added_snapshot_id,
        added_files_count=m.added_files_count,
        existing_files_count=m.existing_files_count,
        deleted_files_count=m.deleted_files_count,
        added_rows_count=m.added_rows_count,
        existing_rows_count=m.existing_rows_count,
        deleted_rows_count=m.deleted_rows_count,
        partitions=None
        if m.partitions is None
        else tuple(
            PartitionFieldSummary(s.contains_null, s.contains_nan, s.lower_bound, s.upper_bound)
            for s in m.partitions
        ),
        key_metadata=m.key_metadata,
    )


def local_path(location: str) -> Path:
    return Path(urlparse(location).path) if location.startswith("file:") else Path(location)


# --- icewright writes, pyiceberg reads --------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_pyiceberg_reads_what_icewright_writes(tmp_path: Path, version: int) -> None:
    list_path, written, files = write_snapshot(tmp_path, version)
    io = PyArrowFileIO()
    theirs = list(pyi_manifest.read_manifest_list(io.new_input(str(list_path))))
    expected_lists = written
    if version == 1:  # a v1 list stores no sequence numbers; both read them as 0
        expected_lists = [m.replace(sequence_number=0, min_sequence_number=0) for m in written]
    assert [from_pyi_manifest_file(m) for m in theirs] == expected_lists
    assert len(theirs) == (4 if version >= 2 else 3)
    for ours, their in zip(expected_lists, theirs, strict=True):
        their_entries = [
            from_pyi_entry(e) for e in their.fetch_manifest_entry(io, discard_deleted=False)
        ]
        our_entries = read_manifest(files[ours.manifest_path], ours)
        assert their_entries == our_entries
        assert our_entries  # something was compared
    # Inheritance as the oracle applies it: ADDED entries take the list's sequence number.
    first = read_manifest(files[expected_lists[0].manifest_path], expected_lists[0])
    seq = 3 if version >= 2 else 0
    assert (first[0].sequence_number, first[0].file_sequence_number) == (seq, seq)


# --- pyiceberg writes, icewright reads --------------------------------------------------

PYI_SCHEMA = pyi_schema.Schema(
    pyi_types.NestedField(1, "id", pyi_types.LongType(), required=True),
    pyi_types.NestedField(2, "name", pyi_types.StringType(), required=False),
    pyi_types.NestedField(3, "ts", pyi_types.TimestampType(), required=False),
    pyi_types.NestedField(4, "region", pyi_types.StringType(), required=False),
    pyi_types.NestedField(5, "score", pyi_types.DoubleType(), required=False),
)
PYI_SPEC = PyiPartitionSpec(
    PyiPartitionField(4, 1000, pyi_transforms.IdentityTransform(), "region"),
    PyiPartitionField(3, 1001, pyi_transforms.DayTransform(), "ts_day"),
    PyiPartitionField(1, 1002, pyi_transforms.BucketTransform(16), "id_bucket"),
    PyiPartitionField(2, 1003, pyi_transforms.TruncateTransform(4), "name_trunc"),
)


def pyi_data_file(tmp_path: Path, i: int, row: tuple[Any, ...], records: int) -> Any:
    # pyiceberg computes the partition tuple with its own transforms.
    partition = Record(
        *(
            f.transform.transform(PYI_SCHEMA.find_type(f.source_id))(value)
            for f, value in zip(PYI_SPEC.fields, row, strict=True)
        )
    )
    df = pyi_manifest.DataFile.from_args(
        content=pyi_manifest.DataFileContent.DATA,
        file_path=f"file://{tmp_path}/data/f{i}.parquet",
        file_format=pyi_manifest.FileFormat.PARQUET,
        partition=partition,
        record_count=records,
        file_size_in_bytes=1000 + i,
        column_sizes={1: 10 + i, 2: 20},
        value_counts={1: records, 2: records},
        null_value_counts={1: 0, 2: i},
        nan_value_counts={5: i},
        lower_bounds={1: (i).to_bytes(8, "little")},
        upper_bounds={1: (i + 9).to_bytes(8, "little")},
        split_offsets=[4],
        sort_order_id=0,
    )
    df.spec_id = 0
    return df


@pytest.mark.parametrize("version", [1, 2])
def test_icewright_reads_what_pyiceberg_writes(tmp_path: Path, version: int) -> None:
    catalog = SqlCatalog(
        "oracle", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )
    catalog.create_namespace("ns")
    table = catalog.create_table(
        "ns.t",
        schema=PYI_SCHEMA,
        partition_spec=PYI_SPEC,
        properties={"format-version": str(version)},
    )
    day = 1_704_070_800_000_000  # 2024-01-01T01:00 in microseconds
    files = [
        pyi_data_file(tmp_path, 0, ("eu", day, 7, "alphabet"), 3),
        pyi_data_file(tmp_path, 1, (None, day + 86_400_000_000, 8, None), 2),
        pyi_data_file(tmp_path, 2, ("us", None, 9, "be"), 4),
    ]
    with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(files[0])
        append.append_data_file(files[1])
    with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(files[2])
    # Removing one file rewrites its manifest: a DELETED entry and an EXISTING one.
    with table.transaction() as tx, tx.update_snapshot().overwrite() as overwrite:
        overwrite.delete_data_file(files[0])

    table = catalog.load_table("ns.t")
    statuses: set[EntryStatus] = set()
    for snapshot in table.snapshots():
        list_location = snapshot.manifest_list
        ours = read_manifest_list(local_path(list_location).read_bytes(), list_location)
        theirs = snapshot.manifests(table.io)
        assert ours == [from_pyi_manifest_file(m) for m in theirs]
        for our_manifest, their_manifest in zip(ours, theirs, strict=True):
            data = local_path(our_manifest.manifest_path).read_bytes()
            entries = read_manifest(data, our_manifest)
            expected = [
                from_pyi_entry(e)
                for e in their_manifest.fetch_manifest_entry(table.io, discard_deleted=False)
            ]
            assert entries == expected
            statuses.update(e.status for e in entries)

            meta = read_manifest_metadata(data, our_manifest.manifest_path)
            assert meta.format_version == version
            assert meta.content is ManifestContent.DATA
            assert [
                (f.field_id, f.name, str(f.field_type), f.required) for f in meta.schema.fields
            ] == [
                (f.field_id, f.name, str(f.field_type), f.required) for f in table.schema().fields
            ]
            assert [
                (f.source_id, f.field_id, str(f.transform), f.name) for f in meta.spec.fields
            ] == [(f.source_id, f.field_id, str(f.transform), f.name) for f in table.spec().fields]
    assert statuses == {EntryStatus.ADDED, EntryStatus.EXISTING, EntryStatus.DELETED}
    last = table.current_snapshot()
    assert last is not None
    last_list = read_manifest_list(local_path(last.manifest_list).read_bytes())
    if version >= 2:
        assert {m.sequence_number for m in last_list} == {2, 3}
    else:
        assert {m.sequence_number for m in last_list} == {0}
