"""Which files a table's metadata reaches: snapshots -> manifest lists -> manifests -> files.

Spec sections: "Snapshots" (a snapshot's files are the union of its manifests, listed in its
manifest list), "Manifests" (an entry is live unless its status is DELETED), "Table
Statistics" and "Partition Statistics". Two maintenance operations share this walk:

* snapshot expiration (:mod:`icewright.commit.expire`) asks which files only the expired
  snapshots reach (:func:`unreachable_files`, after Iceberg Java's ``ReachableFileCleanup``);
* orphan removal (:mod:`icewright.commit.orphans`) asks which files any metadata reaches
  (:func:`referenced_files`, after Java's ``DeleteOrphanFiles`` "valid files").

Deleting a file that a live snapshot still reads corrupts the table, so both walks are
strict about what they could not read: a failure is reported, never guessed around.
Reads run on a thread pool because on object stores each one is a round trip.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from icewright.commit.snapshot_producer import metadata_dir
from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.manifest.data_file import FileContent, ManifestFile
from icewright.manifest.live_paths import expired_manifest_lists, inline_manifests, live_paths
from icewright.manifest.manifest_list import ManifestListReader, read_manifest_list
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_READ_WORKERS",
    "VERSION_HINT_FILE",
    "ReferencedFiles",
    "UnreachableFiles",
    "UnreachableFinder",
    "ancestors_of",
    "live_files",
    "metadata_file_paths",
    "referenced_files",
    "snapshot_manifests",
    "statistics_paths",
    "unreachable_files",
]

log = logging.getLogger(__name__)

DEFAULT_READ_WORKERS = 8
"""Threads reading manifest lists and manifests at once (reads are I/O round trips)."""

VERSION_HINT_FILE = "version-hint.text"
"""The hint file of file-system tables (spec: "File System Tables")."""

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")


# --- snapshot ancestry ----------------------------------------------------------------


def ancestors_of(metadata: TableMetadata, snapshot_id: int) -> Iterator[Snapshot]:
    """The snapshot and its ancestors, newest first, while they are in ``metadata``.

    Follows ``parent-snapshot-id`` as Java's ``SnapshotUtil.ancestorsOf`` does: the walk
    ends at a snapshot without a parent or whose parent has expired.
    """
    seen: set[int] = set()
    snapshot = metadata.snapshot_by_id(snapshot_id)
    while snapshot is not None and snapshot.snapshot_id not in seen:
        seen.add(snapshot.snapshot_id)
        yield snapshot
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.snapshot_by_id(parent)


# --- reading one level ----------------------------------------------------------------


def snapshot_manifests(io: FileIO, snapshot: Snapshot) -> tuple[ManifestFile, ...]:
    """Every manifest of ``snapshot``, from its manifest list.

    An early v1 snapshot lists its manifests inline; those come back as placeholder
    records carrying only the path (counts unknown, so they are treated as possibly
    holding files). Raises whatever reading the manifest list raises.
    """
    if snapshot.manifest_list is not None:
        path = snapshot.manifest_list
        return tuple(read_manifest_list(io.read(path), path))
    return inline_manifests(snapshot)


def live_files(io: FileIO, manifest: ManifestFile) -> list[tuple[str, FileContent]]:
    """The path and content kind of every live (ADDED or EXISTING) entry of ``manifest``
    (:func:`icewright.manifest.live_paths.live_paths`)."""
    return live_paths(io.read(manifest.manifest_path), manifest)


def _may_hold_live_files(manifest: ManifestFile) -> bool:
    return manifest.has_added_files() or manifest.has_existing_files()


def statistics_paths(metadata: TableMetadata) -> set[str]:
    """The statistics and partition-statistics files ``metadata`` registers."""
    paths = {s.statistics_path for s in metadata.statistics}
    paths.update(s.statistics_path for s in metadata.partition_statistics)
    return paths


def metadata_file_paths(metadata: TableMetadata, metadata_location: str) -> set[str]:
    """The current metadata file, the metadata-log's files and the version-hint files.

    The hint is named both under ``write.metadata.path`` and under ``<location>/metadata``
    (where file-system catalogs keep it), so neither is ever taken for an orphan.
    """
    paths = {metadata_location}
    paths.update(e.metadata_file for e in metadata.metadata_log)
    paths.add(f"{metadata_dir(metadata)}/{VERSION_HINT_FILE}")
    paths.add(f"{metadata.location.rstrip('/')}/metadata/{VERSION_HINT_FILE}")
    return paths


# --- parallel reads -------------------------------------------------------------------


def _read_all(
    read: Callable[[K], R],
    items: Iterable[K],
    workers: int,
    stop: Callable[[], bool] | None = None,
) -> tuple[dict[K, R], dict[K, Exception]]:
    """Run ``read`` on every distinct item in a thread pool: results and failures by item.

    ``stop`` lets later reads be skipped once the caller has what it needs (a skipped
    item is in neither dict).
    """
    todo = list(dict.fromkeys(items))
    results: dict[K, R] = {}
    failures: dict[K, Exception] = {}
    if not todo:
        return results, failures

    def attempt(item: K) -> None:
        if stop is not None and stop():
            return
        try:
            results[item] = read(item)
        except Exception as exc:  # every failure is reported to the caller, by item
            failures[item] = exc

    if len(todo) == 1 or workers <= 1:
        for item in todo:
            attempt(item)
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            list(pool.map(attempt, todo))
    return results, failures


def _describe(what: str, path: str, exc: Exception) -> str:
    return f"cannot read {what} {path}: {type(exc).__name__}: {exc}"


# --- everything the metadata references (orphan removal) ------------------------------


@dataclass(frozen=True)
class ReferencedFiles:
    """Every file a table's metadata references, by kind."""

    manifest_lists: frozenset[str]
    manifests: frozenset[str]
    content_files: frozenset[str]
    metadata_files: frozenset[str]
    statistics_files: frozenset[str]

    def all(self) -> frozenset[str]:
        """The union of every kind."""
        return (
            self.manifest_lists
            | self.manifests
            | self.content_files
            | self.metadata_files
            | self.statistics_files
        )


def referenced_files(
    io: FileIO,
    metadata: TableMetadata,
    metadata_location: str,
    *,
    workers: int = DEFAULT_READ_WORKERS,
) -> ReferencedFiles:
    """Every file ``metadata`` reaches through any snapshot, plus its metadata files.

    Raises :class:`ValidationError` naming the files that could not be read: a reference
    that cannot be read would make its files look unreferenced.
    """
    manifests, failed = _manifests_of(io, metadata.snapshots, workers)
    problems = [_describe("the manifest list of snapshot", _named(s), e) for s, e in failed]
    entries, entry_failures = _read_all(lambda p: live_files(io, manifests[p]), manifests, workers)
    problems += [_describe("manifest", p, e) for p, e in entry_failures.items()]
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ValidationError(
            f"cannot list every file the table references ({len(problems)} unreadable): "
            f"{shown}. Nothing was deleted; fix or restore those files first"
        )
    content = {path for found in entries.values() for path, _ in found}
    return ReferencedFiles(
        manifest_lists=frozenset(s.manifest_list for s in metadata.snapshots if s.manifest_list),
        manifests=frozenset(manifests),
        content_files=frozenset(content),
        metadata_files=frozenset(metadata_file_paths(metadata, metadata_location)),
        statistics_files=frozenset(statistics_paths(metadata)),
    )


# --- what only expired snapshots reach (snapshot expiration) --------------------------


@dataclass(frozen=True)
class UnreachableFiles:
    """The files that only expired snapshots reach, by kind, and what could not be read.

    ``data_files_skipped`` gives the reason no data or delete file is listed even though
    some may be unreachable (a retained manifest list or manifest could not be read).
    """

    manifest_lists: tuple[str, ...] = ()
    manifests: tuple[str, ...] = ()
    data_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    data_files_skipped: str | None = None
    retained_manifests_read: int = field(default=0, compare=False)


def unreachable_files(
    io: FileIO,
    expired: Sequence[Snapshot],
    retained: Sequence[Snapshot],
    *,
    include_content_files: bool = True,
    workers: int = DEFAULT_READ_WORKERS,
) -> UnreachableFiles:
    """The manifest lists, manifests and content files of ``expired`` that ``retained`` lacks.

    As Java's ``ReachableFileCleanup``: a manifest is unreachable when no retained
    snapshot's list names it; a data or delete file when it is live in an unreachable
    manifest and live in no retained manifest. Retained manifests are read only when
    there are candidate files, only those that can hold live files, and no further once
    every candidate is found to be retained.

    If any retained manifest list cannot be read, no manifest and no content file is
    listed (which ones are still needed is unknown); if a retained manifest cannot be
    read, no content file is listed. An expired manifest list or manifest that cannot be
    read only keeps its own manifests or files from being listed.
    """
    errors: list[str] = []

    # 1. Candidates: every manifest of an expired snapshot.
    candidates, failed = _manifests_of(io, expired, workers)
    errors += [_describe("the manifest list of expired snapshot", _named(s), e) for s, e in failed]
    unreadable = {s.snapshot_id for s, _ in failed}
    manifest_lists = tuple(expired_manifest_lists(expired, retained, unreadable))
    if not candidates:
        return UnreachableFiles(manifest_lists=manifest_lists, errors=tuple(errors))

    # 2. Every manifest of a retained snapshot; a candidate named there stays.
    retained_manifests, failed = _manifests_of(io, retained, workers)
    if failed:
        errors += [
            _describe("the manifest list of retained snapshot", _named(s), e) for s, e in failed
        ]
        reason = (
            f"{len(failed)} manifest list(s) of retained snapshots could not be read, so "
            "which manifests and files they still need is unknown: no manifest and no data "
            "or delete file was deleted"
        )
        return UnreachableFiles(
            manifest_lists=manifest_lists, errors=tuple(errors), data_files_skipped=reason
        )
    deletable = {p: m for p, m in candidates.items() if p not in retained_manifests}
    if not deletable or not include_content_files:
        return UnreachableFiles(
            manifest_lists=manifest_lists, manifests=tuple(deletable), errors=tuple(errors)
        )

    # 3. Candidate files: the live entries of unreachable manifests. A manifest that
    # cannot be read is kept, so that its files can still be found later.
    content, read_failures = _read_all(lambda p: live_files(io, deletable[p]), deletable, workers)
    errors += [_describe("expired manifest", p, e) for p, e in read_failures.items()]
    manifests = tuple(p for p in deletable if p in content)
    files: dict[str, FileContent] = {}
    for entries in content.values():
        for path, kind in entries:
            files.setdefault(path, kind)

    # 4. Drop every candidate file that a retained manifest still holds live.
    to_check = [p for p, m in retained_manifests.items() if _may_hold_live_files(m)]
    checked, read_failures = _read_all(
        lambda p: _drop_live(io, retained_manifests[p], files),
        to_check,
        workers,
        stop=lambda: not files,
    )
    if read_failures:
        errors += [_describe("retained manifest", p, e) for p, e in read_failures.items()]
        reason = (
            f"{len(read_failures)} manifest(s) of retained snapshots could not be read, so "
            "whether they still hold the expired files is unknown: no data or delete file "
            "was deleted"
        )
        return UnreachableFiles(
            manifest_lists=manifest_lists,
            manifests=manifests,
            errors=tuple(errors),
            data_files_skipped=reason,
            retained_manifests_read=len(checked),
        )
    return UnreachableFiles(
        manifest_lists=manifest_lists,
        manifests=manifests,
        data_files=tuple(sorted(p for p, k in files.items() if k is FileContent.DATA)),
        delete_files=tuple(sorted(p for p, k in files.items() if k is not FileContent.DATA)),
        errors=tuple(errors),
        retained_manifests_read=len(checked),
    )


UnreachableFinder = Callable[[FileIO, Sequence[Snapshot], Sequence[Snapshot]], UnreachableFiles]
"""Decides what :func:`unreachable_files` decides (``io, expired, retained``), elsewhere:
a Spark job for tables too big for one process (:mod:`icewright.spark.maintenance`)."""


_LIST_WINDOW = 64
"""Manifest lists fetched at once by :func:`_manifests_of` before they are decoded."""


def _manifests_of(
    io: FileIO, snapshots: Sequence[Snapshot], workers: int
) -> tuple[dict[str, ManifestFile], list[tuple[Snapshot, Exception]]]:
    """The manifests of ``snapshots`` by path, and the snapshots whose list failed to read.

    Lists are fetched in parallel but decoded one by one, oldest first, by one
    :class:`ManifestListReader`: a list mostly repeats its parent's records, which the
    reader then does not decode again (a long history's lists hold each manifest once per
    later snapshot, which made decoding them the whole cost of expiring snapshots).
    """
    by_id = {s.snapshot_id: s for s in snapshots}
    ordered = sorted(by_id.values(), key=lambda s: (s.sequence_number, s.timestamp_ms))
    reader = ManifestListReader()
    manifests: dict[str, ManifestFile] = {}
    failures: list[tuple[Snapshot, Exception]] = []
    for start in range(0, len(ordered), _LIST_WINDOW):
        window = ordered[start : start + _LIST_WINDOW]
        paths = [s.manifest_list for s in window if s.manifest_list is not None]
        data, read_failures = _read_all(io.read, paths, workers)
        for snapshot in window:
            path = snapshot.manifest_list
            try:
                if path is None:
                    listed: Sequence[ManifestFile] = snapshot_manifests(io, snapshot)
                elif path in read_failures:
                    raise read_failures[path]
                else:
                    listed = reader.read(data[path], path)
            except Exception as exc:  # reported per snapshot, as the caller decides
                failures.append((snapshot, exc))
                continue
            for m in listed:
                manifests.setdefault(m.manifest_path, m)
    return manifests, failures


def _named(snapshot: Snapshot) -> str:
    return f"{snapshot.snapshot_id} ({snapshot.manifest_list or 'inline manifests'})"


def _drop_live(io: FileIO, manifest: ManifestFile, candidates: dict[str, FileContent]) -> int:
    # dict.pop is atomic under the GIL, so the reader threads may share ``candidates``.
    if not candidates:
        return 0
    found = live_files(io, manifest)
    for path, _ in found:
        candidates.pop(path, None)
    return len(found)
