"""The JDBC catalog's tables, as Iceberg Java and pyiceberg lay them out.

``iceberg_tables`` holds one pointer per table or view; ``iceberg_namespace_properties``
one row per namespace property. Column types, lengths and primary keys follow
Iceberg Java's ``JdbcUtil`` (schema V1: the ``iceberg_type`` column, ``TABLE``
or ``VIEW``, NULL meaning a table written before views existed); pyiceberg's
``SqlCatalog`` uses the same tables, so either library can open the other's
database.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from sqlalchemy.engine import Engine

__all__ = [
    "ICEBERG_TABLES",
    "NAMESPACE_PROPERTIES",
    "TABLE_TYPE",
    "VIEW_TYPE",
    "ensure_schema",
    "escape_like",
]

logger = logging.getLogger(__name__)

TABLE_TYPE = "TABLE"
VIEW_TYPE = "VIEW"

_METADATA = sa.MetaData()

ICEBERG_TABLES = sa.Table(
    "iceberg_tables",
    _METADATA,
    sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
    sa.Column("table_namespace", sa.String(255), primary_key=True, nullable=False),
    sa.Column("table_name", sa.String(255), primary_key=True, nullable=False),
    sa.Column("metadata_location", sa.String(1000), nullable=True),
    sa.Column("previous_metadata_location", sa.String(1000), nullable=True),
    sa.Column("iceberg_type", sa.String(5), nullable=True),
)

NAMESPACE_PROPERTIES = sa.Table(
    "iceberg_namespace_properties",
    _METADATA,
    sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
    sa.Column("namespace", sa.String(255), primary_key=True, nullable=False),
    sa.Column("property_key", sa.String(255), primary_key=True, nullable=False),
    sa.Column("property_value", sa.String(1000), nullable=True),
)

MAX_LOCATION_LENGTH = 1000
MAX_PROPERTY_KEY_LENGTH = 255
MAX_PROPERTY_VALUE_LENGTH = 1000

# Java's schema-V1 migration, verbatim in effect: add the nullable type column.
_ADD_ICEBERG_TYPE = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"


def _has_tables(engine: Engine) -> bool:
    names = set(sa.inspect(engine).get_table_names())
    return {"iceberg_tables", "iceberg_namespace_properties"} <= names


def _has_type_column(engine: Engine) -> bool:
    columns = sa.inspect(engine).get_columns("iceberg_tables")
    return any(c["name"].lower() == "iceberg_type" for c in columns)


def ensure_schema(engine: Engine) -> None:
    """Create the two tables if absent; add ``iceberg_type`` to a V0 ``iceberg_tables``.

    Safe to run from several processes at once: a concurrent creator's
    "already exists" error is checked against the database and ignored.
    """
    if not _has_tables(engine):
        try:
            _METADATA.create_all(engine, checkfirst=True)
        except sa.exc.SQLAlchemyError:
            if not _has_tables(engine):
                raise
    if not _has_type_column(engine):
        # A database pyiceberg (schema v0) or an old Iceberg Java created.
        logger.info("adding iceberg_type to iceberg_tables (JDBC catalog schema V1)")
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(_ADD_ICEBERG_TYPE))
        except sa.exc.SQLAlchemyError:
            if not _has_type_column(engine):
                raise


def escape_like(value: str) -> str:
    """``value`` with LIKE wildcards escaped by ``!`` (names may contain ``_``)."""
    return value.replace("!", "!!").replace("%", "!%").replace("_", "!_")
