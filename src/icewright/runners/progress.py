"""How far the in-process Spark jobs are: the active stages' task counts, read from the
session's status tracker, for any adapter to show (the command draws a bar on a terminal,
Dagster writes a line to the step's compute log now and then).

Reading the tracker is cheap and never blocks a job; a JVM that goes away mid-read reads as
"nothing active".
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["StageProgress", "active_stages", "logged_stage_progress"]


@dataclasses.dataclass(frozen=True)
class StageProgress:
    """The active stages of a session at one moment."""

    stage_ids: tuple[int, ...]
    completed_tasks: int
    total_tasks: int

    def describe(self) -> str:
        """``stage 3,4: 12/40 tasks``."""
        stages = ",".join(str(s) for s in self.stage_ids)
        return f"stage {stages}: {self.completed_tasks}/{self.total_tasks} tasks"


def active_stages(spark: Any) -> StageProgress | None:
    """The active stages of ``spark`` (a SparkSession), or None when none is running."""
    try:
        tracker = spark.sparkContext.statusTracker()
        infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
    except Exception:  # the JVM going away mid-poll is not an error of the job
        return None
    infos = [i for i in infos if i is not None]
    if not infos:
        return None
    return StageProgress(
        stage_ids=tuple(sorted(i.stageId for i in infos)),
        completed_tasks=sum(i.numCompletedTasks for i in infos),
        total_tasks=sum(i.numTasks for i in infos),
    )


@contextmanager
def logged_stage_progress(
    get_spark: Callable[[], Any | None],
    log: Callable[[str], None],
    label: str,
    *,
    interval: float = 10.0,
) -> Iterator[None]:
    """While the block runs, write the active stages to ``log`` every ``interval``
    seconds, when they changed since the last line (a log, unlike a terminal, keeps every
    line). ``get_spark`` gives the session once it exists (None while the JVM starts)."""
    stop = threading.Event()

    def poll() -> None:
        last: StageProgress | None = None
        while not stop.wait(interval):
            spark = get_spark()
            now = active_stages(spark) if spark is not None else None
            if now is not None and now != last:
                log(f"{label}: {now.describe()}")
            last = now

    thread = threading.Thread(target=poll, name="icewright-stage-log", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2)
