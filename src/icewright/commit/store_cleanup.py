"""icewright's own files under a table: which are dead, and their removal.

icewright keeps two kinds of file under ``<table location>/.icewright/``, which orphan
removal never takes for orphans (no metadata references them):

* **in-flight markers** (``in-flight/<id>.json``, :mod:`icewright.commit.in_flight`): a
  write holds one until its commit's outcome is known and deletes it then; a writer that
  is killed (SIGKILL, OOM, a lost machine) leaves it behind;
* **job documents** (``jobs/``, :mod:`icewright.runners.store`): the stored result of a
  keyed Spark job (``<digest>.json``) until the commit it belongs to landed or definitely
  failed, a detached job's pending document, spec and log (``<digest>.pending.json``,
  ``.job.json``, ``.log``), and an attached job's spec and result while it runs
  (``<uuid>.job.json``, ``<uuid>.result.json``). A caller that dies, or a detached job no
  one comes back for, leaves them behind.

:func:`clean_store` deletes what is provably dead or past its retention:

* a marker whose write is dead (:func:`~icewright.commit.in_flight.marker_alive`: written
  on this host and process-id namespace by a process that is gone, a zombie, or whose id
  was reused; from another host or container, once older than seven days). A live
  writer's marker is never touched, whatever its age; an unreadable marker counts as live
  until it is seven days old;
* the documents of a job (all files of one name stem) when no detached job of theirs may
  still run (no pending document, or one whose process is dead as above) and the newest
  of them is older than both the orphan cutoff and an hour. By then the run deletes the
  job's unreferenced data files too (they were written before its result), so the result
  could no longer be reused (a reuse needs every file it names), and a result whose
  commit landed is answered by the commit key on the table. The hour covers an attached
  job reading its spec at its start and its caller reading the result at its end;
* the temporary file of an interrupted write (``.<name>.<hex>.tmp``) on the same terms.

Files of any other name are left alone. Deletes that fail are reported, not raised.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from icewright.commit.in_flight import IN_FLIGHT_MAX_AGE_MS, STORE_DIR, marker_alive
from icewright.io.base import FileInfo, FileIO

__all__ = ["JOB_DOCUMENT_MIN_AGE_MS", "StoreCleanup", "clean_store"]

log = logging.getLogger(__name__)

JOB_DOCUMENT_MIN_AGE_MS = 3600 * 1000
"""A job document younger than this stays whatever the cutoff (see the module docstring)."""

_TEMPORARY = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{32}\.tmp")
_JOB_SUFFIXES = (".pending.json", ".result.json", ".job.json", ".json", ".log")


@dataclass(frozen=True)
class StoreCleanup:
    """What :func:`clean_store` found and did under ``<location>/.icewright/``.

    ``dead_markers`` and ``job_documents`` are the files deleted (for a dry run: those
    that would be), sorted; ``live_markers`` counts the markers kept, ``kept_job_documents``
    the job documents kept (a job that may still run, or not old enough); ``failed`` are
    files that could not be deleted, with ``errors`` saying why.
    """

    location: str
    dry_run: bool
    dead_markers: tuple[str, ...] = ()
    job_documents: tuple[str, ...] = ()
    live_markers: int = 0
    kept_job_documents: int = 0
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default=(), repr=False)


def clean_store(
    io: FileIO,
    table_location: str,
    *,
    cutoff_ms: int,
    dry_run: bool = False,
    max_age_ms: int = IN_FLIGHT_MAX_AGE_MS,
) -> StoreCleanup:
    """Delete the dead in-flight markers and the job documents past their retention under
    ``<table_location>/.icewright/`` (see the module docstring); ``cutoff_ms`` is the
    orphan cutoff of the run (job documents modified at or after it stay), ``max_age_ms``
    the age after which a marker or pending document of another host counts as dead.
    ``dry_run`` deletes nothing and reports what would go."""
    root = f"{table_location.rstrip('/')}/{STORE_DIR}"
    now = int(time.time() * 1000)
    markers: list[FileInfo] = []
    jobs: dict[str, list[FileInfo]] = {}
    temporary: list[FileInfo] = []
    for info in io.list_prefix(root + "/"):
        folder, _, name = info.path.rpartition("/")
        if _TEMPORARY.fullmatch(name):
            temporary.append(info)
        elif folder.endswith(f"/{STORE_DIR}/in-flight") and name.endswith(".json"):
            markers.append(info)
        elif folder.endswith(f"/{STORE_DIR}/jobs"):
            stem = _job_stem(name)
            if stem is not None:
                jobs.setdefault(f"{folder}/{stem}", []).append(info)

    dead = [i.path for i in markers if not _marker_live(io, i, now, max_age_ms)]
    expiry = min(cutoff_ms, now - JOB_DOCUMENT_MIN_AGE_MS)
    documents: list[str] = []
    kept = 0
    for group in jobs.values():
        newest = max(i.modified_ms for i in group)
        if newest < expiry and not _job_may_run(io, group, now, max_age_ms):
            documents += [i.path for i in group]
        else:
            kept += len(group)
    documents += [i.path for i in temporary if i.modified_ms < expiry]

    failed: dict[str, str] = {}
    if not dry_run:
        failed = _delete(io, [*dead, *documents])
    return StoreCleanup(
        location=root,
        dry_run=dry_run,
        dead_markers=tuple(sorted(p for p in dead if p not in failed)),
        job_documents=tuple(sorted(p for p in documents if p not in failed)),
        live_markers=len(markers) - len(dead),
        kept_job_documents=kept,
        failed=tuple(sorted(failed)),
        errors=tuple(failed[p] for p in sorted(failed)),
    )


def _job_stem(name: str) -> str | None:
    """The name shared by one job's documents (``<digest>`` of ``<digest>.pending.json``)."""
    for suffix in _JOB_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _read(io: FileIO, path: str) -> dict[str, object] | None:
    """The JSON object in ``path``; None if it is gone, torn or not an object."""
    try:
        doc = json.loads(io.read(path))
    except Exception:
        return None
    return doc if isinstance(doc, dict) else None


def _marker_live(io: FileIO, info: FileInfo, now_ms: int, max_age_ms: int) -> bool:
    doc = _read(io, info.path)
    if doc is None:  # being replaced, or foreign: live until it is old
        return now_ms - info.modified_ms < max_age_ms
    return marker_alive(doc, now_ms, max_age_ms)


def _job_may_run(io: FileIO, group: Iterable[FileInfo], now_ms: int, max_age_ms: int) -> bool:
    """Whether a detached job of these documents may still run (its pending document)."""
    for info in group:
        if info.path.endswith(".pending.json"):
            doc = _read(io, info.path)
            if doc is None:
                if now_ms - info.modified_ms < max_age_ms:
                    return True
            elif marker_alive(doc, now_ms, max_age_ms):
                return True
    return False


def _delete(io: FileIO, paths: list[str]) -> dict[str, str]:
    """Delete ``paths``; the failures, as path -> message."""
    failed: dict[str, str] = {}
    for path, error in io.delete_many(paths) if paths else ():
        failed[path] = f"cannot delete {path}: {type(error).__name__}: {error}"
        log.warning("icewright store cleanup: cannot delete %s: %s", path, error)
    return failed
