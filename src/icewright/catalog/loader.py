"""Choosing a catalog from configuration: :func:`load_catalog` and :func:`default_catalog`.

With nothing configured, icewright uses an embedded catalog: SQLite at
``$ICEWRIGHT_HOME/catalog.db`` with the warehouse at ``$ICEWRIGHT_HOME/warehouse``
(``ICEWRIGHT_HOME`` defaults to ``~/.icewright``), catalog name ``icewright``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from icewright.catalog.base import Catalog
from icewright.errors import ValidationError
from icewright.io import S3_SCHEMES
from icewright.io.base import uri_scheme

__all__ = ["DEFAULT_CATALOG_NAME", "default_catalog", "icewright_home", "load_catalog"]

DEFAULT_CATALOG_NAME = "icewright"
CATALOG_TYPES = ("sql", "filesystem", "glue", "rest")
_SQL_SCHEMES = ("sqlite", "postgres", "postgresql", "mysql", "mariadb", "mssql", "oracle")


def icewright_home() -> Path:
    """``$ICEWRIGHT_HOME`` (default ``~/.icewright``), created if missing."""
    home = Path(os.environ.get("ICEWRIGHT_HOME") or "~/.icewright").expanduser().resolve()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ValidationError(
            f"the icewright home {home} is not a directory: point ICEWRIGHT_HOME (or --home) "
            "at a directory, or at a path that does not exist yet"
        ) from None
    except PermissionError as e:
        raise ValidationError(f"cannot create the icewright home {home}: {e.strerror}") from None
    return home


def default_catalog() -> Catalog:
    """The embedded catalog: SQLite in ``$ICEWRIGHT_HOME``, warehouse beside it."""
    from icewright.catalog.sql import SqlCatalog

    home = icewright_home()
    warehouse = home / "warehouse"
    warehouse.mkdir(exist_ok=True)
    return SqlCatalog(DEFAULT_CATALOG_NAME, f"sqlite:///{home / 'catalog.db'}", str(warehouse))


def _is_sql_uri(uri: str) -> bool:
    scheme = uri_scheme(uri) or ""
    return "://" in uri and scheme.split("+", 1)[0] in _SQL_SCHEMES


def _sqlite_warehouse(uri: str) -> str | None:
    from sqlalchemy.engine import make_url

    url = make_url(uri)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(url.database)), "warehouse")


def load_catalog(config: str | Mapping[str, str] | None = None, **properties: str) -> Catalog:
    """Build a catalog from a URI string or a properties mapping.

    * ``None`` (and no keywords): :func:`default_catalog`.
    * A URI: ``sqlite:///...`` or ``postgresql+psycopg://...`` gives a SQL catalog
      (``warehouse=`` keyword; for SQLite it defaults to ``warehouse/`` beside the
      database file); ``file:///...``, a plain path or ``s3://bucket/prefix`` a
      file-system catalog with that warehouse; ``glue://`` (or ``glue://<catalog id>``,
      with properties as query parameters) a Glue catalog; ``rest+http://host:port/path``
      (or ``rest+https://``, properties as query parameters) a REST catalog.
    * A mapping with ``type`` = ``sql`` | ``filesystem`` | ``glue`` | ``rest``, and ``uri``,
      ``warehouse``, ``name`` (default ``icewright``) and any other properties
      (``s3.*``, ``glue.*``; for ``rest`` see :mod:`icewright.catalog.rest`). Without
      ``type``, ``uri`` means ``sql`` and only ``warehouse`` means ``filesystem``.

    Keyword ``properties`` are added to (and override) the configuration.
    """
    if config is None and not properties:
        return default_catalog()
    if config is None:
        props: dict[str, str] = {}
    elif isinstance(config, str):
        props = _properties_from_uri(config)
    elif isinstance(config, Mapping):
        props = {str(k): v for k, v in config.items()}
    else:
        raise ValidationError(
            f"load_catalog takes a URI string or a properties mapping, got {type(config).__name__}"
        )
    props.update(properties)
    return _from_properties(props)


def _properties_from_uri(uri: str) -> dict[str, str]:
    scheme = uri_scheme(uri)
    if _is_sql_uri(uri):
        return {"type": "sql", "uri": uri}
    if scheme == "glue":
        parts = urlsplit(uri)
        props = {"type": "glue", **dict(parse_qsl(parts.query))}
        if parts.netloc:
            props["glue.id"] = parts.netloc
        return props
    if scheme in ("rest+http", "rest+https"):
        parts = urlsplit(uri)
        target = parts._replace(scheme=scheme[len("rest+") :], query="").geturl()
        return {"type": "rest", "uri": target, **dict(parse_qsl(parts.query))}
    if scheme is None or scheme == "file" or scheme in S3_SCHEMES:
        return {"type": "filesystem", "warehouse": uri}
    raise ValidationError(
        f"cannot tell which catalog {uri!r} means: use sqlite:///..., "
        "postgresql+psycopg://..., file:///..., a path, s3://bucket/prefix, glue:// "
        "or rest+http(s)://host:port"
    )


def _from_properties(props: dict[str, str]) -> Catalog:
    kind = props.pop("type", None)
    if kind is None:
        kind = "sql" if "uri" in props else "filesystem" if "warehouse" in props else None
    if kind not in CATALOG_TYPES:
        raise ValidationError(
            f"catalog type {kind!r} is not known: set 'type' to one of {', '.join(CATALOG_TYPES)}"
            " (or give 'uri' for sql, 'warehouse' for filesystem)"
        )
    name = props.pop("name", DEFAULT_CATALOG_NAME)
    if kind == "sql":
        from icewright.catalog.sql import SqlCatalog

        uri = props.pop("uri", None)
        if not uri:
            raise ValidationError("a sql catalog needs 'uri' (e.g. sqlite:////path/catalog.db)")
        warehouse = props.pop("warehouse", None) or _sqlite_warehouse(uri)
        if not warehouse:
            raise ValidationError(
                f"a sql catalog on {uri.split('://', 1)[0]} needs 'warehouse' "
                "(where table files go, e.g. s3://bucket/warehouse)"
            )
        return SqlCatalog(name, uri, warehouse, **props)
    if kind == "filesystem":
        from icewright.catalog.filesystem import FileSystemCatalog

        warehouse = props.pop("warehouse", None)
        if not warehouse:
            raise ValidationError("a filesystem catalog needs 'warehouse' (a path or s3:// URI)")
        return FileSystemCatalog(name, warehouse, **props)
    if kind == "rest":
        from icewright.catalog.rest import RestCatalog

        uri = props.pop("uri", None)
        if not uri:
            raise ValidationError("a rest catalog needs 'uri' (e.g. https://catalog.example:8181)")
        return RestCatalog(name, uri, **props)
    from icewright.catalog.glue import GlueCatalog

    return GlueCatalog(name, props.pop("warehouse", ""), **props)
