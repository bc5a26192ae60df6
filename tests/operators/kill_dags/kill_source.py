"""The source of ``icewright_kill``: its first call (in the first try's detached
``spark-submit`` job) notes its process id in ``$ICEWRIGHT_KILL_DIR/first.pid`` and sleeps
(the test kills the task meanwhile); a later call returns three rows at once."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def rows(spark: SparkSession) -> DataFrame:
    """Three rows, after a long sleep the first time."""
    marker = Path(os.environ["ICEWRIGHT_KILL_DIR"]) / "first.pid"
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        time.sleep(600)
    return spark.sql("SELECT id, 'kept' AS note FROM range(3)")
