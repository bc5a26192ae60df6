"""A metadata file's snapshot texts are reused when the metadata is written again
(``documents.loads_keeping_texts``, ``table_metadata._snapshots``): what is written must
equal, as JSON, what encoding every snapshot anew writes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.spec import table_metadata
from icewright.spec.documents import SourcedList, load_document, loads_keeping_texts
from icewright.spec.table_metadata import TableMetadata

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    document=st.dictionaries(st.text(), json_values, max_size=4),
    snapshots=st.lists(json_values, max_size=4),
    indent=st.sampled_from([None, 0, 2]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]),
)
def test_the_walk_reads_what_json_loads_reads(
    document: dict[str, Any], snapshots: list[Any], indent: int | None, separators: Any
) -> None:
    document = {**document, "snapshots": snapshots}
    text = json.dumps(document, indent=indent, separators=separators, ensure_ascii=False)
    read = loads_keeping_texts(f" \n{text}\t", "snapshots")
    assert read == json.loads(text)
    kept = read["snapshots"]
    assert isinstance(kept, SourcedList)
    assert [json.loads(t) for t in kept.texts] == snapshots


# Keys written without escapes (a key with one makes the spans give up: tested below).
plain_keys = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\')
)


@settings(max_examples=200, deadline=None)
@given(
    document=st.dictionaries(plain_keys, json_values, max_size=4),
    snapshots=st.lists(json_values, max_size=4),
    indent=st.sampled_from([None, 0, 2]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]),
    ascii_only=st.booleans(),
    bom=st.booleans(),
)
def test_the_spans_in_the_bytes_hold_what_json_loads_reads(
    document: dict[str, Any],
    snapshots: list[Any],
    indent: int | None,
    separators: Any,
    ascii_only: bool,
    bom: bool,
) -> None:
    # given the file's bytes, json.loads reads the text and the compiled array_spans
    # finds each element's bytes (views, not copies)
    document = {**document, "snapshots": snapshots}
    text = json.dumps(document, indent=indent, separators=separators, ensure_ascii=ascii_only)
    encoded = (b"\xef\xbb\xbf" if bom else b"") + f" \n{text}\t".encode()
    read = loads_keeping_texts(encoded.decode("utf-8-sig"), "snapshots", encoded)
    assert read == json.loads(text)
    kept = read["snapshots"]
    assert isinstance(kept, SourcedList)
    assert all(isinstance(t, memoryview) for t in kept.texts)
    assert [json.loads(bytes(t)) for t in kept.texts] == snapshots


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('{"snapshots": [{"a": "]}\\""}, 2], "x": 1}', [{"a": ']}"'}, 2]),
        ('{"snapshots": [1], "snapshots": [2, 3]}', [2, 3]),  # the last one, as json.loads
        ('{"snapshots": [1], "snapshots": 4}', None),
        ('{"snap\\u0073hots": [1]}', None),  # an escaped key: no texts
        ('{"other": [1]}', None),
        ("{}", None),
    ],
)
def test_the_spans_follow_json_loads_or_give_up(text: str, kept: list[Any] | None) -> None:
    read = loads_keeping_texts(text, "snapshots", text.encode())
    assert read == json.loads(text)
    value = read.get("snapshots")
    if kept is None:
        assert not isinstance(value, SourcedList)
    else:
        assert isinstance(value, SourcedList)
        assert [json.loads(bytes(t)) for t in value.texts] == kept


@pytest.mark.parametrize(
    "text",
    ['{"snapshots": [1, 2,]}', '{"snapshots": [1 2]}', '{"a": 1', "[1, 2]", '{"a": 1} x', ""],
)
def test_anything_unexpected_is_left_to_json_loads(text: str) -> None:
    try:
        expected: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        with pytest.raises(json.JSONDecodeError) as got:
            loads_keeping_texts(text, "snapshots")
        assert str(got.value) == str(exc)
    else:
        assert loads_keeping_texts(text, "snapshots") == expected


def _snapshot(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "sequence-number": n,
        "snapshot-id": 1000 + n,
        "parent-snapshot-id": 999 + n,
        "timestamp-ms": 1_700_000_000_000 + n,
        "summary": {"operation": "append", "added-records": str(n)},
        "manifest-list": f"file:///t/metadata/snap-{n}.avro",
        "schema-id": 0,
        **fields,
    }


def _document(version: int, snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    last = snapshots[-1]["snapshot-id"]
    return {
        "format-version": version,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "file:///t",
        "last-sequence-number": len(snapshots),
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": 1,
        "current-schema-id": 0,
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
            }
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": last,
        "refs": {"main": {"snapshot-id": last, "type": "branch"}},
        "snapshots": snapshots,
        "snapshot-log": [],
        "metadata-log": [],
    }


# Snapshots whose text is reused, and snapshots whose text differs from what icewright
# writes for them (a summary without an operation, an empty summary, a null parent, an
# unknown key, a v1 snapshot in a v2 table): each must come out as a fresh encoding would.
ODD_SNAPSHOTS = [
    _snapshot(1, summary={"added-records": "1"}),
    _snapshot(2, summary={}),
    _snapshot(3, **{"parent-snapshot-id": None}),
    _snapshot(4, **{"x-unknown": 1}),
    {k: v for k, v in _snapshot(5).items() if k != "sequence-number"},
]


def _fresh_encoding(metadata: TableMetadata) -> Any:
    table_metadata._SNAPSHOT_JSON.clear()
    return json.loads(metadata.to_json())


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("indent", [None, 2])
def test_reused_texts_write_what_a_fresh_encoding_writes(version: int, indent: int | None) -> None:
    snapshots = [_snapshot(n) for n in range(6, 40)]
    if version == 1:
        snapshots = [{k: v for k, v in s.items() if k != "sequence-number"} for s in snapshots]
    snapshots[3:3] = ODD_SNAPSHOTS
    raw = json.dumps(_document(version, snapshots), indent=indent).encode()
    table_metadata._SNAPSHOT_JSON.clear()
    metadata = TableMetadata.from_json(raw)
    reused = len(snapshots) - (len(ODD_SNAPSHOTS) if version >= 2 else len(ODD_SNAPSHOTS) - 1)
    assert len(table_metadata._SNAPSHOT_JSON) == reused  # the plain ones keep their text
    written = json.loads(metadata.to_json())
    assert written == _fresh_encoding(TableMetadata.from_json(raw))

    # After an expire (snapshots removed) and a commit (one added), the same holds.
    table_metadata._SNAPSHOT_JSON.clear()
    metadata = TableMetadata.from_json(metadata.to_json())
    current = metadata.current_snapshot_id
    kept = tuple(s for s in metadata.snapshots if s.snapshot_id % 3 or s.snapshot_id == current)
    added = type(kept[0])(
        snapshot_id=5000,
        parent_snapshot_id=kept[-1].snapshot_id,
        sequence_number=metadata.last_sequence_number + 1 if version >= 2 else 0,
        timestamp_ms=1_800_000_000_000,
        manifest_list="file:///t/metadata/snap-new.avro",
        summary=kept[0].summary,
        schema_id=0,
    )
    changed = dataclasses.replace(metadata, snapshots=kept).add_snapshot(added)
    written = json.loads(changed.to_json())
    assert written == _fresh_encoding(changed)
    assert {s["snapshot-id"] for s in written["snapshots"]} == {
        *(s.snapshot_id for s in kept),
        5000,
    }


def test_the_document_reader_keeps_snapshot_texts() -> None:
    text = json.dumps(_document(2, [_snapshot(1), _snapshot(2)]), indent=2)
    read = load_document(text, "table metadata", keep_texts_of="snapshots")
    assert isinstance(read["snapshots"], SourcedList)
    assert read == json.loads(text)
