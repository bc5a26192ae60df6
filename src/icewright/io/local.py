"""FileIO on the local file system (and on anything mounted into it).

Accepts ``file:///abs/path``, ``file://localhost/abs/path``, the Hadoop form
``file:/abs/path`` (Iceberg Java writes that one for Hadoop tables) and plain
paths. Paths are taken literally: Iceberg metadata stores them unescaped, so no
percent-decoding is done.

Writes never expose a half-written file: :meth:`LocalFileIO.write` renames a
finished temporary file over the target, and :meth:`LocalFileIO.create` hard
links a finished temporary file to the target, which the kernel refuses with
``EEXIST`` when the target exists. That link is the create-if-absent primitive
that file-system tables need for ``metadata/v<N>.metadata.json`` (spec: "File
System Tables").
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

from icewright.errors import FileAlreadyExists, NoSuchFile, ValidationError
from icewright.io.base import ArrowFileSystem, FileInfo, FileIO, uri_scheme

__all__ = ["LocalFileIO", "local_path"]

_MAX_DELETE_THREADS = 8

# Errors of os.link that mean "this file system has no hard links", not "exists".
_NO_LINK_ERRNOS = frozenset(
    code
    for code in (
        getattr(errno, "EPERM", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "EXDEV", None),
        getattr(errno, "EMLINK", None),
    )
    if code is not None
)


def local_path(path: str) -> str:
    """Turn a ``file:`` URI or a plain path into a local file-system path.

    >>> local_path("file:/tmp/t/metadata/v1.metadata.json")
    '/tmp/t/metadata/v1.metadata.json'
    >>> local_path("file:///tmp/t")
    '/tmp/t'
    """
    scheme = uri_scheme(path)
    if scheme is None:
        return path
    if scheme != "file":
        raise ValidationError(
            f"LocalFileIO cannot handle {path!r}: only file: URIs and local paths are "
            "local; use load_file_io(path) to get the FileIO for that scheme."
        )
    rest = path[len("file:") :]
    if rest.startswith("//"):
        # file://<authority>/path: only an empty authority or localhost is local.
        authority, slash, tail = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise ValidationError(
                f"Unsupported file URI {path!r}: host {authority!r} is not local. "
                "Write file:///abs/path (three slashes) or file:/abs/path."
            )
        rest = slash + tail
    if not rest.startswith("/"):
        raise ValidationError(
            f"Unsupported file URI {path!r}: a file: URI needs an absolute path, "
            "e.g. file:///abs/path or file:/abs/path."
        )
    return rest


def _temp_name(final: str) -> str:
    # Same directory as the target, so rename/link never crosses file systems;
    # hidden, so globbing tools skip it.
    head, tail = os.path.split(final)
    return os.path.join(head, f".{tail}.{uuid.uuid4().hex}.tmp")


def _write_file(path: str, data: bytes) -> None:
    with open(path, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


class LocalFileIO(FileIO):
    """FileIO for local paths and ``file:`` URIs."""

    def read(self, path: str) -> bytes:
        """Return the content of ``path``; ``NoSuchFile`` if it is missing."""
        with self.open_input(path) as f:
            return f.read()

    def open_input(self, path: str) -> BinaryIO:
        """Open ``path`` as a seekable binary file; ``NoSuchFile`` if it is missing."""
        try:
            return open(local_path(path), "rb")
        except FileNotFoundError:
            raise NoSuchFile(f"File does not exist: {path}") from None

    def write(self, path: str, data: bytes) -> None:
        """Replace ``path`` with ``data`` atomically (temp file + rename)."""
        final = local_path(path)
        os.makedirs(os.path.dirname(final) or ".", exist_ok=True)
        tmp = _temp_name(final)
        try:
            _write_file(tmp, data)
            os.replace(tmp, final)
        except BaseException:
            _unlink_quietly(tmp)
            raise

    def create(self, path: str, data: bytes) -> None:
        """Create ``path`` with ``data`` if absent; ``FileAlreadyExists`` otherwise.

        The content is written to a temporary file first and then hard linked to
        ``path``; ``link(2)`` fails with ``EEXIST`` if ``path`` exists, so exactly
        one concurrent creator wins and readers never see a partial file.
        """
        final = local_path(path)
        os.makedirs(os.path.dirname(final) or ".", exist_ok=True)
        if os.path.lexists(final):
            # Cheap early exit; the link below is what actually decides.
            raise FileAlreadyExists(f"File already exists: {path}")
        tmp = _temp_name(final)
        try:
            _write_file(tmp, data)
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise FileAlreadyExists(f"File already exists: {path}") from None
            except OSError as e:
                if e.errno not in _NO_LINK_ERRNOS:
                    raise
                # No hard links here (some FUSE/SMB mounts): O_EXCL still gives
                # create-if-absent, though a reader may then see a growing file.
                try:
                    _write_file(final, data)
                except FileExistsError:
                    raise FileAlreadyExists(f"File already exists: {path}") from None
        finally:
            _unlink_quietly(tmp)

    def delete(self, path: str) -> None:
        """Delete ``path``; a missing file is not an error."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(local_path(path))

    def delete_many(self, paths: Iterable[str]) -> list[tuple[str, Exception]]:
        """Delete ``paths`` with a thread pool; return ``(path, error)`` failures."""
        todo = list(paths)
        if not todo:
            return []

        def attempt(p: str) -> Exception | None:
            try:
                self.delete(p)
            except Exception as e:
                return e
            return None

        with ThreadPoolExecutor(max_workers=min(_MAX_DELETE_THREADS, len(todo))) as pool:
            outcomes = list(pool.map(attempt, todo))
        return [(p, e) for p, e in zip(todo, outcomes, strict=True) if e is not None]

    def exists(self, path: str) -> bool:
        """Whether a regular file exists at ``path``."""
        return os.path.isfile(local_path(path))

    def size(self, path: str) -> int:
        """Size of ``path`` in bytes; ``NoSuchFile`` if it is missing."""
        try:
            return os.stat(local_path(path)).st_size
        except FileNotFoundError:
            raise NoSuchFile(f"File does not exist: {path}") from None

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        """Recursively list the files under directory ``prefix`` (sorted).

        Returned paths keep the form of ``prefix`` (``file:/``, ``file:///`` or
        plain), so they can be passed back to this FileIO.
        """
        root = local_path(prefix).rstrip("/") or "/"
        base = prefix.rstrip("/")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, root)
            for name in sorted(filenames):
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except FileNotFoundError:
                    continue  # deleted while we walked
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                yield FileInfo(f"{base}/{rel}", st.st_size, st.st_mtime_ns // 1_000_000)

    def to_pyarrow_filesystem(self) -> ArrowFileSystem:
        """``pyarrow.fs.LocalFileSystem`` and a normalizer that strips ``file:``."""
        import pyarrow.fs

        return ArrowFileSystem(pyarrow.fs.LocalFileSystem(), local_path)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
