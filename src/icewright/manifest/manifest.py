"""Writing manifest files (spec: "Manifests", "Sequence Number Inheritance").

A manifest is an Avro file of ``manifest_entry`` records for one partition spec, with
the table schema and the spec in its key-value metadata. :class:`ManifestWriter` builds
the bytes and the :class:`ManifestFile` that describes them in a manifest list, storing
each entry in the form the inheritance rules ask for; reading the entries back is
:mod:`icewright.manifest.manifest_reader`'s part.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from icewright.errors import UnsupportedFormatVersion, ValidationError
from icewright.manifest.avro_codec import (
    DEFAULT_CODEC,
    INVALID,
    avro_datum_converter,
    invalid_partition_value,
    map_to_avro,
    named_types,
    partition_value_to_avro,
    write_avro,
)
from icewright.manifest.avro_encoder import (
    BLOCK_BYTES,
    FAST_CODECS,
    EncodeError,
    Encoder,
    SchemaCompiler,
    StoredBlock,
    block_length,
    container_file,
    long_bytes,
    stored_block,
)
from icewright.manifest.avro_schemas import (
    DATA_FILE_FIELD_ID,
    PARTITION_FIELD_ID,
    SUPPORTED_FORMAT_VERSIONS,
    AvroSchema,
    avro_field_name,
    manifest_entry_schema,
)
from icewright.manifest.data_file import (
    DEFAULT_BLOCK_SIZE,
    UNASSIGNED_SEQ,
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.entry_decoder import field_by_id
from icewright.manifest.field_summary import FieldSummaryBuilder
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.types import StructType

_BLOCK_OVERHEAD = 64
"""More than a block adds to its data: two counts of up to ten bytes each, the 16-byte
sync marker, and deflate's framing of data that does not compress."""


def _check_format_version(format_version: int) -> None:
    if format_version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedFormatVersion(
            f"cannot write a format version {format_version!r} manifest: use one of "
            f"{SUPPORTED_FORMAT_VERSIONS}"
        )


class ManifestWriter:
    """Builds one manifest for one partition spec (spec: "Manifests").

    Add entries with :meth:`add`, :meth:`existing`, :meth:`delete` or :meth:`add_entry`,
    then call :meth:`finish` with the location the bytes will be stored at; it returns
    the Avro bytes and the :class:`ManifestFile` for the manifest list, whose sequence
    numbers stay :data:`UNASSIGNED_SEQ` until the manifest list writer assigns them.

    The stored form follows the spec's inheritance rules: ADDED entries carry this
    writer's snapshot id and null sequence numbers (an explicit data sequence number is
    kept, for files whose data is older), EXISTING and DELETED entries carry their
    original sequence numbers, and DELETED entries this writer's snapshot id.
    """

    def __init__(
        self,
        *,
        format_version: int,
        spec: PartitionSpec,
        schema: Schema,
        snapshot_id: int,
        content: ManifestContent = ManifestContent.DATA,
        codec: str = DEFAULT_CODEC,
    ) -> None:
        _check_format_version(format_version)
        content = ManifestContent(content)
        if format_version == 1 and content is not ManifestContent.DATA:
            raise ValidationError(
                "format version 1 has no delete files: a v1 manifest can only hold data files"
            )
        self.format_version = format_version
        self.spec = spec
        self.schema = schema
        self.snapshot_id = snapshot_id
        self.content = content
        self.codec = codec
        self.partition_type: StructType = spec.partition_type(schema)
        self._avro_schema = manifest_entry_schema(format_version, self.partition_type)
        self._partition_names = [avro_field_name(f.name) for f in self.partition_type.fields]
        self._entries: list[ManifestEntry] = []
        # Each entry is encoded (and so checked) as it is added; see avro_encoder for why
        # icewright encodes manifests itself.
        self._encode = _entry_encoder(self._avro_schema, self.partition_type)
        self._encoded: list[bytes] = []
        self._summaries = [FieldSummaryBuilder(f.field_type) for f in self.partition_type.fields]
        # What length() has compressed: the first entries as whole blocks, formed as
        # container_file forms them, so that to_bytes() copies them instead.
        self._blocks: list[StoredBlock] = []
        self._blocked = 0  # entries in self._blocks
        self._blocks_length = 0
        self._pending_bytes = 0  # encoded bytes of the entries after them
        self._header_length: int | None = None

    # --- adding entries -----------------------------------------------------

    def add(self, data_file: DataFile, *, data_sequence_number: int | None = None) -> None:
        """Add a file new in this snapshot (status ADDED).

        Leave ``data_sequence_number`` unset to inherit the snapshot's sequence number;
        set it only for a file whose data logically belongs to an older sequence number.
        """
        self.add_entry(
            ManifestEntry(
                status=EntryStatus.ADDED,
                snapshot_id=self.snapshot_id,
                sequence_number=data_sequence_number,
                data_file=data_file,
            )
        )

    def existing(
        self,
        data_file: DataFile,
        *,
        snapshot_id: int,
        data_sequence_number: int,
        file_sequence_number: int | None,
    ) -> None:
        """Carry a live file over from an earlier snapshot (status EXISTING)."""
        self.add_entry(
            ManifestEntry(
                status=EntryStatus.EXISTING,
                snapshot_id=snapshot_id,
                sequence_number=data_sequence_number,
                file_sequence_number=file_sequence_number,
                data_file=data_file,
            )
        )

    def delete(
        self,
        data_file: DataFile,
        *,
        data_sequence_number: int,
        file_sequence_number: int | None,
    ) -> None:
        """Record that this snapshot removes a file (status DELETED)."""
        self.add_entry(
            ManifestEntry(
                status=EntryStatus.DELETED,
                snapshot_id=self.snapshot_id,
                sequence_number=data_sequence_number,
                file_sequence_number=file_sequence_number,
                data_file=data_file,
            )
        )

    def add_entry(self, entry: ManifestEntry, *, max_length: int | None = None) -> bool:
        """Add an entry as is, normalized to the form the spec says to store.

        With ``max_length``, the entry is added only if the file stays within that many
        bytes by :meth:`length` (a writer without entries takes any entry); returns
        whether it was added.
        """
        stored = self._prepare(entry)
        buf = bytearray()
        try:
            self._encode(stored, buf)
        except EncodeError as exc:
            raise ValidationError(
                f"manifest entry for {stored.data_file.file_path}: {exc.path}: {exc.problem}"
            ) from None
        if (
            max_length is not None
            and self._entries
            and self.length() + len(buf) + _BLOCK_OVERHEAD > max_length
        ):
            return False
        for builder, value in zip(self._summaries, stored.data_file.partition, strict=True):
            builder.update(value)
        self._entries.append(stored)
        self._encoded.append(bytes(buf))
        self._pending_bytes += len(buf)
        return True

    def length(self) -> int:
        """The bytes the manifest file would have if finished now, or a little more
        (Iceberg Java's ``ManifestWriter.length``): exact for the blocks filled so far,
        which are compressed once, here, and copied by :meth:`to_bytes`; the block being
        filled counts as its uncompressed size."""
        if self._header_length is None:
            self._header_length = len(self._container([]))
        if self.codec not in FAST_CODECS:
            return self._header_length + self._pending_bytes + _BLOCK_OVERHEAD
        while self._pending_bytes >= BLOCK_BYTES:
            # the next block: entries up to the one that reaches BLOCK_BYTES, as
            # container_file flushes
            size, end = 0, self._blocked
            while size < BLOCK_BYTES:
                size += len(self._encoded[end])
                end += 1
            block = stored_block(self._encoded[self._blocked : end], self.codec)
            self._blocks.append(block)
            self._blocks_length += block_length(block)
            self._blocked = end
            self._pending_bytes -= size
        pending = self._pending_bytes + _BLOCK_OVERHEAD if self._pending_bytes else 0
        return self._header_length + self._blocks_length + pending

    @property
    def entries(self) -> tuple[ManifestEntry, ...]:
        """The entries added so far, in the form they are stored."""
        return tuple(self._entries)

    def _prepare(self, entry: ManifestEntry) -> ManifestEntry:
        df = entry.data_file
        where = f"manifest entry for {df.file_path}"
        self._check_file(df, where)
        status = entry.status
        if status is EntryStatus.ADDED:
            # spec: the snapshot adding the file is this one; the file sequence number is
            # always assigned at commit; new data files get first_row_id by inheritance.
            snapshot_id: int | None = self.snapshot_id
            data_seq = entry.sequence_number
            file_seq = None
            if self.format_version >= 3 and df.first_row_id is not None:
                df = df.replace(first_row_id=None)
        else:
            snapshot_id = self.snapshot_id if status is EntryStatus.DELETED else entry.snapshot_id
            if snapshot_id is None:
                raise ValidationError(
                    f"{where}: an EXISTING entry must keep the id of the snapshot that added it"
                )
            data_seq = entry.sequence_number
            file_seq = entry.file_sequence_number
            if self.format_version >= 2 and data_seq is None:
                # spec: existing and deleted entries must include the sequence numbers.
                raise ValidationError(
                    f"{where}: a {status.name} entry must carry its data sequence number "
                    "(read the source manifest with its ManifestFile to inherit it)"
                )
        if df.content is not FileContent.DATA and df.first_row_id is not None:
            df = df.replace(first_row_id=None)  # spec: always null for delete files
        if self.format_version == 1:
            data_seq = file_seq = None
        if (
            snapshot_id == entry.snapshot_id
            and data_seq == entry.sequence_number
            and file_seq == entry.file_sequence_number
            and df is entry.data_file
        ):
            return entry  # already in its stored form (what add() builds): no copy
        return ManifestEntry(
            status=status,
            snapshot_id=snapshot_id,
            sequence_number=data_seq,
            file_sequence_number=file_seq,
            data_file=df,
        )

    def _check_file(self, df: DataFile, where: str) -> None:
        if df.spec_id != self.spec.spec_id:
            raise ValidationError(
                f"{where}: the file has spec_id {df.spec_id} but this manifest is for partition "
                f"spec {self.spec.spec_id}; set DataFile.spec_id or use a manifest of its spec"
            )
        is_data = df.content is FileContent.DATA
        if is_data != (self.content is ManifestContent.DATA):
            raise ValidationError(
                f"{where}: a {self.content.metadata_name} manifest cannot hold a "
                f"{df.content.name.lower()} file; data and delete files go to separate manifests"
            )
        if len(df.partition) != len(self.partition_type.fields):
            raise ValidationError(
                f"{where}: the partition tuple has {len(df.partition)} values but spec "
                f"{self.spec.spec_id} has {len(self.partition_type.fields)} fields"
            )
        if self.format_version < 3:
            v3_only = ("first_row_id", "content_offset", "content_size_in_bytes")
            used = [name for name in v3_only if getattr(df, name) is not None]
            if used:
                raise ValidationError(
                    f"{where}: {', '.join(used)} exist only in format version 3 manifests"
                )
        if self.format_version == 1 and df.equality_ids is not None:
            raise ValidationError(f"{where}: equality_ids do not exist in v1 manifests")
        if self.format_version == 1 and df.referenced_data_file is not None:
            raise ValidationError(f"{where}: referenced_data_file does not exist in v1 manifests")

    def _entry_record(self, entry: ManifestEntry) -> dict[str, Any]:
        df = entry.data_file
        partition = {
            name: partition_value_to_avro(
                f.field_type, value, f"{df.file_path}: partition field {f.name!r}"
            )
            for name, f, value in zip(
                self._partition_names, self.partition_type.fields, df.partition, strict=True
            )
        }
        record: dict[str, Any] = {
            "file_path": df.file_path,
            "file_format": df.file_format.value,
            "partition": partition,
            "record_count": df.record_count,
            "file_size_in_bytes": df.file_size_in_bytes,
            "column_sizes": map_to_avro(df.column_sizes),
            "value_counts": map_to_avro(df.value_counts),
            "null_value_counts": map_to_avro(df.null_value_counts),
            "nan_value_counts": map_to_avro(df.nan_value_counts),
            "lower_bounds": map_to_avro(df.lower_bounds),
            "upper_bounds": map_to_avro(df.upper_bounds),
            "key_metadata": df.key_metadata,
            "split_offsets": None if df.split_offsets is None else list(df.split_offsets),
            "sort_order_id": df.sort_order_id,
        }
        if self.format_version == 1:
            record["block_size_in_bytes"] = DEFAULT_BLOCK_SIZE
            return {
                "status": int(entry.status),
                "snapshot_id": entry.snapshot_id,
                "data_file": record,
            }
        record["content"] = int(df.content)
        record["equality_ids"] = None if df.equality_ids is None else list(df.equality_ids)
        record["referenced_data_file"] = df.referenced_data_file
        if self.format_version >= 3:
            record["first_row_id"] = df.first_row_id
            record["content_offset"] = df.content_offset
            record["content_size_in_bytes"] = df.content_size_in_bytes
        return {
            "status": int(entry.status),
            "snapshot_id": entry.snapshot_id,
            "sequence_number": entry.sequence_number,
            "file_sequence_number": entry.file_sequence_number,
            "data_file": record,
        }

    # --- output -------------------------------------------------------------

    def metadata(self) -> dict[str, str]:
        """The Avro key-value metadata the spec requires of a manifest."""
        meta = {
            "schema": json.dumps(self.schema.to_json(), separators=(",", ":")),
            "schema-id": str(self.schema.schema_id),
            "partition-spec": json.dumps(self.spec.fields_to_json(), separators=(",", ":")),
            "partition-spec-id": str(self.spec.spec_id),
            "format-version": str(self.format_version),
        }
        if self.format_version >= 2:
            meta["content"] = self.content.metadata_name
        return meta

    def to_bytes(self) -> bytes:
        """The Avro manifest file holding every entry added so far."""
        if self.codec in FAST_CODECS:
            return self._container([*self._blocks, *self._encoded[self._blocked :]])
        records = [self._entry_record(e) for e in self._entries]
        return write_avro(self._avro_schema, records, self.metadata(), self.codec)

    def _container(self, records: list[bytes | StoredBlock]) -> bytes:
        if self.codec not in FAST_CODECS:
            return write_avro(self._avro_schema, [], self.metadata(), self.codec)
        return container_file(self._avro_schema, records, self.metadata(), self.codec)

    def finish(self, manifest_path: str) -> tuple[bytes, ManifestFile]:
        """The manifest bytes and their :class:`ManifestFile`, to be stored at ``manifest_path``."""
        data = self.to_bytes()
        return data, self.manifest_file(manifest_path, len(data))

    def manifest_file(self, manifest_path: str, manifest_length: int) -> ManifestFile:
        """The manifest list's description of this manifest, stored at ``manifest_path``."""
        counts = {status: [0, 0] for status in EntryStatus}
        min_seq: int | None = None
        for e in self._entries:
            counts[e.status][0] += 1
            counts[e.status][1] += e.data_file.record_count
            if e.is_live and e.sequence_number is not None:
                min_seq = e.sequence_number if min_seq is None else min(min_seq, e.sequence_number)
        return ManifestFile(
            manifest_path=manifest_path,
            manifest_length=manifest_length,
            partition_spec_id=self.spec.spec_id,
            content=self.content,
            sequence_number=UNASSIGNED_SEQ,
            # No explicit data sequence number: the lowest is the one assigned at commit.
            min_sequence_number=UNASSIGNED_SEQ if min_seq is None else min_seq,
            added_snapshot_id=self.snapshot_id,
            added_files_count=counts[EntryStatus.ADDED][0],
            existing_files_count=counts[EntryStatus.EXISTING][0],
            deleted_files_count=counts[EntryStatus.DELETED][0],
            added_rows_count=counts[EntryStatus.ADDED][1],
            existing_rows_count=counts[EntryStatus.EXISTING][1],
            deleted_rows_count=counts[EntryStatus.DELETED][1],
            partitions=tuple(b.summary() for b in self._summaries),
        )


def _partition_encoder(avro_schema: AvroSchema, partition_type: StructType) -> Encoder:
    """The encoder of a data file's partition tuple as the ``r102`` record of ``avro_schema``.

    Values are checked and converted per field type (the types are looked at once, here).
    """
    named = named_types(avro_schema)
    data_file = field_by_id(avro_schema, DATA_FILE_FIELD_ID, named)
    record = field_by_id(data_file, PARTITION_FIELD_ID, named)
    compiler = SchemaCompiler()
    fields = [
        (f, avro_datum_converter(f.field_type), compiler.compile(avro_field["type"]))
        for f, avro_field in zip(partition_type.fields, record["fields"], strict=True)
    ]

    def write_partition(df: DataFile, buf: bytearray) -> None:
        for (f, convert, encode), value in zip(fields, df.partition, strict=True):
            datum = None
            if value is not None:
                datum = convert(value)
                if datum is INVALID:
                    what = f"{df.file_path}: partition field {f.name!r}"
                    raise invalid_partition_value(f.field_type, value, what)
            encode(datum, buf)

    return write_partition


def _entry_encoder(avro_schema: AvroSchema, partition_type: StructType) -> Encoder:
    """The encoder of a stored :class:`ManifestEntry` as a ``manifest_entry`` record."""
    compiler = SchemaCompiler(
        {
            # The partition tuple is encoded from the whole DataFile (for error messages).
            "partition": (None, _partition_encoder(avro_schema, partition_type)),
            # Deprecated and required in v1 only: always the default.
            "block_size_in_bytes": (lambda df: DEFAULT_BLOCK_SIZE, _write_long_field),
        }
    )
    return compiler.compile(avro_schema)


def _write_long_field(value: Any, buf: bytearray) -> None:
    buf += long_bytes(value)


def write_manifest(
    *,
    format_version: int,
    spec: PartitionSpec,
    schema: Schema,
    snapshot_id: int,
    entries: Iterable[ManifestEntry],
    manifest_path: str,
    content: ManifestContent = ManifestContent.DATA,
    codec: str = DEFAULT_CODEC,
) -> tuple[bytes, ManifestFile]:
    """Write ``entries`` as one manifest; returns its bytes and its :class:`ManifestFile`."""
    writer = ManifestWriter(
        format_version=format_version,
        spec=spec,
        schema=schema,
        snapshot_id=snapshot_id,
        content=content,
        codec=codec,
    )
    for entry in entries:
        writer.add_entry(entry)
    return writer.finish(manifest_path)
