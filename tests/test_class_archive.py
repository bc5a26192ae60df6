"""The suite's class data sharing archive (``tests/support/class_archive.py``) is one a
Spark driver JVM really maps: a JVM ignores an unusable archive without a word (its
CDS log is off), and then every driver of the run starts at twice the cost.

An archive goes stale when the JDK's own base archive is regenerated after it was made
(``java -Xshare:dump``); its name then changes with the base, so a new one is made."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyspark
import pytest

from tests.support import class_archive

SPARK_SUBMIT = Path(pyspark.__file__).parent / "bin" / "spark-submit"


def test_a_spark_driver_maps_the_archive_the_run_uses() -> None:
    options = os.environ.get(class_archive.OPTS, "")
    assert class_archive.ARCHIVE_OPTION in options, options
    # the same JVM options, with the class loading log on instead of the CDS log off
    logged = options.replace(class_archive.QUIET, "-Xlog:class+load=info")
    done = subprocess.run(
        [str(SPARK_SUBMIT), "--version"],
        env={**os.environ, class_archive.OPTS: logged},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loads = [
        line for line in done.stdout.splitlines() if "org.apache.spark.deploy.SparkSubmit " in line
    ]
    assert loads and "shared objects file (top)" in loads[0], loads or done.stdout[-2000:]


def test_a_regenerated_base_archive_gives_another_archive(monkeypatch: pytest.MonkeyPatch) -> None:
    java = class_archive._java()
    assert java is not None
    options = "-XX:TieredStopAtLevel=1"
    before = class_archive.archive_path(java, options)
    assert before == class_archive.archive_path(java, options)
    base = class_archive._base_archive(java)
    assert base.startswith(str(Path(java).resolve().parents[1] / "lib" / "server" / "classes.jsa"))
    monkeypatch.setattr(class_archive, "_base_archive", lambda java: base + "-dumped")
    assert class_archive.archive_path(java, options) != before
