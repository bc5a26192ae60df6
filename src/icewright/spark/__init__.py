"""The Spark data plane: jobs that write and read data files, and the session they run in.

Spark writes and reads the data; icewright commits (this package never commits). It
needs PySpark (3.5 or 4.x): ``pip install 'icewright[spark]'``. Importing it without
PySpark raises :class:`~icewright.errors.MissingDependency`; the names below are
imported from their modules on first use.

* :func:`local_session` (``icewright.spark.session``): the embedded local SparkSession.
* :func:`write_files` (``icewright.spark.write``): the write job, returning a
  :class:`WriteResult` of ``DataFile`` descriptors; sources are :class:`SqlSource`,
  :class:`PathSource`, :class:`CallableSource` or their text form (:func:`parse_source`).
* :func:`read_table` (``icewright.spark.read``): a table as a DataFrame.
* :func:`to_spark_schema`, :func:`schema_from_spark` (``icewright.spark.types``).
"""

from __future__ import annotations

from icewright.errors import MissingDependency
from icewright.lazy import lazy_exports

try:
    import pyspark  # noqa: F401 - only checks that PySpark is there
except ImportError as e:  # pragma: no cover - exercised in a subprocess test
    raise MissingDependency(
        "icewright.spark needs PySpark (3.5 or 4.x): pip install 'icewright[spark]'"
    ) from e

_EXPORTS = {
    "local_session": "icewright.spark.session",
    "map_in_arrow": "icewright.spark.session",
    "AddedColumn": "icewright.spark.types",
    "schema_from_spark": "icewright.spark.types",
    "to_spark_schema": "icewright.spark.types",
    "CallableSource": "icewright.spark.write",
    "PathSource": "icewright.spark.write",
    "SqlSource": "icewright.spark.write",
    "WriteResult": "icewright.spark.write",
    "parse_source": "icewright.spark.write",
    "write_files": "icewright.spark.write",
    "read_table": "icewright.spark.read",
}

__all__ = [
    "AddedColumn",
    "CallableSource",
    "PathSource",
    "SqlSource",
    "WriteResult",
    "local_session",
    "map_in_arrow",
    "parse_source",
    "read_table",
    "schema_from_spark",
    "to_spark_schema",
    "write_files",
]

lazy_exports(__name__, _EXPORTS)
