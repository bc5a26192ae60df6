"""icewright: run Apache Iceberg tables from Apache Airflow and Dagster.

Spark jobs write the data files; icewright performs the Iceberg commit itself,
correctly by the spec.
"""

from __future__ import annotations

__version__ = "0.1.0"

LOCAL_SPARK_MASTER = "local[*]"
"""Spark's in-process master with one worker thread per core: the master of the embedded
session and of ``spark-submit`` settings that name none."""

SPARK_VERBOSE_ENV = "ICEWRIGHT_SPARK_VERBOSE"
"""Set (to anything but ``""`` or ``0``) to keep the JVM's own log of the Spark jobs
icewright starts; without it they run with a quiet log4j2 configuration."""
