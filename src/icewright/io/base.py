"""The FileIO contract: how icewright reads and writes the files of a table.

Iceberg keeps every file's location as a full string inside its metadata (spec:
"File System Operations"), so a FileIO takes those strings exactly as written:
``s3://bucket/key``, ``file:///abs/path``, Hadoop's ``file:/abs/path`` or a plain
absolute path. The spec asks the file system for very little: read, write a new
file, delete, and (for file-system tables) one atomic primitive. Here that
primitive is :meth:`FileIO.create`, a create-if-absent write in which two racing
creators can never both win.
"""

from __future__ import annotations

import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = [
    "S3_SCHEMES",
    "ArrowFileSystem",
    "FileIO",
    "FileInfo",
]

#: URI schemes served by :class:`icewright.io.s3.S3FileIO` (``s3a``/``s3n`` are
#: the Hadoop spellings that Spark and Iceberg Java tables may carry).
S3_SCHEMES: tuple[str, ...] = ("s3", "s3a", "s3n")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file found by :meth:`FileIO.list_prefix`.

    ``path`` uses the same URI form as the listed prefix, so it can be handed
    back to the same FileIO; ``modified_ms`` is milliseconds since the epoch.
    """

    path: str
    size: int
    modified_ms: int


class ArrowFileSystem(NamedTuple):
    """A :class:`pyarrow.fs.FileSystem` and the function that turns a FileIO path
    (as written in Iceberg metadata) into a path that file system accepts."""

    filesystem: pyarrow.fs.FileSystem
    normalize_path: Callable[[str], str]


class FileIO(ABC):
    """Reads, writes and deletes the files of Iceberg tables.

    Implementations are safe to share between threads. Paths are full URIs or
    local paths exactly as they appear in Iceberg metadata.
    """

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        # A read-only copy: later changes to the caller's dict must not change
        # how an existing FileIO connects.
        self._properties: Mapping[str, str] = types.MappingProxyType(dict(properties or {}))

    @property
    def properties(self) -> Mapping[str, str]:
        """The (read-only) configuration this FileIO was built with."""
        return self._properties

    @abstractmethod
    def read(self, path: str) -> bytes:
        """Return the whole content of ``path``; raise ``NoSuchFile`` if it is missing."""

    @abstractmethod
    def open_input(self, path: str) -> BinaryIO:
        """Open ``path`` for seekable binary reading (Parquet footers, large Avro).

        Raises ``NoSuchFile`` if it is missing. The caller closes the stream.
        """

    @abstractmethod
    def write(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path``, replacing any existing file.

        A reader sees either the old content or the whole new content.
        """

    @abstractmethod
    def create(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` only if no file is there yet.

        Raises ``FileAlreadyExists`` if the file exists. Atomic: of several
        concurrent creators of one path exactly one succeeds, and the stored
        content is that creator's, whole.
        """

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete ``path``; a file that is already missing is not an error."""

    @abstractmethod
    def delete_many(self, paths: Iterable[str]) -> list[tuple[str, Exception]]:
        """Delete many files (in parallel or in batches).

        Returns the failures as ``(path, error)`` pairs; an empty list means all
        are gone. Missing files are not failures.
        """

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file (not a directory) exists at ``path``."""

    def first_existing(self, paths: Sequence[str]) -> str | None:
        """The first of ``paths`` that exists as a file, or None: the candidate names of
        one file, such as a metadata version's three spellings. Here one :meth:`exists`
        per path, in order; an object store may answer them all with one request."""
        return next((path for path in paths if self.exists(path)), None)

    @abstractmethod
    def size(self, path: str) -> int:
        """The size of ``path`` in bytes; raise ``NoSuchFile`` if it is missing."""

    @abstractmethod
    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        """Recursively list the files under the directory ``prefix``.

        ``prefix`` is treated as a directory: ``.../data`` lists ``.../data/x``
        but not ``.../data2/x``. A missing directory lists nothing.
        """

    @abstractmethod
    def to_pyarrow_filesystem(self) -> ArrowFileSystem:
        """A pyarrow file system configured from the same properties, plus the
        path normalizer that maps this FileIO's paths onto it."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def uri_scheme(location: str) -> str | None:
    """The lower-cased URI scheme of ``location``, or None for a plain path."""
    head, sep, _ = location.partition(":")
    # A scheme is letters, digits, "+", "-", "." and starts with a letter (RFC 3986).
    if not sep or not head or not head[0].isalpha():
        return None
    if not all(c.isalnum() or c in "+-." for c in head):
        return None
    return head.lower()
