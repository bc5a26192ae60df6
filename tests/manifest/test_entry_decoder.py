"""The manifest entry decoders (in C and in Python): projection, partition refusal,
unknown fields, and the two giving the same entries for any manifest."""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass, replace
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.expressions import InclusiveMetricsEvaluator, parse
from icewright.manifest import (
    ColumnMap,
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestWriter,
    entry_decoder,
    open_manifest,
    read_manifest,
)
from icewright.manifest.avro_codec import open_container
from icewright.manifest.entry_decoder import (
    METRICS_MAPS,
    compiled_entry_decoder,
    manifest_entry_decoder,
    partition_field_readers,
)

from .samples import SCHEMA, SPEC, data_file
from .test_manifest import partitioned_files, write_mixed


@pytest.fixture(params=["in C", "in Python"])
def implementation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with each decoder (decoders are remembered by schema: forget)."""
    monkeypatch.setattr(entry_decoder, "COMPILED", request.param == "in C")
    monkeypatch.setattr(entry_decoder, "_DECODERS", {})
    return str(request.param)


with_each_decoder = pytest.mark.usefixtures("implementation")


def test_the_installed_package_has_its_compiled_decoder() -> None:
    # pip/uv compile _entries.pyx when the package is installed; a silent fallback to
    # Python would make planning several times slower
    from icewright.manifest import _entries

    assert _entries.__file__ is not None
    assert not _entries.__file__.endswith(".py")


def stripped(entry: ManifestEntry, keep: tuple[str, ...] = ()) -> Any:
    return entry.data_file.replace(**{m: None for m in METRICS_MAPS if m not in keep})


@with_each_decoder
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


@with_each_decoder
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
    # row ids are given in order to every live entry, refused ones included
    with_ids = committed.replace(first_row_id=100)
    lineage = read_manifest(data, with_ids, partition_filter=only_eu)
    unfiltered = read_manifest(data, with_ids)
    assert lineage == [unfiltered[0], unfiltered[3]]
    assert [e.data_file.first_row_id for e in unfiltered] == [100, 110, 115, None]


@with_each_decoder
def test_file_filter_leaves_out_refused_live_entries_only(monkeypatch: Any) -> None:
    data, manifest = write_mixed(2, SPEC, partitioned_files())  # 10, 5, 7 and 3 (deleted) rows
    committed = manifest.replace(sequence_number=9)
    full = read_manifest(data, committed)

    def big(f: DataFile) -> bool:
        return f.record_count >= 7

    kept = read_manifest(data, committed, file_filter=big)
    assert kept == [full[0], full[2], full[3]]
    both = read_manifest(
        data, committed, file_filter=big, partition_filter=lambda p: p[0] is not None
    )
    assert both == kept
    assert read_manifest(data, committed, file_filter=lambda f: False) == [full[3]]
    # without a manifest record (no inheritance), and through fastavro: the same files
    stored = read_manifest(data, file_filter=big)
    assert [e.data_file for e in stored] == [e.data_file for e in kept]
    monkeypatch.setattr(entry_decoder, "_DECODERS", {})
    monkeypatch.setattr(entry_decoder, "manifest_entry_decoder", lambda *a, **k: None)
    monkeypatch.setattr(entry_decoder, "compiled_entry_decoder", lambda *a, **k: None)
    assert read_manifest(data, committed, file_filter=big) == kept


@pytest.mark.parametrize(
    ("where", "kept"),
    [("id < 1", 0), ("id <= 1", 3), ("id > 99", 0), ("id >= 99", 3), ("id = 50", 3)],
)
def test_bound_limits_refuse_what_the_metrics_filter_refuses(where: str, kept: int) -> None:
    # the sample files' ids run from 1 to 99 (8-byte bounds of field 1)
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    committed = manifest.replace(sequence_number=9)
    evaluator = InclusiveMetricsEvaluator(SCHEMA, parse(where))
    judged: list[DataFile] = []

    def keep(f: DataFile) -> bool:
        judged.append(f)
        return evaluator.eval(f)

    plain = read_manifest(data, committed, file_filter=evaluator.eval)
    limited = read_manifest(
        data, committed, file_filter=keep, bound_limits=evaluator.bound_limits()
    )
    assert limited == plain
    assert len([e for e in limited if e.is_live]) == kept
    assert len(judged) == kept  # in C, a file breaking a limit is not even built


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_bound_limits_and_the_filter_agree_on_any_bounds(data: st.DataObject) -> None:
    # the C decoder checks limits on the stored bytes, before building a file: the same
    # files as the metrics filter keeps, whatever the bounds (absent, 8 bytes, the wrong
    # width) and the entries' statuses
    longs = st.integers(-(2**63), 2**63 - 1)
    bound = (
        st.none()
        | longs.map(lambda v: v.to_bytes(8, "little", signed=True))
        | st.binary(max_size=5)
    )
    files = []
    for n in range(data.draw(st.integers(1, 6))):
        lower, upper = data.draw(bound), data.draw(bound)
        f = data_file(
            f"s3://b/t/{n}.parquet",
            ("eu", 1, 1, None),
            lower_bounds=None if lower is None else {2: b"a", 1: lower},
            upper_bounds=None if upper is None else {1: upper},
        )
        files.append((data.draw(st.sampled_from(["add", "existing", "delete"])), f))
    where = f"id {data.draw(st.sampled_from(['<', '<=', '>', '>=', '=']))} {data.draw(longs)}"
    evaluator = InclusiveMetricsEvaluator(SCHEMA, parse(where))
    written = _write(2, files)
    plain = read_manifest(written, file_filter=evaluator.eval)
    limited = read_manifest(
        written, file_filter=evaluator.eval, bound_limits=evaluator.bound_limits()
    )
    assert limited == plain


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


@with_each_decoder
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
    assert compiled_entry_decoder(schema, [str] * len(SPEC.fields), 0) is not None
    compiled = read_manifest(other, committed)
    assert compiled == read_manifest(data, committed)
    # the same manifest through fastavro (the path for schemas the decoders refuse)
    monkeypatch.setattr(entry_decoder, "_DECODERS", {})
    monkeypatch.setattr(entry_decoder, "manifest_entry_decoder", lambda *a, **k: None)
    monkeypatch.setattr(entry_decoder, "compiled_entry_decoder", lambda *a, **k: None)
    assert read_manifest(other, committed) == compiled


@with_each_decoder
def test_a_column_written_twice_in_a_metrics_map_keeps_its_last_value() -> None:
    # As a dict (and fastavro, Iceberg Java) reads such a map; the maps are ColumnMaps,
    # those of the files before and after it share their index.
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    reader = fastavro.reader(io.BytesIO(data))
    records = [r for r in reader if isinstance(r, dict)]
    counts = records[1]["data_file"]["value_counts"]
    records[1]["data_file"]["value_counts"] = [*counts, {"key": counts[0]["key"], "value": 77}]
    buf = io.BytesIO()
    metadata = {k: v for k, v in reader.metadata.items() if k != "avro.schema"}
    fastavro.writer(buf, reader.writer_schema, records, metadata=metadata)

    entries = read_manifest(buf.getvalue(), manifest.replace(sequence_number=9))
    expected = {c["key"]: c["value"] for c in counts} | {counts[0]["key"]: 77}
    assert entries[1].data_file.value_counts == expected
    assert list(entries[1].data_file.value_counts) == list(expected)
    assert all(type(e.data_file.value_counts) is ColumnMap for e in entries)
    for i in (0, 2):
        written = records[i]["data_file"]["value_counts"]
        assert entries[i].data_file.value_counts == {c["key"]: c["value"] for c in written}


@with_each_decoder
def test_filters_apply_when_the_status_is_written_last() -> None:
    # another writer's field order: the decoder cannot skip a refused entry early, and
    # still leaves it out
    data, manifest = write_mixed(2, SPEC, partitioned_files())
    reader = fastavro.reader(io.BytesIO(data))
    schema = copy.deepcopy(reader.writer_schema)
    fields = schema["fields"]  # type: ignore[index]
    fields.append(fields.pop(next(i for i, f in enumerate(fields) if f["name"] == "status")))
    buf = io.BytesIO()
    metadata = {k: v for k, v in reader.metadata.items() if k != "avro.schema"}
    fastavro.writer(buf, schema, list(fastavro.reader(io.BytesIO(data))), metadata=metadata)
    committed = manifest.replace(sequence_number=9)
    asked: list[Any] = []

    def only_eu(partition: tuple[Any, ...]) -> bool:
        asked.append(partition)
        return partition[0] == "eu"

    moved = read_manifest(buf.getvalue(), committed, partition_filter=only_eu)
    assert moved == read_manifest(data, committed, partition_filter=only_eu)
    assert [e.data_file.partition[0] for e in moved] == ["eu", "ap"]  # ap: DELETED
    assert len(asked) == 6  # three live entries, once per read
    big = read_manifest(buf.getvalue(), committed, file_filter=lambda f: f.record_count >= 7)
    assert [e.data_file.record_count for e in big] == [10, 7, 3]


@pytest.mark.parametrize("decoder", [manifest_entry_decoder, compiled_entry_decoder])
def test_schemas_the_decoder_does_not_compile(decoder: Any) -> None:
    assert decoder("string", [], 0) is None
    assert decoder({"type": "record", "name": "r", "fields": []}, [], 0) is None
    # a data file field holding a record it does not know how to read
    data, _ = write_mixed(2, SPEC, partitioned_files())
    schema = copy.deepcopy(fastavro.reader(io.BytesIO(data)).writer_schema)
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]  # type: ignore[index]
    key_metadata = next(f for f in data_file["fields"] if f["name"] == "key_metadata")
    key_metadata["type"] = {"type": "record", "name": "km", "fields": []}
    assert decoder(schema, [], 0) is None
    # a union other than ["null", T] in a field that is read
    key_metadata["type"] = ["null", "bytes", "string"]
    assert decoder(schema, [], 0) is None


# --- the two decoders agree -------------------------------------------------------------

_names = st.text(alphabet="abcdé/-_.", min_size=1, max_size=12)
_counts = st.dictionaries(st.integers(1, 40), st.integers(0, 2**40), max_size=4)
_bounds = st.dictionaries(st.integers(1, 40), st.binary(max_size=9), max_size=4)


@st.composite
def _files(draw: st.DrawFn, version: int) -> list[tuple[str, DataFile]]:
    """Entries of every status with random metrics (or none), partitions and options: of
    a data manifest, or (v2 on) of a delete manifest."""
    out: list[tuple[str, DataFile]] = []
    deletes = version > 1 and draw(st.booleans())
    kinds = [FileContent.POSITION_DELETES, FileContent.EQUALITY_DELETES]

    def again(name: str, fresh: Any) -> Any:
        # often a value an earlier file has (the C decoder shares repeated values)
        seen = [getattr(f, name) for _, f in out if getattr(f, name) is not None]
        return draw(st.sampled_from(seen)) if seen and draw(st.booleans()) else fresh

    for n in range(draw(st.integers(1, 6))):
        content = draw(st.sampled_from(kinds)) if deletes else FileContent.DATA
        options: dict[str, Any] = {
            name: draw(st.none() | (_bounds if "bounds" in name else _counts))
            for name in METRICS_MAPS
        }
        options["split_offsets"] = again(
            "split_offsets", draw(st.none() | st.lists(st.integers(0, 2**50), max_size=3))
        )
        options["key_metadata"] = draw(st.none() | st.binary(max_size=4))
        options["sort_order_id"] = draw(st.none() | st.integers(0, 3))
        if content is FileContent.EQUALITY_DELETES:
            ids = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
            options["equality_ids"] = again("equality_ids", ids)
        if version >= 2 and content is FileContent.POSITION_DELETES:
            options["referenced_data_file"] = draw(st.none() | _names)
        partition = again(
            "partition",
            (
                draw(st.none() | _names),
                draw(st.none() | st.integers(-(2**31), 2**31 - 1)),
                draw(st.integers(0, 15)),
                draw(st.none() | _names),
            ),
        )
        f = data_file(
            f"s3://b/t/{draw(_names)}-{n}.parquet",
            partition,
            records=draw(st.integers(0, 2**40)),
            content=content,
            **options,
        )
        out.append((draw(st.sampled_from(["add", "existing", "delete"])), f))
    return out


def _write(version: int, files: list[tuple[str, DataFile]]) -> bytes:
    deletes = files[0][1].content is not FileContent.DATA
    w = ManifestWriter(
        format_version=version,
        spec=SPEC,
        schema=SCHEMA,
        snapshot_id=7,
        content=ManifestContent.DELETES if deletes else ManifestContent.DATA,
    )
    for how, f in files:
        if how == "add":
            w.add(f)
        elif how == "existing":
            w.existing(f, snapshot_id=5, data_sequence_number=2, file_sequence_number=2)
        else:
            w.delete(f, data_sequence_number=3, file_sequence_number=3)
    return w.finish("s3://b/t/metadata/m.avro")[0]


def _fields(f: DataFile) -> list[tuple[str, type, Any]]:
    """Every field of ``f`` with its value's type (``==`` alone takes 1 for True)."""
    names = DataFile.__dataclass_fields__
    return [(name, type(getattr(f, name)), getattr(f, name)) for name in names]


def _decoders(data: bytes, metrics: frozenset[str]) -> tuple[Any, Any, Any]:
    container = open_container(data, "a test manifest")
    converters = [c for _, c in partition_field_readers(container.writer_schema)]
    compiled = compiled_entry_decoder(container.writer_schema, converters, 2, metrics)
    python = manifest_entry_decoder(container.writer_schema, converters, 2, metrics)
    assert compiled is not None and python is not None
    return container, compiled, python


@settings(max_examples=80, deadline=None)
@given(data=st.data(), version=st.sampled_from([1, 2, 3]))
def test_both_decoders_give_the_same_entries(data: st.DataObject, version: int) -> None:
    files = data.draw(_files(version))
    metrics = frozenset(data.draw(st.sets(st.sampled_from(METRICS_MAPS))))
    refused = data.draw(st.sets(st.none() | _names, max_size=2))
    container, compiled, python = _decoders(_write(version, files), metrics)
    for accept in (None, lambda partition: partition[0] not in refused):
        in_c = compiled.decode(container.body, container.record_count, accept)
        in_python = entry_decoder._decode_in_python(container, python, accept)
        assert in_c == in_python
        for row in in_c:  # the files compare equal field by field, types included
            assert _fields(row[4]) == _fields(in_python[in_c.index(row)][4])
            assert type(row[0]) is type(in_python[in_c.index(row)][0])
    # what was written comes back (DELETED entries are kept whatever accept says)
    everything = compiled.decode(container.body, container.record_count)
    assert [row[4].file_path for row in everything] == [f.file_path for _, f in files]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_corrupt_entries_are_a_value_error_in_c(data: st.DataObject) -> None:
    """Bytes changed or cut anywhere, in maps read or skipped: the C decoder raises
    ValueError, never reads past the buffer; what it does decode, the Python decoder
    decodes the same."""
    files = data.draw(_files(2))
    metrics = frozenset(data.draw(st.sets(st.sampled_from(METRICS_MAPS))))
    container, compiled, python = _decoders(_write(2, files), metrics)
    body = bytearray(container.body)
    for _ in range(data.draw(st.integers(1, 4))):
        if body:
            body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
    cut = bytes(body[: data.draw(st.integers(0, len(body)))])
    count = container.record_count
    try:
        in_c = compiled.decode(cut, count)
    except ValueError:
        return
    assert in_c == entry_decoder._decode_in_python(replace(container, body=cut), python, None)


def test_the_compiled_decoder_fills_only_slotted_files() -> None:
    # It stores each field at its slot's offset: a type without such slots is refused
    # when the decoder is made, never written into.
    from icewright.manifest._entries import EntryDecoder

    class File:
        file_path: str
        file_format: str
        record_count: int
        file_size_in_bytes: int
        content: FileContent = FileContent.DATA
        partition: tuple[Any, ...] = ()

    WithDict = dataclass(frozen=True)(type("WithDict", (), dict(vars(File))))
    slotted = dataclass(frozen=True, slots=True)(type("Slotted", (), dict(vars(File))))

    names = ["file_path", "file_format", "record_count", "file_size_in_bytes"]
    defaults = {f: None for f in [*names, "partition"]}
    plan = ("record", [])
    args = ({0: FileContent.DATA}, {}, str)
    with pytest.raises(TypeError, match=r"WithDict\.file_path is not a slot"):
        EntryDecoder(plan, names, [], defaults, WithDict, {}, *args)
    EntryDecoder(plan, names, [], defaults, slotted, {}, *args)
    # it also makes each file without calling __new__: a type with its own is refused
    made_its_way = type(
        "MadeItsWay", (slotted,), {"__slots__": (), "__new__": lambda cls, *a, **k: None}
    )
    with pytest.raises(TypeError, match=r"MadeItsWay is not made by object\.__new__ alone"):
        EntryDecoder(plan, names, [], defaults, made_its_way, {}, *args)


def test_the_compiled_decoder_shares_what_files_repeat() -> None:
    # A partition, a file format and split offsets that many files of a manifest repeat
    # are decoded once and the same object given to each file; more distinct values than
    # the decoder remembers (256 spans) still decode right, each its own.
    files = [
        (
            "add",
            data_file(
                f"s3://b/t/{i}.parquet",
                ("eu", 19000 + i % 700, 3, None),
                split_offsets=[4, 4 + i % 3],
            ),
        )
        for i in range(2100)
    ]
    container, compiled, python = _decoders(_write(2, files), frozenset())
    in_c = compiled.decode(container.body, container.record_count)
    assert in_c == entry_decoder._decode_in_python(container, python, None)
    decoded = [row[4] for row in in_c]
    assert [f.partition for f in decoded] == [f.partition for _, f in files]
    assert decoded[1].split_offsets == (4, 5)
    assert decoded[0].partition is not decoded[1].partition
    assert decoded[0].split_offsets is decoded[3].split_offsets
    assert decoded[1].file_format is decoded[2].file_format
    shared = {id(f.partition) for f in decoded}
    assert 700 <= len(shared) < 2100  # a repeat decoded since it was forgotten is new


def test_entries_indexed_in_another_thread_decode_the_same() -> None:
    # open_manifest, given the manifest and metrics, walks the entries (without the GIL)
    # where it runs; read_manifest then decodes from that index. An index made for other
    # metrics (another decoder) is not used.
    from concurrent.futures import ThreadPoolExecutor

    data, manifest = write_mixed(2, SPEC, partitioned_files())
    committed = manifest.replace(sequence_number=9)
    expected = read_manifest(data, committed, metrics=("lower_bounds",))
    with ThreadPoolExecutor(2) as pool:
        opened = pool.submit(
            open_manifest, data, "m.avro", manifest=committed, metrics=["lower_bounds"]
        ).result()
    assert opened.index is not None
    assert read_manifest(opened, committed, metrics=("lower_bounds",)) == expected
    everything = read_manifest(opened, committed)  # every metric: indexed again
    assert everything == read_manifest(data, committed)
    assert everything != expected


def test_the_index_refuses_entries_that_do_not_end_where_the_blocks_do() -> None:
    data, _ = write_mixed(2, SPEC, partitioned_files())
    _, compiled, _ = _decoders(data, frozenset(METRICS_MAPS))
    container = open_container(data, "m")
    body, count = container.body, container.record_count
    with pytest.raises(ValueError, match="the data ends inside a value"):
        compiled.index(body[:-3], count)
    for wrong in (count - 1, count + 1):
        with pytest.raises(ValueError, match="do not end where the blocks do"):
            compiled.index(body, wrong)
    with pytest.raises(ValueError, match="a manifest of -1 entries"):
        compiled.index(body, -1)
