"""Manifest lists: writing and reading (spec: "Manifest Lists", "First Row ID Assignment").

A manifest list is an Avro file of ``manifest_file`` records, one per manifest of a
snapshot. It is written anew for every commit attempt, and that is when manifests
written by the attempt get the snapshot's sequence number (and, in v3, their
``first_row_id``): the manifests themselves can then be reused across retries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.manifest.avro_codec import (
    DEFAULT_CODEC,
    int_header,
    open_avro,
    rename_fields,
    renames_by_field_id,
    write_avro,
)
from icewright.manifest.avro_schemas import (
    SUPPORTED_FORMAT_VERSIONS,
    manifest_file_type,
    manifest_list_schema,
)
from icewright.manifest.data_file import (
    UNASSIGNED_SEQ,
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
)

_COUNTS = (
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
)


class ManifestListWriter:
    """Builds the manifest list of one snapshot (spec: "Manifest Lists").

    In v2 and later, a manifest whose ``sequence_number`` (or ``min_sequence_number``) is
    :data:`UNASSIGNED_SEQ` gets the snapshot's ``sequence_number``; it must have been
    added by this snapshot. In v3, data manifests without a ``first_row_id`` get one,
    counted up from the snapshot's ``first_row_id`` by each manifest's added and
    existing rows; :attr:`next_row_id` is then the value after the last assigned one.
    """

    def __init__(
        self,
        *,
        format_version: int,
        snapshot_id: int,
        parent_snapshot_id: int | None,
        sequence_number: int,
        first_row_id: int | None = None,
        codec: str = DEFAULT_CODEC,
    ) -> None:
        if format_version not in SUPPORTED_FORMAT_VERSIONS:
            raise UnsupportedFormatVersion(
                f"cannot write a format version {format_version!r} manifest list: use one of "
                f"{SUPPORTED_FORMAT_VERSIONS}"
            )
        if format_version >= 3 and first_row_id is None:
            raise ValidationError(
                "a v3 manifest list needs the snapshot's first_row_id (the table's next-row-id)"
            )
        if format_version >= 2 and sequence_number < 0:
            raise ValidationError(
                f"the snapshot sequence number must be assigned, got {sequence_number}"
            )
        self.format_version = format_version
        self.snapshot_id = snapshot_id
        self.parent_snapshot_id = parent_snapshot_id
        self.sequence_number = sequence_number
        self.first_row_id = first_row_id
        self.codec = codec
        self.next_row_id: int | None = first_row_id if format_version >= 3 else None
        self._manifests: list[ManifestFile] = []

    def add(self, manifest: ManifestFile) -> None:
        """Add one manifest, assigning what the snapshot gives it."""
        self._manifests.append(self._prepare(manifest))

    def add_all(self, manifests: Iterable[ManifestFile]) -> None:
        """Add manifests in order."""
        for m in manifests:
            self.add(m)

    @property
    def manifests(self) -> tuple[ManifestFile, ...]:
        """The manifests as written, with assigned sequence numbers and row ids."""
        return tuple(self._manifests)

    def _prepare(self, m: ManifestFile) -> ManifestFile:
        where = f"manifest {m.manifest_path}"
        if self.format_version == 1:
            if m.content is not ManifestContent.DATA:
                raise ValidationError(f"{where}: a v1 manifest list can only list data manifests")
            return m
        missing = [name for name in _COUNTS if getattr(m, name) is None]
        if missing:
            raise ValidationError(
                f"{where}: {', '.join(missing)} must be known in a v{self.format_version} "
                "manifest list; rewrite the manifest to count its entries"
            )
        changes: dict[str, Any] = {}
        for name in ("sequence_number", "min_sequence_number"):
            if getattr(m, name) == UNASSIGNED_SEQ:
                # spec: "the (optimistic) sequence number of the snapshot is written for all
                # new manifest files tracked by the list" -- only this snapshot's own.
                if m.added_snapshot_id != self.snapshot_id:
                    raise ValidationError(
                        f"{where} has no sequence number but was added by snapshot "
                        f"{m.added_snapshot_id}, not by snapshot {self.snapshot_id}"
                    )
                changes[name] = self.sequence_number
        if (
            self.format_version >= 3
            and m.content is ManifestContent.DATA
            and m.first_row_id is None
            and self.next_row_id is not None
        ):
            # spec: "First Row ID Assignment" -- leave room for added and existing rows.
            changes["first_row_id"] = self.next_row_id
            self.next_row_id += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
        if self.format_version < 3 and m.first_row_id is not None:
            changes["first_row_id"] = None
        return m.replace(**changes) if changes else m

    def metadata(self) -> dict[str, str]:
        """The Avro key-value metadata of the manifest list."""
        meta = {
            "snapshot-id": str(self.snapshot_id),
            # Written as the reference does: the string "null" when there is no parent.
            "parent-snapshot-id": (
                "null" if self.parent_snapshot_id is None else str(self.parent_snapshot_id)
            ),
            "format-version": str(self.format_version),
        }
        if self.format_version >= 2:
            meta["sequence-number"] = str(self.sequence_number)
        if self.format_version >= 3:
            meta["first-row-id"] = str(self.first_row_id)
        return meta

    def to_bytes(self) -> bytes:
        """The Avro manifest list file."""
        records = [self._record(m) for m in self._manifests]
        schema = manifest_list_schema(self.format_version)
        return write_avro(schema, records, self.metadata(), self.codec)

    def _record(self, m: ManifestFile) -> dict[str, Any]:
        record: dict[str, Any] = {
            "manifest_path": m.manifest_path,
            "manifest_length": m.manifest_length,
            "partition_spec_id": m.partition_spec_id,
            "added_snapshot_id": m.added_snapshot_id,
            "partitions": None
            if m.partitions is None
            else [
                {
                    "contains_null": s.contains_null,
                    "contains_nan": s.contains_nan,
                    "lower_bound": s.lower_bound,
                    "upper_bound": s.upper_bound,
                }
                for s in m.partitions
            ],
            "key_metadata": m.key_metadata,
        }
        for name in _COUNTS:
            record[name] = getattr(m, name)
        if self.format_version >= 2:
            record["content"] = int(m.content)
            record["sequence_number"] = m.sequence_number
            record["min_sequence_number"] = m.min_sequence_number
        if self.format_version >= 3:
            record["first_row_id"] = m.first_row_id
        return record


def write_manifest_list(
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    manifests: Iterable[ManifestFile],
    first_row_id: int | None = None,
    codec: str = DEFAULT_CODEC,
) -> bytes:
    """The manifest list of a snapshot listing ``manifests`` (see :class:`ManifestListWriter`)."""
    writer = ManifestListWriter(
        format_version=format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent_snapshot_id,
        sequence_number=sequence_number,
        first_row_id=first_row_id,
        codec=codec,
    )
    writer.add_all(manifests)
    return writer.to_bytes()


def read_manifest_list(data: bytes, path: str | None = None) -> list[ManifestFile]:
    """The manifests a manifest list holds (v1, v2 and v3).

    v1 lists have no content or sequence numbers: they read as data manifests with
    sequence numbers 0 (spec: "Manifest Lists").
    """
    what = path or "manifest list"
    metadata, writer_schema, records = open_avro(data, what)
    int_header(metadata, "format-version", 1, what)
    renames = renames_by_field_id(writer_schema, manifest_file_type(3))
    try:
        return [_manifest_file(rename_fields(r, renames)) for r in records]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidMetadata(f"{what}: malformed manifest_file record: {exc}") from exc


def _manifest_file(r: dict[str, Any]) -> ManifestFile:
    partitions = r.get("partitions")
    return ManifestFile(
        manifest_path=r["manifest_path"],
        manifest_length=r["manifest_length"],
        partition_spec_id=r["partition_spec_id"],
        content=ManifestContent(r.get("content") or 0),
        sequence_number=r.get("sequence_number") or 0,
        min_sequence_number=r.get("min_sequence_number") or 0,
        added_snapshot_id=r["added_snapshot_id"],
        added_files_count=r.get("added_files_count"),
        existing_files_count=r.get("existing_files_count"),
        deleted_files_count=r.get("deleted_files_count"),
        added_rows_count=r.get("added_rows_count"),
        existing_rows_count=r.get("existing_rows_count"),
        deleted_rows_count=r.get("deleted_rows_count"),
        partitions=None
        if partitions is None
        else tuple(
            PartitionFieldSummary(
                contains_null=p["contains_null"],
                contains_nan=p.get("contains_nan"),
                lower_bound=p.get("lower_bound"),
                upper_bound=p.get("upper_bound"),
            )
            for p in partitions
        ),
        key_metadata=r.get("key_metadata"),
        first_row_id=r.get("first_row_id"),
    )
