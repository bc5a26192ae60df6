"""A table's identity in lineage: the one place that names a table for OpenLineage, the
Airflow asset conversion and the Dagster asset metadata.

OpenLineage's Spark integration names an Iceberg table by its location and links the
catalog name to it with a ``symlinks`` facet of type ``TABLE``; icewright names tables
the same way, so the datasets its operators report join those of Spark jobs (and of any
other tool following the OpenLineage naming spec):

* the dataset (:func:`location_dataset`): ``file`` + the absolute path for a local
  location; ``s3://bucket`` + the key (no leading ``/``) for ``s3``/``s3a``/``s3n``
  (``gs``, ``wasbs`` likewise); ``scheme://authority`` + the path for any other URI;
* the symlink (:func:`catalog_symlink`), by catalog:

  ========================  ===========================================  ======================
  catalog                   namespace                                    name
  ========================  ===========================================  ======================
  REST                      the catalog URI                              ``ns.table``
  Glue                      ``arn:aws:glue:{region}:{account}``          ``table/{db}/{table}``
  SQL (JDBC-like)           the database URL, no user, password or       ``{catalog}.ns.table``
                            driver (``sqlite:////path/lake.db``,
                            ``postgresql://host:5432/db``)
  filesystem                the warehouse URI (``file:///path``,         ``ns.table``
                            ``s3://bucket/warehouse``)
  ========================  ===========================================  ======================

Nothing here imports OpenLineage: :mod:`icewright.providers.lineage` turns these names
into OpenLineage datasets.
"""

from __future__ import annotations

import functools
import posixpath
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icewright.catalog.identifier import Identifier
from icewright.io.base import uri_scheme

if TYPE_CHECKING:
    from icewright.catalog import Catalog

__all__ = [
    "DatasetName",
    "TableIdentity",
    "catalog_symlink",
    "location_dataset",
    "table_identity",
]

_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "wasbs": "wasbs"}
"""Object-store schemes (``s3a``/``s3n`` are named ``s3``, as OpenLineage does): the name
is the key, without a leading slash."""


@dataclass(frozen=True, slots=True)
class DatasetName:
    """An OpenLineage dataset name: ``namespace`` and ``name``."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name.lstrip('/')}"


@dataclass(frozen=True, slots=True)
class TableIdentity:
    """A table (or view) in lineage: ``dataset`` by its location, ``symlink`` by its
    name in its catalog (OpenLineage's symlink of type ``TABLE``)."""

    dataset: DatasetName
    symlink: DatasetName


def location_dataset(location: str) -> DatasetName:
    """The OpenLineage dataset of a file or table ``location`` (module docstring)."""
    scheme = uri_scheme(location)
    if scheme is None or scheme == "file":
        path = urllib.parse.urlsplit(location).path if scheme else location
        path = posixpath.normpath(path if path.startswith("/") else posixpath.abspath(path))
        return DatasetName("file", path)
    parts = urllib.parse.urlsplit(location)
    path = parts.path.rstrip("/")
    store = _OBJECT_STORES.get(scheme)
    if store is not None:
        return DatasetName(f"{store}://{parts.netloc}", path.lstrip("/") or "/")
    return DatasetName(f"{scheme}://{parts.netloc}", path or "/")


def catalog_symlink(catalog: Catalog, table: str | Identifier) -> DatasetName:
    """``table``'s name in ``catalog`` as OpenLineage's symlink (module docstring); a
    catalog of another kind is ``iceberg://<catalog name>`` with ``ns.table``."""
    from icewright.catalog.filesystem import FileSystemCatalog
    from icewright.catalog.glue import GlueCatalog
    from icewright.catalog.rest import RestCatalog
    from icewright.catalog.sql import SqlCatalog

    ident = Identifier.parse(table) if isinstance(table, str) else table
    if isinstance(catalog, RestCatalog):
        return DatasetName(catalog.uri.rstrip("/"), str(ident))
    if isinstance(catalog, GlueCatalog):
        return DatasetName(_glue_arn(catalog), f"table/{'.'.join(ident.namespace)}/{ident.name}")
    if isinstance(catalog, SqlCatalog):
        return DatasetName(database_namespace(catalog.uri), f"{catalog.name}.{ident}")
    if isinstance(catalog, FileSystemCatalog):
        warehouse = catalog.warehouse
        if uri_scheme(warehouse) is None:
            warehouse = "file://" + posixpath.abspath(warehouse)
        return DatasetName(warehouse.rstrip("/"), str(ident))
    return DatasetName(f"iceberg://{catalog.name}", str(ident))


def table_identity(catalog: Catalog, table: str | Identifier, location: str) -> TableIdentity:
    """The identity of ``table`` of ``catalog`` whose base location is ``location``."""
    return TableIdentity(location_dataset(location), catalog_symlink(catalog, table))


def database_namespace(url: str) -> str:
    """A SQL catalog's database URL as a lineage namespace: without user, password and
    driver (``postgresql+psycopg://u:p@h:5432/db`` is ``postgresql://h:5432/db``)."""
    import sqlalchemy as sa

    parsed = sa.engine.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return f"sqlite:///{parsed.database or ''}"
    host = parsed.host or ""
    port = f":{parsed.port}" if parsed.port else ""
    return f"{backend}://{host}{port}/{parsed.database or ''}"


def _glue_arn(catalog: Catalog) -> str:
    client = getattr(catalog, "client", None)
    region = getattr(getattr(client, "meta", None), "region_name", None) or "unknown"
    account = catalog.properties.get("glue.id") or _aws_account(region)
    return f"arn:aws:glue:{region}:{account}"


@functools.cache
def _aws_account(region: str) -> str:
    """The account of the AWS credentials in use (the default Glue catalog id), or
    ``unknown`` when AWS cannot be asked."""
    try:
        import boto3

        identity = boto3.client("sts", region_name=region).get_caller_identity()
        return str(identity["Account"])
    except Exception:  # lineage names the table as well as it can; it never fails a task
        return "unknown"
