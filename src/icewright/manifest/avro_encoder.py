"""A fast Avro binary encoder for manifests and manifest lists (spec: Appendix A).

Why not fastavro's writer: it resolves every ``["null", T]`` union by validating the
datum against each branch before writing it, and manifests are mostly such unions (six
optional metric maps per data file), so a 1,000-file manifest spent most of a commit in
it. Here the Avro schema is *compiled* once into small encoder functions that read the
values straight from the project's objects (:class:`DataFile`, :class:`ManifestFile`, ...)
by field name, and the writer picks each union branch itself: it knows whether the value
is null. The field order, names and types come from the same Avro schema that goes into
the file header, so the bytes always match that schema.

The byte format is Avro 1.11's "Binary Encoding" (zigzag varints, length-prefixed bytes
and strings, a union's branch index before its value, arrays as one counted block and a
zero) and "Object Container Files" (magic, metadata map, sync marker, blocks of records
each followed by the sync marker; ``deflate`` blocks are raw RFC 1951 data).

Every value is checked as it is encoded (type and range); a bad one raises
:class:`EncodeError` naming the field, which callers turn into a ``ValidationError``.
"""

from __future__ import annotations

import json
import keyword
import os
import struct
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from icewright.errors import IcewrightError
from icewright.manifest.avro_schemas import AvroSchema
from icewright.manifest.column_map import ColumnMap

Encoder = Callable[[Any, bytearray], None]
"""Appends the Avro encoding of a datum to a buffer."""

Getter = Callable[[Any], Any]
"""Fetches one field's datum from the object a record is encoded from."""

FAST_CODECS = ("null", "deflate")
"""Codecs this module writes itself; others go through fastavro."""

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
BLOCK_BYTES = 16_000
"""Uncompressed bytes after which a block is closed (fastavro's default sync interval)."""

_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


class EncodeError(ValueError):
    """A value does not fit the Avro type of its field."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


# --- primitives (Avro spec: "Binary Encoding") -----------------------------------------


def _varint(zigzagged: int) -> bytes:
    out = bytearray()
    while zigzagged > 0x7F:
        out.append((zigzagged & 0x7F) | 0x80)
        zigzagged >>= 7
    out.append(zigzagged)
    return bytes(out)


# Encodings already computed, by value: the counts, sizes and ids of manifests repeat a
# lot, and a dict lookup is several times faster than the varint loop. Bounded, so that a
# process writing many distinct values does not grow without end.
_CACHE: dict[int, bytes] = {}
_CACHE_LIMIT = 1 << 16


def _cached(n: int) -> bytes:
    encoded = _varint((n << 1) ^ (n >> 63))
    if len(_CACHE) < _CACHE_LIMIT:
        _CACHE[n] = encoded
    return encoded


# Map keys are field ids, small non-negative ints: looked up by index. Indexing a tuple
# also refuses a float or a string (TypeError), so it doubles as the type check.
_SMALL_KEYS = tuple(_varint(n << 1) for n in range(1 << 12))


def _check_integer(value: Any, low: int, high: int, kind: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer ({kind}), got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{value} is out of range for an Avro {kind}")
    return int(value)


def long_bytes(value: Any) -> bytes:
    """The zigzag varint of a 64-bit signed integer (Avro ``long``)."""
    # Exactly int (not bool, not an IntEnum, not a float equal to an int) takes the cache.
    if value.__class__ is int and _LONG_MIN <= value <= _LONG_MAX:
        return _CACHE.get(value) or _cached(value)
    return _cached(_check_integer(value, _LONG_MIN, _LONG_MAX, "long"))


def int_bytes(value: Any) -> bytes:
    """The zigzag varint of a 32-bit signed integer (Avro ``int``)."""
    if value.__class__ is int and _INT_MIN <= value <= _INT_MAX:
        return _CACHE.get(value) or _cached(value)
    return _cached(_check_integer(value, _INT_MIN, _INT_MAX, "int"))


def bytes_bytes(value: Any) -> bytes:
    """Avro ``bytes``: the length, then the bytes."""
    if not isinstance(value, bytes | bytearray):
        raise TypeError(f"expected bytes, got {value!r}")
    return long_bytes(len(value)) + value


def string_bytes(value: Any) -> bytes:
    """Avro ``string``: the UTF-8 length, then the UTF-8 bytes."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    data = value.encode("utf-8")
    return long_bytes(len(data)) + data


def _write_null(value: Any, buf: bytearray) -> None:
    if value is not None:
        raise TypeError(f"expected null, got {value!r}")


def _write_boolean(value: Any, buf: bytearray) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {value!r}")
    buf += b"\x01" if value else b"\x00"


def _write_int(value: Any, buf: bytearray) -> None:
    buf += int_bytes(value)


def _write_long(value: Any, buf: bytearray) -> None:
    buf += long_bytes(value)


def _write_float(value: Any, buf: bytearray) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    buf += struct.pack("<f", value)


def _write_double(value: Any, buf: bytearray) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    buf += struct.pack("<d", value)


def _write_bytes(value: Any, buf: bytearray) -> None:
    buf += bytes_bytes(value)


def _write_string(value: Any, buf: bytearray) -> None:
    buf += string_bytes(value)


def _fixed(size: int) -> Encoder:
    def write_fixed(value: Any, buf: bytearray) -> None:
        if not isinstance(value, bytes | bytearray) or len(value) != size:
            raise TypeError(f"expected {size} bytes (Avro fixed), got {value!r}")
        buf += value

    return write_fixed


_PRIMITIVES: dict[str, Encoder] = {
    "null": _write_null,
    "boolean": _write_boolean,
    "int": _write_int,
    "long": _write_long,
    "float": _write_float,
    "double": _write_double,
    "bytes": _write_bytes,
    "string": _write_string,
}


# --- compiling a schema -----------------------------------------------------------------


def _optional(inner: Encoder) -> Encoder:
    # The writer chooses the branch: 0 is "null", 1 the value's type (Appendix A allows
    # no other union). The common optional types have their own function, saving a call.
    special = _OPTIONAL_FORMS.get(inner)
    if special is not None:
        return special

    def write_optional(value: Any, buf: bytearray) -> None:
        if value is None:
            buf += b"\x00"
        else:
            buf += b"\x02"
            inner(value, buf)

    return write_optional


def _array(item: Encoder) -> Encoder:
    def write_array(value: Any, buf: bytearray) -> None:
        if isinstance(value, str | bytes | Mapping):
            raise TypeError(f"expected a sequence, got {value!r}")
        items = list(value)
        if items:
            buf += long_bytes(len(items))
            for v in items:
                item(v, buf)
        buf += b"\x00"

    return write_array


def _sorted_items(value: Any) -> list[tuple[int, Any]]:
    # a data file's metrics map (a ColumnMap) without the ABC check, any mapping with it
    if value.__class__ is ColumnMap:
        return value.sorted_items()
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a mapping, got {value!r}")
    return sorted(value.items())


def _int_long_map(value: Any, buf: bytearray) -> None:
    # Appendix A: a map with int keys is an array of key/value records; written sorted by
    # key so that equal maps give equal bytes. The lookups are inlined, and the optional
    # form below has its own function, because a manifest holds four of these per file.
    items = _sorted_items(value)
    if items:
        buf += long_bytes(len(items))
        for k, v in items:
            buf += _SMALL_KEYS[k] if 0 <= k < 4096 else int_bytes(k)
            cached = _CACHE.get(v) if v.__class__ is int else None
            buf += cached if cached is not None else long_bytes(v)
    buf += b"\x00"


def _optional_int_long_map(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02"
        _int_long_map(value, buf)


def _int_bytes_map(value: Any, buf: bytearray) -> None:
    items = _sorted_items(value)
    if items:
        buf += long_bytes(len(items))
        for k, v in items:
            buf += _SMALL_KEYS[k] if 0 <= k < 4096 else int_bytes(k)
            if v.__class__ is bytes and len(v) < 4096:
                buf += _SMALL_KEYS[len(v)]
                buf += v
            else:
                buf += bytes_bytes(v)
    buf += b"\x00"


def _optional_int_bytes_map(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02"
        _int_bytes_map(value, buf)


def _optional_long(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02" + long_bytes(value)


def _optional_int(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02" + int_bytes(value)


def _optional_string(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02" + string_bytes(value)


def _optional_bytes(value: Any, buf: bytearray) -> None:
    if value is None:
        buf += b"\x00"
    else:
        buf += b"\x02" + bytes_bytes(value)


def _kv_map(key: Encoder, val: Encoder) -> Encoder:
    def write_map(value: Any, buf: bytearray) -> None:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping, got {value!r}")
        if value:
            buf += long_bytes(len(value))
            for k in sorted(value):
                key(k, buf)
                val(value[k], buf)
        buf += b"\x00"

    return write_map


_OPTIONAL_FORMS: dict[Encoder, Encoder] = {
    _int_long_map: _optional_int_long_map,
    _int_bytes_map: _optional_int_bytes_map,
    _write_long: _optional_long,
    _write_int: _optional_int,
    _write_string: _optional_string,
    _write_bytes: _optional_bytes,
}


class SchemaCompiler:
    """Turns an Avro schema into an :data:`Encoder` for objects with matching attributes.

    A record's fields are read with ``getattr(obj, name)`` unless ``overrides`` gives a
    (getter, encoder) pair for that field name; a field named in ``overrides`` with
    ``None`` as getter receives the record object itself. Int-keyed maps (arrays of
    key/value records marked ``"logicalType": "map"``) take a ``Mapping``.
    """

    def __init__(self, overrides: Mapping[str, tuple[Getter | None, Encoder]] | None = None):
        self._overrides = dict(overrides or {})
        self._named: dict[str, AvroSchema] = {}

    def compile(self, schema: AvroSchema) -> Encoder:
        """The encoder of ``schema``."""
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _PRIMITIVES[schema]
            return self.compile(self._named[schema])
        if isinstance(schema, list):
            branches = list(schema)
            if len(branches) == 2 and branches[0] == "null":
                return _optional(self.compile(branches[1]))
            raise ValueError(f"unsupported Avro union {schema!r}: only [null, T] is allowed")
        kind = schema["type"]
        if isinstance(schema.get("name"), str) and kind in ("record", "fixed", "enum"):
            self._named[schema["name"]] = schema
        if kind == "record":
            return self._record(schema)
        if kind == "fixed":
            return _fixed(int(schema["size"]))
        if kind == "array":
            items = schema["items"]
            if schema.get("logicalType") == "map":
                return self._map(items)
            return _array(self.compile(items))
        if isinstance(kind, str) and kind in _PRIMITIVES:
            return _PRIMITIVES[kind]  # a primitive with a logical type: same encoding
        if isinstance(kind, dict | list):
            return self.compile(kind)
        raise ValueError(f"unsupported Avro schema {schema!r}")

    def _map(self, items: AvroSchema) -> Encoder:
        record = self._named[items] if isinstance(items, str) else items
        if isinstance(record, dict) and isinstance(record.get("name"), str):
            self._named[record["name"]] = record
        fields = {f["name"]: f["type"] for f in record["fields"]}
        key, value = fields["key"], fields["value"]
        if key == "int" and value == "long":
            return _int_long_map
        if key == "int" and value == "bytes":
            return _int_bytes_map
        return _kv_map(self.compile(key), self.compile(value))

    def _record(self, schema: dict[str, Any]) -> Encoder:
        fields: list[tuple[str, Getter | None, Encoder, AvroSchema]] = []
        for f in schema["fields"]:
            name = f["name"]
            if name in self._overrides:
                getter, encoder = self._overrides[name]
                fields.append((name, getter, encoder, None))
            else:
                fields.append((name, attrgetter(name), self.compile(f["type"]), f["type"]))
        record_name = str(schema.get("name", "record"))

        def checked(obj: Any, buf: bytearray) -> None:
            # The reference form: one field at a time, naming the field that fails.
            for name, getter, encoder, _ in fields:
                try:
                    encoder(obj if getter is None else getter(obj), buf)
                except EncodeError as exc:
                    raise EncodeError(f"{name}.{exc.path}", exc.problem) from None
                except IcewrightError:
                    raise  # already says what is wrong (e.g. a partition value)
                except (TypeError, ValueError, OverflowError, AttributeError, struct.error) as exc:
                    raise EncodeError(name, str(exc)) from None

        fast = _generated_record(record_name, fields)

        def write_record(obj: Any, buf: bytearray) -> None:
            start = len(buf)
            try:
                fast(obj, buf)
            except Exception:
                # Encode again field by field, for an error that names the field.
                del buf[start:]
                checked(obj, buf)
                raise

        write_record.__qualname__ = f"write_{record_name}"
        return write_record


# Primitive field types written inline by generated record functions.
_INLINE = {
    "int": "int_bytes",
    "long": "long_bytes",
    "string": "string_bytes",
    "bytes": "bytes_bytes",
}


def _generated_record(
    record_name: str, fields: Sequence[tuple[str, Getter | None, Encoder, AvroSchema]]
) -> Encoder:
    """One straight-line Python function writing every field of a record.

    Done for speed: a loop over (getter, encoder) pairs costs two calls and the loop per
    field, which for the thousands of records a manifest or manifest list holds is most
    of the encoding time. The function calls the same primitives as the loop, so it
    accepts and refuses exactly the same values.
    """
    namespace: dict[str, Any] = {
        "int_bytes": int_bytes,
        "long_bytes": long_bytes,
        "string_bytes": string_bytes,
        "bytes_bytes": bytes_bytes,
    }
    lines = ["def write(o, buf):"]
    for i, (name, getter, encoder, avro_type) in enumerate(fields):
        if getter is None:
            value = "o"
        elif name.isidentifier() and not keyword.iskeyword(name) and isinstance(getter, attrgetter):
            value = f"o.{name}"
        else:
            namespace[f"get{i}"] = getter
            value = f"get{i}(o)"
        inline = _INLINE.get(avro_type) if isinstance(avro_type, str) else None
        if inline is not None:
            lines.append(f"    buf += {inline}({value})")
        else:
            namespace[f"enc{i}"] = encoder
            lines.append(f"    enc{i}({value}, buf)")
    if len(lines) == 1:
        lines.append("    pass")
    # The source holds only names from this module and field names checked to be
    # identifiers; values reach it as arguments, never as text.
    exec("\n".join(lines), namespace)
    write: Encoder = namespace["write"]
    write.__qualname__ = f"write_{record_name}_fields"
    return write


# --- the container file (Avro spec: "Object Container Files") ---------------------------


def _map_of_bytes(metadata: Mapping[str, bytes]) -> bytes:
    out = bytearray()
    if metadata:
        out += long_bytes(len(metadata))
        for key, value in metadata.items():
            out += string_bytes(key)
            out += bytes_bytes(value)
    out += b"\x00"
    return bytes(out)


def _compress(codec: str, block: bytes) -> bytes:
    if codec == "null":
        return block
    # deflate: raw RFC 1951 data, without zlib's header and checksum.
    compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    return compressor.compress(block) + compressor.flush()


@dataclass(frozen=True, slots=True)
class EncodedRun:
    """``count`` records encoded one after another, written as they are (e.g. every
    record of another file of the same schema)."""

    data: bytes | memoryview
    count: int


@dataclass(frozen=True, slots=True)
class StoredBlock:
    """A block of another file of the same schema and codec: its ``count`` records as
    ``plain`` (decompressed) bytes and as ``stored`` (compressed with the codec).

    A block of half :data:`BLOCK_BYTES` or more is written as it is stored (only the sync
    marker is the new file's), so a manifest list that repeats its parent's records does
    not compress them again. A smaller one joins the block being filled: the records that
    commits add one by one gather into a block until it is big enough to be copied, so
    blocks stay between half and whole :data:`BLOCK_BYTES` and a commit compresses at
    most about that much of its parent's records.
    """

    count: int
    plain: bytes | memoryview
    stored: bytes | memoryview


def stored_block(records: Sequence[bytes], codec: str) -> StoredBlock:
    """``records`` (encoded) as one block compressed with ``codec``, to be copied whole by
    :func:`container_file` (when it holds half :data:`BLOCK_BYTES` or more)."""
    plain = b"".join(records)
    return StoredBlock(len(records), plain, _compress(codec, plain))


def block_length(block: StoredBlock) -> int:
    """The bytes ``block`` takes in a container file: counts, data and sync marker."""
    stored = len(block.stored)
    return len(long_bytes(block.count)) + len(long_bytes(stored)) + stored + SYNC_SIZE


def container_file(
    schema: AvroSchema,
    records: Iterable[bytes | EncodedRun | StoredBlock],
    metadata: Mapping[str, str],
    codec: str,
) -> bytes:
    """An Avro object container file of already-encoded ``records``.

    The header holds ``metadata``, then ``avro.schema`` (the schema as JSON) and
    ``avro.codec``, in that order, as fastavro writes them. Records go into blocks of
    about :data:`BLOCK_BYTES` uncompressed bytes (an :class:`EncodedRun` stays whole in
    one block; a big :class:`StoredBlock`, stored with ``codec``, is copied whole).
    """
    if codec not in FAST_CODECS:
        raise ValueError(f"codec {codec!r} is not written by this encoder")
    sync = os.urandom(SYNC_SIZE)
    meta = {k: v.encode("utf-8") for k, v in metadata.items()}
    meta["avro.schema"] = json.dumps(schema).encode("utf-8")
    meta["avro.codec"] = codec.encode("utf-8")
    parts: list[bytes | memoryview] = [MAGIC, _map_of_bytes(meta), sync]
    block: list[bytes | memoryview] = []
    size = count = 0

    def flush() -> None:
        """Write the block being filled, if it holds anything, and start a new one."""
        nonlocal size, count
        if block:
            data = _compress(codec, b"".join(block))
            parts.extend((long_bytes(count), long_bytes(len(data)), data, sync))
            block.clear()
            size = count = 0

    for item in records:
        record: bytes | EncodedRun
        if isinstance(item, StoredBlock):
            if len(item.plain) >= BLOCK_BYTES // 2:  # copied as stored, a block of its own
                if item.count:
                    flush()
                    stored = item.stored
                    parts.extend((long_bytes(item.count), long_bytes(len(stored)), stored, sync))
                continue
            record = EncodedRun(item.plain, item.count)  # joins the block being filled
        else:
            record = item
        if isinstance(record, EncodedRun):
            if not record.count:
                continue
            block.append(record.data)
            size += len(record.data)
            count += record.count
        else:
            block.append(record)
            size += len(record)
            count += 1
        if size >= BLOCK_BYTES:
            flush()
    flush()
    return b"".join(parts)
