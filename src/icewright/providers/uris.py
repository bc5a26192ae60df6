"""``iceberg://`` asset URIs: one per table of one icewright connection.

The URI of table ``ns.table`` (namespace parts ``a.b``: ``a/b``) read through the Airflow
connection ``conn_id`` is ``iceberg://<conn_id>/<ns parts joined by '/'>/<table>``. Two
DAGs that name the same table through the same connection therefore share one asset,
whichever spelling they used (the normalizer lower-cases nothing but the scheme: Iceberg
identifiers are case-sensitive). Airflow reaches :func:`sanitize_uri` (the scheme's URI
normalizer) through ``get_provider_info``'s ``asset-uris``. The assets themselves are
declared in :mod:`icewright.providers.assets`.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

from icewright.catalog.identifier import Identifier
from icewright.errors import ValidationError
from icewright.providers import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from urllib.parse import SplitResult

    from airflow.sdk import Asset

__all__ = ["SCHEME", "iceberg_uri", "sanitize_uri", "table_of"]

SCHEME = "iceberg"


def _parts(table: str | tuple[str, ...]) -> tuple[str, ...]:
    ident = Identifier.parse(table)
    return (*ident.namespace, ident.name)


def iceberg_uri(table: str | tuple[str, ...], iceberg_conn_id: str = DEFAULT_CONN_ID) -> str:
    """``iceberg://<iceberg_conn_id>/<namespace parts>/<table>`` for ``table``
    (``"ns.table"``)."""
    conn_id = iceberg_conn_id
    if not conn_id or "/" in conn_id or "@" in conn_id or ":" in conn_id:
        raise ValidationError(f"{conn_id!r} cannot be the connection part of an iceberg:// URI")
    parts = _parts(table)
    if len(parts) < 2:
        raise ValidationError(
            f"an iceberg asset needs a namespace and a table name ('ns.table'), got {table!r}"
        )
    path = "/".join(urllib.parse.quote(p, safe="") for p in parts)
    return f"{SCHEME}://{conn_id}/{path}"


def sanitize_uri(parts: SplitResult) -> SplitResult:
    """The ``iceberg`` scheme's normalizer: ``iceberg://<conn>/<ns...>/<table>``, exactly.

    Raises ``ValueError`` (which Airflow reports as an invalid asset URI) when the
    connection or the namespace is missing, or the URI has user info, port or query.
    """
    if not parts.netloc:
        raise ValueError("an iceberg:// asset URI needs the connection id: iceberg://<conn>/...")
    if "@" in parts.netloc or ":" in parts.netloc:
        raise ValueError("an iceberg:// asset URI takes the connection id only, no user or port")
    if parts.query:
        raise ValueError("an iceberg:// asset URI takes no query")
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) < 2:
        raise ValueError(
            "an iceberg:// asset URI needs a namespace and a table: iceberg://<conn>/<ns>/<table>"
        )
    path = "/" + "/".join(urllib.parse.quote(urllib.parse.unquote(s), safe="") for s in segments)
    return parts._replace(path=path, fragment="")


def table_of(asset_or_uri: Asset | str) -> tuple[str, str]:
    """``(conn_id, "ns.table")`` of an iceberg asset or URI (namespace levels joined by '.')."""
    uri = asset_or_uri if isinstance(asset_or_uri, str) else asset_or_uri.uri
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme.lower() != SCHEME:
        raise ValidationError(f"{uri!r} is not an iceberg:// asset URI")
    try:
        parts = sanitize_uri(parts)
    except ValueError as e:
        raise ValidationError(f"{uri!r}: {e}") from None
    names = [urllib.parse.unquote(s) for s in parts.path.split("/") if s]
    return parts.netloc, str(Identifier(tuple(names[:-1]), names[-1]))
