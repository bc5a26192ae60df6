"""A fast Avro binary decoder for manifest entries, projecting away what nobody reads.

Why: planning a scan of a big table is reading its manifests, and fastavro decodes each
entry into nested dicts (every metrics map an array of ``{"key", "value"}`` records), which
costs several times what the planner then does with the entry. Like
:mod:`icewright.manifest.avro_decoder` for manifest lists, the manifest's *writer* schema is
compiled once into straight-line Python that reads an entry's fields in the order written,
matched by field id, and builds the :class:`DataFile` directly. Metrics maps come out as
dicts; those the caller does not want are skipped without building anything (a scan
without a filter, or one whose filter reads no column metrics, asks for none).

Only what manifests use is compiled: primitives, ``fixed``, ``["null", T]`` unions, arrays
(of primitives or of key/value records, Iceberg's maps) and the partition record. Anything
else makes :func:`manifest_entry_decoder` return ``None``; the caller then decodes with
fastavro.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from icewright.manifest.avro_codec import (
    AvroContainer,
    as_stored,
    avro_value_converter,
    named_types,
    resolve,
)
from icewright.manifest.avro_decoder import Unsupported, _check_length, _Source, read_long
from icewright.manifest.avro_schemas import (
    DATA_FILE_FIELD_ID,
    PARTITION_FIELD_ID,
    AvroSchema,
    data_file_type,
)
from icewright.manifest.column_map import ColumnMap
from icewright.manifest.data_file import (
    METRICS_MAPS,
    UNASSIGNED_SEQ,
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestEntry,
)
from icewright.spec.types import StructType

__all__ = [
    "METRICS_MAPS",
    "EntryDecoder",
    "EntryRow",
    "decode_entries",
    "field_by_id",
    "index_entries",
    "inherited",
    "manifest_entry_decoder",
    "partition_field_readers",
]

EntryRow = tuple[EntryStatus, int | None, int | None, int | None, DataFile]
"""An entry as stored: status, snapshot id, data and file sequence numbers (None when
inherited), and the data file."""

EntryDecoder = Callable[..., tuple[EntryRow, int]]
"""``decode(data, offset, accept=None)``: the entry at an offset and the offset after it;
a live entry whose partition ``accept`` refuses comes back with None for its data file."""


# manifest_entry field id -> position in the decoded tuple (spec: "Manifest Entry Fields").
_ENTRY_IDS = {0: 0, 1: 1, 3: 2, 4: 3}
_DATA_FILE_NAMES = {f.field_id: f.name for f in data_file_type(3, StructType()).fields}
_TUPLES = ("split_offsets", "equality_ids")


def field_by_id(record_schema: AvroSchema, field_id: int, named: dict[str, dict[str, Any]]) -> Any:
    """The (resolved) type of the field of ``record_schema`` with ``field_id``, or None."""
    if not isinstance(record_schema, dict):
        return None
    for f in record_schema.get("fields", []):
        if f.get("field-id") == field_id:
            return resolve(f["type"], named)
    return None


def partition_field_readers(writer_schema: AvroSchema) -> list[tuple[str, Callable[[Any], Any]]]:
    """(Avro name, converter) of each partition field, in the order written (spec order)."""
    named = named_types(writer_schema)
    data_file = field_by_id(writer_schema, DATA_FILE_FIELD_ID, named)
    partition = field_by_id(data_file, PARTITION_FIELD_ID, named)
    if not isinstance(partition, dict) or partition.get("type") != "record":
        raise ValueError(
            f"the manifest schema has no data_file ({DATA_FILE_FIELD_ID}) partition "
            f"({PARTITION_FIELD_ID}) record"
        )
    return [(f["name"], avro_value_converter(f["type"], named)) for f in partition["fields"]]


try:  # built from _entries.pyx when the package is installed; Python does the same, slower
    from icewright.manifest._entries import EntryDecoder as CompiledEntryDecoder

    COMPILED = True
except ImportError:  # pragma: no cover - a build without a C compiler
    COMPILED = False

_DECODERS: dict[tuple[str, int, frozenset[str]], EntryDecoder | CompiledEntryDecoder | None] = {}


def decode_entries(
    container: AvroContainer,
    spec_id: int,
    metrics: frozenset[str],
    accept: Callable[[tuple[Any, ...]], bool] | None = None,
    *,
    keep: Callable[[DataFile], bool] | None = None,
    inherit: tuple[int | None, int] | None = None,
    limits: Sequence[tuple[int, tuple[int, ...], int | None, int | None]] = (),
    index: object | None = None,
) -> list[EntryRow] | list[ManifestEntry] | None:
    """The entries of a manifest's container, or None if its schema is not compiled here.

    A live entry whose partition ``accept`` refuses is left out, undecoded past its
    partition; one whose data file ``keep`` refuses is left out too. ``limits``
    (``(field id, widths, max lower, min upper)``, see
    :class:`~icewright.expressions.metrics.BoundLimit`) are a hint: the compiled decoder
    leaves out a live entry whose integer bounds break one before building its file; they
    must be limits ``keep`` enforces too (the Python decoder leaves it to ``keep``).
    With ``inherit``, the manifest's ``(added snapshot id, sequence number)``, each entry is a
    :class:`ManifestEntry` with the spec's inheritance applied (see :func:`inherited`);
    without, an :data:`EntryRow` as stored.

    ``index`` is what :func:`index_entries` made of the container for the same spec id
    and metrics, if it was called (in another thread, say); it is made here otherwise.

    Decoders are remembered by schema text, spec id and the metrics wanted (a table's
    manifests share a few schemas). Malformed data raises ``ValueError`` or
    ``IndexError``.
    """
    decode = _decoder(container, spec_id, metrics)
    if decode is None:
        return None
    if not callable(decode):  # the compiled decoder reads the whole body at once
        manifest = None if inherit is None else (ManifestEntry, *inherit)
        return decode.decode(
            container.body, container.record_count, accept, keep, manifest, limits, index
        )
    rows = _decode_in_python(container, decode, accept, keep)
    if inherit is None:
        return rows
    return [inherited(row, *inherit) for row in rows]


def index_entries(container: AvroContainer, spec_id: int, metrics: frozenset[str]) -> object | None:
    """The compiled decoder's index of the container's entries (where each field of each
    entry starts), for :func:`decode_entries` with the same spec id and metrics; None
    without the compiled decoder.

    Making it is the part of decoding that holds no Python object: a walk over every
    byte of every entry (the metrics maps a plan skips included) that runs without the
    GIL, so threads that fetch manifests make it beside the thread that decodes.
    Malformed data raises ``ValueError``.
    """
    decode = _decoder(container, spec_id, metrics)
    if decode is None or callable(decode):
        return None
    return decode.index(container.body, container.record_count)


def _decoder(
    container: AvroContainer, spec_id: int, metrics: frozenset[str]
) -> EntryDecoder | CompiledEntryDecoder | None:
    key = (container.schema_text, spec_id, metrics)
    if key in _DECODERS:
        return _DECODERS[key]
    converters = [c for _, c in partition_field_readers(container.writer_schema)]
    decode = (compiled_entry_decoder if COMPILED else manifest_entry_decoder)(
        container.writer_schema, converters, spec_id, metrics
    )
    if len(_DECODERS) < 256:
        _DECODERS[key] = decode
    return decode


def inherited(row: EntryRow, added_snapshot_id: int | None, sequence_number: int) -> ManifestEntry:
    """The entry ``row`` of a manifest with that added snapshot id and sequence number.

    spec: "Sequence Number Inheritance": a null snapshot id is the manifest's; null
    sequence numbers of ADDED entries (of every entry when the manifest's sequence number
    is 0, as for v1) are the manifest's. An uncommitted manifest (``UNASSIGNED_SEQ``) has
    no sequence number to give yet.
    """
    status, snapshot_id, data_seq, file_seq, data_file = row
    seq = sequence_number
    if seq != UNASSIGNED_SEQ and (seq == 0 or status is EntryStatus.ADDED):
        data_seq = seq if data_seq is None else data_seq
        file_seq = seq if file_seq is None else file_seq
    return ManifestEntry(
        status=status,
        snapshot_id=added_snapshot_id if snapshot_id is None else snapshot_id,
        sequence_number=data_seq,
        file_sequence_number=file_seq,
        data_file=data_file,
    )


def _decode_in_python(
    container: AvroContainer,
    decode: EntryDecoder,
    accept: Callable[[tuple[Any, ...]], bool] | None,
    keep: Callable[[DataFile], bool] | None = None,
) -> list[EntryRow]:
    body = container.body
    position, end = 0, len(body)
    rows: list[EntryRow] = []
    append = rows.append
    count = 0
    deleted = EntryStatus.DELETED
    judges = _JUDGES_PARTITIONS.get(decode, False)
    while position < end:
        row, position = decode(body, position, accept)
        count += 1
        f = row[4]
        if f is None:
            continue  # refused by its partition
        if row[0] is not deleted:
            # accept was not asked if the writer put the status after the data file
            if accept is not None and not judges and not accept(f.partition):
                continue
            if keep is not None and not keep(f):
                continue
        append(row)
    if position != end or count != container.record_count:
        raise ValueError("the entries do not end where the blocks do")
    return rows


class _EntrySource(_Source):
    """Python source of an entry decoder being generated."""

    def skip(self, schema: AvroSchema, indent: int) -> None:
        """Emit code that moves ``p`` past a value of ``schema`` without keeping it."""
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        if isinstance(schema, list):
            index = self.new("u")
            self.long(index, indent)
            for i, branch in enumerate(schema):
                self.emit(indent, f"{'if' if i == 0 else 'elif'} {index} == {i}:")
                self.emit(indent + 1, "pass")
                self.skip(branch, indent + 1)
            self.emit(indent, "else:")
            self.emit(indent + 1, f"raise ValueError('union branch ' + str({index}))")
            return
        kind = schema["type"] if isinstance(schema, dict) else schema
        if isinstance(kind, dict | list):
            self.skip(kind, indent)
            return
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            self.named[schema["name"]] = schema
        if kind == "null":
            return
        if kind in ("int", "long", "enum"):
            self.emit(indent, "while data[p] > 127:")
            self.emit(indent + 1, "p += 1")
            self.emit(indent, "p += 1")
        elif kind == "boolean":
            self.emit(indent, "p += 1")
        elif kind in ("float", "double"):
            self.emit(indent, f"p += {4 if kind == 'float' else 8}")
        elif kind in ("bytes", "string"):
            size = self.new("n")
            self.long(size, indent)
            self.emit(indent, f"p += {size}")
        elif kind == "fixed":
            self.emit(indent, f"p += {int(schema['size'])}")
        elif kind in ("array", "map"):
            count = self.new("c")
            self.long(count, indent)
            self.emit(indent, f"while {count}:")
            self.emit(indent + 1, f"if {count} < 0:")  # a block that gives its byte size
            size = self.new("n")
            self.emit(indent + 2, f"{size}, p = read_long(data, p)")
            self.emit(indent + 2, f"p += {size}")
            self.emit(indent + 1, "else:")
            self.emit(indent + 2, f"for _ in range({count}):")
            if kind == "map":
                self.skip("string", indent + 3)
            self.skip(schema["items"] if kind == "array" else schema["values"], indent + 3)
            self.long(count, indent + 1)
        elif kind == "record":
            for f in schema["fields"]:
                self.skip(f["type"], indent)
        else:
            raise Unsupported(f"Avro type {kind!r}")

    def _array(self, items: AvroSchema, target: str, indent: int) -> None:
        resolved = resolve(items, self.named)
        if not (isinstance(resolved, dict) and resolved.get("type") == "record"):
            super()._array(items, target, indent)
            return
        fields = {f["name"]: f["type"] for f in resolved["fields"]}
        if set(fields) != {"key", "value"}:
            raise Unsupported("an array of records other than key/value pairs")
        # Iceberg's map: an array of key/value records, decoded straight into a dict.
        count, key, value = self.new("c"), self.new("k"), self.new("x")
        self.emit(indent, f"{target} = {{}}")
        self.long(count, indent)
        self.emit(indent, f"while {count}:")
        self.emit(indent + 1, f"if {count} < 0:")
        self.emit(indent + 2, f"{count} = -{count}")
        self.emit(indent + 2, "_, p = read_long(data, p)")
        self.emit(indent + 1, f"for _ in range({count}):")
        for f in resolved["fields"]:
            self.read(f["type"], key if f["name"] == "key" else value, indent + 2)
        self.emit(indent + 2, f"{target}[{key}] = {value}")
        self.long(count, indent + 1)

    def _record(self, schema: dict[str, Any], target: str, indent: int) -> None:
        raise Unsupported("a nested record other than data_file and partition")


def manifest_entry_decoder(
    writer_schema: AvroSchema,
    partition_converters: list[Callable[[Any], Any]],
    spec_id: int,
    metrics: Collection[str] = METRICS_MAPS,
) -> EntryDecoder | None:
    """A decoder of ``manifest_entry`` records written with ``writer_schema``, or None.

    ``partition_converters`` turn each partition field's stored value into the project's
    convention (in the order written); every file gets ``spec_id``. Only the metrics maps
    named in ``metrics`` (of :data:`METRICS_MAPS`) are decoded; the others read as None.
    None when the schema holds something not compiled here; decode those with fastavro.
    """
    if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
        return None
    named = named_types(writer_schema)
    source = _EntrySource(named)
    source.emit(0, "def decode(data, p, accept=None):")
    entry = ["None"] * 4
    data_file: dict[str, str] = {}
    judges = False
    try:
        fields = writer_schema["fields"]
        for i, f in enumerate(fields):
            field_id = f.get("field-id")
            if field_id == DATA_FILE_FIELD_ID:
                # An entry whose partition ``accept`` refuses is skipped from there on
                # (live entries only, and only if the status was read before).
                rest = [g["type"] for g in fields[i + 1 :]]
                status = entry[0] if entry[0] != "None" else None
                judges = status is not None
                _data_file(
                    source,
                    resolve(f["type"], named),
                    data_file,
                    metrics,
                    status=status,
                    rest=rest,
                )
            elif field_id in _ENTRY_IDS:
                variable = source.new()
                source.read(f["type"], variable, 1)
                entry[_ENTRY_IDS[field_id]] = variable
            else:
                source.skip(f["type"], 1)
    except (Unsupported, KeyError, TypeError, ValueError):
        return None
    required = ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes")
    if entry[0] == "None" or any(name not in data_file for name in required):
        return None
    # Checks DataFile.__post_init__ would make (the file is built without it, for speed).
    fp, rc = data_file["file_path"], data_file["record_count"]
    size = data_file["file_size_in_bytes"]
    source.emit(1, f"if not {fp}:")
    source.emit(2, "raise ValueError('a data file with an empty file_path')")
    source.emit(1, f"if {rc} < 0 or {size} < 0:")
    source.emit(2, f"raise ValueError({fp} + ': a negative record count or file size')")
    content = data_file.get("content", "0")
    data_file["content"] = f"CONTENTS[{content} or 0]"
    data_file["file_format"] = f"parse_format({data_file['file_format']})"
    equality = data_file.get("equality_ids", "None")
    source.emit(1, f"if {content} == 2 and not {equality}:")
    source.emit(2, f"raise ValueError({fp} + ': an equality delete file lists no equality_ids')")
    for name in _TUPLES:
        if name in data_file:
            value = data_file[name]
            data_file[name] = f"None if {value} is None else tuple({value})"
    for name in METRICS_MAPS:
        if name in data_file:
            value = data_file[name]
            data_file[name] = f"None if {value} is None else ColumnMap({value})"
    source.emit(1, "f = new(DataFile)")
    # DataFile is frozen (slots): every field set as its __init__ would, without the checks
    for name in DataFile.__dataclass_fields__:
        source.emit(1, f"set_(f, {name!r}, {data_file.get(name, f'DEFAULTS[{name!r}]')})")
    source.emit(1, f"return (STATUSES[{entry[0]}], {', '.join(entry[1:])}, f), p")
    defaults = {f.name: f.default for f in DataFile.__dataclass_fields__.values()}
    defaults["spec_id"] = spec_id
    namespace: dict[str, Any] = {
        "read_long": read_long,
        "check_length": _check_length,
        "unpack_from": struct.unpack_from,
        "new": object.__new__,
        "set_": object.__setattr__,
        "DataFile": DataFile,
        "ColumnMap": ColumnMap,
        "DEFAULTS": defaults,
        "CONTENTS": _Strict({int(c): c for c in FileContent}, "data file content"),
        "STATUSES": _Strict({int(s): s for s in EntryStatus}, "entry status"),
        "parse_format": _parse_format,
        "CONVERT": partition_converters,
    }
    # Built from the schema's structure only: names are generated, and the one value taken
    # from the schema, a fixed size, goes through int().
    exec("\n".join(source.lines), namespace)
    decode: EntryDecoder = namespace["decode"]
    _JUDGES_PARTITIONS[decode] = judges
    return decode


# Whether a generated decoder asks ``accept`` itself (the status is written before the
# data file, as in every known writer's schema); if not, the caller asks it after.
_JUDGES_PARTITIONS: weakref.WeakKeyDictionary[Callable[..., Any], bool] = (
    weakref.WeakKeyDictionary()
)


def _data_file(
    source: _EntrySource,
    schema: AvroSchema,
    out: dict[str, str],
    metrics: Collection[str],
    *,
    status: str | None,
    rest: list[AvroSchema],
) -> None:
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise Unsupported("data_file is not a record")
    fields = schema["fields"]
    for i, f in enumerate(fields):
        name = _DATA_FILE_NAMES.get(f.get("field-id", -1))
        if name is None or (name in METRICS_MAPS and name not in metrics):
            source.skip(f["type"], 1)
        elif f["field-id"] == PARTITION_FIELD_ID:
            partition = out["partition"] = _partition(source, resolve(f["type"], source.named))
            if status is not None:
                source.emit(1, f"if accept is not None and {status} != 2:")
                source.emit(2, f"partition = {partition}")
                source.emit(2, "if not accept(partition):")
                for later in [g["type"] for g in fields[i + 1 :]] + rest:
                    source.skip(later, 3)
                source.emit(3, f"return (STATUSES[{status}], None, None, None, None), p")
        else:
            variable = source.new()
            source.read(f["type"], variable, 1)
            out[name] = variable


def _partition(source: _EntrySource, schema: AvroSchema) -> str:
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise Unsupported("partition is not a record")
    values = []
    for i, f in enumerate(schema["fields"]):
        variable = source.new()
        source.read(f["type"], variable, 1)
        values.append(f"CONVERT[{i}]({variable})")
    return f"({', '.join(values)}{',' if len(values) == 1 else ''})"


# --- the plan the compiled decoder runs ---------------------------------------------------

_PRIMITIVES = ("null", "boolean", "float", "double", "bytes", "string")
_SKIP, _PARTITION, _DATA_FILE = -1, -2, -3  # Node slots in _entries.pyx


def compiled_entry_decoder(
    writer_schema: AvroSchema,
    partition_converters: list[Callable[[Any], Any]],
    spec_id: int,
    metrics: Collection[str] = METRICS_MAPS,
) -> CompiledEntryDecoder | None:
    """:func:`manifest_entry_decoder`'s compiled twin: the same fields read, skipped and
    checked, by a decoder written in C. None when the schema holds something neither
    compiles; decode those with fastavro."""
    if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
        return None
    named = named_types(writer_schema)
    names: list[str] = []
    fields: list[tuple[Any, int]] = []
    have_status = False
    try:
        for f in writer_schema["fields"]:
            field_id = f.get("field-id")
            if field_id == DATA_FILE_FIELD_ID:
                fields.append(
                    (_data_file_plan(resolve(f["type"], named), named, names, metrics), _DATA_FILE)
                )
            elif field_id in _ENTRY_IDS:
                have_status = have_status or field_id == 0
                fields.append((_plan(f["type"], named, read=True), _ENTRY_IDS[field_id]))
            else:
                fields.append((_plan(f["type"], named, read=False), _SKIP))
    except (Unsupported, KeyError, TypeError, ValueError):
        return None
    required = ("file_path", "file_format", "record_count", "file_size_in_bytes")
    if not have_status or any(name not in names for name in required):
        return None
    if not any(slot == _DATA_FILE for _, slot in fields):
        return None
    defaults = {f.name: f.default for f in DataFile.__dataclass_fields__.values()}
    defaults["spec_id"] = spec_id
    return CompiledEntryDecoder(
        ("record", fields),
        names,
        [None if c is as_stored else c for c in partition_converters],
        defaults,
        DataFile,
        {int(s): s for s in EntryStatus},
        {int(c): c for c in FileContent},
        _FORMATS,
        _parse_format,
    )


def _data_file_plan(
    schema: AvroSchema, named: dict[str, Any], names: list[str], metrics: Collection[str]
) -> tuple[Any, ...]:
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise Unsupported("data_file is not a record")
    fields: list[tuple[Any, int]] = []
    partition = False
    for f in schema["fields"]:
        name = _DATA_FILE_NAMES.get(f.get("field-id", -1))
        if name is None or (name in METRICS_MAPS and name not in metrics):
            fields.append((_plan(f["type"], named, read=False), _SKIP))
        elif f["field-id"] == PARTITION_FIELD_ID:
            record = resolve(f["type"], named)
            if not isinstance(record, dict) or record.get("type") != "record":
                raise Unsupported("partition is not a record")
            plans = [(_plan(p["type"], named, read=True), _SKIP) for p in record["fields"]]
            fields.append((("record", plans), _PARTITION))
            partition = True
        else:
            fields.append((_plan(f["type"], named, read=True), len(names)))
            names.append(name)
    if not partition:
        raise Unsupported("a data_file without partition")
    return ("record", fields)


def _plan(schema: AvroSchema, named: dict[str, Any], *, read: bool) -> tuple[Any, ...]:
    """The plan of one Avro type: what ``read`` decodes, or (not ``read``) skips.

    Decodes what :class:`_EntrySource` decodes, nothing more: ``["null", T]`` unions,
    arrays of values or of key/value records (Iceberg's maps); skips any type."""
    if isinstance(schema, str) and schema in named:
        schema = named[schema]
    if isinstance(schema, list):
        if read and (len(schema) != 2 or schema[0] != "null"):
            raise Unsupported(f"union {schema!r}")
        return ("union", [_plan(b, named, read=read) for b in schema])
    kind = schema["type"] if isinstance(schema, dict) else schema
    if isinstance(kind, dict | list):
        return _plan(kind, named, read=read)
    if isinstance(schema, dict) and isinstance(schema.get("name"), str):
        named[schema["name"]] = schema
    if kind in _PRIMITIVES:
        return (kind,)
    if kind in ("int", "long") or (kind == "enum" and not read):
        return ("long",)
    if kind == "fixed":
        return ("fixed", int(schema["size"]))
    if kind == "array":
        items = resolve(schema["items"], named)
        if isinstance(items, dict) and items.get("type") == "record":
            pair = {f["name"]: f["type"] for f in items["fields"]}
            if set(pair) == {"key", "value"}:
                return (
                    "pairs",
                    _plan(pair["key"], named, read=read),
                    _plan(pair["value"], named, read=read),
                )
            if read:
                raise Unsupported("an array of records other than key/value pairs")
        return ("array", _plan(schema["items"], named, read=read))
    if kind == "map" and not read:
        return ("map", _plan(schema["values"], named, read=False))
    if kind == "record" and not read:
        return ("record", [(_plan(f["type"], named, read=False), _SKIP) for f in schema["fields"]])
    raise Unsupported(f"Avro type {kind!r}")


class _Strict(dict[int, Any]):
    """A lookup table whose misses are a ValueError naming what was looked up."""

    def __init__(self, values: Mapping[int, Any], what: str) -> None:
        super().__init__(values)
        self.what = what

    def __missing__(self, key: int) -> Any:
        raise ValueError(f"unknown {self.what} {key!r}")


_FORMATS = {f.value: f for f in FileFormat} | {f.value.lower(): f for f in FileFormat}


def _parse_format(value: str) -> FileFormat:
    found = _FORMATS.get(value)
    return found if found is not None else FileFormat.parse(value)
