"""icewright's own files do not pile up: dead in-flight markers and old job documents go
with orphan removal; a live writer's marker and a running job's documents stay.

The first test reproduces the reported case with real processes: writers killed with
SIGKILL in the middle of their write (files written, commit not made) leave their markers
behind; orphan removal deletes those and the killed writers' files, keeps a live
writer's marker and files, and that writer's commit then succeeds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Table
from icewright.commit.in_flight import in_flight, in_flight_location, marker_alive
from icewright.commit.orphans import remove_orphan_files, remove_store_leftovers
from icewright.commit.store_cleanup import clean_store
from icewright.io.local import local_path
from icewright.runners.store import JobStore, default_staging
from tests.commit.support import scan_rows

ROOT = Path(__file__).resolve().parents[2]
HOUR_MS = 3600 * 1000
DAY_MS = 24 * HOUR_MS


def now_ms() -> int:
    return int(time.time() * 1000)


def aged(table: Table, path: str, age_ms: int) -> str:
    """Set ``path``'s modification time ``age_ms`` in the past."""
    when = time.time() - age_ms / 1000
    os.utime(local_path(path), (when, when))
    return path


def put(table: Table, relative: str, doc: Any, age_ms: int | None = None) -> str:
    """Write ``doc`` (JSON, or bytes as they are) at ``<location>/.icewright/<relative>``."""
    path = f"{table.location}/.icewright/{relative}"
    table.io.write(path, doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path if age_ms is None else aged(table, path, age_ms)


@pytest.fixture
def sleeper() -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Start processes that sleep (a detached job's stand-in); all are ended at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(["sleep", "120"])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


# --- the reported case: writers killed mid-write ----------------------------------------------


def _writer(table: Table, tmp_path: Path, n: int) -> tuple[subprocess.Popen[bytes], Path, Path]:
    catalog_uri = f"sqlite:///{tmp_path}/catalog.db"
    ready, go = tmp_path / f"ready-{n}", tmp_path / f"go-{n}"
    command = [sys.executable, "-m", "tests.commit.marker_writer", catalog_uri]
    command += [str(tmp_path / "wh"), str(table.identifier), str(ready), str(go), str(n)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE)
    return proc, ready, go


def _wait_for(paths: list[Path], procs: list[subprocess.Popen[bytes]]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while not all(p.exists() for p in paths):
        assert all(proc.poll() is None for proc in procs), "a writer died on its own"
        assert time.monotonic() < deadline, "the writers did not get to their write"
        time.sleep(0.05)
    return [json.loads(p.read_text()) for p in paths]


@pytest.mark.slow
def test_writers_killed_mid_write_leave_nothing_and_a_live_writer_commits(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table = make_table()
    killed = [_writer(table, tmp_path, n) for n in range(8)]
    notes = _wait_for([r for _, r, _ in killed], [p for p, _, _ in killed])
    for proc, _, _ in killed:
        proc.send_signal(signal.SIGKILL)  # in the middle of the write: files, no commit
        proc.wait()
    dead = sorted(n["marker"] for n in notes)
    assert all(table.io.exists(m) for m in dead)  # what the issue saw: markers left behind
    time.sleep(2.2)  # the killed writers' files are now older than any new write's start

    live, ready, go = _writer(table, tmp_path, 100)
    (mine,) = _wait_for([ready], [live])
    result = remove_orphan_files(table, older_than_ms=now_ms() + 60_000)  # a window of zero

    assert result.dead_markers == tuple(dead)
    assert not any(table.io.exists(m) for m in dead)
    assert table.io.exists(mine["marker"])  # the live writer's marker is never touched
    assert all(table.io.exists(f) for f in mine["files"])  # nor its files
    killed_files = sorted(f for n in notes for f in n["files"])
    assert sorted(result.orphan_paths) == killed_files  # the killed writers' files went
    assert not any(table.io.exists(f) for f in killed_files)

    go.write_text("go")
    out, _ = live.communicate(timeout=60)
    assert live.returncode == 0
    committed = table.refresh()
    assert json.loads(out)["snapshot_id"] == committed.metadata.current_snapshot_id
    assert scan_rows(committed, ["id", "region"]) == [(100, "w100")]
    assert not table.io.exists(mine["marker"])
    again = remove_orphan_files(committed, older_than_ms=now_ms() + 60_000)
    assert again.orphan_paths == () and again.dead_markers == ()
    assert list(table.io.list_prefix(in_flight_location(table.location))) == []


# --- markers: which are dead ------------------------------------------------------------------


def _marker(pid: int, started_ms: int, **extra: Any) -> dict[str, Any]:
    return {"pid": pid, "host": socket.gethostname(), "started-ms": started_ms, **extra}


def test_marker_liveness(sleeper: Callable[[], subprocess.Popen[bytes]]) -> None:
    now = now_ms()
    me = os.getpid()
    assert marker_alive(_marker(me, now - 30 * DAY_MS), now)  # live whatever its age
    gone = sleeper()
    gone.kill()
    gone.wait()
    assert not marker_alive(_marker(gone.pid, now), now)  # the process is gone
    zombie = sleeper()
    zombie.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not marker_alive(_marker(zombie.pid, now), now)  # killed, not yet reaped
    zombie.wait()
    # the id of a live process, but started at another time: the id was reused
    assert not marker_alive(_marker(me, now, **{"process-start": 1}), now)
    # another host, or another process-id namespace of this host: by age only
    elsewhere = {"host": "another-host", "pid": gone.pid}
    assert marker_alive({**elsewhere, "started-ms": now - DAY_MS}, now)
    assert not marker_alive({**elsewhere, "started-ms": now - 8 * DAY_MS}, now)
    container = _marker(gone.pid, now - DAY_MS, **{"pid-namespace": "pid:[1]"})
    assert marker_alive(container, now)
    assert not marker_alive({**container, "started-ms": now - 8 * DAY_MS}, now)
    # a cluster-mode job is not watched by its pid
    assert marker_alive(_marker(gone.pid, now, **{"watch-process": False}), now)


def test_dead_markers_go_live_and_unreadable_ones_stay(make_table: Callable[..., Table]) -> None:
    table = make_table()
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = put(table, "in-flight/dead.json", _marker(gone.pid, now_ms()))
    old_elsewhere = put(table, "in-flight/far.json", {"host": "h", "started-ms": 0})
    torn = put(table, "in-flight/torn.json", b'{"pid": 1')  # live until a week old
    torn_old = put(table, "in-flight/torn-old.json", b"", age_ms=8 * DAY_MS)
    stray_tmp = put(
        table, "in-flight/.x.json.0123456789abcdef0123456789abcdef.tmp", b"{", 2 * DAY_MS
    )
    with in_flight(table.io, table.location) as live:
        found = clean_store(table.io, table.location, cutoff_ms=now_ms(), dry_run=True)
        assert found.dead_markers == tuple(sorted([dead, old_elsewhere, torn_old]))
        assert found.job_documents == (stray_tmp,)  # an interrupted write's temporary file
        assert found.live_markers == 2
        assert table.io.exists(dead)  # a dry run deletes nothing
        # a cutoff after the temporary file's time: it is not old enough yet
        done = clean_store(table.io, table.location, cutoff_ms=now_ms() - 3 * DAY_MS)
        assert done.dead_markers == found.dead_markers and done.job_documents == ()
        done = clean_store(table.io, table.location, cutoff_ms=now_ms() - DAY_MS)
        assert done.dead_markers == () and done.job_documents == (stray_tmp,)
        left = sorted(i.path for i in table.io.list_prefix(f"{table.location}/.icewright"))
        assert left == sorted([live, torn])


# --- job documents ----------------------------------------------------------------------------


def test_job_documents_go_once_no_job_runs_and_they_are_past_the_cutoff(
    make_table: Callable[..., Table], sleeper: Callable[[], subprocess.Popen[bytes]]
) -> None:
    table = make_table()
    store = JobStore.for_table(table.metadata, table.io)
    jobs = default_staging(table.location)
    old = 4 * DAY_MS
    # a detached job that still runs: its pending document, spec and (later) result stay
    running = sleeper()
    store.write_pending("running", {"pid": running.pid, "host": socket.gethostname()})
    running_docs = [store.pending_path("running"), store.spec_path("running")]
    table.io.write(store.spec_path("running"), b"{}")
    for path in running_docs:
        aged(table, path, old)
    # a detached job whose process died: everything of its name stem goes
    died = sleeper()
    store.write_pending("died", {"pid": died.pid, "host": socket.gethostname()})
    died.kill()
    died.wait()
    died_docs = [store.pending_path("died"), store.path("died"), store.spec_path("died")]
    for path in died_docs[1:]:
        table.io.write(path, b"{}")
    for path in died_docs:
        aged(table, path, old)
    # stored results whose caller never came back (a commit that landed before its
    # caller died, an unknown outcome never retried): old ones go, recent ones stay
    abandoned = aged(table, put(table, "jobs/abandoned.json", {"status": "ok"}), old)
    recent = put(table, "jobs/recent.json", {"status": "ok"})
    within_the_hour = aged(table, put(table, "jobs/hour.json", {}), 30 * 60 * 1000)
    attached = [put(table, f"jobs/{'a' * 32}.{kind}.json", {}, old) for kind in ("job", "result")]
    foreign = put(table, "jobs/notes.txt", b"not ours to judge", old)
    other = put(table, "elsewhere/thing.json", {}, old)

    result = remove_orphan_files(table, older_than_ms=now_ms() - DAY_MS)
    gone = sorted([*died_docs, abandoned, *attached])
    assert result.job_documents == tuple(gone)
    assert not any(table.io.exists(p) for p in gone)
    for path in (*running_docs, recent, within_the_hour, foreign, other):
        assert table.io.exists(path), path
    # the running job ends: its documents go with the next run
    running.kill()
    running.wait()
    again = remove_store_leftovers(table, older_than_ms=now_ms() - DAY_MS)
    assert again.job_documents == tuple(sorted(running_docs))
    assert sorted(i.path for i in table.io.list_prefix(jobs)) == sorted(
        [recent, within_the_hour, foreign]
    )


def test_the_default_age_keeps_a_day_old_result(make_table: Callable[..., Table]) -> None:
    table = make_table(**{"gc.enabled": "false"})  # orphan removal refuses; this does not
    day_old = put(table, "jobs/day.json", {}, DAY_MS)
    week_old = put(table, "jobs/week.json", {}, 7 * DAY_MS)
    result = remove_store_leftovers(table)  # three days, as orphan removal's default
    assert result.job_documents == (week_old,)
    assert table.io.exists(day_old)


def test_orphan_removal_of_another_location_leaves_the_store_alone(
    make_table: Callable[..., Table],
) -> None:
    table = make_table()
    dead = put(table, "in-flight/dead.json", {"host": "h", "started-ms": 0})
    result = remove_orphan_files(
        table, location=f"{table.location}/data", older_than_ms=now_ms() + 60_000
    )
    assert result.dead_markers == () and table.io.exists(dead)
    dry = remove_orphan_files(table, older_than_ms=now_ms() + 60_000, dry_run=True)
    assert dry.dead_markers == (dead,) and table.io.exists(dead)
