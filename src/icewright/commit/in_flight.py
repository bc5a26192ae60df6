"""Writes in flight: what orphan removal must not delete, whatever its ``older_than``.

A job that writes data files and then commits them leaves, until its commit lands, files
that no metadata references: exactly what :func:`~icewright.commit.orphans.remove_orphan_files`
deletes once they are older than its cutoff. Iceberg Java only warns that the cutoff must
exceed the longest write; icewright knows its own writes instead. Each one holds a marker
under the table (``<location>/.icewright/in-flight/<id>.json``: process, host, start time)
from before its first file until its commit's outcome is known (:func:`in_flight`), and
orphan removal moves its cutoff before the start of the oldest live marker
(:func:`oldest_in_flight_ms`). A marker whose process is gone (on this host) or that is
older than ``max_age_ms`` (elsewhere) is ignored: its files are orphans like any others.

The pending documents of detached jobs (``.icewright/jobs/*.pending.json``) count as markers
too, and nothing under ``<location>/.icewright/`` (the job store: stored results of jobs
whose commit has not landed, markers) is ever an orphan.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

from icewright.io.base import FileIO

__all__ = [
    "CLOCK_SLACK_MS",
    "IN_FLIGHT_MAX_AGE_MS",
    "STORE_DIR",
    "in_flight",
    "in_flight_location",
    "oldest_in_flight_ms",
]

STORE_DIR = ".icewright"
"""icewright's own folder under a table location (job store, in-flight markers)."""

IN_FLIGHT_MAX_AGE_MS = 7 * 24 * 3600 * 1000
"""A marker of another host older than this is taken as left by a dead process."""

CLOCK_SLACK_MS = 2000
"""How much older than the moment it was written a file's modification time may read
(storage timestamps in whole seconds, as S3's; a little clock skew)."""

_FORMAT = "icewright-in-flight"


def in_flight_location(table_location: str) -> str:
    """The folder of a table's in-flight markers."""
    return f"{table_location.rstrip('/')}/{STORE_DIR}/in-flight"


def _start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def in_flight(io: FileIO, table_location: str, what: str = "write") -> Iterator[str]:
    """Hold a marker for a write to the table at ``table_location`` (its path is
    yielded); it is removed when the block ends, however it ends."""
    pid = os.getpid()
    path = f"{in_flight_location(table_location)}/{uuid.uuid4().hex}.json"
    doc = {
        "format": _FORMAT,
        "version": 1,
        "what": what,
        "pid": pid,
        "host": socket.gethostname(),
        "process-start": _start_ticks(pid),
        # A file's modification time comes from its storage's clock: some slack.
        "started-ms": int(time.time() * 1000) - CLOCK_SLACK_MS,
    }
    io.write(path, json.dumps(doc).encode())
    try:
        yield path
    finally:
        with contextlib.suppress(Exception):
            io.delete(path)


def _alive(doc: dict[str, Any], now_ms: int, max_age_ms: int) -> bool:
    started = doc.get("started-ms", doc.get("submitted-at-ms"))
    if not isinstance(started, int):
        return False
    pid = doc.get("pid")
    watched = doc.get("watch-process", True) is not False  # cluster mode: not by its pid
    if watched and doc.get("host") == socket.gethostname() and isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        ticks = doc.get("process-start")
        # A different start time: the id belongs to another process now.
        return not (isinstance(ticks, int) and _start_ticks(pid) not in (None, ticks))
    return now_ms - started < max_age_ms


def oldest_in_flight_ms(
    io: FileIO, table_location: str, *, max_age_ms: int = IN_FLIGHT_MAX_AGE_MS
) -> int | None:
    """The start (ms) of the oldest live write in flight on the table, or None."""
    root = f"{table_location.rstrip('/')}/{STORE_DIR}"
    now = int(time.time() * 1000)
    oldest: int | None = None
    for info in io.list_prefix(root):
        name = info.path.rsplit("/", 1)[-1]
        marker = f"/{STORE_DIR}/in-flight/" in info.path and name.endswith(".json")
        if not (marker or name.endswith(".pending.json")):
            continue
        try:
            doc = json.loads(io.read(info.path))
        except Exception:  # gone meanwhile (its write ended), or torn: count it as now
            doc = {"started-ms": info.modified_ms, "host": None}
        if not isinstance(doc, dict) or not _alive(doc, now, max_age_ms):
            continue
        value = doc.get("started-ms", doc.get("submitted-at-ms"))
        started = value if isinstance(value, int) else now
        oldest = started if oldest is None else min(oldest, started)
    return oldest
