"""Manifest lists: writing and reading (spec: "Manifest Lists", "First Row ID Assignment").

A manifest list is an Avro file of ``manifest_file`` records, one per manifest of a
snapshot. It is written anew for every commit attempt, and that is when manifests
written by the attempt get the snapshot's sequence number (and, in v3, their
``first_row_id``): the manifests themselves can then be reused across retries.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.manifest.avro_codec import (
    DEFAULT_CODEC,
    AvroContainer,
    int_header,
    open_container,
    rename_fields,
    renames_by_field_id,
    write_avro,
)
from icewright.manifest.avro_decoder import (
    RecordDecoder,
    carried_record,
    carry_record,
    manifest_file_decoder,
)
from icewright.manifest.avro_encoder import (
    FAST_CODECS,
    EncodedRun,
    EncodeError,
    Encoder,
    SchemaCompiler,
    StoredBlock,
    container_file,
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
    manifest_file_from_reader,
)
from icewright.spec.types import StructType

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
        self._manifests: list[ManifestFile | _CopiedList] = []

    def add(self, manifest: ManifestFile) -> None:
        """Add one manifest, assigning what the snapshot gives it."""
        self._manifests.append(self._prepare(manifest))

    def add_all(self, manifests: Iterable[ManifestFile]) -> None:
        """Add manifests in order."""
        for m in manifests:
            self.add(m)

    def add_list(self, data: bytes, path: str | None = None) -> None:
        """Add every manifest of the manifest list file ``data`` (a parent snapshot's), in
        order.

        A fast append lists its parent's manifests unchanged, and decoding a long
        history's list only to encode it again was most of a fresh process's commit. So
        a v1 or v2 list written with this writer's very schema has its records copied byte
        for byte: the snapshots that added them assigned their sequence numbers and
        counted their files, and a v1/v2 record has no row ids to assign. Any other list
        is decoded and added manifest by manifest.
        """
        what = path or "manifest list"
        container = open_container(data, what)
        int_header(container.metadata, "format-version", 1, what)
        if (
            self.format_version < 3
            and self.codec in FAST_CODECS
            and container.schema_text == _schema_text(self.format_version)
        ):
            records = _copied_records(container, data, self.codec)
            self._manifests.append(_CopiedList(records, data, path))
            return
        self.add_all(ManifestListReader().read(data, path))

    @property
    def manifests(self) -> tuple[ManifestFile, ...]:
        """The manifests as written, with assigned sequence numbers and row ids."""
        out: list[ManifestFile] = []
        for m in self._manifests:
            if isinstance(m, _CopiedList):
                out.extend(read_manifest_list(m.data, m.path))
            else:
                out.append(m)
        return tuple(out)

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
        schema = manifest_list_schema(self.format_version)
        if self.codec not in FAST_CODECS:
            records = [self._record(m) for m in self.manifests]
            return write_avro(schema, records, self.metadata(), self.codec)
        # Encoded by icewright itself (see avro_encoder): the list of a table with a long
        # history holds a record per manifest, and it is written on every commit.
        encode = _list_encoder(self.format_version)
        schema_text = _schema_text(self.format_version)
        encoded: list[bytes | EncodedRun | StoredBlock] = []
        for m in self._manifests:
            if isinstance(m, _CopiedList):
                encoded.extend(m.records)
                continue
            carried = carried_record(m, schema_text)
            if carried is not None:
                # Read from a list of this very schema and unchanged since: same bytes.
                encoded.append(carried)
                continue
            buf = bytearray()
            try:
                encode(m, buf)
            except EncodeError as exc:
                raise ValidationError(
                    f"manifest {m.manifest_path}: {exc.path}: {exc.problem}"
                ) from None
            encoded.append(bytes(buf))
        return container_file(schema, encoded, self.metadata(), self.codec)

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


@functools.cache
def _schema_text(format_version: int) -> str:
    """The writer schema of a list of ``format_version`` as its header holds it (the JSON
    :func:`~icewright.manifest.avro_encoder.container_file` writes)."""
    return json.dumps(manifest_list_schema(format_version))


@dataclass(frozen=True, slots=True)
class _CopiedList:
    """The records of a manifest list file added whole (:meth:`ManifestListWriter.add_list`)."""

    records: tuple[EncodedRun | StoredBlock, ...]
    data: bytes
    path: str | None


def _copied_records(
    container: AvroContainer, data: bytes, codec: str
) -> tuple[EncodedRun | StoredBlock, ...]:
    """The records of the list file ``data`` (opened as ``container``) as its blocks, to
    be written as stored when the file's codec is ``codec``, else as one run."""
    if container.metadata.get("avro.codec", "null") != codec or not container.stored_blocks:
        return (EncodedRun(container.body, container.record_count),)
    body, stored = memoryview(container.body), memoryview(data)  # views: nothing copied
    starts = (0, *container.block_ends[:-1])
    return tuple(
        StoredBlock(count, body[start:end], stored[stored_start:stored_end])
        for count, start, end, (stored_start, stored_end) in zip(
            container.block_counts,
            starts,
            container.block_ends,
            container.stored_blocks,
            strict=True,
        )
    )


_LIST_ENCODERS: dict[int, Encoder] = {}


def _list_encoder(format_version: int) -> Encoder:
    """The encoder of a :class:`ManifestFile` as a ``manifest_file`` record (compiled once)."""
    encoder = _LIST_ENCODERS.get(format_version)
    if encoder is None:
        encoder = SchemaCompiler().compile(manifest_list_schema(format_version))
        _LIST_ENCODERS[format_version] = encoder
    return encoder


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


@functools.cache
def _spec_manifest_file() -> StructType:
    """The newest ``manifest_file`` struct: its field ids name the fields of any version."""
    return manifest_file_type(3)


def read_manifest_list(data: bytes, path: str | None = None) -> list[ManifestFile]:
    """The manifests a manifest list holds (v1, v2 and v3).

    v1 lists have no content or sequence numbers: they read as data manifests with
    sequence numbers 0 (spec: "Manifest Lists").
    """
    return ManifestListReader().read(data, path)


def _manifest_files(
    records: Iterable[dict[str, Any]], writer_schema: Any, what: str
) -> list[ManifestFile]:
    renames = renames_by_field_id(writer_schema, _spec_manifest_file())
    try:
        return [_manifest_file(rename_fields(r, renames)) for r in records]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidMetadata(f"{what}: malformed manifest_file record: {exc}") from exc


_CONTENTS = {int(c): c for c in ManifestContent}


def _manifest_file(r: dict[str, Any]) -> ManifestFile:
    partitions = r.get("partitions")
    raw_content = r.get("content") or 0
    content = _CONTENTS.get(raw_content)
    if content is None:
        raise ValueError(f"manifest content must be 0 (data) or 1 (deletes), got {raw_content!r}")
    return manifest_file_from_reader(
        manifest_path=r["manifest_path"],
        manifest_length=r["manifest_length"],
        partition_spec_id=r["partition_spec_id"],
        content=content,
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


@dataclass(frozen=True)
class _Decoded:
    """A list as :class:`ManifestListReader` keeps it: its records, their bytes, offsets."""

    schema_text: str
    body: bytes
    offsets: tuple[int, ...]
    manifests: tuple[ManifestFile, ...]


class ManifestListReader:
    """Reads manifest lists one after another, decoding only what is new in each.

    A snapshot's manifest list usually repeats its parent's records byte for byte after
    its own new ones (a fast append writes ``[new, *parent]``), and expiring or listing a
    long history reads every one of those lists: decoding them all again is what made
    expiring 1,000 snapshots take seconds per hundred. So the reader keeps the last list
    it read; when the next one's decompressed records end with a run of that list's
    records (same writer schema, same bytes from a record boundary on), only the records
    before that run are decoded and the rest are taken from the previous list.

    The result is exactly :func:`read_manifest_list`'s: Avro records decode the same
    wherever they start, the shared run begins on a record boundary of both lists, and
    the record count and block boundaries are checked; anything else is decoded in full.
    Read lists in order (parents before children) for the most sharing. Not thread-safe.
    """

    def __init__(self) -> None:
        self._previous: _Decoded | None = None

    def read(self, data: bytes, path: str | None = None) -> list[ManifestFile]:
        """The manifests the manifest list ``data`` holds (as :func:`read_manifest_list`)."""
        what = path or "manifest list"
        container = open_container(data, what)
        int_header(container.metadata, "format-version", 1, what)
        decoded = self._shared(container, what)
        if decoded is None:
            manifests, offsets = _decode_range(container, 0, len(container.body), what)
            if len(manifests) != container.record_count:
                raise InvalidMetadata(
                    f"{what}: the blocks hold {len(manifests)} records, not "
                    f"{container.record_count} as their headers say"
                )
            decoded = _Decoded(
                container.schema_text, container.body, tuple(offsets), tuple(manifests)
            )
        self._previous = decoded
        return list(decoded.manifests)

    def _shared(self, container: AvroContainer, what: str) -> _Decoded | None:
        """The list decoded with the previous list's records as its tail, or None."""
        previous = self._previous
        if previous is None or previous.schema_text != container.schema_text:
            return None
        body, old = container.body, previous.body
        first = _first_shared(body, old, previous.offsets)
        if first is None:
            return None
        shared_length = len(old) - previous.offsets[first]
        prefix_end = len(body) - shared_length
        try:
            manifests, offsets = _decode_range(container, 0, prefix_end, what)
        except InvalidMetadata:  # not a record boundary here after all: decode it all
            return None
        tail = previous.manifests[first:]
        if len(manifests) + len(tail) != container.record_count:
            return None
        shift = prefix_end - previous.offsets[first]
        all_offsets = (*offsets, *(o + shift for o in previous.offsets[first:]))
        boundaries = {*all_offsets, len(body)}
        if any(end not in boundaries for end in container.block_ends):
            return None  # a record would span blocks: let the full decode judge the file
        return _Decoded(container.schema_text, body, all_offsets, (*manifests, *tail))


_DECODERS: dict[str, RecordDecoder | None] = {}


def _decoder(container: AvroContainer) -> RecordDecoder | None:
    """The compiled decoder for the container's writer schema (None: use fastavro)."""
    text = container.schema_text
    if text not in _DECODERS:
        if len(_DECODERS) >= 64:
            _DECODERS.clear()
        _DECODERS[text] = manifest_file_decoder(container.writer_schema)
    return _DECODERS[text]


def _decode_range(
    container: AvroContainer, start: int, end: int, what: str
) -> tuple[list[ManifestFile], list[int]]:
    """The manifests of ``body[start:end]`` and the offset of each record.

    Each manifest keeps its record's bytes (see :func:`carry_record`).
    """
    body, schema_text = container.body, container.schema_text
    decode = _decoder(container)
    manifests: list[ManifestFile] = []
    offsets: list[int] = []
    if decode is None:
        try:
            records, offsets = container.decode(start, end)
        except Exception as exc:  # fastavro raises many kinds of errors for bad input
            raise InvalidMetadata(
                f"{what}: not a readable Avro file ({type(exc).__name__}: {exc})"
            ) from exc
        manifests = _manifest_files(records, container.writer_schema, what)
    else:
        position = start
        try:
            while position < end:
                offsets.append(position)
                manifest, position = decode(body, position)
                manifests.append(manifest)
        except (IndexError, ValueError, struct.error) as exc:
            raise InvalidMetadata(
                f"{what}: malformed manifest_file record ({type(exc).__name__}: {exc})"
            ) from exc
        if position != end:
            raise InvalidMetadata(f"{what}: a manifest_file record runs past its block")
    ends = (*offsets[1:], end) if offsets else ()
    for manifest, first, last in zip(manifests, offsets, ends, strict=True):
        carry_record(manifest, schema_text, body[first:last])
    return manifests, offsets


def _first_shared(body: bytes, old: bytes, offsets: tuple[int, ...]) -> int | None:
    """The first record of ``old`` from which on ``old``'s records end ``body``, or None."""
    if not offsets:
        return None
    if body.endswith(old):
        return 0  # the common case: the whole previous list is the tail
    # Sharing from record i on implies sharing from every later record: bisect for the
    # first record that starts a shared tail.
    low, high = 1, len(offsets)
    while low < high:
        middle = (low + high) // 2
        if body.endswith(old[offsets[middle] :]):
            high = middle
        else:
            low = middle + 1
    return low if low < len(offsets) else None
