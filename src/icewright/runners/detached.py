"""Control of detached Spark jobs: processes that outlive their caller (their own session
and process group). Whether one still runs (by process id, host and start time, so a
reused id is not mistaken for it), how to stop it, and where its output goes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["local_log_path", "process_alive", "process_start_ticks", "stop_detached"]


def process_start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, Linux ``/proc``), or None
    where that cannot be read; it tells a reused process id from the original."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of proc(5), counted from field 3
    except (IndexError, ValueError):
        return None


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return False
    return text[text.rfind(")") + 2 : text.rfind(")") + 3] == "Z"


def process_alive(pending: Mapping[str, Any]) -> bool | None:
    """Whether the detached process of a pending document still runs: True, False, or
    None when this process cannot tell (another host, or a job that is not watched by
    its process, as in cluster deploy mode where ``spark-submit`` returns early)."""
    pid = pending.get("pid")
    if not pending.get("watch-process", True) or not isinstance(pid, int) or pid <= 0:
        return None
    if pending.get("host") != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else: a reused id, checked below
        pass
    if _zombie(pid):
        return False
    started = pending.get("process-start")
    if isinstance(started, int):
        now = process_start_ticks(pid)
        if now is not None and now != started:
            return False  # the id was reused by another process
    return True


def stop_detached(pending: Mapping[str, Any], timeout: float = 20.0) -> bool:
    """Stop the detached job of a pending document (SIGTERM to its process group, SIGKILL
    after ``timeout`` seconds) when it runs on this host; whether it was running here.

    The job's own SIGTERM handler deletes the files it wrote and leaves an error document.
    """

    if process_alive(pending) is not True:
        return False
    pid = int(pending["pid"])
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process_alive(pending):
            time.sleep(0.2)
        if not process_alive(pending):
            break
    return True


def local_log_path(result: str) -> str:
    """The log file of a detached job: beside its result when that is a local path, else
    in the temporary directory (a process writes its output to a local file)."""
    local = result[len("file://") :] if result.startswith("file://") else result
    if "://" not in local and os.path.isdir(os.path.dirname(local) or "."):
        return local[: -len(".json")] + ".log"
    folder = Path(tempfile.gettempdir()) / "icewright-jobs"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / (Path(local).name[: -len(".json")] + ".log"))


def kill_group(process: subprocess.Popen[str], timeout: float) -> None:
    """SIGTERM the process group of ``process``; SIGKILL what is left after ``timeout``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=timeout)
            break
        except subprocess.TimeoutExpired:
            continue
    reap_group(process)


def reap_group(process: subprocess.Popen[str]) -> None:
    """Kill whatever of the group outlived the ``spark-submit`` process itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
