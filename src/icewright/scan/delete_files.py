"""Which live data files each live delete file of a snapshot applies to (spec: "Scan
Planning", "Row-level Deletes"): what delete file maintenance decides from.

:func:`delete_file_use` reads a snapshot's delete manifests (every live delete file, with
its data sequence number) and plans a scan of it (which delete files apply to which live
data file, as :class:`~icewright.scan.delete_index.DeleteFileIndex` decides: the spec's
scope and sequence number rules, and the ``file_path`` and column bounds that prove a
delete file removes nothing from a data file). Memory holds the delete files and, for the
data files that have deletes, their paths.

A delete file is *dangling* (:meth:`DeleteFileUse.dangling`) when it applies to no live
data file: removing it from the table's metadata changes no row. This covers Iceberg
Java's ``RemoveDanglingDeleteFiles`` rule (a position delete whose partition has no live
data file with a data sequence number at most its own, an equality delete whose partition
has none with a smaller one; such a file applies to no data file) and goes further: a
position delete file whose ``file_path`` bounds or ``referenced_data_file`` name only data
files that are gone, or one a deletion vector replaced, is dangling too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icewright.manifest.data_file import DataFile, FileContent, ManifestContent
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.scan.delete_index import is_deletion_vector
from icewright.scan.tasks import FileScanTask

if TYPE_CHECKING:
    from icewright.io.base import FileIO
    from icewright.spec.snapshots import Snapshot

__all__ = ["DeleteFileUse", "LiveDeleteFile", "delete_file_use", "live_delete_files"]


@dataclass(frozen=True, slots=True)
class LiveDeleteFile:
    """A live delete file of a snapshot with its data sequence number."""

    delete_file: DataFile
    data_sequence_number: int

    @property
    def file_path(self) -> str:
        """The delete file's location."""
        return self.delete_file.file_path


@dataclass(frozen=True, slots=True)
class DeleteFileUse:
    """A snapshot's live delete files (by path) and, for each, the live data files it
    applies to (paths as the manifests spell them); ``tasks`` are the scan tasks of the
    data files that have deletes (each with every delete file that applies to it)."""

    deletes: dict[str, LiveDeleteFile]
    targets: dict[str, frozenset[str]]
    tasks: tuple[FileScanTask, ...]

    def dangling(self, removed_data_files: Collection[str] = ()) -> list[DataFile]:
        """The delete files that apply to no live data file once ``removed_data_files``
        are gone (a rewrite's input files), in path order."""
        gone = set(removed_data_files)
        return [
            self.deletes[path].delete_file
            for path in sorted(self.deletes)
            if not (self.targets.get(path, frozenset()) - gone)
        ]

    def position_delete_files(self) -> list[LiveDeleteFile]:
        """The live position delete files (not deletion vectors), in path order."""
        return [
            d
            for _, d in sorted(self.deletes.items())
            if d.delete_file.content is FileContent.POSITION_DELETES
            and not is_deletion_vector(d.delete_file)
        ]


def live_delete_files(io: FileIO, snapshot: Snapshot | None) -> list[LiveDeleteFile]:
    """Every live delete file of ``snapshot`` (read from its delete manifests)."""
    if snapshot is None or snapshot.manifest_list is None:
        return []
    manifests = read_manifest_list(io.read(snapshot.manifest_list), snapshot.manifest_list)
    found: list[LiveDeleteFile] = []
    for m in manifests:
        if m.content is not ManifestContent.DELETES:
            continue
        for entry in read_manifest(io.read(m.manifest_path), m):
            if entry.is_live and entry.sequence_number is not None:
                found.append(LiveDeleteFile(entry.data_file, entry.sequence_number))
    return found


def delete_file_use(
    tasks: Iterable[FileScanTask], deletes: Iterable[LiveDeleteFile]
) -> DeleteFileUse:
    """The :class:`DeleteFileUse` of a snapshot, given the tasks of an unfiltered scan of it
    (streamed: only tasks with deletes are kept) and its :func:`live_delete_files`."""
    live = {d.file_path: d for d in deletes}
    targets: dict[str, set[str]] = {}
    kept: list[FileScanTask] = []
    for task in tasks:
        if not task.delete_files:
            continue
        kept.append(task)
        for d in task.delete_files:
            targets.setdefault(d.file_path, set()).add(task.file_path)
    return DeleteFileUse(
        deletes=live,
        targets={path: frozenset(found) for path, found in targets.items()},
        tasks=tuple(kept),
    )
