"""The terminal progress indicators: drawn on a terminal, silent otherwise."""

from __future__ import annotations

import io
import time

from pyspark.sql import SparkSession

from icewright.cli.progress import activity, spark_progress


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal (as a real tty would)."""

    def isatty(self) -> bool:
        return True


def test_activity_draws_on_a_terminal_and_clears() -> None:
    out = _Terminal()
    with activity(out, "deleting files"):
        time.sleep(0.8)
    text = out.getvalue()
    assert "\rdeleting files " in text
    assert "0:00" in text
    # the last write blanks the line and returns the cursor
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""


def test_nothing_when_not_a_terminal() -> None:
    out = io.StringIO()
    with activity(out, "deleting files"), spark_progress(lambda: None, out, "append"):
        time.sleep(0.6)
    assert out.getvalue() == ""


def test_spark_progress_waits_for_the_session() -> None:
    out = _Terminal()
    with spark_progress(lambda: None, out, "append"):
        time.sleep(0.6)
    assert "append: starting Spark" in out.getvalue()


def test_spark_progress_shows_stage_tasks(spark: SparkSession) -> None:
    out = _Terminal()
    with spark_progress(lambda: spark, out, "append"):
        count = (
            spark.sparkContext.parallelize(range(8), 8)
            .map(lambda x: (time.sleep(0.4), x)[1])
            .count()
        )
    assert count == 8
    text = out.getvalue()
    assert "append stage " in text and "/8 tasks" in text and "[" in text
