"""A class data sharing archive for every Spark driver the suite starts (issue 27): the
local session of the pytest process and those of its Airflow, Dagster, ``icewright`` and
main-job subprocesses, which inherit ``SPARK_SUBMIT_OPTS``.

Most of a local Spark driver's start is the JVM loading, parsing and verifying Spark's
classes from some 280 jars. A dynamic CDS archive (JDK 13 and later,
``-XX:ArchiveClassesAtExit``) holds the classes that one local session and a small
icewright write and read loaded; a driver started with ``-XX:SharedArchiveFile`` maps them
instead. Measured on the 2-core machine: a session and its first query took 7.5 s without,
2.8 s with it. Only how classes are loaded changes, not what any job computes (as with the
JIT and collector options ``tests/conftest.py`` sets); a JVM whose Java, options or class
path differ from the archive's ignores it without a word (``-Xshare:auto``), as it does a
missing file, and so does every JVM when the archive cannot be made here.

:func:`with_class_archive` adds the option to ``SPARK_SUBMIT_OPTS`` of an environment
(spark-submit passes it to the driver JVM); ``tests/conftest.py`` applies it to the
suite's own environment once, when the run starts. A JVM with another class path (the
Iceberg Java peer's Spark 3.5) would print a warning and ignore the archive: those
environments drop it with :func:`without_class_archive`, and the option also turns the
JVM's CDS log off, so no JVM output changes either way. The archive is made once per
machine and setup (its name is a digest of the Java and its own base archive, the options
and the jars), under the temporary directory, by a child Python that runs the small job
and waits for its JVM to write the archive at exit (some 20 s, paid by the first run on a
fresh machine).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OPTS = "SPARK_SUBMIT_OPTS"
ARCHIVE_OPTION = "-XX:SharedArchiveFile="
# a JVM that cannot map the archive says so on its standard output, and goes on without it
QUIET = "-Xlog:cds=off,cds+dynamic=off"

# Run by a child Python with -XX:ArchiveClassesAtExit in SPARK_SUBMIT_OPTS: an icewright
# table written (day and bucket transforms, a string column) and read back through Spark,
# then the JVM is shut down and waited for, so the archive is whole when this returns.
_WORKLOAD = """
import sys, tempfile
from icewright.actions import append, create
from icewright.catalog import SqlCatalog
from icewright.spark.read import read_table
from icewright.spark.session import local_session
from icewright.text.declaration import parse_partitioning, parse_schema

spark = local_session()
with tempfile.TemporaryDirectory() as root:
    catalog = SqlCatalog("w", f"sqlite:///{root}/c.db", f"{root}/w")
    catalog.create_namespace("s")
    create(
        "s.t",
        catalog=catalog,
        schema=parse_schema("id long not null, ts timestamptz, tag string"),
        partition_by=parse_partitioning("day(ts), bucket(4, id), bucket(2, tag)"),
    )
    source = (
        "sql:SELECT id, timestamp_seconds(id * 3600) AS ts, CAST(id % 3 AS STRING) AS tag "
        "FROM range(1000)"
    )
    append("s.t", source, catalog=catalog)
    frame = read_table(spark, catalog.load_table("s.t"))
    frame.groupBy("tag").count().collect()
gateway = spark.sparkContext._gateway
spark.stop()
proc = getattr(gateway, "proc", None)
gateway.shutdown()
if proc is not None:
    proc.stdin.close()
    proc.wait(timeout=300)
"""


def with_class_archive(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the archive in ``SPARK_SUBMIT_OPTS`` (unchanged where none is made or
    one is there already)."""
    base = env.get(OPTS, "")
    if ARCHIVE_OPTION in base:
        return env
    archive = class_archive(base)
    if archive is None:
        return env
    return {**env, OPTS: f"{base} {ARCHIVE_OPTION}{archive} {QUIET}".strip()}


def without_class_archive(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the options :func:`with_class_archive` added, for a JVM of
    another class path."""
    options = env.get(OPTS)
    if options is None or ARCHIVE_OPTION not in options:
        return env
    kept = [o for o in options.split() if not o.startswith(ARCHIVE_OPTION) and o != QUIET]
    return {**env, OPTS: " ".join(kept)}


@functools.cache
def class_archive(base_options: str) -> Path | None:
    """The archive for drivers started with ``base_options``, made if missing; None
    where it cannot be made (no Java, a Java before 13, a failed job)."""
    java = _java()
    if java is None:
        return None
    archive = archive_path(java, base_options)
    with archive.with_name(f"{archive.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not archive.exists():
            _make(archive, base_options)
    return archive if archive.exists() else None


def archive_path(java: str, base_options: str) -> Path:
    """Where the archive for ``java`` and ``base_options`` lives: its name is a digest of
    everything a JVM checks before it maps one (the Java and its base archive, the
    options, the class path)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256()
    for part in (java, _java_version(java), _base_archive(java), base_options, sys.executable):
        digest.update(part.encode() + b"\0")
    digest.update(str(jars).encode() + b"\0")
    for jar in sorted(jars.glob("*.jar")):
        digest.update(f"{jar.name}:{jar.stat().st_size}\0".encode())
    return Path(tempfile.gettempdir()) / f"icewright-test-spark-{digest.hexdigest()[:20]}.jsa"


def _make(archive: Path, base_options: str) -> None:
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.part")
    env = {**os.environ, OPTS: f"{base_options} -XX:ArchiveClassesAtExit={partial}".strip()}
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _WORKLOAD],
            cwd=tempfile.gettempdir(),
            env=env,
            capture_output=True,
            timeout=600,
            check=False,
        )
        if done.returncode == 0 and partial.is_file() and partial.stat().st_size > 0:
            os.replace(partial, archive)
    except subprocess.TimeoutExpired:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    return None if found is None else str(Path(found).resolve())


def _base_archive(java: str) -> str:
    """The identity of the JDK's own (static) class archive: a dynamic archive records
    the checksum of the one it was made on top of, and a JVM ignores it once that base
    is regenerated (``java -Xshare:dump``, a JDK update in place)."""
    base = Path(java).resolve().parents[1] / "lib" / "server" / "classes.jsa"
    try:
        stat = base.stat()
    except OSError:
        return "no base archive"
    return f"{base}:{stat.st_size}:{stat.st_mtime_ns}"


def _java_version(java: str) -> str:
    done = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    return done.stderr
