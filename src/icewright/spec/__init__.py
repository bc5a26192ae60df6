"""The Iceberg table and view format: types, schemas, partitioning, metadata."""
