"""The peers that read what the example project wrote."""

from tests.support.duckdb import duckdb_iceberg  # noqa: F401 - DuckDB's Iceberg extension
from tests.support.java import iceberg_java  # noqa: F401 - Iceberg Java 1.10
