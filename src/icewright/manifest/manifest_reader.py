"""Reading manifest files (spec: "Manifests", "Manifest Entry Fields", "Sequence Number
Inheritance", "First Row ID Inheritance").

:func:`read_manifest_metadata` reads what a manifest's Avro key-value metadata declares
(schema, partition spec, format version, content); :func:`read_manifest` reads its
``manifest_entry`` records back and applies the inheritance rules, decoding them with
:mod:`icewright.manifest.entry_decoder` (or fastavro, for a schema it does not handle);
:func:`open_manifest` does the part of that work that can run in another thread.
Writing them is :mod:`icewright.manifest.manifest`'s part.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import fastavro

from icewright.errors import InvalidMetadata, ValidationError
from icewright.manifest.avro_codec import (
    AvroContainer,
    int_header,
    named_types,
    open_container,
    read_map,
    rename_fields,
    renames_by_field_id,
    resolve,
)
from icewright.manifest.avro_schemas import (
    BLOCK_SIZE,
    DATA_FILE_FIELD_ID,
    AvroSchema,
    data_file_type,
    manifest_entry_type,
)
from icewright.manifest.data_file import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.entry_decoder import (
    METRICS_MAPS,
    EntryRow,
    decode_entries,
    index_entries,
    inherited,
    partition_field_readers,
)
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.types import StructType


class ManifestMetadata(NamedTuple):
    """What a manifest's Avro key-value metadata says (spec: "Manifests")."""

    schema: Schema
    spec: PartitionSpec
    format_version: int
    content: ManifestContent


def _where(path: str | None) -> str:
    return path if path else "manifest"


def _optional_tuple(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(value)


def read_manifest_metadata(data: bytes, path: str | None = None) -> ManifestMetadata:
    """The table schema, partition spec, format version and content a manifest declares."""
    what = _where(path)
    try:
        header = fastavro.reader(io.BytesIO(data))
        metadata = {k: v for k, v in header.metadata.items() if isinstance(v, str)}
    except Exception as exc:  # fastavro raises many kinds of errors for corrupt input
        raise InvalidMetadata(
            f"{what}: not a readable Avro file ({type(exc).__name__}: {exc})"
        ) from exc
    return _manifest_metadata(metadata, what)


def _manifest_metadata(metadata: Mapping[str, str], what: str) -> ManifestMetadata:
    for key in ("schema", "partition-spec"):
        if key not in metadata:
            raise InvalidMetadata(f"{what}: the manifest metadata has no {key!r} entry")
    try:
        schema_json = json.loads(metadata["schema"])
        if "schema-id" in metadata and isinstance(schema_json, dict):
            schema_json.setdefault("schema-id", int(metadata["schema-id"]))
        schema = Schema.from_json(schema_json)
        spec = PartitionSpec.from_fields_json(
            json.loads(metadata["partition-spec"]),
            int_header(metadata, "partition-spec-id", 0, what),
        )
    except (ValueError, ValidationError) as exc:
        raise InvalidMetadata(f"{what}: invalid schema or partition spec metadata: {exc}") from exc
    format_version = int_header(metadata, "format-version", 1, what)
    content_name = metadata.get("content", "data")
    if content_name not in ("data", "deletes"):
        raise InvalidMetadata(f"{what}: content must be 'data' or 'deletes', got {content_name!r}")
    content = ManifestContent.DELETES if content_name == "deletes" else ManifestContent.DATA
    return ManifestMetadata(schema, spec, format_version, content)


@dataclass(frozen=True, slots=True, eq=False)
class OpenedManifest:
    """A manifest file opened by :func:`open_manifest`, for :func:`read_manifest`."""

    container: AvroContainer
    index: object | None = None  # the compiled decoder's index of the entries, if made


def open_manifest(
    data: bytes,
    path: str | None = None,
    *,
    manifest: ManifestFile | None = None,
    metrics: Collection[str] | None = None,
) -> OpenedManifest:
    """The manifest file ``data`` (read from ``path``) opened for :func:`read_manifest`:
    its header read and its blocks decompressed; given the ``manifest`` and ``metrics``
    that :func:`read_manifest` will be given, its entries are also indexed by the compiled
    decoder. Both release the GIL, so threads that open manifests run beside the one
    decoding them. Malformed entries are reported by :func:`read_manifest`."""
    container = open_container(data, _where(path))
    index = None
    if manifest is not None and metrics is not None:
        # malformed entries: read_manifest meets the same error and says where
        with contextlib.suppress(IndexError, KeyError, TypeError, ValueError):
            index = index_entries(container, manifest.partition_spec_id, frozenset(metrics))
    return OpenedManifest(container, index)


def read_manifest(
    data: bytes | OpenedManifest,
    manifest: ManifestFile | None = None,
    *,
    path: str | None = None,
    metrics: Collection[str] = METRICS_MAPS,
    partition_filter: Callable[[tuple[Any, ...]], bool] | None = None,
    file_filter: Callable[[DataFile], bool] | None = None,
    bound_limits: Sequence[tuple[int, tuple[int, ...], int | None, int | None]] = (),
) -> list[ManifestEntry]:
    """Every entry of a manifest (DELETED ones too), with inherited values filled in.

    ``data`` is the manifest file's bytes, or the file opened by :func:`open_manifest`.

    With ``manifest`` (its manifest-list record) the spec's inheritance applies: a null
    snapshot id becomes the manifest's ``added_snapshot_id``; null sequence numbers of
    ADDED entries (of every entry when the manifest's sequence number is 0, as for v1)
    become the manifest's sequence number; with a manifest ``first_row_id``, data files
    without one get it in order (spec: "First Row ID Inheritance"). Without ``manifest``
    only v1's rule applies: every sequence number is 0. ``spec_id`` of each file is the
    manifest's partition spec id. Only the metrics maps named in ``metrics`` (of
    :data:`~icewright.manifest.entry_decoder.METRICS_MAPS`) are decoded; the others are
    None (scan planning asks only for what its filter reads). Live entries whose partition
    ``partition_filter`` refuses, or whose data file ``file_filter`` refuses, are left
    out (DELETED entries never are); ``bound_limits`` may leave out, before their files are
    built, live entries whose integer bounds break them (see
    :meth:`~icewright.expressions.metrics.InclusiveMetricsEvaluator.bound_limits`): pass
    only limits that ``file_filter`` enforces.
    """
    what = _where(path or (manifest.manifest_path if manifest else None))
    index = None
    if isinstance(data, OpenedManifest):
        container, index = data.container, data.index
    else:
        container = open_container(data, what)
    format_version = int_header(container.metadata, "format-version", 1, what)
    if manifest is not None:
        spec_id = manifest.partition_spec_id
    else:
        spec_id = int_header(container.metadata, "partition-spec-id", 0, what)
    # Row ids go to every live entry in order: with them, filter once they are given.
    lineage = manifest is not None and manifest.first_row_id is not None
    inherit = None
    if manifest is not None and not lineage:
        inherit = (manifest.added_snapshot_id, manifest.sequence_number)
    try:
        if lineage:
            decoded = decode_entries(container, spec_id, frozenset(metrics), index=index)
        else:
            decoded = decode_entries(
                container,
                spec_id,
                frozenset(metrics),
                partition_filter,
                keep=file_filter,
                inherit=inherit,
                limits=bound_limits,
                index=index,
            )
        if decoded is None:  # a schema the compiled decoders do not handle: fastavro
            records, _ = container.decode(0, len(container.body))
            entry_renames, file_renames = _renames(container.writer_schema)
            partition_readers = partition_field_readers(container.writer_schema)
            decoded = [
                _entry(rename_fields(r, entry_renames), file_renames, partition_readers, spec_id)
                for r in records
            ]
            inherit = None
            lineage = lineage or partition_filter is not None or file_filter is not None
    except (IndexError, KeyError, TypeError, ValueError, ValidationError) as exc:
        raise InvalidMetadata(f"{what}: malformed manifest entry: {exc}") from exc
    if inherit is not None:  # filtered and inherited by the decoder
        return decoded  # type: ignore[return-value]
    rows: list[EntryRow] = decoded  # type: ignore[assignment]
    if manifest is not None:
        entries = _inherit(rows, manifest)
    else:
        # spec: v1 manifests have no sequence numbers; they all read as 0.
        v1 = format_version == 1
        entries = [
            ManifestEntry(
                status=status,
                snapshot_id=snapshot_id,
                sequence_number=0 if v1 else seq,
                file_sequence_number=0 if v1 else file_seq,
                data_file=df,
            )
            for status, snapshot_id, seq, file_seq, df in rows
        ]
    if lineage and (partition_filter is not None or file_filter is not None):
        entries = [e for e in entries if _kept(e, partition_filter, file_filter)]
    return entries


def _kept(
    entry: ManifestEntry,
    partition_filter: Callable[[tuple[Any, ...]], bool] | None,
    file_filter: Callable[[DataFile], bool] | None,
) -> bool:
    if not entry.is_live:
        return True
    f = entry.data_file
    if partition_filter is not None and not partition_filter(f.partition):
        return False
    return file_filter is None or file_filter(f)


def _renames(writer_schema: AvroSchema) -> tuple[dict[str, str], dict[str, str]]:
    """Field renames (by field id) for the manifest_entry and data_file records."""
    named = named_types(writer_schema)
    entry_renames = renames_by_field_id(writer_schema, manifest_entry_type(3, StructType()))
    data_file_field = next(
        (f for f in writer_schema.get("fields", []) if f.get("field-id") == DATA_FILE_FIELD_ID),
        None,
    )
    if data_file_field is None:
        return entry_renames, {}
    data_file_struct = data_file_type(3, StructType())
    legacy = StructType(*data_file_struct.fields, BLOCK_SIZE)
    return entry_renames, renames_by_field_id(resolve(data_file_field["type"], named), legacy)


def _entry(
    record: dict[str, Any],
    file_renames: dict[str, str],
    partition_readers: list[tuple[str, Callable[[Any], Any]]],
    spec_id: int,
) -> EntryRow:
    raw = rename_fields(record["data_file"], file_renames)
    partition = raw["partition"]
    df = DataFile(
        content=FileContent(raw.get("content") or 0),
        file_path=raw["file_path"],
        file_format=FileFormat.parse(raw["file_format"]),
        partition=tuple(convert(partition.get(name)) for name, convert in partition_readers),
        record_count=raw["record_count"],
        file_size_in_bytes=raw["file_size_in_bytes"],
        column_sizes=read_map(raw.get("column_sizes")),
        value_counts=read_map(raw.get("value_counts")),
        null_value_counts=read_map(raw.get("null_value_counts")),
        nan_value_counts=read_map(raw.get("nan_value_counts")),
        lower_bounds=read_map(raw.get("lower_bounds")),
        upper_bounds=read_map(raw.get("upper_bounds")),
        key_metadata=raw.get("key_metadata"),
        split_offsets=_optional_tuple(raw.get("split_offsets")),
        equality_ids=_optional_tuple(raw.get("equality_ids")),
        sort_order_id=raw.get("sort_order_id"),
        spec_id=spec_id,
        first_row_id=raw.get("first_row_id"),
        referenced_data_file=raw.get("referenced_data_file"),
        content_offset=raw.get("content_offset"),
        content_size_in_bytes=raw.get("content_size_in_bytes"),
    )
    return (
        EntryStatus(record["status"]),
        record.get("snapshot_id"),
        record.get("sequence_number"),
        record.get("file_sequence_number"),
        df,
    )


def _inherit(rows: list[EntryRow], manifest: ManifestFile) -> list[ManifestEntry]:
    next_row_id = manifest.first_row_id
    assign_rows = next_row_id is not None and manifest.content is ManifestContent.DATA
    snapshot_id, seq = manifest.added_snapshot_id, manifest.sequence_number
    out = []
    for row in rows:
        df = row[4]
        if assign_rows and row[0] is not EntryStatus.DELETED and df.first_row_id is None:
            # spec: "First Row ID Inheritance"; like the reference reader, deleted entries
            # take no row ids.
            assert next_row_id is not None
            df = df.replace(first_row_id=next_row_id)
            next_row_id += df.record_count
            out.append(inherited((*row[:4], df), snapshot_id, seq))
        else:
            out.append(inherited(row, snapshot_id, seq))
    return out
