"""Metadata cleanup after commit: delete the previous metadata files the log dropped.

Spec: "Table Metadata Fields" (``metadata-log``). Each commit records its base file in
the new metadata's ``metadata-log``, which keeps at most
``write.metadata.previous-versions-max`` entries (default 100;
:meth:`~icewright.spec.table_metadata.TableMetadata.with_previous_metadata` trims it).
With ``write.metadata.delete-after-commit.enabled=true`` the catalogs that write metadata
files (SQL, Glue, file system) delete, once a commit is known to have succeeded, the
files the base's log listed and the new log no longer does, as Iceberg Java's
``BaseMetastoreTableOperations`` / ``HadoopTableOperations`` do
(``deleteRemovedMetadataFiles``): usually the one oldest entry, several when the maximum
was lowered. The base file itself always stays (the new log lists it). A delete that
fails is logged, never raised: the commit has already happened.

Nothing is deleted after ``CommitFailed`` or ``CommitStateUnknown`` (the catalogs call
this only after the swap returned), and a REST catalog never does it: its server owns
the metadata files. Views have no ``metadata-log`` (their ``version.history.num-entries``
trims versions inside the file), so nothing here applies to them.
"""

from __future__ import annotations

import logging

from icewright.catalog.metadata_files import read_table_metadata
from icewright.io.base import FileIO
from icewright.spec.properties import read_property
from icewright.spec.table_metadata import TableMetadata

__all__ = ["DELETE_AFTER_COMMIT", "delete_removed_metadata_files", "removed_metadata_files"]

log = logging.getLogger(__name__)

DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
"""Table property: delete the metadata files dropped from the log after each commit."""


def removed_metadata_files(base: TableMetadata, new: TableMetadata, new_location: str) -> list[str]:
    """The previous metadata files ``base``'s ``metadata-log`` lists and ``new``'s (whose
    own file is ``new_location``) does not, oldest first."""
    kept = {entry.metadata_file for entry in new.metadata_log}
    kept.add(new_location)
    dropped = (e.metadata_file for e in base.metadata_log if e.metadata_file not in kept)
    return list(dict.fromkeys(dropped))


def delete_removed_metadata_files(
    io: FileIO,
    base_location: str,
    new: TableMetadata,
    new_location: str,
    base: TableMetadata | None = None,
) -> tuple[str, ...]:
    """After a commit from ``base_location`` to ``new_location`` known to have succeeded:
    when ``new`` enables ``write.metadata.delete-after-commit.enabled``, delete the files
    :func:`removed_metadata_files` names and return those deleted.

    ``base`` is the base file's metadata when the caller has it (else it is read). Never
    raises: a base that cannot be read or a file that cannot be deleted is logged, and
    the file stays for orphan removal.
    """
    if read_property(new.properties, DELETE_AFTER_COMMIT) is not True:
        return ()
    try:
        if base is None:
            base = read_table_metadata(io, base_location)
        removed = removed_metadata_files(base, new, new_location)
        if not removed:
            return ()
        failed = {path for path, _ in _delete(io, removed)}
    except Exception as e:  # the commit has landed: a cleanup failure must not undo that
        log.warning(
            "metadata cleanup after the commit of %s: could not read the base %s or delete "
            "the dropped files (%s: %s); orphan removal deletes them later",
            new_location,
            base_location,
            type(e).__name__,
            e,
        )
        return ()
    return tuple(path for path in removed if path not in failed)


def _delete(io: FileIO, paths: list[str]) -> list[tuple[str, Exception]]:
    failures = io.delete_many(paths)
    for path, error in failures:
        log.warning("could not delete previous metadata file %s: %s", path, error)
    return failures
