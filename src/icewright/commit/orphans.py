"""Remove orphan files: files under a table's location that no metadata references.

Failed jobs, lost commit races and interrupted cleanups leave files that no snapshot,
metadata-log entry or statistics registration names (spec: "File System Operations":
files are never overwritten, so such leftovers only accumulate). This module follows
Iceberg Java's ``DeleteOrphanFiles`` action:

* the "valid" set is every file any metadata reaches: every snapshot's manifest list,
  manifests and live data and delete files, the current and metadata-log metadata
  files, ``version-hint.text``, statistics and partition-statistics files
  (:func:`icewright.commit.reachability.referenced_files`);
* only files last modified before a cutoff (default: three days ago) are candidates, so
  that files of writes still in flight are left alone; and the cutoff is moved before
  the start of every icewright write still in flight on the table
  (:mod:`icewright.commit.in_flight`), whatever ``older_than`` says; nothing under
  ``<location>/.icewright/`` (icewright's markers and job store) is ever a candidate:
  there the dead markers and the job documents past the same cutoff are deleted by their
  own rules instead (:mod:`icewright.commit.store_cleanup`; also alone, with
  :func:`remove_store_leftovers`);
* paths compare by their normalized path component: ``file:/x``, ``file:///x`` and
  ``/x`` are one file, and ``s3a``/``s3n`` count as ``s3``. A listed file whose path
  matches a referenced one under a different scheme or authority (bucket) is a
  conflict: nothing is deleted and the conflicts are named (Java's default
  ``PrefixMismatchMode.ERROR``).

If any reference cannot be read the whole run is refused, because an unreadable
manifest would make its files look unreferenced.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from icewright.catalog.base import Table
from icewright.commit.expire import GC_ENABLED, gc_enabled
from icewright.commit.in_flight import CLOCK_SLACK_MS, STORE_DIR, oldest_in_flight_ms
from icewright.commit.reachability import DEFAULT_READ_WORKERS, referenced_files
from icewright.commit.store_cleanup import StoreCleanup, clean_store
from icewright.errors import ValidationError
from icewright.io.base import FileIO
from icewright.io.file_keys import FileKey, describe_conflict, file_key, key_matches
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_ORPHAN_AGE_MS",
    "FileKey",
    "FoundOrphans",
    "OrphanFinder",
    "OrphanResult",
    "OrphanSearch",
    "StoreCleanup",
    "file_key",
    "find_orphans",
    "orphan_cutoff_ms",
    "remove_orphan_files",
    "remove_store_leftovers",
]

log = logging.getLogger(__name__)

DEFAULT_ORPHAN_AGE_MS = 3 * 24 * 60 * 60 * 1000
"""Files younger than this (three days, as in Java) are never taken for orphans."""


@dataclass(frozen=True)
class OrphanResult:
    """What an orphan-file removal found and did.

    ``orphan_paths`` are the files deleted (for a dry run: the files that would be),
    sorted; ``failed`` are orphans that could not be deleted, with ``errors`` saying why.
    ``listed`` counts the files found under ``location``, ``referenced`` the files the
    metadata references, ``too_new`` the unreferenced files kept because they are not
    older than ``older_than_ms``. ``dead_markers`` and ``job_documents`` are icewright's
    own files under ``<location>/.icewright/`` that went with them (for a dry run: would
    go; :mod:`icewright.commit.store_cleanup`), not counted in ``deleted``.
    """

    location: str
    older_than_ms: int
    dry_run: bool
    orphan_paths: tuple[str, ...]
    deleted: int
    listed: int
    referenced: int
    too_new: int
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    dead_markers: tuple[str, ...] = ()
    job_documents: tuple[str, ...] = ()


def remove_orphan_files(
    table: Table,
    *,
    older_than_ms: int | None = None,
    location: str | None = None,
    dry_run: bool = False,
    io: FileIO | None = None,
    find: OrphanFinder | None = None,
) -> OrphanResult:
    """Delete the files under ``location`` (default: the table location) that no metadata
    references and that were last modified before ``older_than_ms`` (default: three days
    ago). ``io`` lists, reads and deletes (default: the table's FileIO). ``find`` lists
    the location and compares it with the references (default: :func:`find_orphans`, in
    this process; a Spark job for big tables, :mod:`icewright.actions.maintenance`); the
    deletes always run here.

    The table is refreshed first, so that the newest commit's files count as referenced.
    When the listed location holds ``<table location>/.icewright/``, icewright's dead
    in-flight markers and its job documents older than the cutoff go too
    (:func:`remove_store_leftovers`). Raises :class:`ValidationError` (deleting nothing)
    when ``gc.enabled`` is false, when a manifest list or manifest cannot be read, or when
    listed and referenced paths differ only in scheme or authority.
    """
    # The writes in flight first, the references after: a write whose marker is gone by
    # now has landed its commit (or given up), and the refresh below sees that commit.
    table_io = io or table.io
    cutoff = orphan_cutoff_ms(table_io, table.metadata.location, older_than_ms)
    current = table.refresh()
    metadata = current.metadata
    if not gc_enabled(metadata):
        raise ValidationError(
            f"cannot remove orphan files: garbage collection is disabled on this table "
            f"({GC_ENABLED}={metadata.properties.get(GC_ENABLED)!r}), because its files may be "
            f"shared with other tables; set {GC_ENABLED}=true only if they are not"
        )
    file_io = io or current.io
    root = (location or metadata.location).rstrip("/")
    if not root:
        raise ValidationError("remove_orphan_files needs a non-empty location to list")

    store = file_key(f"{metadata.location.rstrip('/')}/{STORE_DIR}/").path
    request = OrphanSearch(
        metadata=metadata,
        metadata_location=current.metadata_location,
        root=root,
        cutoff_ms=cutoff,
        skip_prefix=store,
    )
    found = (find or find_orphans)(file_io, request)
    if found.conflicts:
        shown = sorted(found.conflicts)[:5]
        raise ValidationError(
            f"cannot tell whether {len(found.conflicts)} listed file(s) are orphans: the "
            "metadata references the same paths under another scheme or authority "
            f"({'; '.join(shown)}). Nothing was deleted; list the location under the scheme "
            "and bucket the table uses"
        )

    orphans = sorted(found.orphans)
    failed: list[str] = []
    errors: list[str] = []
    if orphans and not dry_run:
        for path, exc in file_io.delete_many(orphans):
            failed.append(path)
            errors.append(f"cannot delete {path}: {type(exc).__name__}: {exc}")
            log.warning("remove orphan files: cannot delete %s: %s", path, exc)
    gone = set(failed)
    own = StoreCleanup(location=store, dry_run=dry_run)
    if store.startswith(file_key(root).path.rstrip("/") + "/"):
        own = clean_store(file_io, metadata.location, cutoff_ms=cutoff, dry_run=dry_run)
    return OrphanResult(
        location=root,
        older_than_ms=cutoff,
        dry_run=dry_run,
        orphan_paths=tuple(p for p in orphans if p not in gone),
        deleted=0 if dry_run else len(orphans) - len(failed),
        listed=found.listed,
        referenced=found.referenced,
        too_new=found.too_new,
        failed=tuple(sorted([*failed, *own.failed])),
        errors=(*errors, *own.errors),
        dead_markers=own.dead_markers,
        job_documents=own.job_documents,
    )


def orphan_cutoff_ms(io: FileIO, table_location: str, older_than_ms: int | None) -> int:
    """The modification time before which an unreferenced file of the table is an orphan:
    ``older_than_ms`` (default: three days ago), but at least two seconds ago and before
    the start of the oldest write still in flight on the table."""
    if older_than_ms is not None and (
        isinstance(older_than_ms, bool) or not isinstance(older_than_ms, int)
    ):
        raise ValidationError(f"older_than_ms must be an integer, got {older_than_ms!r}")
    cutoff = (
        int(time.time() * 1000) - DEFAULT_ORPHAN_AGE_MS if older_than_ms is None else older_than_ms
    )
    # A write that starts after the markers are listed has files no older than its
    # start, less the storage's timestamp granularity (S3: whole seconds): the cutoff
    # stays before that, whatever older_than says.
    listed_at = int(time.time() * 1000)
    cutoff = min(cutoff, listed_at - CLOCK_SLACK_MS)
    since = oldest_in_flight_ms(io, table_location)
    if since is not None and since < cutoff:
        log.info("remove orphan files: a write in flight since %d ms; cutoff moved", since)
        cutoff = since
    return cutoff


def remove_store_leftovers(
    table: Table,
    *,
    older_than_ms: int | None = None,
    dry_run: bool = False,
    io: FileIO | None = None,
) -> StoreCleanup:
    """Delete icewright's own leftovers under ``<table location>/.icewright/``: the
    in-flight markers of writers that died, and job documents that no running job needs
    and that are older than the orphan cutoff :func:`remove_orphan_files` would use with
    the same ``older_than_ms`` (default: three days ago; never younger than an hour). A
    live writer's marker is never touched. ``dry_run`` deletes nothing and reports what
    would go. The rules: :mod:`icewright.commit.store_cleanup`."""
    table_io = io or table.io
    cutoff = orphan_cutoff_ms(table_io, table.metadata.location, older_than_ms)
    return clean_store(table_io, table.metadata.location, cutoff_ms=cutoff, dry_run=dry_run)


@dataclass(frozen=True)
class OrphanSearch:
    """What a search for orphans is given: the table state, the location to list, the
    cutoff (files modified at or after it are too new), and the normalized path prefix
    never to consider (icewright's job store)."""

    metadata: TableMetadata
    metadata_location: str
    root: str
    cutoff_ms: int
    skip_prefix: str


@dataclass(frozen=True)
class FoundOrphans:
    """What a search found: the orphan paths (any order), how many files were listed, how
    many distinct paths the metadata references, how many unreferenced files were too new,
    and the listed files referenced only under another scheme or authority."""

    orphans: Sequence[str]
    listed: int
    referenced: int
    too_new: int
    conflicts: Sequence[str] = ()


OrphanFinder = Callable[[FileIO, OrphanSearch], FoundOrphans]
"""Lists ``OrphanSearch.root`` and compares it with everything the metadata references."""


def find_orphans(io: FileIO, search: OrphanSearch) -> FoundOrphans:
    """The orphans under ``search.root``, found in this process: every reference is read
    (:func:`~icewright.commit.reachability.referenced_files`), then the location is listed
    once and each file compared by :func:`~icewright.io.file_keys.file_key`."""
    valid = referenced_files(
        io, search.metadata, search.metadata_location, workers=DEFAULT_READ_WORKERS
    ).all()
    # path -> the (scheme, authority) forms under which the metadata references it
    valid_forms: dict[str, set[tuple[str | None, str | None]]] = {}
    for ref in valid:
        key = file_key(ref)
        valid_forms.setdefault(key.path, set()).add((key.scheme, key.authority))

    listed = 0
    too_new = 0
    orphans: list[str] = []
    conflicts: set[str] = set()
    for info in io.list_prefix(search.root):
        listed += 1
        key = file_key(info.path)
        if key.path.startswith(search.skip_prefix):
            continue  # icewright's job store: results of uncommitted jobs, markers
        forms = valid_forms.get(key.path)
        if forms is not None:
            if not any(key_matches(form, key) for form in forms):
                conflicts.add(describe_conflict(info.path, forms))
            continue
        if info.modified_ms >= search.cutoff_ms:
            too_new += 1
            continue
        orphans.append(info.path)
    return FoundOrphans(orphans, listed, len(valid), too_new, sorted(conflicts))
