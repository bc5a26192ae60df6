"""The in-process SparkSession, and the Spark plumbing the jobs share.

:func:`local_session` is the "Local" runner of the embedded default: it reuses the
active session, or builds one in ``local[*]`` mode with small shuffles, no UI, and
Parquet field ids on for reading and writing.

:func:`map_in_arrow` runs a Python function over Arrow record batches. PySpark's own
``DataFrame.mapInArrow`` goes through ``pandas_udf``, which refuses to start without
pandas on the driver although the workers never import it (checked on pyspark 3.5.9
and 4.x); icewright needs only pyarrow, so without pandas the same plan node is built
through the JVM directly.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyspark
from pyspark.rdd import PythonEvalType
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom
from pyspark.sql.udf import UserDefinedFunction

from icewright import LOCAL_SPARK_MASTER, SPARK_VERBOSE_ENV
from icewright.errors import MissingDependency, ValidationError

__all__ = [
    "DEFAULT_CONF",
    "JOB_SQL_CONF",
    "VERBOSE_ENV",
    "job_conf",
    "local_session",
    "map_in_arrow",
    "quiet_java_options",
]

VERBOSE_ENV = SPARK_VERBOSE_ENV

_QUIET_LOG4J2 = Path(__file__).with_name("log4j2-quiet.properties")
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"

JOB_SQL_CONF: Mapping[str, str] = {
    # Iceberg finds columns by field id (spec: "Column Projection"; Appendix A).
    "spark.sql.parquet.fieldId.write.enabled": "true",
    "spark.sql.parquet.fieldId.read.enabled": "true",
    # Appendix A: timestamps are INT64 microseconds; Spark's default is INT96.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}
"""Runtime SQL settings every icewright job needs; set for the job's duration."""

DEFAULT_CONF: Mapping[str, str] = {
    "spark.master": LOCAL_SPARK_MASTER,
    "spark.app.name": "icewright",
    # Small, but enough to keep every local core busy (Spark's default is 200).
    "spark.sql.shuffle.partitions": str(max(4, os.cpu_count() or 1)),
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.sql.session.timeZone": "UTC",
    # Spark 4.1+ knows Iceberg's `time` (TIME(6)) only behind this flag; older Sparks
    # ignore an unknown key.
    "spark.sql.timeType.enabled": "true",
    **JOB_SQL_CONF,
}
"""The embedded default session (ISSUE4 section 4, "Local")."""


def local_session(**conf: str) -> SparkSession:
    """The active SparkSession, or a new embedded one built from :data:`DEFAULT_CONF`.

    ``conf`` holds Spark settings by their full keys (pass them as
    ``local_session(**{"spark.master": "local[2]"})``); they override the defaults of
    a new session, and are set at runtime on a reused one (static settings of a
    running session cannot change: Spark raises, and so does this function).
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in conf.items():
            if active.conf.get(key, None) == str(value):
                continue  # already so (static settings cannot be set again, even unchanged)
            try:
                active.conf.set(key, str(value))
            except Exception as e:  # AnalysisException for static or JVM-wide settings
                raise ValidationError(
                    f"cannot set {key}={value!r} on the running SparkSession ({e}); stop it "
                    "first, or leave the setting out"
                ) from None
        return active
    # Python workers must run the interpreter that has icewright and pyarrow; PySpark
    # would start `python3` from PATH otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    settings = {**DEFAULT_CONF, **conf}
    options = quiet_java_options(settings.get(_JAVA_OPTIONS))
    if options:
        settings[_JAVA_OPTIONS] = options
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()


def quiet_java_options(given: str | None) -> str | None:
    """``spark.driver.extraJavaOptions`` for a JVM icewright starts: ``given`` with
    icewright's quiet log4j2 configuration in front (a later ``-D`` of the user's wins),
    unless :data:`VERBOSE_ENV` asks for the JVM's own log."""
    if os.environ.get(VERBOSE_ENV, "") not in ("", "0") or not _QUIET_LOG4J2.is_file():
        return given
    quiet = f"-Dlog4j2.configurationFile={_QUIET_LOG4J2.as_uri()}"
    return f"{quiet} {given}" if given else quiet


@contextlib.contextmanager
def job_conf(spark: SparkSession, settings: Mapping[str, str] = JOB_SQL_CONF) -> Iterator[None]:
    """Set runtime SQL ``settings`` for the duration of a job, then restore them."""
    before: dict[str, str | None] = {}
    for key, value in settings.items():
        before[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


ArrowMapFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def map_in_arrow(df: DataFrame, func: ArrowMapFunction, schema: T.StructType) -> DataFrame:
    """``df.mapInArrow(func, schema)`` that works without pandas (pyspark 3.5 and 4.x).

    PySpark's public method is used when it can start (pandas installed; it also serves
    Spark Connect). Otherwise the ``MapInArrow`` plan node is built through the JVM of a
    classic session: the Python workers need only pyarrow.
    """
    try:
        return df.mapInArrow(func, schema)
    except ImportError:
        pass  # PySparkImportError: pandas is missing on the driver
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        raise MissingDependency(
            "running Arrow batches through Python on a Spark Connect session needs pandas "
            "on the driver (PySpark's mapInArrow requires it): pip install pandas"
        )
    udf: Any = UserDefinedFunction(
        func,
        returnType=schema,
        name=getattr(func, "__name__", type(func).__name__),
        evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF,
    )
    jcol = cast(Any, udf(*[df[name] for name in df.columns]))._jc
    if pyspark.__version__.startswith("3."):
        result = jdf.pythonMapInArrow(jcol.expr(), False)
    else:
        try:
            result = jdf.mapInArrow(jcol, False, None)
        except Exception:  # py4j: an early 4.0 signature takes the expression
            result = jdf.mapInArrow(jcol.expr(), False, None)
    return DataFrame(result, df.sparkSession)
