"""FileIO: reading and writing table files by URI scheme.

``load_file_io(location, properties)`` picks the implementation: S3 (boto3) for
``s3://``, ``s3a://`` and ``s3n://``; the local file system for ``file:`` URIs
and absolute paths. Every FileIO offers an atomic create-if-absent write,
:meth:`FileIO.create`, which file-system tables use for their metadata files.
"""

from __future__ import annotations

from icewright.io.base import S3_SCHEMES, ArrowFileSystem, FileInfo, FileIO
from icewright.io.loader import load_file_io
from icewright.io.local import LocalFileIO
from icewright.io.s3 import S3FileIO  # boto3 itself is imported on first use

__all__ = [
    "S3_SCHEMES",
    "ArrowFileSystem",
    "FileIO",
    "FileInfo",
    "LocalFileIO",
    "S3FileIO",
    "load_file_io",
]
