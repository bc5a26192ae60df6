"""The table properties a write job follows: Parquet codec and sizes, target file size,
distribution mode (Iceberg's ``write.*`` properties and their defaults), and where data
files go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from icewright.errors import ValidationError

__all__ = ["WriteSettings", "data_location"]

_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}


_TARGET_FILE_SIZE = 512 * 1024 * 1024
_ROW_GROUP_SIZE = 128 * 1024 * 1024
_PAGE_SIZE = 1024 * 1024
_DICTIONARY_PAGE_SIZE = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WriteSettings:
    """The table properties the write job follows (Iceberg's ``write.*`` defaults)."""

    compression: str = "zstd"
    compression_level: int | None = None
    target_file_size: int = _TARGET_FILE_SIZE
    row_group_size: int = _ROW_GROUP_SIZE
    page_size: int = _PAGE_SIZE
    dictionary_page_size: int = _DICTIONARY_PAGE_SIZE
    distribution: str = "none"

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, str], *, partitioned: bool, sorted_: bool
    ) -> WriteSettings:
        """Read ``write.parquet.*``, ``write.target-file-size-bytes`` and
        ``write.distribution-mode``; a bad value raises :class:`ValidationError`."""
        codec = properties.get("write.parquet.compression-codec", "zstd").strip().lower()
        if codec not in _CODECS:
            raise ValidationError(
                f"write.parquet.compression-codec={codec!r} is not supported: use one of "
                f"{', '.join(sorted(_CODECS))}"
            )
        default_mode = "hash" if partitioned else "range" if sorted_ else "none"
        mode = properties.get("write.distribution-mode", default_mode).strip().lower()
        if mode not in ("none", "hash", "range"):
            raise ValidationError(f"write.distribution-mode={mode!r}: use none, hash or range")
        level = properties.get("write.parquet.compression-level")
        return cls(
            compression=_CODECS[codec],
            compression_level=_positive(properties, "write.parquet.compression-level", 0)
            if level is not None
            else None,
            target_file_size=_positive(
                properties, "write.target-file-size-bytes", _TARGET_FILE_SIZE
            ),
            row_group_size=_positive(
                properties, "write.parquet.row-group-size-bytes", _ROW_GROUP_SIZE
            ),
            page_size=_positive(properties, "write.parquet.page-size-bytes", _PAGE_SIZE),
            dictionary_page_size=_positive(
                properties, "write.parquet.dict-size-bytes", _DICTIONARY_PAGE_SIZE
            ),
            distribution=mode,
        )


def _positive(properties: Mapping[str, str], key: str, default: int) -> int:
    raw = properties.get(key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"{key}={raw!r} is not an integer") from None
    if value < 0 or (value == 0 and not key.endswith("compression-level")):
        raise ValidationError(f"{key}={raw!r} must be positive")
    return value


def data_location(location: str, properties: Mapping[str, str]) -> str:
    """Where a table's data files go: ``write.data.path`` (or the older
    ``write.folder-storage.path``), else ``<table location>/data``."""
    for key in ("write.data.path", "write.folder-storage.path"):
        if properties.get(key):
            return properties[key].rstrip("/")
    return f"{location.rstrip('/')}/data"
