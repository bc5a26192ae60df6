"""The compiled snapshot reader (``_snapshots.pyx``) builds what its Python twin
(``snapshots._plain_snapshot`` and ``written_as_read``) builds, for any JSON object, and
metadata read either way is the same metadata and writes the same bytes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.spec import snapshots as snapshots_module
from icewright.spec import table_metadata
from icewright.spec.snapshots import Snapshot, Summary, read_plain_snapshots
from icewright.spec.table_metadata import TableMetadata

from .test_snapshot_texts import ODD_SNAPSHOTS, _document, _snapshot

LONG = 1 << 63
INT = 1 << 31

# Values at and beyond each limit a field has, and of every JSON type.
numbers = (
    st.sampled_from(
        [0, 1, -1, INT - 1, INT, -INT, -INT - 1, LONG - 1, LONG, -LONG, -LONG - 1, True, False]
    )
    | st.integers()
)
odd = st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=3)
values = numbers | odd | st.lists(st.integers(), max_size=2)
strings = st.text(max_size=8)
summaries = st.dictionaries(
    st.sampled_from(["operation", "added-records", "x"]) | strings,
    st.sampled_from(["append", "replace", "overwrite", "delete", "merge"]) | strings | values,
    max_size=4,
)
KEYS = [
    "sequence-number",
    "snapshot-id",
    "parent-snapshot-id",
    "timestamp-ms",
    "manifest-list",
    "schema-id",
]


@st.composite
def snapshot_objects(draw: st.DrawFn) -> Any:
    """Mostly plain snapshot objects, each field now and then missing, null, of another
    type or out of range, with an unknown key or a summary of any shape."""
    if draw(st.integers(0, 20)) == 0:
        return draw(values)
    o: dict[str, Any] = {
        "sequence-number": draw(st.integers(0, 100)),
        "snapshot-id": draw(st.integers(-LONG, LONG - 1)),
        "parent-snapshot-id": draw(st.integers(-LONG, LONG - 1)),
        "timestamp-ms": draw(st.integers(0, 2_000_000_000_000)),
        "manifest-list": draw(strings),
        "schema-id": draw(st.integers(-INT, INT - 1)),
        "summary": {"operation": "append", "added-records": "1"},
    }
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=3)):
        change = draw(st.sampled_from(["drop", "null", "other"]))
        if change == "drop":
            o.pop(key, None)
        elif change == "null":
            o[key] = None
        else:
            o[key] = draw(values)
    if draw(st.booleans()):
        o["summary"] = draw(summaries | values)
    if draw(st.integers(0, 5)) == 0:
        o[draw(st.sampled_from(["first-row-id", "manifests", "x"]))] = draw(values)
    if draw(st.integers(0, 5)) == 0:  # keys in another order
        o = dict(reversed(o.items()))
    return o


def _fields(snapshot: Snapshot | None) -> Any:
    """Every field with its type, and the summary's items in order."""
    if snapshot is None:
        return None
    out = []
    for f in dataclasses.fields(snapshot):
        value = getattr(snapshot, f.name)
        if isinstance(value, Summary):
            value = (value.operation, list(value.items()))
        out.append((f.name, type(value), value))
    return out


def test_the_installed_package_has_its_compiled_reader() -> None:
    # compiled when the package is installed; a silent fallback to Python would make the
    # first commit of each process slower on a long history
    from icewright.spec import _snapshots

    assert _snapshots.__file__ is not None
    assert not _snapshots.__file__.endswith(".py")
    assert snapshots_module._COMPILED_READER is not None


@settings(max_examples=400, deadline=None)
@given(objects=st.lists(snapshot_objects(), max_size=6), version=st.sampled_from([1, 2, 3]))
def test_the_compiled_reader_builds_what_python_builds(objects: list[Any], version: int) -> None:
    compiled, compiled_written = read_plain_snapshots(objects, version)
    python, python_written = snapshots_module._read_plain_in_python(objects, version)
    assert [_fields(s) for s in compiled] == [_fields(s) for s in python]
    assert compiled_written == python_written
    for s, o in zip(compiled, objects, strict=True):
        if s is not None:
            assert s == Snapshot.from_json(o)  # and the general reader agrees


def test_the_reader_builds_plain_snapshots_and_leaves_the_rest() -> None:
    plain = _snapshot(1)
    objects = [plain, *ODD_SNAPSHOTS, {**plain, "snapshot-id": True}, "x"]
    built, written = read_plain_snapshots(objects, 2)
    assert built[0] == Snapshot.from_json(plain)
    assert written == [0]  # the null parent is built, but written without the null
    assert built[3] is not None and built[3].parent_snapshot_id is None
    assert built[1] is not None and built[1].summary is not None
    assert built[1].summary.operation.value == "overwrite"  # no operation: an overwrite
    assert built[2] is not None and built[2].summary is None  # an empty summary: none
    assert built[5] is not None and built[5].sequence_number == 0  # v1 in v2: built, not as written
    assert [built[4], *built[6:]] == [None, None, None]  # an unknown key, a bool id, a string
    # the summary keeps "operation" first, whatever the file's order
    reordered = {**plain, "summary": {"added-records": "1", "operation": "delete"}}
    (snapshot,), _ = read_plain_snapshots([reordered], 2)
    assert snapshot is not None and snapshot.summary is not None
    assert list(snapshot.summary) == ["operation", "added-records"]


def test_the_reader_refuses_types_whose_slots_it_would_not_fill() -> None:
    from icewright.spec._snapshots import SnapshotReader

    @dataclasses.dataclass(frozen=True, slots=True)
    class Bigger:
        snapshot_id: int
        more: int

    with pytest.raises(TypeError, match="slots this reader does not fill"):
        SnapshotReader(Bigger, Summary, {"overwrite": None})


@pytest.mark.parametrize("version", [1, 2])
def test_metadata_read_in_c_or_in_python_is_the_same(
    version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshots = [_snapshot(n) for n in range(6, 30)]
    if version == 1:
        snapshots = [{k: v for k, v in s.items() if k != "sequence-number"} for s in snapshots]
    snapshots[3:3] = ODD_SNAPSHOTS
    raw = json.dumps(_document(version, snapshots)).encode()
    table_metadata._SNAPSHOT_JSON.clear()
    compiled = TableMetadata.from_json(raw)
    compiled_json = compiled.to_json()
    monkeypatch.setattr(snapshots_module, "_COMPILED_READER", None)
    table_metadata._SNAPSHOT_JSON.clear()
    python = TableMetadata.from_json(raw)
    assert python == compiled
    assert [_fields(s) for s in python.snapshots] == [_fields(s) for s in compiled.snapshots]
    assert python.to_json() == compiled_json


def test_a_repeated_snapshot_id_is_refused_however_the_metadata_is_made() -> None:
    raw = _document(2, [_snapshot(1), _snapshot(2)])
    metadata = TableMetadata.from_json(json.dumps(raw))
    with pytest.raises(Exception, match="snapshot-id 1001 appears more than once"):
        TableMetadata.from_json(json.dumps({**raw, "snapshots": [_snapshot(1), *raw["snapshots"]]}))
    with pytest.raises(Exception, match="snapshot-id 1001 appears more than once"):
        dataclasses.replace(metadata, snapshots=(*metadata.snapshots, metadata.snapshots[0]))
    # each metadata made from another finds every snapshot of its own
    added = dataclasses.replace(metadata.snapshots[1], snapshot_id=7, sequence_number=3)
    later = metadata.add_snapshot(added).with_last_updated(1_800_000_000_000)
    assert later.snapshot_by_id(7) is added
    assert [later.snapshot_by_id(s.snapshot_id) for s in metadata.snapshots] == list(
        metadata.snapshots
    )
    assert metadata.snapshot_by_id(7) is None
