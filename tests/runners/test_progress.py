"""Stage progress read from the session's status tracker, as Dagster logs it."""

from __future__ import annotations

import re
import time

from pyspark.sql import SparkSession

from icewright.runners.progress import active_stages, logged_stage_progress


def test_progress_lines_while_a_job_runs(spark: SparkSession) -> None:
    assert active_stages(spark) is None  # nothing running
    lines: list[str] = []
    with logged_stage_progress(lambda: spark, lines.append, "load", interval=0.2):
        spark.sparkContext.parallelize(range(4), 4).map(lambda x: time.sleep(1.0) or x).count()
    assert lines, "no progress line while a 4-task stage ran"
    assert all(re.fullmatch(r"load: stage \d+(,\d+)*: [0-4]/4 tasks", line) for line in lines)
    assert len(lines) == len(set(lines))  # a line only when the progress changed


def test_no_lines_before_the_session_exists() -> None:
    lines: list[str] = []
    with logged_stage_progress(lambda: None, lines.append, "load", interval=0.05):
        time.sleep(0.3)
    assert lines == []
