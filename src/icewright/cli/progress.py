"""Progress on a terminal: Spark stages (polled from the status tracker) and other long
work (an elapsed-time indicator). Nothing is drawn when the stream is not a terminal, so
scripts and ``--json`` consumers see only what they asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from icewright.runners.progress import active_stages

__all__ = ["activity", "spark_progress"]

_WIDTH = 28
_SPIN = "|/-\\"


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Ticker:
    """Redraws one status line from ``render`` every ``interval`` seconds."""

    def __init__(
        self, stream: IO[str], render: Callable[[float, int], str | None], interval: float
    ) -> None:
        self._stream = stream
        self._render = render
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="icewright-progress", daemon=True)
        self._drawn = 0
        self._start = time.monotonic()

    def __enter__(self) -> _Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        if self._drawn:
            self._stream.write("\r" + " " * self._drawn + "\r")
            self._stream.flush()

    def _run(self) -> None:
        tick = 0
        while not self._stop.wait(self._interval):
            tick += 1
            try:
                text = self._render(time.monotonic() - self._start, tick)
            except Exception:  # the JVM going away mid-poll must not break the command
                text = None
            if text is None:
                continue
            pad = max(0, self._drawn - len(text))
            self._stream.write("\r" + text + " " * pad)
            self._stream.flush()
            self._drawn = len(text)


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def _bar(done: int, total: int) -> str:
    filled = 0 if total <= 0 else min(_WIDTH, _WIDTH * done // total)
    return "[" + "#" * filled + "-" * (_WIDTH - filled) + "]"


@contextmanager
def spark_progress(
    get_spark: Callable[[], Any | None], stream: IO[str], label: str
) -> Iterator[None]:
    """While the block runs, show the active Spark stages' task progress on ``stream``
    (polling ``sparkContext.statusTracker()`` from a thread), if it is a terminal.
    ``get_spark`` gives the session once it exists (None before: the JVM is starting)."""
    if not _is_tty(stream):
        yield
        return

    def render(elapsed: float, tick: int) -> str | None:
        spark = get_spark()
        if spark is None:
            return f"{label}: starting Spark {_SPIN[tick % 4]} {_elapsed(elapsed)}"
        now = active_stages(spark)
        if now is None:
            return f"{label} {_SPIN[tick % 4]} {_elapsed(elapsed)}"
        done, total = now.completed_tasks, now.total_tasks
        stages = ",".join(str(s) for s in now.stage_ids)
        return (
            f"{label} stage {stages} {_bar(done, total)} {done}/{total} tasks {_elapsed(elapsed)}"
        )

    with _Ticker(stream, render, 0.25):
        yield


@contextmanager
def activity(stream: IO[str], label: str) -> Iterator[None]:
    """While the block runs, show ``label`` with a spinner and the elapsed time on
    ``stream``, if it is a terminal (work that reports no counts as it goes, such as the
    deletes of expire and remove-orphans)."""
    if not _is_tty(stream):
        yield
        return
    with _Ticker(
        stream, lambda elapsed, tick: f"{label} {_SPIN[tick % 4]} {_elapsed(elapsed)}", 0.25
    ):
        yield
