"""The JSON documents of Iceberg metadata: reading and writing them, the typed field
readers every metadata codec (snapshots, statistics, table and view metadata) shares,
and the immutable mappings their values are kept in (:class:`FrozenMap`,
:class:`StringMap`).

A bad value read from a file is :class:`~icewright.errors.InvalidMetadata` naming the
field; a bad argument given in code is :class:`~icewright.errors.ValidationError`.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from icewright.errors import InvalidMetadata, ValidationError

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


# --- immutable mappings ------------------------------------------------------


class FrozenMap(Mapping[K, V]):
    """An immutable, hashable mapping that keeps insertion order.

    Used for every map field of the metadata (properties, refs, summaries), so
    metadata objects stay frozen all the way down.
    """

    __slots__ = ("_data",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(items)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def to_dict(self) -> dict[K, V]:
        """A mutable copy, in insertion order."""
        return dict(self._data)


class StringMap(FrozenMap[str, str]):
    """An immutable string-to-string map (properties, summaries).

    The spec stores properties and summaries as ``map<string, string>``; a
    non-string key or value is refused here rather than written as-is.
    """

    __slots__ = ()

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(items)
        for key, value in self._data.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ValidationError(
                    f"string map entry {key!r}: {value!r} is not a string pair; "
                    "Iceberg properties and summaries hold strings only (write numbers as '120')"
                )


EMPTY_STRING_MAP = StringMap()


# --- JSON readers shared by the metadata codecs ------------------------------


def load_document(
    data: bytes | bytearray | str | Mapping[str, Any], what: str, keep_texts_of: str = ""
) -> dict[str, Any]:
    """Decode a metadata document given as UTF-8 bytes, text or an already parsed object.

    GZIP-compressed bytes are accepted too: the spec allows metadata JSON files
    to be compressed (Appendix C, "Table Metadata and Snapshots"). ``keep_texts_of`` names
    a top-level array whose elements' texts are kept (:func:`loads_keeping_texts`).
    """
    if isinstance(data, Mapping):
        return json_object(dict(data), what)
    raw: bytes | None = None
    if isinstance(data, bytes | bytearray):
        raw = bytes(data)
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise InvalidMetadata(
                    f"{what} is GZIP data that cannot be decompressed: {exc}"
                ) from None
        try:
            # utf-8-sig: a leading byte-order mark is tolerated, as JSON parsers do.
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidMetadata(f"{what} is not UTF-8 text: {exc}") from None
    elif isinstance(data, str):
        text = data
    else:
        raise InvalidMetadata(f"{what} must be given as bytes, str or dict, got {type(data)}")
    try:
        parsed = (
            loads_keeping_texts(text, keep_texts_of, raw) if keep_texts_of else json.loads(text)
        )
    except json.JSONDecodeError as exc:
        raise InvalidMetadata(
            f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "the file is corrupt or not a metadata file"
        ) from None
    return json_object(parsed, what)


Utf8 = bytes | memoryview
"""UTF-8 text as bytes, or as a view of the bytes of the file it was read from."""


class SourcedList(list[Any]):
    """A JSON array read by :func:`loads_keeping_texts`, with the text each element was
    written as (:attr:`texts`, UTF-8, one per element, in order)."""

    __slots__ = ("texts",)

    def __init__(self, items: Iterable[Any], texts: Iterable[Utf8]) -> None:
        super().__init__(items)
        self.texts: tuple[Utf8, ...] = tuple(texts)


_array_spans: Callable[[bytes, bytes], list[tuple[int, int]] | None] | None
try:  # built from _snapshots.pyx when the package is installed
    from icewright.spec._snapshots import array_spans as _array_spans
except ImportError:  # pragma: no cover - a build without a C compiler
    _array_spans = None


def loads_keeping_texts(text: str, key: str, encoded: bytes | None = None) -> Any:
    """``json.loads(text)``, except that when the document is an object whose ``key`` is
    an array, that array comes back as a :class:`SourcedList`.

    Why: a table's metadata file holds a snapshot per commit, and a commit writes them all
    again. Keeping each snapshot's text lets the writer reuse it instead of encoding the
    history anew in every fresh process (see ``table_metadata._snapshot_json``).

    Given ``encoded``, the UTF-8 bytes ``text`` was decoded from, ``json.loads`` reads the
    text in one call and the compiled ``array_spans`` finds where each element is in the
    bytes: the texts are views of ``encoded``, nothing is copied. Otherwise a walk reads
    each element with the standard library's C scanner and keeps a copy of its text. What
    either does not expect is left to ``json.loads`` alone (no texts), which also words
    the errors.
    """
    if encoded is not None and _array_spans is not None:
        document = json.loads(text)
        if isinstance(document, dict) and document.get(key).__class__ is list:
            items = document[key]
            spans = _array_spans(encoded, key.encode("utf-8"))
            if spans is not None and len(spans) == len(items):
                view = memoryview(encoded)
                document[key] = SourcedList(items, [view[a:b] for a, b in spans])
        return document
    try:
        return _object_keeping_texts(text, key)
    except (_Unexpected, StopIteration, IndexError):
        return json.loads(text)


class _Unexpected(Exception):
    """The walk met something it leaves to ``json.loads``."""


_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is not JSON white space."""
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]  # "*" always matches


def _object_keeping_texts(text: str, key: str) -> dict[str, Any]:
    i = _skip_space(text, 0)
    if text[i] != "{":
        raise _Unexpected
    out: dict[str, Any] = {}
    i = _skip_space(text, i + 1)
    if text[i] == "}":
        i += 1
    else:
        while True:
            name, i = _SCAN(text, i)
            if name.__class__ is not str:
                raise _Unexpected
            i = _skip_space(text, i)
            if text[i] != ":":
                raise _Unexpected
            i = _skip_space(text, i + 1)
            if name == key and text[i] == "[":
                out[name], i = _array_keeping_texts(text, i)
            else:
                out[name], i = _SCAN(text, i)
            i = _skip_space(text, i)
            if text[i] == "}":
                i += 1
                break
            if text[i] != ",":
                raise _Unexpected
            i = _skip_space(text, i + 1)
    if _skip_space(text, i) != len(text):
        raise _Unexpected
    return out


def _array_keeping_texts(text: str, i: int) -> tuple[SourcedList, int]:
    items: list[Any] = []
    texts: list[str] = []
    i = _skip_space(text, i + 1)
    if text[i] == "]":
        return SourcedList(items, ()), i + 1
    # A snapshot per commit: white space is looked for only where there is some.
    scan, keep_item, keep_text = _SCAN, items.append, texts.append
    while True:
        value, end = scan(text, i)
        keep_item(value)
        keep_text(text[i:end])
        if text[end] in _WHITE:
            end = _skip_space(text, end)
        if text[end] == "]":
            return SourcedList(items, [t.encode("utf-8") for t in texts]), end + 1
        if text[end] != ",":
            raise _Unexpected
        i = end + 1
        if text[i] in _WHITE:
            i = _skip_space(text, i)


_WHITE = frozenset(" \t\n\r")


def dump_document(obj: Mapping[str, Any]) -> bytes:
    """Serialize a metadata document as compact UTF-8 JSON.

    The spec prescribes no layout, and Java, pyiceberg and DuckDB read any. Compact
    output is what the standard library's C encoder produces in one call; an indented
    document is a third larger and is encoded node by node in Python, which for a table
    with a long history (thousands of snapshots) was most of a commit's time.
    """
    return _COMPACT.encode(obj).encode("utf-8")


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def freeze_json(value: Any) -> Any:
    """Deep-freeze a parsed JSON value (objects to FrozenMap, lists to tuples)."""
    if isinstance(value, Mapping):
        return FrozenMap((k, freeze_json(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(freeze_json(v) for v in value)
    return value


def thaw_json(value: Any) -> Any:
    """The inverse of :func:`freeze_json`: plain dicts and lists again."""
    if isinstance(value, Mapping):
        return {k: thaw_json(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw_json(v) for v in value]
    return value


def json_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidMetadata(f"{what} must be a JSON object, got {show_value(value)}")
    return value


def json_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidMetadata(f"{what} must be a JSON list, got {show_value(value)}")
    return value


def required_field(obj: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in obj or obj[key] is None:
        raise InvalidMetadata(f"{what} is missing the required field {key!r}")
    return obj[key]


def checked_int(value: Any, what: str, low: int = LONG_MIN, high: int = LONG_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMetadata(f"{what} must be an integer, got {show_value(value)}")
    if not low <= value <= high:
        raise InvalidMetadata(f"{what} = {value} is out of range [{low}, {high}]")
    return value


def req_long(obj: Mapping[str, Any], key: str, what: str) -> int:
    return checked_int(required_field(obj, key, what), f"{what} field {key!r}")


def req_int(obj: Mapping[str, Any], key: str, what: str) -> int:
    return checked_int(required_field(obj, key, what), f"{what} field {key!r}", INT_MIN, INT_MAX)


def opt_long(obj: Mapping[str, Any], key: str, what: str) -> int | None:
    value = obj.get(key)
    return None if value is None else checked_int(value, f"{what} field {key!r}")


def opt_int(obj: Mapping[str, Any], key: str, what: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    return checked_int(value, f"{what} field {key!r}", INT_MIN, INT_MAX)


def req_str(obj: Mapping[str, Any], key: str, what: str) -> str:
    value = required_field(obj, key, what)
    if not isinstance(value, str):
        raise InvalidMetadata(f"{what} field {key!r} must be a string, got {show_value(value)}")
    return value


def opt_str(obj: Mapping[str, Any], key: str, what: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidMetadata(f"{what} field {key!r} must be a string, got {show_value(value)}")
    return value


def string_map(value: Any, what: str) -> StringMap:
    obj = json_object(value, what)
    for key, item in obj.items():
        if not isinstance(item, str):
            raise InvalidMetadata(
                f"{what} entry {key!r} must be a string, got {show_value(item)}; "
                "Iceberg maps of this kind hold strings only"
            )
    return StringMap(obj)


def as_metadata_error(what: str, build: Callable[[], T]) -> T:
    """Run ``build``, turning a plain ValidationError into InvalidMetadata.

    Constructors raise :class:`ValidationError` for bad arguments; when the bad
    value came from a file, the caller should see :class:`InvalidMetadata`.
    Subclasses such as UnsupportedFormatVersion pass through unchanged.
    """
    try:
        return build()
    except ValidationError as exc:
        if type(exc) is ValidationError:
            raise InvalidMetadata(f"invalid {what}: {exc}") from exc
        raise


def check_unique_ids(ids: Iterable[int], what: str) -> None:
    seen: set[int] = set()
    for item in ids:
        if item in seen:
            raise ValidationError(f"{what} {item} appears more than once; ids must be unique")
        seen.add(item)


def join_ids(versions: Iterable[int]) -> str:
    return ", ".join(str(v) for v in versions)


def show_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_positive(value: int | None, what: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValidationError(f"{what} must be a positive integer, got {value!r}")


def check_id(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be an integer, got {value!r}")
