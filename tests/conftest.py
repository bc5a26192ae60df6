"""Suite-wide settings and the fixtures every test folder shares.

The shared setup is written once, in ``tests/support`` modules registered here as
plugins, so a test asks for a fixture by name and never imports one:

* ``sqlite_catalog`` / ``catalog``, ``pyiceberg_catalog``, ``glue_mock`` and
  :func:`tests.support.catalogs.make_catalog` (every catalog kind): ``tests.support.catalogs``;
* ``postgres_url`` (a PostgreSQL server): ``tests.support.postgres``;
* ``s3_server`` (moto's S3 server on 127.0.0.1) and ``authenticated_s3`` (one that checks
  keys): ``tests.support.s3``;
* ``rest_server`` and ``rest_namespace`` (Iceberg Java's REST catalog server):
  ``tests.support.rest``;
* ``spark`` (the one local SparkSession of the process) and ``spark35`` (one pyspark 3.5
  process, beside Iceberg Java, that runs scripts each in a session of its own):
  ``tests.support.spark``;
* ``spark_cluster`` (a standalone master and worker on 127.0.0.1): ``tests.support.cluster``;
* ``airflow_home`` (a migrated Airflow home): ``tests.support.airflow``;
* ``chromium`` (a headless browser's binary): ``tests.support.chromium``;
* ``iceberg_java`` and ``duckdb_iceberg`` (the peers): ``tests.support.java``,
  ``tests.support.duckdb``;
* ``embedded_home`` / ``embedded_catalog`` (the default catalog of a temporary
  ``ICEWRIGHT_HOME``): ``tests.support.embedded``.

A folder's own ``conftest.py`` holds only what is particular to it (and may give a
shared name such as ``catalog`` its folder's meaning). Session fixtures start their
service on first use only.

JVMs: every Spark driver the suite starts through ``spark-submit`` (the local session of
this process, and those of the Airflow, Dagster, ``icewright`` and ``spark-submit``
subprocesses, which inherit the environment; the Iceberg Java peer's too) gets
``SPARK_SUBMIT_OPTS`` with C1 only and the serial collector, unless the environment sets it
already. The suite's jobs are tiny, so a driver's time is its start: measured on the 2-core
machine, a fresh session plus a small job took 13-15 s instead of 20-33 s (the C2
compiler's and G1's threads competed for the two cores). Only the JIT and the collector
change, not what any job computes. The same variable also carries a class data sharing
archive of a Spark driver's classes (``tests.support.class_archive``; made once per
machine, ``ICEWRIGHT_TEST_CLASS_ARCHIVE=0`` goes without): a session and its first query
start in 2.8 s instead of 7.5 s.

Workers: ``bash scripts/test`` runs pytest on parallel workers (pytest-xdist's
``loadfile``: a module at a time, the modules with the most tests first, so the many
in-process tests run first and the single-test end-to-end modules last); every worker
starts the session services it uses (a Spark session, a JVM, an Airflow home) once.
Measured on the 2-core machine: that order, 1558 s of pytest. The longest modules first
(by a full run's figures) was tried once and not kept: about 1700 s of pytest with a
sixth of the tests run when it was stopped (two end-to-end modules at once oversubscribe
the two cores); the machine's speed varied that hour, so that figure is not conclusive.

Time: a test outside the ``slow`` mark fails when its call takes more than
``ICEWRIGHT_TEST_TIME_LIMIT`` seconds (default 20; 0 turns the check off) at the reference
machine's speed, with its name and time: the whole suite is kept to 15 minutes on the
2-core CI machine, and a slow test belongs in the slow set (still run in CI) or gets
faster. Machines of the same kind run up to 2-3 times slower in some hours, so the limit
is multiplied by the machine's measured slowdown at that moment (``tests.support.speed``),
and a test whose call takes over a third of the limit on a quiet machine is marked slow.
Only the call is timed: a session fixture's start (Spark, a JVM, an Airflow home) is paid
once by whichever test asks first.
The end of a run prints where its time went: seconds and tests by folder, the most
expensive modules and the machine's slowdown (``tests.support.timings``), and the
processes the tests started (``tests.support.starts``).

Hypothesis: no per-example deadline and no "too slow" health check, because the
suite runs on a shared 2-core machine where a slow example says nothing about
correctness; every property still runs its full number of examples.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.class_archive import with_class_archive
from tests.support.speed import slowdown

os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

# java before duckdb, which imports it (a plugin is rewritten for assertions only when
# pytest imports it first)
pytest_plugins = [
    "tests.support.airflow",
    "tests.support.catalogs",
    "tests.support.chromium",
    "tests.support.cluster",
    "tests.support.java",
    "tests.support.duckdb",
    "tests.support.embedded",
    "tests.support.postgres",
    "tests.support.rest",
    "tests.support.s3",
    "tests.support.spark",
    "tests.support.starts",
    "tests.support.timings",
]

settings.register_profile("icewright", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("icewright")


def pytest_configure(config: pytest.Config) -> None:
    """Every Spark driver of this run maps the class archive (none for a collection)."""
    if config.option.collectonly or os.environ.get("ICEWRIGHT_TEST_CLASS_ARCHIVE") == "0":
        return
    os.environ.update(with_class_archive(dict(os.environ)))


TIME_LIMIT = float(os.environ.get("ICEWRIGHT_TEST_TIME_LIMIT", "20"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, Any, None]:
    """Fail a passing test outside the ``slow`` mark whose call took over the time limit.

    The limit is TIME_LIMIT at the reference machine's speed: a call over it is measured
    against the machine's speed at that moment (``tests.support.speed``; the environment's
    ``ICEWRIGHT_TEST_SLOWDOWN`` fixes the factor instead) before it fails.
    """
    outcome = yield
    report = outcome.get_result()
    if not (
        call.when == "call"
        and report.passed
        and TIME_LIMIT > 0
        and call.duration > TIME_LIMIT
        and item.get_closest_marker("slow") is None
    ):
        return
    factor = float(os.environ.get("ICEWRIGHT_TEST_SLOWDOWN") or slowdown())
    if call.duration > TIME_LIMIT * factor:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} took {call.duration:.1f} s, over the {TIME_LIMIT:g} s a test "
            f"outside the slow mark may take (x{factor:.2f} for this machine's speed now: "
            f"{TIME_LIMIT * factor:.1f} s): make it faster, or mark it slow"
        )
