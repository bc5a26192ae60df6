"""Manifests and manifest lists: the Avro files that track a snapshot's files.

Spec sections: "Manifests", "Manifest Entry Fields", "Sequence Number Inheritance",
"Manifest Lists" and Appendix A (Avro). Format versions 1, 2 and 3 are read and written.
"""

from __future__ import annotations

from icewright.manifest.avro_schemas import (
    manifest_entry_schema,
    manifest_entry_type,
    manifest_file_type,
    manifest_list_schema,
    struct_to_avro,
)
from icewright.manifest.column_map import ColumnMap
from icewright.manifest.data_file import (
    DEFAULT_BLOCK_SIZE,
    UNASSIGNED_SEQ,
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    PartitionFieldSummary,
)
from icewright.manifest.manifest import ManifestWriter, write_manifest
from icewright.manifest.manifest_list import (
    ManifestListWriter,
    read_manifest_list,
    write_manifest_list,
)
from icewright.manifest.manifest_reader import (
    ManifestMetadata,
    OpenedManifest,
    open_manifest,
    read_manifest,
    read_manifest_metadata,
)

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "UNASSIGNED_SEQ",
    "ColumnMap",
    "DataFile",
    "EntryStatus",
    "FileContent",
    "FileFormat",
    "ManifestContent",
    "ManifestEntry",
    "ManifestFile",
    "ManifestListWriter",
    "ManifestMetadata",
    "ManifestWriter",
    "OpenedManifest",
    "PartitionFieldSummary",
    "manifest_entry_schema",
    "manifest_entry_type",
    "manifest_file_type",
    "manifest_list_schema",
    "open_manifest",
    "read_manifest",
    "read_manifest_list",
    "read_manifest_metadata",
    "struct_to_avro",
    "write_manifest",
    "write_manifest_list",
]
