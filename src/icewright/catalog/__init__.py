"""Catalogs: where a table's current metadata file is recorded, and the atomic swap.

``load_catalog(...)`` builds one from a URI or properties; ``default_catalog()``
is the embedded SQLite catalog under ``$ICEWRIGHT_HOME``. Every catalog offers
the same contract (:class:`Catalog`): namespaces, tables, views, and
``commit_table(identifier, base_metadata_location, new_metadata)``.

>>> from icewright.catalog import Identifier
>>> str(Identifier.parse("sales.orders"))
'sales.orders'
"""

from __future__ import annotations

from icewright.catalog.base import Catalog, PropertiesUpdate, Table, View
from icewright.catalog.filesystem import FileSystemCatalog
from icewright.catalog.glue import GlueCatalog
from icewright.catalog.identifier import Identifier, Namespace
from icewright.catalog.loader import default_catalog, icewright_home, load_catalog
from icewright.catalog.rest import RestCatalog
from icewright.catalog.sql import SqlCatalog

__all__ = [
    "Catalog",
    "FileSystemCatalog",
    "GlueCatalog",
    "Identifier",
    "Namespace",
    "PropertiesUpdate",
    "RestCatalog",
    "SqlCatalog",
    "Table",
    "View",
    "default_catalog",
    "icewright_home",
    "load_catalog",
]
