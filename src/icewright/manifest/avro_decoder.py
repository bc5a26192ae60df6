"""A fast Avro binary decoder for manifest list records (spec: Appendix A, "Manifest Lists").

Why: a table with a long history has a long manifest list, which every commit reads (and
expiring or listing the history reads many of them). fastavro decodes each record into a
dict, generically, and the project then builds a :class:`ManifestFile` from the dict; the
two steps cost about the same. Here the *writer's* schema (from the file header) is
compiled once into one straight-line Python function that reads the record's fields in
the order written and builds the :class:`ManifestFile` directly, matching fields by
field id as Iceberg readers must. It also tells where each record ends, so that a
writer can copy an unchanged record instead of encoding it again.

Only what manifest lists use is compiled: primitives, ``fixed``, ``["null", T]`` unions,
arrays and records. A schema with anything else returns ``None`` from
:func:`manifest_file_decoder`, and the caller decodes with fastavro instead.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

from icewright.manifest.avro_schemas import AvroSchema
from icewright.manifest.data_file import (
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
)

RecordDecoder = Callable[[bytes, int], tuple[ManifestFile, int]]
"""Decodes the record at an offset: the manifest and the offset after the record."""

# manifest_file field id -> ManifestFile attribute (spec: "Manifest Lists").
_MANIFEST_FILE_IDS = {
    500: "manifest_path",
    501: "manifest_length",
    502: "partition_spec_id",
    517: "content",
    515: "sequence_number",
    516: "min_sequence_number",
    503: "added_snapshot_id",
    504: "added_files_count",
    505: "existing_files_count",
    506: "deleted_files_count",
    512: "added_rows_count",
    513: "existing_rows_count",
    514: "deleted_rows_count",
    507: "partitions",
    519: "key_metadata",
    520: "first_row_id",
}
_REQUIRED_IDS = (500, 501, 502, 503)
# field_summary field id -> position in PartitionFieldSummary.
_SUMMARY_IDS = {509: 0, 518: 1, 510: 2, 511: 3}
_PARTITIONS_ID = 507


class Unsupported(Exception):
    """The schema uses something this decoder does not compile."""


def read_long(data: bytes, position: int) -> tuple[int, int]:
    """A zigzag varint at ``position`` and the position after it."""
    byte = data[position]
    position += 1
    result = byte & 0x7F
    shift = 7
    while byte & 0x80:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if shift > 70:
            raise ValueError("a varint longer than 10 bytes")
    return (result >> 1) ^ -(result & 1), position


def _check_length(value: bytes, size: int) -> bytes:
    if size < 0 or len(value) != size:
        raise ValueError("a string, bytes or fixed value runs past the end of the data")
    return value


def _content(value: int) -> ManifestContent:
    found = _CONTENTS.get(value)
    if found is None:
        raise ValueError(f"manifest content must be 0 (data) or 1 (deletes), got {value!r}")
    return found


_CONTENTS = {int(c): c for c in ManifestContent}


class _Source:
    """Python source of a decoder being generated."""

    def __init__(self, named: Mapping[str, Any]) -> None:
        self.lines: list[str] = []
        self.named = dict(named)
        self.count = 0
        self.summaries = False  # whether a record here is a field summary (in field 507)

    def new(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def long(self, target: str, indent: int) -> None:
        # Varints of up to three bytes (counts, ids, lengths, sequence numbers, column
        # sizes) inline; longer ones in a call.
        byte, second, third = self.new("b"), self.new("b"), self.new("b")
        raw = self.new("r")
        self.emit(indent, f"{byte} = data[p]")
        self.emit(indent, f"if {byte} < 128:")
        self.emit(indent + 1, f"{target} = ({byte} >> 1) ^ -({byte} & 1)")
        self.emit(indent + 1, "p += 1")
        self.emit(indent, f"elif ({second} := data[p + 1]) < 128:")
        self.emit(indent + 1, f"{raw} = ({byte} & 127) | ({second} << 7)")
        self.emit(indent + 1, f"{target} = ({raw} >> 1) ^ -({raw} & 1)")
        self.emit(indent + 1, "p += 2")
        self.emit(indent, f"elif ({third} := data[p + 2]) < 128:")
        self.emit(indent + 1, f"{raw} = ({byte} & 127) | (({second} & 127) << 7) | ({third} << 14)")
        self.emit(indent + 1, f"{target} = ({raw} >> 1) ^ -({raw} & 1)")
        self.emit(indent + 1, "p += 3")
        self.emit(indent, "else:")
        self.emit(indent + 1, f"{target}, p = read_long(data, p)")

    def read(self, schema: AvroSchema, target: str, indent: int) -> None:
        """Emit code that reads a value of ``schema`` into ``target``."""
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        if isinstance(schema, list):
            self._union(schema, target, indent)
            return
        kind = schema["type"] if isinstance(schema, dict) else schema
        if isinstance(kind, dict | list):
            self.read(kind, target, indent)
            return
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            self.named[schema["name"]] = schema
        if kind == "null":
            self.emit(indent, f"{target} = None")
        elif kind == "boolean":
            self.emit(indent, f"{target} = data[p] == 1")
            self.emit(indent, "p += 1")
        elif kind in ("int", "long"):
            self.long(target, indent)
        elif kind in ("float", "double"):
            fmt, width = ("<f", 4) if kind == "float" else ("<d", 8)
            self.emit(indent, f"({target},) = unpack_from({fmt!r}, data, p)")
            self.emit(indent, f"p += {width}")
        elif kind in ("bytes", "string"):
            size = self.new("n")
            self.long(size, indent)
            self.emit(indent, f"{target} = check_length(data[p : p + {size}], {size})")
            self.emit(indent, f"p += {size}")
            if kind == "string":
                self.emit(indent, f"{target} = {target}.decode('utf-8')")
        elif kind == "fixed":
            size_value = int(schema["size"])
            self.emit(indent, f"{target} = check_length(data[p : p + {size_value}], {size_value})")
            self.emit(indent, f"p += {size_value}")
        elif kind == "array":
            self._array(schema["items"], target, indent)
        elif kind == "record":
            self._record(schema, target, indent)
        else:
            raise Unsupported(f"Avro type {kind!r}")

    def _union(self, branches: list[Any], target: str, indent: int) -> None:
        if len(branches) != 2 or branches[0] != "null":
            raise Unsupported(f"union {branches!r}")
        index = self.new("u")
        self.long(index, indent)
        self.emit(indent, f"if {index} == 0:")
        self.emit(indent + 1, f"{target} = None")
        self.emit(indent, f"elif {index} == 1:")
        self.read(branches[1], target, indent + 1)
        self.emit(indent, "else:")
        self.emit(indent + 1, f"raise ValueError('union branch ' + str({index}))")

    def _array(self, items: AvroSchema, target: str, indent: int) -> None:
        count, item = self.new("c"), self.new("x")
        self.emit(indent, f"{target} = []")
        self.long(count, indent)
        self.emit(indent, f"while {count}:")
        self.emit(indent + 1, f"if {count} < 0:")  # a block that also gives its byte size
        self.emit(indent + 2, f"{count} = -{count}")
        self.emit(indent + 2, "_, p = read_long(data, p)")
        self.emit(indent + 1, f"for _ in range({count}):")
        self.read(items, item, indent + 2)
        self.emit(indent + 2, f"{target}.append({item})")
        self.long(count, indent + 1)

    def _record(self, schema: dict[str, Any], target: str, indent: int) -> None:
        # The only nested records of a manifest list are field summaries (id 508's element).
        if not self.summaries:
            raise Unsupported("a nested record outside partitions (507)")
        values = ["None"] * 4
        for f in schema["fields"]:
            variable = self.new()
            self.read(f["type"], variable, indent)
            position = _SUMMARY_IDS.get(f.get("field-id", -1))
            if position is not None:
                values[position] = variable
        if values[0] == "None":
            raise Unsupported("a field summary without contains_null (509)")
        self.emit(indent, f"{target} = PartitionFieldSummary({', '.join(values)})")


def manifest_file_decoder(writer_schema: AvroSchema) -> RecordDecoder | None:
    """A decoder of ``manifest_file`` records written with ``writer_schema``, or None.

    None when the schema holds something not compiled here or lacks a required field;
    decode those lists with fastavro.
    """
    if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
        return None
    source = _Source({})
    if isinstance(writer_schema.get("name"), str):
        source.named[writer_schema["name"]] = writer_schema
    source.emit(0, "def decode(data, p):")
    by_attribute: dict[str, str] = {}
    try:
        for f in writer_schema["fields"]:
            variable = source.new()
            source.summaries = f.get("field-id") == _PARTITIONS_ID
            source.read(f["type"], variable, 1)
            attribute = _MANIFEST_FILE_IDS.get(f.get("field-id", -1))
            if attribute is not None:
                by_attribute[attribute] = variable
    except (Unsupported, KeyError, TypeError, ValueError):
        return None
    if any(_MANIFEST_FILE_IDS[i] not in by_attribute for i in _REQUIRED_IDS):
        return None

    def value(attribute: str, default: str = "None") -> str:
        return by_attribute.get(attribute, default)

    seq, min_seq = value("sequence_number", "0"), value("min_sequence_number", "0")
    partitions = by_attribute.get("partitions")
    fields = {
        "manifest_path": value("manifest_path"),
        "manifest_length": value("manifest_length"),
        "partition_spec_id": value("partition_spec_id"),
        "added_snapshot_id": value("added_snapshot_id"),
        # Like the general reader: a missing or null content is data, sequence numbers 0.
        "content": f"content({value('content', '0')} or 0)",
        "sequence_number": f"{seq} or 0",
        "min_sequence_number": f"{min_seq} or 0",
        "added_files_count": value("added_files_count"),
        "existing_files_count": value("existing_files_count"),
        "deleted_files_count": value("deleted_files_count"),
        "added_rows_count": value("added_rows_count"),
        "existing_rows_count": value("existing_rows_count"),
        "deleted_rows_count": value("deleted_rows_count"),
        "partitions": "None"
        if partitions is None
        else f"None if {partitions} is None else tuple({partitions})",
        "key_metadata": value("key_metadata"),
        "first_row_id": value("first_row_id"),
    }
    # Built without ManifestFile.__init__, as data_file.manifest_file_from_reader does and
    # for the same reason; content is checked above and partitions made a tuple.
    source.emit(1, "m = new(ManifestFile)")
    source.emit(1, "m.__dict__.update(")
    for name, expression in fields.items():
        source.emit(2, f"{name}={expression},")
    source.emit(1, ")")
    source.emit(1, "return m, p")
    namespace: dict[str, Any] = {
        "read_long": read_long,
        "check_length": _check_length,
        "content": _content,
        "unpack_from": struct.unpack_from,
        "new": object.__new__,
        "ManifestFile": ManifestFile,
        "PartitionFieldSummary": PartitionFieldSummary,
    }
    # The source is built from the schema's structure only: names are generated, and the
    # one value taken from the schema, a fixed size, goes through int().
    exec("\n".join(source.lines), namespace)
    decode: RecordDecoder = namespace["decode"]
    return decode


# --- carrying encoded records over -----------------------------------------------------

_CARRIED = "_icewright_avro_record"


def carry_record(manifest: ManifestFile, schema_text: str, record: bytes) -> None:
    """Remember the Avro bytes ``manifest`` was decoded from, with the writer schema text.

    A private attribute outside the dataclass fields, so equality, hashing and
    ``replace`` ignore it (a replaced manifest has none). :func:`carried_record` gives
    the bytes back to a writer using the same schema: a manifest list written on every
    commit repeats its parent's records, and copying them beats encoding them again.
    """
    manifest.__dict__[_CARRIED] = (schema_text, record)


def carried_record(manifest: ManifestFile, schema_text: str) -> bytes | None:
    """The bytes :func:`carry_record` kept for ``manifest`` under ``schema_text``, or None."""
    carried = manifest.__dict__.get(_CARRIED)
    if carried is None or (carried[0] is not schema_text and carried[0] != schema_text):
        return None
    record: bytes = carried[1]
    return record
