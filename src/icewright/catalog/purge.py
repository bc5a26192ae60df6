"""Deleting a dropped table's files (``drop_table(..., purge=True)``).

A purge deletes everything the table metadata references, as Iceberg Java's
``CatalogUtil.dropTableData`` does: the data and delete files listed in every
manifest of every snapshot, the manifests, the manifest lists, statistics
files, the previous metadata files of ``metadata-log`` and the current one.

The catalog layer sits below the manifest layer, so manifests are read here
with fastavro's generic reader: only two fields are needed, and their names
are the same in every format version (``manifest_path`` in a manifest list,
``data_file.file_path`` in a manifest entry; spec: "Manifests", "Manifest
Lists"). A purge is best effort: a file that cannot be read or deleted is
logged and skipped, never raised, because the catalog entry is already gone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from icewright.io import FileIO
from icewright.spec.table_metadata import TableMetadata

__all__ = ["purge_table_files", "referenced_files"]

logger = logging.getLogger(__name__)


def _avro_records(io: FileIO, path: str) -> Iterator[dict[str, object]]:
    import fastavro

    with io.open_input(path) as stream:
        for record in fastavro.reader(stream):
            if isinstance(record, dict):
                yield record


def _manifest_paths(io: FileIO, metadata: TableMetadata) -> tuple[list[str], list[str]]:
    manifest_lists: list[str] = []
    manifests: dict[str, None] = {}
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list:
            manifest_lists.append(snapshot.manifest_list)
            try:
                for record in _avro_records(io, snapshot.manifest_list):
                    path = record.get("manifest_path")
                    if isinstance(path, str):
                        manifests[path] = None
            except Exception as e:
                logger.warning("purge: cannot read manifest list %s: %s", snapshot.manifest_list, e)
        for path in snapshot.manifests or ():
            manifests[path] = None
    return manifest_lists, list(manifests)


def _content_files(io: FileIO, manifests: Iterable[str]) -> Iterator[str]:
    for manifest in manifests:
        try:
            for record in _avro_records(io, manifest):
                data_file = record.get("data_file")
                if isinstance(data_file, dict):
                    path = data_file.get("file_path")
                    if isinstance(path, str):
                        yield path
        except Exception as e:
            logger.warning("purge: cannot read manifest %s: %s", manifest, e)


def referenced_files(io: FileIO, metadata: TableMetadata, metadata_location: str) -> list[str]:
    """Every file ``metadata`` references, content files first, metadata last."""
    manifest_lists, manifests = _manifest_paths(io, metadata)
    files: dict[str, None] = dict.fromkeys(_content_files(io, manifests))
    files.update(dict.fromkeys(manifests))
    files.update(dict.fromkeys(manifest_lists))
    files.update(dict.fromkeys(s.statistics_path for s in metadata.statistics))
    files.update(dict.fromkeys(s.statistics_path for s in metadata.partition_statistics))
    files.update(dict.fromkeys(e.metadata_file for e in metadata.metadata_log))
    files[metadata_location] = None
    return list(files)


def purge_table_files(io: FileIO, metadata: TableMetadata, metadata_location: str) -> int:
    """Delete every file the table references; return how many could not be deleted."""
    failures = io.delete_many(referenced_files(io, metadata, metadata_location))
    for path, error in failures:
        logger.warning("purge: cannot delete %s: %s", path, error)
    return len(failures)
