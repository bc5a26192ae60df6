"""Writes in flight: what orphan removal must not delete, whatever its ``older_than``.

A job that writes data files and then commits them leaves, until its commit lands, files
that no metadata references: exactly what :func:`~icewright.commit.orphans.remove_orphan_files`
deletes once they are older than its cutoff. Iceberg Java only warns that the cutoff must
exceed the longest write; icewright knows its own writes instead. Each one holds a marker
under the table (``<location>/.icewright/in-flight/<id>.json``: process, host, start time)
from before its first file until its commit's outcome is known (:func:`in_flight`), and
orphan removal moves its cutoff before the start of the oldest live marker
(:func:`oldest_in_flight_ms`). A marker is dead (:func:`marker_alive`) when it was written
on this host, in this process-id namespace, and its process is gone or its id now belongs
to a process started at another time; a marker of another host (or container) is taken
as dead once older than ``max_age_ms`` (seven days: no write runs that long). A dead
marker protects nothing, its files are orphans like any others, and orphan removal
deletes the marker itself (:mod:`icewright.commit.store_cleanup`).

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
    "marker_alive",
    "oldest_in_flight_ms",
    "pid_namespace",
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


def _stat(pid: int) -> tuple[str, int] | None:
    """Process ``pid``'s state letter and start time (clock ticks after boot), from Linux
    ``/proc``; None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # the name may hold ")" and spaces
        return fields[0], int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _start_ticks(pid: int) -> int | None:
    stat = _stat(pid)
    return None if stat is None else stat[1]


def pid_namespace() -> str | None:
    """This process's process-id namespace (Linux: ``pid:[4026531836]``), or None.

    Two containers may share a host name (host networking) but not their process ids:
    a marker is judged by its process id only where the namespace is the same.
    """
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
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
        "pid-namespace": pid_namespace(),
        # A file's modification time comes from its storage's clock: some slack.
        "started-ms": int(time.time() * 1000) - CLOCK_SLACK_MS,
    }
    io.write(path, json.dumps(doc).encode())
    try:
        yield path
    finally:
        with contextlib.suppress(Exception):
            io.delete(path)


def marker_alive(doc: dict[str, Any], now_ms: int, max_age_ms: int = IN_FLIGHT_MAX_AGE_MS) -> bool:
    """Whether the write of an in-flight marker (or the detached job of a pending job
    document) may still run: on this host and process-id namespace, whether its process
    does; elsewhere, whether it started less than ``max_age_ms`` ago. A document without
    a start time is dead."""
    started = doc.get("started-ms", doc.get("submitted-at-ms"))
    if not isinstance(started, int):
        return False
    pid = doc.get("pid")
    watched = doc.get("watch-process", True) is not False  # cluster mode: not by its pid
    namespace = doc.get("pid-namespace")
    local = doc.get("host") == socket.gethostname() and (
        not isinstance(namespace, str) or namespace == pid_namespace()
    )
    if watched and local and isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        stat = _stat(pid)
        if stat is None:
            return True  # no /proc to tell more: the id exists
        state, now_ticks = stat
        ticks = doc.get("process-start")
        # A zombie has ended (killed, not yet reaped); a different start time means the id
        # belongs to another process now.
        return state != "Z" and not (isinstance(ticks, int) and now_ticks != ticks)
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
        if not isinstance(doc, dict) or not marker_alive(doc, now, max_age_ms):
            continue
        value = doc.get("started-ms", doc.get("submitted-at-ms"))
        started = value if isinstance(value, int) else now
        oldest = started if oldest is None else min(oldest, started)
    return oldest
