"""Metadata files: their names, reading (plain or gzip) and writing.

Two naming schemes exist (spec: "Metastore Tables" and "File System Tables"):

* catalogs that keep a pointer (SQL, Glue) name each file
  ``<metadata dir>/<NNNNN>-<uuid>.metadata.json``, where ``NNNNN`` is the
  previous file's number plus one (``00000`` for a new table), as Iceberg
  Java does;
* file-system tables name them ``<table>/metadata/v<N>.metadata.json``.

Either may carry gzip compression, as ``.gz.metadata.json`` (Java's current
spelling) or ``.metadata.json.gz`` (the old one); readers detect gzip by its
magic bytes, not by the name.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import uuid
import zlib
from collections.abc import Mapping
from typing import Any

from icewright.collector import gc_paused
from icewright.errors import InvalidMetadata, NoSuchFile, UnsupportedFormatVersion, ValidationError
from icewright.io import FileIO
from icewright.spec.documents import loads_keeping_texts
from icewright.spec.properties import read_property
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = [
    "METADATA_COMPRESSION",
    "METADATA_PATH",
    "basename",
    "decode_metadata_bytes",
    "encode_metadata",
    "hadoop_metadata_candidates",
    "hadoop_metadata_location",
    "hadoop_metadata_version",
    "is_view_document",
    "metadata_dir",
    "metadata_version",
    "missing_metadata",
    "next_pointer_metadata_location",
    "read_metadata_document",
    "read_table_metadata",
    "read_view_metadata",
    "table_metadata_from_document",
    "view_metadata_from_document",
    "write_new_metadata",
]

METADATA_PATH = "write.metadata.path"
"""Table property: where metadata files go (default ``<table location>/metadata``)."""
METADATA_COMPRESSION = "write.metadata.compression-codec"
"""Table property: ``none`` (default) or ``gzip``."""

_GZIP_MAGIC = b"\x1f\x8b"
_SUFFIX = r"(?:\.gz)?\.metadata\.json(?:\.gz)?"
_POINTER_NAME = re.compile(rf"(\d+)-[0-9A-Fa-f-]{{36}}{_SUFFIX}")
_HADOOP_NAME = re.compile(rf"v(\d+){_SUFFIX}")


def basename(location: str) -> str:
    """The last path component of a location."""
    return location.rstrip("/").rsplit("/", 1)[-1]


def metadata_version(location: str) -> int | None:
    """The version number in a metadata file name, or None if it has none.

    >>> metadata_version("s3://b/t/metadata/00007-4f1c0bd2-9f3e-4a4c-8d3b-0f6e1e9b2a11.metadata.json")
    7
    >>> metadata_version("/wh/db/t/metadata/v12.metadata.json")
    12
    """
    name = basename(location)
    for pattern in (_POINTER_NAME, _HADOOP_NAME):
        match = pattern.fullmatch(name)
        if match is not None:
            return int(match.group(1))
    return None


def hadoop_metadata_version(location: str) -> int | None:
    """The ``N`` of a file-system table's ``v<N>.metadata.json`` (any gzip spelling)."""
    match = _HADOOP_NAME.fullmatch(basename(location))
    return None if match is None else int(match.group(1))


def hadoop_metadata_candidates(metadata_location_dir: str, version: int) -> tuple[str, ...]:
    """Every name version ``N`` may have: plain, ``.gz.metadata.json``, ``.metadata.json.gz``."""
    stem = f"{metadata_location_dir}/v{version}"
    return (f"{stem}.metadata.json", f"{stem}.gz.metadata.json", f"{stem}.metadata.json.gz")


def metadata_dir(table_location: str, properties: Mapping[str, str]) -> str:
    """The directory that holds a table's metadata files (``write.metadata.path``)."""
    custom = properties.get(METADATA_PATH)
    if custom:
        return custom.rstrip("/")
    return table_location.rstrip("/") + "/metadata"


def _extension(properties: Mapping[str, str]) -> str:
    codec = str(read_property(properties, METADATA_COMPRESSION))
    if codec in ("none", ""):
        return ".metadata.json"
    if codec == "gzip":
        return ".gz.metadata.json"
    raise ValidationError(
        f"{METADATA_COMPRESSION}={codec!r} is not supported: use 'none' or 'gzip'"
    )


def next_pointer_metadata_location(
    metadata_location_dir: str, properties: Mapping[str, str], previous_location: str | None
) -> str:
    """``<dir>/<NNNNN>-<uuid4>.metadata.json`` numbered after ``previous_location``.

    A new table (no previous file) gets ``00000``; so does the successor of a
    file whose name carries no number (e.g. a registered ``v3.json``), as in
    Iceberg Java, where an unparsable version counts as -1.
    """
    previous = None if previous_location is None else metadata_version(previous_location)
    version = 0 if previous is None else previous + 1
    return f"{metadata_location_dir}/{version:05d}-{uuid.uuid4()}{_extension(properties)}"


def hadoop_metadata_location(
    metadata_location_dir: str, version: int, properties: Mapping[str, str]
) -> str:
    """``<dir>/v<N>.metadata.json`` (or ``v<N>.gz.metadata.json`` with gzip)."""
    return f"{metadata_location_dir}/v{version}{_extension(properties)}"


def decode_metadata_bytes(data: bytes, path: str) -> bytes:
    """Un-gzip ``data`` if it starts with the gzip magic bytes."""
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise InvalidMetadata(f"metadata file {path} is a corrupt gzip stream: {e}") from None


def read_metadata_document(io: FileIO, path: str) -> dict[str, Any]:
    """Read and parse a metadata file into its JSON object.

    Raises :class:`NoSuchFile` if it is missing and :class:`InvalidMetadata`
    (naming the path) if it is not a JSON object.
    """
    return _document(io.read(path), path)


def _document(raw: bytes, path: str) -> dict[str, Any]:
    data = decode_metadata_bytes(raw, path)
    try:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            document = json.loads(data)  # UTF-16 or -32, which JSON allows
        else:
            document = loads_keeping_texts(text, "snapshots", data)
    except (UnicodeDecodeError, ValueError) as e:
        raise InvalidMetadata(f"metadata file {path} is not valid JSON: {e}") from None
    if not isinstance(document, dict):
        raise InvalidMetadata(
            f"metadata file {path} holds a JSON {type(document).__name__}, not an object"
        )
    return document


def is_view_document(document: Mapping[str, Any]) -> bool:
    """Whether a parsed metadata file is view metadata (it has ``view-uuid``)."""
    return "view-uuid" in document


def _parse(path: str, kind: str, parse: Any, document: Mapping[str, Any]) -> Any:
    try:
        return parse(document)
    except UnsupportedFormatVersion as e:
        raise UnsupportedFormatVersion(f"{kind} metadata file {path}: {e}") from e
    except ValidationError as e:
        raise InvalidMetadata(f"{kind} metadata file {path} is invalid: {e}") from e
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InvalidMetadata(f"{kind} metadata file {path} is invalid: {e!r}") from e


def read_table_metadata(io: FileIO, path: str) -> TableMetadata:
    """Read a table metadata file; :class:`InvalidMetadata` names the path.

    A file with a UUID in its name that this process wrote or read before is not read
    again (see :class:`_RecentMetadata`).
    """
    cached = _RECENT.get(io, path)
    if cached is not None:
        return cached
    raw = io.read(path)
    with gc_paused():  # a snapshot per commit, each kept (see icewright.collector)
        metadata = table_metadata_from_document(_document(raw, path), path)
    _RECENT.put(path, metadata, len(raw))
    return metadata


_UNIQUE_NAME = re.compile(
    r"\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(?:gz\.)?metadata\.json"
    r"(?:\.gz)?"
)


class _RecentMetadata:
    """The table metadata of the last few files this process wrote or read, by location.

    Only files named ``<NNNNN>-<uuid>.metadata.json`` are kept: the UUID makes the name
    unique, and a metadata file is never rewritten in place, so the location alone
    identifies its content. (``v<N>.metadata.json`` names repeat when a file-system table
    is dropped and created again, so those are always read.) Iceberg Java's table
    operations keep their current metadata the same way and refresh only when the
    pointer moved; this spares a long-running process (a worker committing again, a
    sensor, the triggerer) re-reading and re-parsing a long history after each commit.
    The file's size is still checked, so a deleted or truncated file is noticed.
    """

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._entries: dict[str, tuple[TableMetadata, int]] = {}
        self._lock = threading.Lock()

    def get(self, io: FileIO, path: str) -> TableMetadata | None:
        """The metadata kept for ``path`` if the file still has the size it had."""
        with self._lock:
            entry = self._entries.get(path)
        if entry is None:
            return None
        metadata, size = entry
        return metadata if io.size(path) == size else None

    def put(self, path: str, metadata: TableMetadata, size: int) -> None:
        """Keep ``metadata`` as the content of ``path`` (``size`` bytes long)."""
        if _UNIQUE_NAME.fullmatch(basename(path)) is None:
            return
        with self._lock:
            self._entries.pop(path, None)
            self._entries[path] = (metadata, size)
            while len(self._entries) > self._capacity:
                del self._entries[next(iter(self._entries))]


_RECENT = _RecentMetadata()


def table_metadata_from_document(document: Mapping[str, Any], path: str) -> TableMetadata:
    """Parse a metadata file's JSON object as table metadata (``path`` for messages)."""
    if is_view_document(document):
        raise InvalidMetadata(f"metadata file {path} holds view metadata, not table metadata")
    result: TableMetadata = _parse(path, "table", TableMetadata.from_json, document)
    return result


def read_view_metadata(io: FileIO, path: str) -> ViewMetadata:
    """Read a view metadata file; :class:`InvalidMetadata` names the path."""
    return view_metadata_from_document(read_metadata_document(io, path), path)


def view_metadata_from_document(document: Mapping[str, Any], path: str) -> ViewMetadata:
    """Parse a metadata file's JSON object as view metadata (``path`` for messages)."""
    if not is_view_document(document):
        raise InvalidMetadata(f"metadata file {path} holds table metadata, not view metadata")
    result: ViewMetadata = _parse(path, "view", ViewMetadata.from_json, document)
    return result


def encode_metadata(metadata: TableMetadata | ViewMetadata, path: str) -> bytes:
    """The bytes of a metadata file at ``path`` (gzip when the name says ``.gz``)."""
    data = metadata.to_json()
    if ".gz." in basename(path) or path.endswith(".gz"):
        # mtime=0 keeps the bytes reproducible for the same metadata.
        return gzip.compress(data, mtime=0)
    return data


def write_new_metadata(io: FileIO, path: str, metadata: TableMetadata | ViewMetadata) -> None:
    """Create ``path`` (never overwrite: raises ``FileAlreadyExists`` if present)."""
    data = encode_metadata(metadata, path)
    io.create(path, data)
    if isinstance(metadata, TableMetadata):
        _RECENT.put(path, metadata, len(data))


def missing_metadata(path: str, what: str, error: NoSuchFile) -> NoSuchFile:
    """A :class:`NoSuchFile` that says which catalog entry points at the lost file."""
    return NoSuchFile(
        f"{what} points to metadata file {path}, which does not exist ({error}); the file was "
        "deleted or the storage is not reachable with this catalog's properties"
    )
