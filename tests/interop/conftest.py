"""Fixtures for interoperability tests: Iceberg Java (second venv) and DuckDB (offline)."""

from tests.support.duckdb import duckdb_iceberg  # noqa: F401
from tests.support.java import iceberg_java  # noqa: F401
