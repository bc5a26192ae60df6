"""The manifest record values: enums per the spec and input checks."""

from __future__ import annotations

import pytest

from icewright.errors import ValidationError
from icewright.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)


def test_enum_values_are_the_spec_codes() -> None:
    assert [(c.name, c.value) for c in FileContent] == [
        ("DATA", 0),
        ("POSITION_DELETES", 1),
        ("EQUALITY_DELETES", 2),
    ]
    assert [(c.name, c.value) for c in ManifestContent] == [("DATA", 0), ("DELETES", 1)]
    assert [(c.name, c.value) for c in EntryStatus] == [
        ("EXISTING", 0),
        ("ADDED", 1),
        ("DELETED", 2),
    ]
    assert ManifestContent.DELETES.metadata_name == "deletes"


def test_file_format_is_upper_case_and_parsed_in_any_case() -> None:
    assert FileFormat.parse("parquet") is FileFormat.PARQUET
    assert FileFormat.parse("Avro") is FileFormat.AVRO
    assert str(FileFormat.PUFFIN) == "PUFFIN"
    with pytest.raises(ValidationError, match="unknown file format 'csv'"):
        FileFormat.parse("csv")


def test_data_file_normalizes_friendly_input() -> None:
    df = DataFile(
        file_path="s3://b/a.parquet",
        file_format="orc",  # type: ignore[arg-type]
        record_count=1,
        file_size_in_bytes=2,
        content=0,  # type: ignore[arg-type]
        partition=["x"],  # type: ignore[arg-type]
        split_offsets=[4],  # type: ignore[arg-type]
    )
    assert df.file_format is FileFormat.ORC
    assert df.content is FileContent.DATA
    assert df.partition == ("x",)
    assert df.split_offsets == (4,)
    assert hash(df) == hash(df.replace())
    assert df.replace(record_count=3).record_count == 3


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"record_count": -1}, "record_count must be a non-negative integer"),
        ({"file_path": ""}, "non-empty file_path"),
        ({"content": 7}, "content must be 0"),
        ({"content": FileContent.EQUALITY_DELETES}, "must list its equality_ids"),
        ({"content_offset": 4}, "content_size_in_bytes is required"),
        ({"split_offsets": ["a"]}, "split_offsets must hold integers"),
        ({"lower_bounds": [1]}, "lower_bounds must be a mapping"),
    ],
)
def test_data_file_rejects_bad_input(changes: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "file_path": "a.parquet",
        "file_format": FileFormat.PARQUET,
        "record_count": 1,
        "file_size_in_bytes": 1,
    }
    args.update(changes)
    with pytest.raises(ValidationError, match=message):
        DataFile(**args)  # type: ignore[arg-type]


def test_entry_and_manifest_file_check_their_codes() -> None:
    df = DataFile(file_path="a", file_format=FileFormat.AVRO, record_count=1, file_size_in_bytes=1)
    assert ManifestEntry(status=1, data_file=df).status is EntryStatus.ADDED  # type: ignore[arg-type]
    assert not ManifestEntry(status=EntryStatus.DELETED, data_file=df).is_live
    with pytest.raises(ValidationError, match="status must be"):
        ManifestEntry(status=3, data_file=df)  # type: ignore[arg-type]
    mf = ManifestFile(
        manifest_path="m.avro", manifest_length=1, partition_spec_id=0, added_snapshot_id=1
    )
    assert mf.has_added_files() and mf.has_existing_files() and mf.has_deleted_files()
    assert not mf.replace(added_files_count=0).has_added_files()
    with pytest.raises(ValidationError, match="manifest content must be"):
        mf.replace(content=2)
