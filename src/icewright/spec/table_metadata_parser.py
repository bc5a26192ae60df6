"""Reading table metadata: the JSON of a ``*.metadata.json`` file, field by field.

Spec sections: "Table Metadata" (its fields, and Appendix C's JSON for them) and
Appendix E (how v1 fields default for later versions). A v1 file may hold only the
deprecated ``schema`` and ``partition-spec``; unknown top-level keys are kept verbatim.

:func:`parse_table_metadata` reads a parsed document; ``TableMetadata.from_json`` (in
:mod:`icewright.spec.table_metadata`) loads the file, checks its format version and
builds the object through it. The text each snapshot was read from is kept
(:data:`_SNAPSHOT_JSON`), so that writing the metadata again copies it instead of
encoding the snapshot anew.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from icewright.errors import InvalidMetadata
from icewright.spec.documents import (
    EMPTY_STRING_MAP,
    FrozenMap,
    SourcedList,
    Utf8,
    as_metadata_error,
    freeze_json,
    json_list,
    json_object,
    opt_int,
    opt_long,
    req_int,
    req_long,
    req_str,
    required_field,
    string_map,
)
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import (
    MAIN_BRANCH,
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    SnapshotRefType,
    read_plain_snapshots,
    written_as_read,
)
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortOrder
from icewright.spec.statistics import PartitionStatisticsFile, StatisticsFile

__all__ = ["parse_table_metadata"]

T = TypeVar("T")

_WHAT = "table metadata"

# Every top-level key this module understands; anything else is kept verbatim.
_KNOWN_KEYS = frozenset(
    """format-version table-uuid location last-sequence-number last-updated-ms last-column-id
    schema schemas current-schema-id partition-spec partition-specs default-spec-id
    last-partition-id properties current-snapshot-id snapshots snapshot-log metadata-log
    sort-orders default-sort-order-id refs statistics partition-statistics next-row-id
    encryption-keys""".split()  # noqa: SIM905
)

_SNAPSHOT_JSON: dict[tuple[int, int], tuple[Snapshot, Utf8]] = {}
"""The encoded JSON of snapshots by (object identity, format version), holding the object
(see ``table_metadata._snapshot_json``, which reads and fills it when writing)."""
_SNAPSHOT_JSON_LIMIT = 20_000  # a few tables with long histories; bounded memory


def _remember_snapshot_json(snapshot: Snapshot, format_version: int, encoded: Utf8) -> None:
    if len(_SNAPSHOT_JSON) >= _SNAPSHOT_JSON_LIMIT:
        _SNAPSHOT_JSON.clear()
    _SNAPSHOT_JSON[(id(snapshot), format_version)] = (snapshot, encoded)


def _list_of(o: Mapping[str, Any], key: str, parse: Callable[[Any], Any]) -> tuple[Any, ...]:
    value = o.get(key)
    if value is None:
        return ()
    return tuple(parse(item) for item in json_list(value, f"{_WHAT} field {key!r}"))


def parse_table_metadata(o: dict[str, Any], version: int, build: Callable[..., T]) -> T:
    """The metadata document ``o``, whose ``format-version`` is ``version`` (one the
    caller has checked it can read), built by ``build`` from the ``TableMetadata`` fields
    as keywords. Raises :class:`InvalidMetadata` naming the field for anything malformed
    or missing."""
    table_uuid: uuid.UUID | None = None
    raw_uuid = o.get("table-uuid")
    if raw_uuid is not None or version >= 2:
        text = req_str(o, "table-uuid", _WHAT)
        try:
            table_uuid = uuid.UUID(text)
        except ValueError:
            raise InvalidMetadata(f"{_WHAT} field 'table-uuid' is not a UUID: {text!r}") from None

    # Appendix E: "last-sequence-number must default to 0" when reading v1.
    last_sequence_number = req_long(o, "last-sequence-number", _WHAT) if version >= 2 else 0

    schemas, current_schema_id = _read_schemas(o, version)
    specs, default_spec_id = _read_specs(o, version)
    last_partition_id = opt_int(o, "last-partition-id", _WHAT)
    if last_partition_id is None:
        if version >= 2:
            required_field(o, "last-partition-id", _WHAT)
        last_partition_id = max(s.last_assigned_field_id for s in specs)
    sort_orders, default_sort_order_id = _read_sort_orders(o, version)

    current_snapshot_id = opt_long(o, "current-snapshot-id", _WHAT)
    if current_snapshot_id == -1:
        current_snapshot_id = None
    refs_obj = json_object(o.get("refs") or {}, f"{_WHAT} field 'refs'")
    refs = {name: SnapshotRef.from_json(ref) for name, ref in refs_obj.items()}
    if current_snapshot_id is not None and MAIN_BRANCH not in refs:
        # Spec: "There is always a main branch reference pointing to the
        # current-snapshot-id even if the refs map is null."
        refs = {MAIN_BRANCH: SnapshotRef(current_snapshot_id, SnapshotRefType.BRANCH), **refs}

    props = o.get("properties")
    keys = _list_of(o, "encryption-keys", lambda k: json_object(k, "an encryption key"))
    return as_metadata_error(
        _WHAT,
        lambda: build(
            format_version=version,
            table_uuid=table_uuid,
            location=req_str(o, "location", _WHAT),
            last_sequence_number=last_sequence_number,
            last_updated_ms=req_long(o, "last-updated-ms", _WHAT),
            last_column_id=req_int(o, "last-column-id", _WHAT),
            schemas=schemas,
            current_schema_id=current_schema_id,
            partition_specs=specs,
            default_spec_id=default_spec_id,
            last_partition_id=last_partition_id,
            properties=EMPTY_STRING_MAP
            if props is None
            else string_map(props, f"{_WHAT} properties"),
            current_snapshot_id=current_snapshot_id,
            snapshots=_snapshots(o, version),
            snapshot_log=_list_of(o, "snapshot-log", SnapshotLogEntry.from_json),
            metadata_log=_list_of(o, "metadata-log", MetadataLogEntry.from_json),
            sort_orders=sort_orders,
            default_sort_order_id=default_sort_order_id,
            refs=FrozenMap(refs),
            statistics=_list_of(o, "statistics", StatisticsFile.from_json),
            partition_statistics=_list_of(
                o, "partition-statistics", PartitionStatisticsFile.from_json
            ),
            next_row_id=req_long(o, "next-row-id", _WHAT) if version >= 3 else None,
            encryption_keys=keys,
            extra=freeze_json({k: v for k, v in o.items() if k not in _KNOWN_KEYS}),
        ),
    )


def _snapshots(o: Mapping[str, Any], version: int) -> tuple[Snapshot, ...]:
    """The snapshots; those whose text in the file is what :meth:`Snapshot.to_json` would
    write (as a JSON value) keep that text for the next write (:data:`_SNAPSHOT_JSON`)."""
    raw = o.get("snapshots")
    if raw is None:
        return ()
    objects = json_list(raw, f"{_WHAT} field 'snapshots'")
    texts = raw.texts if isinstance(raw, SourcedList) and len(raw.texts) == len(raw) else None
    built, written = read_plain_snapshots(objects, version)
    snapshots = tuple(
        Snapshot.from_json(objects[i]) if snapshot is None else snapshot
        for i, snapshot in enumerate(built)
    )
    if texts is None:
        return snapshots
    if len(_SNAPSHOT_JSON) + len(snapshots) > _SNAPSHOT_JSON_LIMIT:
        _SNAPSHOT_JSON.clear()
    for i in written:
        _SNAPSHOT_JSON[(id(snapshots[i]), version)] = (snapshots[i], texts[i])
    for i, snapshot in enumerate(built):
        if snapshot is None and written_as_read(objects[i], version):
            _remember_snapshot_json(snapshots[i], version, texts[i])
    return snapshots


def _id_list(
    o: Mapping[str, Any], version: int, key: str, id_key: str, parse: Callable[[Any], Any]
) -> tuple[tuple[Any, ...], int] | None:
    """A v2-required list and the id of its current entry; None if a v1 file lacks it."""
    if o.get(key) is None:
        if version >= 2:
            required_field(o, key, _WHAT)
        return None
    current = req_int(o, id_key, _WHAT)
    return _list_of(o, key, lambda item: as_metadata_error(key, lambda: parse(item))), current


def _read_schemas(o: Mapping[str, Any], version: int) -> tuple[tuple[Schema, ...], int]:
    found = _id_list(o, version, "schemas", "current-schema-id", Schema.from_json)
    if found is not None:
        return found
    # v1 written by old writers: only the deprecated current "schema".
    if o.get("schema") is None:
        raise InvalidMetadata(f"{_WHAT} (v1) has neither 'schemas' nor the deprecated 'schema'")
    schema = as_metadata_error("schema", lambda: Schema.from_json(o["schema"]))
    return (schema,), schema.schema_id


def _read_specs(o: Mapping[str, Any], version: int) -> tuple[tuple[PartitionSpec, ...], int]:
    found = _id_list(o, version, "partition-specs", "default-spec-id", PartitionSpec.from_json)
    if found is not None:
        return found
    # v1 written by old writers: only the deprecated field list, which is spec 0
    # with field ids assigned from 1000 (Appendix C, "Partition Specs").
    if o.get("partition-spec") is None:
        raise InvalidMetadata(
            f"{_WHAT} (v1) has neither 'partition-specs' nor the deprecated 'partition-spec'"
        )
    spec = as_metadata_error(
        "partition-spec", lambda: PartitionSpec.from_fields_json(o["partition-spec"])
    )
    return (spec,), spec.spec_id


def _read_sort_orders(o: Mapping[str, Any], version: int) -> tuple[tuple[SortOrder, ...], int]:
    found = _id_list(o, version, "sort-orders", "default-sort-order-id", SortOrder.from_json)
    return found or ((UNSORTED_SORT_ORDER,), UNSORTED_SORT_ORDER.order_id)
