"""Manifests clustered by partition (Iceberg Java's ``RewriteManifests``, what its Spark
action writes).

Rewriting manifests reads the live entries of many manifests and writes them again,
sorted by partition, into manifests of at most a target size, so that each manifest
covers a narrow range of partitions and a scan with a partition filter skips most of
them by their partition summaries. Three parts, shared by the commit in this process and
by Spark executors for big tables, so both write alike:

* :func:`partition_sort_key`: a partition tuple as bytes whose order is the values'
  order, field by field, nulls first (the order Spark sorts the partition struct in);
* :func:`as_existing`: an entry carried over as EXISTING, keeping the id of the snapshot
  that added its file and both sequence numbers (spec: "Sequence Number Inheritance":
  "when writing an existing file to a new manifest ... the data and file sequence
  numbers must be non-null and set to the original values");
* :func:`write_rolling`: entries in order into manifests that roll over before passing
  the target size (Java's ``RollingManifestWriter``, whose limit it keeps exactly:
  :meth:`~icewright.manifest.manifest.ManifestWriter.length` never undercounts).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

from icewright.manifest.data_file import EntryStatus, ManifestEntry, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = [
    "PartitionKey",
    "as_existing",
    "cluster",
    "partition_sort_key",
    "write_rolling",
    "writer_factory",
]

PartitionKey = Callable[[Sequence[Any]], bytes]
"""A partition tuple's sort key (:func:`partition_sort_key`)."""

_INTEGRAL = (
    IntegerType,
    LongType,
    DateType,
    TimeType,
    TimestampType,
    TimestamptzType,
    TimestampNsType,
    TimestamptzNsType,
)
_NULL, _VALUE = b"\x00", b"\x01"


def _integral(value: int) -> bytes:
    # offset binary: negative values before positive ones, byte for byte
    return (value + (1 << 63)).to_bytes(8, "big")


def _floating(value: float) -> bytes:
    bits: int = struct.unpack(">Q", struct.pack(">d", value))[0]
    # IEEE 754 ordered as unsigned: flip every bit of a negative, the sign bit of a positive
    bits = bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | 1 << 63
    return bits.to_bytes(8, "big")


def _terminated(data: bytes) -> bytes:
    # a 0 byte escaped as 0 255 and the end marked by 0 0: a prefix sorts first and the
    # next field's bytes never mix with this one's
    return data.replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _decimal(scale: int) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        unscaled = int(Decimal(value).scaleb(scale).to_integral_value())
        return (unscaled + (1 << 127)).to_bytes(16, "big")  # precision 38 fits

    return encode


def _field_key(field_type: IcebergType) -> Callable[[Any], bytes]:
    if isinstance(field_type, BooleanType):
        return lambda v: b"\x01" if v else b"\x00"
    if isinstance(field_type, _INTEGRAL):
        return _integral
    if isinstance(field_type, FloatType | DoubleType):
        return _floating
    if isinstance(field_type, DecimalType):
        return _decimal(field_type.scale)
    if isinstance(field_type, StringType):
        return lambda v: _terminated(v.encode("utf-8"))  # UTF-8 keeps code point order
    if isinstance(field_type, BinaryType | FixedType):
        return lambda v: _terminated(bytes(v))
    if isinstance(field_type, UUIDType):
        return lambda v: v.bytes
    # a type no transform yields today: grouped by its text, in no particular order
    return lambda v: _terminated(repr(v).encode("utf-8"))


def partition_sort_key(partition_type: StructType) -> PartitionKey:
    """The sort key of partition tuples of ``partition_type``: bytes that compare as the
    tuples do, field by field, with null before every value."""
    fields = [_field_key(f.field_type) for f in partition_type.fields]

    def key(partition: Sequence[Any]) -> bytes:
        return b"".join(
            _NULL if value is None else _VALUE + encode(value)
            for encode, value in zip(fields, partition, strict=True)
        )

    return key


def as_existing(entry: ManifestEntry) -> ManifestEntry:
    """``entry`` as an EXISTING entry of a new manifest: the same file, the id of the
    snapshot that added it and its data and file sequence numbers (read with inheritance
    from the manifest it came from)."""
    if entry.status is EntryStatus.EXISTING:
        return entry
    return ManifestEntry(
        status=EntryStatus.EXISTING,
        snapshot_id=entry.snapshot_id,
        sequence_number=entry.sequence_number,
        file_sequence_number=entry.file_sequence_number,
        data_file=entry.data_file,
    )


def cluster(entries: Iterable[ManifestEntry], key: PartitionKey) -> list[ManifestEntry]:
    """``entries`` sorted by partition (by ``key``), then by file path."""
    return sorted(entries, key=lambda e: (key(e.data_file.partition), e.data_file.file_path))


def writer_factory(
    metadata: TableMetadata, spec_id: int, snapshot_id: int
) -> Callable[[], ManifestWriter]:
    """New writers of data manifests of ``metadata``'s spec ``spec_id`` (in its current
    schema and format version) for the snapshot ``snapshot_id``."""
    spec = metadata.spec_by_id(spec_id)
    schema = metadata.schema()

    def new_writer() -> ManifestWriter:
        return ManifestWriter(
            format_version=metadata.format_version,
            spec=spec,
            schema=schema,
            snapshot_id=snapshot_id,
        )

    return new_writer


def write_rolling(
    entries: Iterable[ManifestEntry],
    *,
    new_writer: Callable[[], ManifestWriter],
    target_size_bytes: int,
    store: Callable[[ManifestWriter], ManifestFile],
) -> list[ManifestFile]:
    """Write ``entries``, in order, into manifests of at most ``target_size_bytes`` (one
    entry alone may make a manifest bigger): each next entry goes to the current writer
    if it fits, else the writer is stored (``store`` writes its bytes and returns its
    :class:`ManifestFile`) and a new one (``new_writer``) takes it."""
    written: list[ManifestFile] = []
    writer: ManifestWriter | None = None
    for entry in entries:
        if writer is not None and writer.add_entry(entry, max_length=target_size_bytes):
            continue
        if writer is not None:
            written.append(store(writer))
        writer = new_writer()
        writer.add_entry(entry)
    if writer is not None:
        written.append(store(writer))
    return written
