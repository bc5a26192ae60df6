"""Choosing a FileIO for a location: the one place that knows every kind of FileIO
(:mod:`icewright.io.local`, :mod:`icewright.io.s3`), so :mod:`icewright.io.base` names none."""

from __future__ import annotations

from collections.abc import Mapping

from icewright.errors import ValidationError
from icewright.io.base import S3_SCHEMES, FileIO, uri_scheme
from icewright.io.local import LocalFileIO
from icewright.io.s3 import S3FileIO

__all__ = ["load_file_io"]


def load_file_io(location: str, properties: Mapping[str, str] | None = None) -> FileIO:
    """Choose a FileIO for ``location`` by its URI scheme.

    ``s3://``, ``s3a://`` and ``s3n://`` give an S3 FileIO; ``file:`` URIs and
    absolute local paths give a local one. ``properties`` are Iceberg's FileIO
    properties (``s3.endpoint``, ``s3.region``, ...).
    """
    scheme = uri_scheme(location)
    if scheme in S3_SCHEMES:
        return S3FileIO(properties)
    if scheme == "file" or (scheme is None and location.startswith("/")):
        return LocalFileIO(properties)
    raise ValidationError(
        f"Unsupported location {location!r}: icewright can read and write "
        "s3://, s3a://, s3n:// and file:// (or file:/) URIs and absolute local paths. "
        "Use one of those schemes, or an absolute path for a local warehouse."
    )
