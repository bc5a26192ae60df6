"""Table and partition statistics files registered in table metadata.

Spec sections: "Table Statistics" (Puffin files with blob metadata) and
"Partition Statistics". Statistics are informational: readers may ignore
them, but a writer must carry them over unchanged, so every field is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icewright.errors import InvalidMetadata, ValidationError
from icewright.spec.documents import (
    EMPTY_STRING_MAP,
    StringMap,
    as_metadata_error,
    json_list,
    json_object,
    opt_str,
    req_long,
    req_str,
    required_field,
    string_map,
)


def _check_non_negative(value: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{what} must be a non-negative integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class BlobMetadata:
    """Metadata of one Puffin blob in a statistics file.

    ``fields`` are the field ids the statistic was computed on, in order;
    ``properties`` is a subset of the blob's Puffin properties.
    """

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: StringMap = EMPTY_STRING_MAP

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not self.type:
            raise ValidationError(f"blob type must be a non-empty string, got {self.type!r}")
        object.__setattr__(self, "fields", tuple(self.fields))
        for field_id in self.fields:
            if isinstance(field_id, bool) or not isinstance(field_id, int):
                raise ValidationError(f"blob fields must be field ids (ints), got {field_id!r}")
        if not isinstance(self.properties, StringMap):
            object.__setattr__(self, "properties", StringMap(self.properties))

    def to_json(self) -> dict[str, Any]:
        """The JSON object as stored in table metadata."""
        out: dict[str, Any] = {
            "type": self.type,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "fields": list(self.fields),
        }
        # Java writes properties only when there are some; absent reads as empty.
        if self.properties:
            out["properties"] = self.properties.to_dict()
        return out

    @classmethod
    def from_json(cls, obj: Any) -> BlobMetadata:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "statistics blob-metadata"
        o = json_object(obj, f"a {what} entry")
        raw_fields = json_list(required_field(o, "fields", what), f"{what} field 'fields'")
        props = o.get("properties")
        return as_metadata_error(
            what,
            lambda: cls(
                type=req_str(o, "type", what),
                snapshot_id=req_long(o, "snapshot-id", what),
                sequence_number=req_long(o, "sequence-number", what),
                fields=tuple(raw_fields),
                properties=EMPTY_STRING_MAP
                if props is None
                else string_map(props, f"{what} properties"),
            ),
        )


@dataclass(frozen=True, slots=True)
class StatisticsFile:
    """A Puffin statistics file for one snapshot (the ``statistics`` list).

    ``key_metadata`` is the optional base64 implementation-specific key
    metadata for encryption, kept as the string read.
    """

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()
    key_metadata: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.statistics_path, str) or not self.statistics_path:
            raise ValidationError("statistics-path must be a non-empty string")
        _check_non_negative(self.file_size_in_bytes, "file-size-in-bytes")
        _check_non_negative(self.file_footer_size_in_bytes, "file-footer-size-in-bytes")
        object.__setattr__(self, "blob_metadata", tuple(self.blob_metadata))

    def to_json(self) -> dict[str, Any]:
        """The JSON object as stored in table metadata."""
        out: dict[str, Any] = {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
            "file-footer-size-in-bytes": self.file_footer_size_in_bytes,
        }
        if self.key_metadata is not None:
            out["key-metadata"] = self.key_metadata
        out["blob-metadata"] = [b.to_json() for b in self.blob_metadata]
        return out

    @classmethod
    def from_json(cls, obj: Any) -> StatisticsFile:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "statistics file"
        o = json_object(obj, f"a {what}")
        if "blob-metadata" not in o:
            raise InvalidMetadata(f"{what} is missing the required field 'blob-metadata'")
        blobs = tuple(
            BlobMetadata.from_json(b)
            for b in json_list(o["blob-metadata"], f"{what} field 'blob-metadata'")
        )
        return as_metadata_error(
            what,
            lambda: cls(
                snapshot_id=req_long(o, "snapshot-id", what),
                statistics_path=req_str(o, "statistics-path", what),
                file_size_in_bytes=req_long(o, "file-size-in-bytes", what),
                file_footer_size_in_bytes=req_long(o, "file-footer-size-in-bytes", what),
                blob_metadata=blobs,
                key_metadata=opt_str(o, "key-metadata", what),
            ),
        )


@dataclass(frozen=True, slots=True)
class PartitionStatisticsFile:
    """A partition statistics file for one snapshot (``partition-statistics``)."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int

    def __post_init__(self) -> None:
        if not isinstance(self.statistics_path, str) or not self.statistics_path:
            raise ValidationError("statistics-path must be a non-empty string")
        _check_non_negative(self.file_size_in_bytes, "file-size-in-bytes")

    def to_json(self) -> dict[str, Any]:
        """The JSON object as stored in table metadata."""
        return {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
        }

    @classmethod
    def from_json(cls, obj: Any) -> PartitionStatisticsFile:
        """Parse the JSON object; :class:`InvalidMetadata` names what is wrong."""
        what = "partition statistics file"
        o = json_object(obj, f"a {what}")
        return as_metadata_error(
            what,
            lambda: cls(
                snapshot_id=req_long(o, "snapshot-id", what),
                statistics_path=req_str(o, "statistics-path", what),
                file_size_in_bytes=req_long(o, "file-size-in-bytes", what),
            ),
        )
