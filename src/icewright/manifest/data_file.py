"""The records that manifests and manifest lists hold (spec: "Manifests", "Manifest Lists").

Everything here is an immutable value:

* :class:`DataFile` -- one data or delete file with its partition tuple and metrics
  (spec: "Data File Fields");
* :class:`ManifestEntry` -- a data file plus its tracking fields: status, snapshot id and
  sequence numbers (spec: "Manifest Entry Fields");
* :class:`ManifestFile` -- one manifest as the manifest list describes it, with its counts
  and :class:`PartitionFieldSummary` per partition field (spec: "Manifest Lists").

Partition values and bounds follow the project's value conventions: a partition tuple is
a Python ``tuple`` in partition-spec field order, and lower/upper bounds are Appendix D
single-value bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

from icewright.errors import ValidationError
from icewright.manifest.column_map import ColumnMap

UNASSIGNED_SEQ = -1
"""Stand-in for a sequence number that is assigned when the snapshot commits.

A freshly written manifest does not know the sequence number of the snapshot that will
add it; the manifest list writer replaces this with the snapshot's sequence number
(spec: "Sequence Number Inheritance").
"""

DEFAULT_BLOCK_SIZE = 64 * 1024 * 1024
"""The deprecated v1 ``block_size_in_bytes`` is required in v1; write this default there."""


class FileContent(IntEnum):
    """What a data file holds (``data_file.content``, field id 134)."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class FileFormat(StrEnum):
    """The format of a data or delete file (``data_file.file_format``, field id 101).

    Stored upper-case, as the reference implementation writes it; :meth:`parse` accepts
    any case because the spec lists the names in lower case.
    """

    AVRO = "AVRO"
    ORC = "ORC"
    PARQUET = "PARQUET"
    PUFFIN = "PUFFIN"

    @classmethod
    def parse(cls, value: str | FileFormat) -> FileFormat:
        """The format named ``value`` (case-insensitive)."""
        if isinstance(value, FileFormat):
            return value
        try:
            return cls(str(value).upper())
        except ValueError:
            known = ", ".join(f.value.lower() for f in cls)
            raise ValidationError(
                f"unknown file format {value!r}: expected one of {known}"
            ) from None


class ManifestContent(IntEnum):
    """What the files of a manifest are (manifest list ``content``, field id 517)."""

    DATA = 0
    DELETES = 1

    @property
    def metadata_name(self) -> str:
        """The value of the manifest's ``content`` key-value metadata: data or deletes."""
        return "data" if self is ManifestContent.DATA else "deletes"


class EntryStatus(IntEnum):
    """The status of a manifest entry (``manifest_entry.status``, field id 0)."""

    EXISTING = 0
    ADDED = 1
    DELETED = 2


def _copy_map(value: Mapping[int, Any] | None, what: str) -> Mapping[int, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationError(f"{what} must be a mapping from field id to value, got {value!r}")
    return ColumnMap.of(value)


def _int_tuple(value: Any, what: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        items = tuple(value)
    except TypeError:
        raise ValidationError(f"{what} must be a sequence of integers, got {value!r}") from None
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValidationError(f"{what} must hold integers only, got {item!r}")
    return items


METRICS_MAPS = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
"""The DataFile fields that hold per-column metrics (the bulk of a manifest entry)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFile:
    """One data or delete file of a table (spec: "Data File Fields").

    ``partition`` is the partition tuple in the order of the partition spec's fields,
    using the project's Python value conventions. The six metrics maps (given as any
    mapping, kept as an immutable :class:`~icewright.manifest.ColumnMap`) hold a value per
    column id; ``lower_bounds`` and ``upper_bounds`` hold Appendix D single-value bytes.
    ``spec_id`` is not stored in the manifest: it is the id of the spec the manifest was
    written with, and a reader fills it in from the manifest list.

    ``first_row_id``, ``content_offset`` and ``content_size_in_bytes`` exist from format
    v3 on, ``referenced_data_file`` from v2 on.
    """

    # slots: a plan of a big table holds a million of these; without an instance dict each
    # takes 200 bytes, not 464, and the compiled decoder fills its fields without one.

    file_path: str
    file_format: FileFormat
    record_count: int
    file_size_in_bytes: int
    content: FileContent = FileContent.DATA
    partition: tuple[Any, ...] = ()
    column_sizes: Mapping[int, int] | None = None
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, bytes] | None = None
    upper_bounds: Mapping[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    spec_id: int = 0
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None

    def __post_init__(self) -> None:
        # Normalize friendly inputs (a str format, an int content, lists) so that equal
        # files compare equal whichever way they were built.
        set_ = object.__setattr__
        if not isinstance(self.file_path, str) or not self.file_path:
            raise ValidationError(
                f"a data file needs a non-empty file_path, got {self.file_path!r}"
            )
        if self.file_format.__class__ is not FileFormat:
            set_(self, "file_format", FileFormat.parse(self.file_format))
        try:
            if self.content.__class__ is not FileContent:  # already normalized: skip the call
                set_(self, "content", FileContent(self.content))
        except ValueError:
            raise ValidationError(
                f"{self.file_path}: content must be 0 (data), 1 (position deletes) or "
                f"2 (equality deletes), got {self.content!r}"
            ) from None
        if not isinstance(self.partition, tuple):
            set_(self, "partition", tuple(self.partition))
        for name in ("record_count", "file_size_in_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationError(
                    f"{self.file_path}: {name} must be a non-negative integer, got {value!r}"
                )
        for name in METRICS_MAPS:
            set_(self, name, _copy_map(getattr(self, name), f"{self.file_path}: {name}"))
        set_(self, "split_offsets", _int_tuple(self.split_offsets, "split_offsets"))
        set_(self, "equality_ids", _int_tuple(self.equality_ids, "equality_ids"))
        if self.content is FileContent.EQUALITY_DELETES and not self.equality_ids:
            # spec: "equality_ids ... Required when content=2"
            raise ValidationError(
                f"{self.file_path}: an equality delete file must list its equality_ids"
            )
        if self.content_offset is not None and self.content_size_in_bytes is None:
            raise ValidationError(
                f"{self.file_path}: content_size_in_bytes is required when content_offset is set"
            )

    def __hash__(self) -> int:
        # The metric maps are not hashable; a file is identified by its content kind and
        # location.
        return hash((self.content, self.file_path))

    def replace(self, **changes: Any) -> DataFile:
        """A copy with the given fields changed."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """A data file with its tracking fields (spec: "Manifest Entry Fields").

    ``sequence_number`` is the *data* sequence number. ``None`` for ``snapshot_id`` and
    the sequence numbers means "inherited from the manifest list"; readers given the
    :class:`ManifestFile` fill them in (spec: "Sequence Number Inheritance").
    """

    status: EntryStatus
    snapshot_id: int | None = None
    sequence_number: int | None = None
    file_sequence_number: int | None = None
    data_file: DataFile

    def __post_init__(self) -> None:
        if self.status.__class__ is EntryStatus:
            return  # already an EntryStatus (the common case): nothing to normalize
        try:
            object.__setattr__(self, "status", EntryStatus(self.status))
        except ValueError:
            raise ValidationError(
                f"manifest entry status must be 0 (existing), 1 (added) or 2 (deleted), "
                f"got {self.status!r}"
            ) from None

    @property
    def is_live(self) -> bool:
        """Whether the file is part of the snapshot (added or existing, not deleted)."""
        return self.status is not EntryStatus.DELETED

    def replace(self, **changes: Any) -> ManifestEntry:
        """A copy with the given fields changed."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class PartitionFieldSummary:
    """Summary of one partition field over a manifest (spec: ``field_summary``, id 508).

    Bounds are Appendix D bytes of the partition field's result type, over the non-null,
    non-NaN values; ``None`` when every value was null or NaN.
    """

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass(frozen=True, kw_only=True)
class ManifestFile:
    """One manifest as a manifest list describes it (spec: "Manifest Lists").

    ``sequence_number`` and ``min_sequence_number`` are :data:`UNASSIGNED_SEQ` for a
    manifest written by a commit that has not yet been given its sequence number; the
    manifest list writer assigns them. The file and row counts may be ``None`` only when
    read from a v1 manifest list that left them out ("assumed to be non-zero").
    """

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    added_snapshot_id: int
    content: ManifestContent = ManifestContent.DATA
    sequence_number: int = UNASSIGNED_SEQ
    min_sequence_number: int = UNASSIGNED_SEQ
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: tuple[PartitionFieldSummary, ...] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "content", ManifestContent(self.content))
        except ValueError:
            raise ValidationError(
                f"{self.manifest_path}: manifest content must be 0 (data) or 1 (deletes), "
                f"got {self.content!r}"
            ) from None
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))

    def has_added_files(self) -> bool:
        """Whether the manifest may hold ADDED entries (an unknown count counts as yes)."""
        return self.added_files_count is None or self.added_files_count > 0

    def has_existing_files(self) -> bool:
        """Whether the manifest may hold EXISTING entries (an unknown count counts as yes)."""
        return self.existing_files_count is None or self.existing_files_count > 0

    def has_deleted_files(self) -> bool:
        """Whether the manifest may hold DELETED entries (an unknown count counts as yes)."""
        return self.deleted_files_count is None or self.deleted_files_count > 0

    def replace(self, **changes: Any) -> ManifestFile:
        """A copy with the given fields changed (e.g. ``manifest_path`` once placed)."""
        return dataclasses.replace(self, **changes)


def manifest_file_from_reader(
    *,
    manifest_path: str,
    manifest_length: int,
    partition_spec_id: int,
    added_snapshot_id: int,
    content: ManifestContent,
    sequence_number: int,
    min_sequence_number: int,
    added_files_count: int | None,
    existing_files_count: int | None,
    deleted_files_count: int | None,
    added_rows_count: int | None,
    existing_rows_count: int | None,
    deleted_rows_count: int | None,
    partitions: tuple[PartitionFieldSummary, ...] | None,
    key_metadata: bytes | None,
    first_row_id: int | None,
) -> ManifestFile:
    """A :class:`ManifestFile` from a manifest list reader, built without ``__init__``.

    For speed: a frozen dataclass sets each of its 16 fields through
    ``object.__setattr__``, which made building the records of a long manifest list cost
    as much as decoding them. The reader passes every field, with ``content`` already a
    :class:`ManifestContent` and ``partitions`` a tuple, which is all ``__post_init__``
    would have normalized.
    """
    if content.__class__ is not ManifestContent:
        raise ValidationError(f"{manifest_path}: manifest content must be a ManifestContent")
    manifest = object.__new__(ManifestFile)
    manifest.__dict__.update(
        manifest_path=manifest_path,
        manifest_length=manifest_length,
        partition_spec_id=partition_spec_id,
        added_snapshot_id=added_snapshot_id,
        content=content,
        sequence_number=sequence_number,
        min_sequence_number=min_sequence_number,
        added_files_count=added_files_count,
        existing_files_count=existing_files_count,
        deleted_files_count=deleted_files_count,
        added_rows_count=added_rows_count,
        existing_rows_count=existing_rows_count,
        deleted_rows_count=deleted_rows_count,
        partitions=partitions,
        key_metadata=key_metadata,
        first_row_id=first_row_id,
    )
    return manifest


__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "UNASSIGNED_SEQ",
    "DataFile",
    "EntryStatus",
    "FileContent",
    "FileFormat",
    "ManifestContent",
    "ManifestEntry",
    "ManifestFile",
    "PartitionFieldSummary",
]
