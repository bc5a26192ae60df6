"""How two locations of one file compare: scheme, authority and normalized path.

Orphan removal compares what a table's metadata references with what a listing finds
(Iceberg Java's ``DeleteOrphanFiles`` ``FileURI``): ``file:/x``, ``file:///x`` and ``/x``
are one file, ``s3a``/``s3n`` count as ``s3``, repeated slashes collapse. The same key is
computed in the provider (:mod:`icewright.commit.orphans`) and on Spark executors
(:mod:`icewright.spark.maintenance`), so both paths decide alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from icewright.io.base import S3_SCHEMES, uri_scheme

__all__ = ["FileKey", "describe_conflict", "file_key", "key_matches"]

_SLASHES = re.compile(r"/{2,}")


@dataclass(frozen=True, slots=True)
class FileKey:
    """A location split for comparison: scheme (``s3a``/``s3n`` as ``s3``; a plain
    absolute path as ``file``), authority (None when empty, or ``localhost`` for
    ``file``) and the path with repeated slashes collapsed."""

    scheme: str | None
    authority: str | None
    path: str


def file_key(location: str) -> FileKey:
    """The comparison key of ``location`` (see :class:`FileKey`).

    >>> file_key("file:/t/x") == file_key("file:///t/x") == file_key("/t/x")
    True
    >>> file_key("s3a://b/t/x")
    FileKey(scheme='s3', authority='b', path='/t/x')
    """
    scheme = uri_scheme(location)
    if scheme is None:
        # A plain absolute path is a local file, as load_file_io treats it.
        return FileKey("file" if location.startswith("/") else None, None, _clean(location))
    rest = location[len(scheme) + 1 :]
    authority: str | None = None
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
    if scheme in S3_SCHEMES:
        scheme = "s3"
    if scheme == "file" and authority in ("", "localhost"):
        authority = None
    return FileKey(scheme, authority or None, _clean(rest))


def _clean(path: str) -> str:
    return _SLASHES.sub("/", path)


def key_matches(referenced: tuple[str | None, str | None], listed: FileKey) -> bool:
    """Whether a file listed as ``listed`` is the one referenced with the (scheme,
    authority) ``referenced`` of the same path.

    Java's ``FileURI``: an empty scheme or authority on the referenced side matches any.
    """
    scheme, authority = referenced
    scheme_ok = not scheme or scheme == (listed.scheme or "")
    authority_ok = not authority or authority.lower() == (listed.authority or "").lower()
    return scheme_ok and authority_ok


def describe_conflict(path: str, forms: Iterable[tuple[str | None, str | None]]) -> str:
    """How a listed file referenced only under other (scheme, authority) ``forms`` is
    named in the error that refuses to delete anything."""
    return f"{path} vs referenced " + ", ".join(sorted(f"{s}://{a or ''}" for s, a in forms))
