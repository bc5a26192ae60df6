"""The compiled manifest entry decoder: projection, partition refusal, unknown fields."""

from __future__ import annotations

import copy
import io
from typing import Any

import fastavro
import pytest

from icewright.manifest import EntryStatus, ManifestEntry, entry_decoder, read_manifest
from icewright.manifest.entry_decoder import METRICS_MAPS, manifest_entry_decoder

from .samples import SPEC
from .test_manifest import partitioned_files, write_mixed


def stripped(entry: ManifestEntry, keep: tuple[str, ...] = ()) -> Any:
    return entry.data_file.replace(**{m: None for m in METRICS_MAPS if m not in keep})


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("keep", [(), ("lower_bounds", "upper_bounds"), METRICS_MAPS])
def test_metrics_maps_not_asked_for_read_as_none(version: int, keep: tuple[str, ...]) -> None:
    data, manifest = write_mixed(version, SPEC, partitioned_files())
    committed = manifest.replace(sequence_number=9 if version > 1 else 0)
    full = read_manifest(data, committed)
    lean = read_manifest(data, committed, metrics=keep)
    assert [e.data_file for e in lean] == [stripped(e, keep) for e in full]
    assert [e.replace(data_file=stripped(e)) for e in lean] == [
        e.replace(data_file=stripped(e)) for e in full
    ]


def test_partition_filter_leaves_out_refused_live_entries_only() -> None:
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    committed = manifest.replace(sequence_number=9)
    seen: list[tuple[Any, ...]] = []

    def only_eu(partition: tuple[Any, ...]) -> bool:
        seen.append(partition)
        return partition[0] == "eu"

    entries = read_manifest(data, committed, partition_filter=only_eu)
    # the DELETED entry (ap) is kept undecided: the caller drops it by its status
    assert [(e.status, e.data_file.partition[0]) for e in entries] == [
        (EntryStatus.ADDED, "eu"),
        (EntryStatus.DELETED, "ap"),
    ]
    assert len(seen) == 3
    full = read_manifest(data, committed)
    assert entries == [full[0], full[3]]
    # row ids are given in order to every live entry: no entry may be left out then
    lineage = read_manifest(data, committed.replace(first_row_id=100), partition_filter=only_eu)
    assert len(lineage) == 4


def with_unknown_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Another writer's schema: extra fields of every kind, in the entry and the data file."""
    schema = copy.deepcopy(schema)
    extras = [
        {"name": "x_map", "type": {"type": "map", "values": "double"}, "field-id": 9001},
        {"name": "x_enum", "type": {"type": "enum", "name": "e", "symbols": ["A", "B"]}},
        {"name": "x_fixed", "type": {"type": "fixed", "name": "f2", "size": 2}},
        {"name": "x_flags", "type": {"type": "array", "items": "boolean"}},
        {"name": "x_float", "type": ["null", "float", "string"]},
        {
            "name": "x_rec",
            "type": {"type": "record", "name": "xr", "fields": [{"name": "a", "type": "long"}]},
        },
    ]
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
    data_file["fields"][1:1] = extras
    # the entry's copies refer to the named types defined in the data file by name
    by_name = [
        {**f, "type": f["type"]["name"]}
        if isinstance(f["type"], dict) and "name" in f["type"]
        else f
        for f in copy.deepcopy(extras)
    ]
    schema["fields"].extend(by_name)
    return schema


EXTRA_VALUES = {
    "x_map": {"k": 1.5, "j": -2.0},
    "x_enum": "B",
    "x_fixed": b"ab",
    "x_flags": [True, False, True],
    "x_float": "s",
    "x_rec": {"a": -(2**40)},
}


def test_unknown_fields_are_skipped_like_fastavro_reads_them(monkeypatch: Any) -> None:
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    reader = fastavro.reader(io.BytesIO(data))
    schema = with_unknown_fields(reader.writer_schema)  # type: ignore[arg-type]
    records = []
    for r in fastavro.reader(io.BytesIO(data)):
        assert isinstance(r, dict)
        records.append({**r, **EXTRA_VALUES, "data_file": {**r["data_file"], **EXTRA_VALUES}})
    buf = io.BytesIO()
    metadata = {k: v for k, v in reader.metadata.items() if k != "avro.schema"}
    fastavro.writer(buf, schema, records, metadata=metadata, codec="deflate")
    other = buf.getvalue()
    committed = manifest.replace(sequence_number=9)

    assert manifest_entry_decoder(schema, [str] * len(SPEC.fields), 0) is not None
    compiled = read_manifest(other, committed)
    assert compiled == read_manifest(data, committed)
    # the same manifest through fastavro (the path for schemas the decoder refuses)
    monkeypatch.setattr(entry_decoder, "_DECODERS", {})
    monkeypatch.setattr(entry_decoder, "manifest_entry_decoder", lambda *a, **k: None)
    assert read_manifest(other, committed) == compiled


def test_schemas_the_decoder_does_not_compile() -> None:
    assert manifest_entry_decoder("string", [], 0) is None
    assert manifest_entry_decoder({"type": "record", "name": "r", "fields": []}, [], 0) is None
    # a data file field holding a record it does not know how to read
    data, _ = write_mixed(2, SPEC, partitioned_files())
    schema = copy.deepcopy(fastavro.reader(io.BytesIO(data)).writer_schema)
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]  # type: ignore[index]
    key_metadata = next(f for f in data_file["fields"] if f["name"] == "key_metadata")
    key_metadata["type"] = {"type": "record", "name": "km", "fields": []}
    assert manifest_entry_decoder(schema, [], 0) is None
