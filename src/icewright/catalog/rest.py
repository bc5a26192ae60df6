"""The Iceberg REST catalog (``rest-catalog-open-api.yaml``, Iceberg 1.10).

The server keeps the pointers and writes the metadata files: a commit is sent as
the spec's requirements and updates (:meth:`RestCatalog.commit_changes`), and the
server answers with the metadata now current. 409 is a lost race
(:class:`~icewright.errors.CommitFailed`, retried by the commit engine);
500/502/503/504, a timeout or a dropped connection on a commit is
:class:`~icewright.errors.CommitStateUnknown`, as Iceberg Java's ``ErrorHandlers``
classify them.

Properties (the names Iceberg Java and pyiceberg use): ``uri`` (required),
``warehouse`` (sent to ``GET /v1/config``), ``prefix``, ``token``, ``credential``,
``oauth2-server-uri``, ``scope``, ``rest.sigv4-enabled``, ``rest.signing-region``,
``rest.signing-name``, ``header.<Name>`` (sent with every request, e.g.
``header.X-Iceberg-Access-Delegation=vended-credentials``),
``rest.client.connection-timeout-ms`` / ``rest.client.socket-timeout-ms``,
``rest-page-size``, and FileIO
properties (``s3.*``). The server's ``defaults`` and ``overrides`` from
``/v1/config`` are merged around them; the ``config`` of a load response is used
for that table's FileIO.

>>> from icewright.catalog import load_catalog
>>> catalog = load_catalog({"type": "rest", "uri": "http://127.0.0.1:8181"})  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from icewright.catalog.base import (
    Catalog,
    IdentifierLike,
    NamespaceLike,
    PropertiesUpdate,
    Table,
    View,
    check_properties,
    namespace_of,
)
from icewright.catalog.changes import TableChanges, table_changes
from icewright.catalog.identifier import Identifier, Namespace
from icewright.catalog.metadata_files import (
    table_metadata_from_document,
    view_metadata_from_document,
)
from icewright.catalog.requirements import AssertCreate, AssertViewUUID
from icewright.catalog.rest_auth import authenticator
from icewright.catalog.rest_http import (
    COMMIT,
    DEFAULT,
    DROP_NAMESPACE,
    NAMESPACE,
    TABLE,
    VIEW,
    VIEW_COMMIT,
    RestHttp,
    namespace_path,
)
from icewright.catalog.rest_views import view_changes
from icewright.errors import (
    CatalogServiceError,
    CommitFailed,
    TableAlreadyExists,
    ValidationError,
)
from icewright.io import FileIO, load_file_io
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from icewright.spec.properties import check_properties as check_table_properties
from icewright.spec.schema import Schema
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortOrder
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["RestCatalog"]

# What a server that sends no ``endpoints`` offers (Java's RESTSessionCatalog defaults).
_DEFAULT_ENDPOINTS = frozenset(
    {
        "GET /v1/{prefix}/namespaces",
        "POST /v1/{prefix}/namespaces",
        "GET /v1/{prefix}/namespaces/{namespace}",
        "DELETE /v1/{prefix}/namespaces/{namespace}",
        "POST /v1/{prefix}/namespaces/{namespace}/properties",
        "GET /v1/{prefix}/namespaces/{namespace}/tables",
        "POST /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/tables/rename",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "POST /v1/{prefix}/transactions/commit",
    }
)
_AUTH_SECRETS = (
    "token",
    "credential",
    "rest.access-key-id",
    "rest.secret-access-key",
    "rest.session-token",
)
_NS = "/v1/{prefix}/namespaces"
_NS1 = _NS + "/{namespace}"
_TABLES = _NS1 + "/tables"
_TABLE = _TABLES + "/{table}"
_VIEWS = _NS1 + "/views"
_VIEW = _VIEWS + "/{view}"
_TRANSACTIONS = "POST /v1/{prefix}/transactions/commit"


def _ms(props: Mapping[str, str], key: str, default_ms: int) -> float:
    raw = props.get(key, str(default_ms))
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(
            f"{key} must be a whole number of milliseconds, got {raw!r}"
        ) from None
    if value <= 0:
        raise ValidationError(f"{key} must be positive, got {value}")
    return value / 1000


def _ident_json(ident: Identifier) -> dict[str, Any]:
    return {"namespace": list(ident.namespace), "name": ident.name}


class RestCatalog(Catalog):
    """A catalog served over the Iceberg REST protocol."""

    def __init__(self, name: str, uri: str, **properties: str) -> None:
        client = check_properties(properties, "catalog property")
        self._uri = uri
        timeouts = (
            _ms(client, "rest.client.connection-timeout-ms", 10_000),
            _ms(client, "rest.client.socket-timeout-ms", 60_000),
        )
        headers = {k[len("header.") :]: v for k, v in client.items() if k.startswith("header.")}
        headers.setdefault("X-Iceberg-Access-Delegation", "vended-credentials")
        headers = {k: v for k, v in headers.items() if v}
        self._http = RestHttp(
            uri, headers, connect_timeout_s=timeouts[0], read_timeout_s=timeouts[1]
        )
        auth = authenticator(self._http, client)
        self._http.auth = auth.headers
        self._http.on_unauthorized = auth.unauthorized
        config = self._http.request(
            "GET",
            "v1/config",
            query={"warehouse": client["warehouse"]} if client.get("warehouse") else None,
        ).json()
        merged = {**_strings(config.get("defaults")), **client, **_strings(config.get("overrides"))}
        endpoints = config.get("endpoints")
        self._endpoints = (
            frozenset(str(e) for e in endpoints)
            if isinstance(endpoints, list)
            else _DEFAULT_ENDPOINTS
        )
        prefix = merged.get("prefix", "").strip("/")
        self._root = f"v1/{prefix}/" if prefix else "v1/"
        self._page_size = merged.get("rest-page-size")
        # The warehouse of a REST catalog is the server's business (a name or a URI);
        # the client only needs one for FileIO defaults.
        warehouse = merged.pop("warehouse", "")
        self._server_warehouse = warehouse
        # The catalog's own secrets stay in the authenticator: the properties feed FileIO,
        # which hands them to Spark jobs.
        for key in _AUTH_SECRETS:
            merged.pop(key, None)
        super().__init__(name, warehouse if "://" in warehouse else "", merged)
        # ETag caches: loaded tables, and the locations polls saw.
        self._etags: dict[tuple[str, ...], tuple[str, Table]] = {}
        self._locations: dict[tuple[str, ...], tuple[str, str]] = {}
        self._etag_lock = threading.Lock()

    @property
    def uri(self) -> str:
        """The catalog's base URI."""
        return self._uri

    def __repr__(self) -> str:
        return f"RestCatalog(name={self.name!r}, uri={self._uri!r})"

    def close(self) -> None:
        self._http.close()

    @property
    def endpoints(self) -> frozenset[str]:
        """The endpoints the server advertised (``"GET /v1/{prefix}/namespaces"``, ...)."""
        return self._endpoints

    def supports(self, endpoint: str) -> bool:
        """Whether the server advertised ``endpoint``."""
        return endpoint in self._endpoints

    def _need(self, endpoint: str) -> None:
        if endpoint not in self._endpoints:
            raise CatalogServiceError(
                f"the REST catalog at {self._uri} does not offer {endpoint} (not in the "
                "endpoints its /v1/config advertises)"
            )

    def _call(
        self,
        endpoint: str,
        path: str,
        handler: str = DEFAULT,
        **kwargs: Any,
    ) -> Any:
        self._need(endpoint)
        return self._http.request(endpoint.split(" ", 1)[0], self._root + path, handler, **kwargs)

    # --- namespaces ----------------------------------------------------------

    def create_namespace(
        self, namespace: NamespaceLike, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = namespace_of(namespace)
        body = {"namespace": list(ns), "properties": check_properties(properties, "property")}
        self._call("POST " + _NS, "namespaces", NAMESPACE, body=body)

    def _pages(self, endpoint: str, path: str, key: str, query: dict[str, str]) -> Iterator[Any]:
        token: str | None = None
        while True:
            page = {**query, "pageToken": token, "pageSize": self._page_size}
            result = self._call(endpoint, path, NAMESPACE, query=page).json()
            yield from result.get(key) or []
            token = result.get("next-page-token")
            if not token:
                return

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[Namespace]:
        ns = namespace_of(parent, allow_root=True)
        query = {"parent": "\x1f".join(ns)} if ns else {}
        found = self._pages("GET " + _NS, "namespaces", "namespaces", query)
        return sorted(tuple(levels) for levels in found)

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        ns = namespace_of(namespace)
        head = "HEAD " + _NS1
        endpoint = head if self.supports(head) else "GET " + _NS1
        response = self._call(endpoint, f"namespaces/{namespace_path(ns)}", ok=(200, 204, 404))
        return bool(response.status != 404)

    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        ns = namespace_of(namespace)
        result = self._call("GET " + _NS1, f"namespaces/{namespace_path(ns)}", NAMESPACE).json()
        return _strings(result.get("properties"))

    def update_namespace_properties(
        self,
        namespace: NamespaceLike,
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdate:
        ns = namespace_of(namespace)
        body = {
            "removals": sorted(set(removals)),
            "updates": check_properties(updates, "namespace property"),
        }
        overlap = set(body["removals"]) & set(body["updates"])
        if overlap:
            raise ValidationError(
                f"namespace properties {sorted(overlap)} are both removed and updated; "
                "pass each key in only one of removals and updates"
            )
        result = self._call(
            "POST " + _NS1 + "/properties",
            f"namespaces/{namespace_path(ns)}/properties",
            NAMESPACE,
            body=body,
        ).json()
        return PropertiesUpdate(
            tuple(sorted(result.get("removed") or ())),
            tuple(sorted(result.get("updated") or ())),
            tuple(sorted(result.get("missing") or ())),
        )

    def drop_namespace(self, namespace: NamespaceLike) -> None:
        ns = namespace_of(namespace)
        self._call("DELETE " + _NS1, f"namespaces/{namespace_path(ns)}", DROP_NAMESPACE)

    # --- tables --------------------------------------------------------------

    def _table_path(self, ident: Identifier, kind: str = "tables") -> str:
        return f"namespaces/{namespace_path(ident.namespace)}/{kind}/{_segment(ident.name)}"

    def _io_for(self, location: str, config: Mapping[str, str]) -> FileIO:
        if not config:
            return self.file_io(location)
        return load_file_io(location, {**self.properties, **config})

    def _table(self, ident: Identifier, result: Mapping[str, Any]) -> Table:
        location = result.get("metadata-location")
        document = result.get("metadata")
        if not isinstance(document, Mapping):
            raise CatalogServiceError(f"the REST catalog sent no metadata for table {ident}")
        metadata = table_metadata_from_document(document, str(location or ident))
        config = _table_config(result, metadata.location)
        return Table(
            ident,
            metadata,
            str(location or ""),
            self._io_for(metadata.location, config),
            self,
        )

    def create_table(  # noqa: PLR0917 - the catalog API's positional order
        self,
        identifier: IdentifierLike,
        schema: Schema,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int = 2,
    ) -> Table:
        """Create a table; the server chooses its location unless ``location`` is given."""
        args = (identifier, schema, partition_spec, sort_order, location, properties)
        return self._create(*args, format_version, stage=False)

    def _create(  # noqa: PLR0917 - create_table's order
        self,
        identifier: IdentifierLike,
        schema: Schema,
        partition_spec: PartitionSpec,
        sort_order: SortOrder,
        location: str | None,
        properties: Mapping[str, str] | None,
        format_version: int,
        *,
        stage: bool,
    ) -> Table:
        ident = Identifier.parse(identifier)
        check_table_properties(properties)
        props = check_properties(properties, "table property")
        props.setdefault("format-version", str(format_version))
        body: dict[str, Any] = {
            "name": ident.name,
            "schema": schema.to_json(),
            "partition-spec": partition_spec.to_json(),
            "write-order": sort_order.to_json(),
            "properties": props,
            "stage-create": stage,
        }
        if location is not None:
            body["location"] = self._table_location(ident, location)
        result = self._call(
            "POST " + _TABLES,
            f"namespaces/{namespace_path(ident.namespace)}/tables",
            TABLE,
            body=body,
        ).json()
        return self._table(ident, result)

    @property
    def supports_staged_create(self) -> bool:
        """REST creates tables with ``stage-create``: always offered with table creation."""
        return self.supports("POST " + _TABLES) and self.supports("POST " + _TABLE)

    def stage_create_table(  # noqa: PLR0917 - the catalog API's positional order
        self,
        identifier: IdentifierLike,
        schema: Schema,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int = 2,
    ) -> Table:
        """A create request with ``stage-create: true``: the server answers the table's
        first metadata (location, uuid, fresh ids) and creates nothing. Commit it, with
        the writes made on it, through :meth:`create_table_from_metadata`."""
        args = (identifier, schema, partition_spec, sort_order, location, properties)
        return self._create(*args, format_version, stage=True)

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """Where the server would put the table: asked with a staged create, which
        creates nothing (or the ``warehouse`` URI's path when the properties give one)."""
        ident = Identifier.parse(identifier)
        if self.warehouse:
            return super().default_table_location(ident)
        body = {
            "name": ident.name,
            "schema": {"type": "struct", "schema-id": 0, "fields": []},
            "stage-create": True,
        }
        try:
            result = self._call(
                "POST " + _TABLES,
                f"namespaces/{namespace_path(ident.namespace)}/tables",
                TABLE,
                body=body,
            ).json()
        except TableAlreadyExists:
            return self.load_table(ident).location
        metadata = result.get("metadata")
        location = metadata.get("location") if isinstance(metadata, Mapping) else None
        if not isinstance(location, str) or not location:
            raise CatalogServiceError(f"the REST catalog chose no location for {ident}")
        return location

    def create_table_from_metadata(
        self, identifier: IdentifierLike, metadata: TableMetadata
    ) -> Table:
        """Create a table whose first metadata is ``metadata``: one commit asserting the
        name is free and carrying every update that builds it (Java's create transaction)."""
        ident = Identifier.parse(identifier)
        metadata = self._check_table_metadata(metadata)
        changes = table_changes(None, metadata)
        body = self._commit_body(ident, TableChanges((AssertCreate(),), changes.updates))
        self._need("POST " + _TABLE)
        response = self._http.request(
            "POST", self._root + self._table_path(ident), TABLE, body=body
        )
        return self._table(ident, response.json())

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        ident = Identifier.parse(identifier)
        body = {"name": ident.name, "metadata-location": metadata_location}
        result = self._call(
            "POST " + _NS1 + "/register",
            f"namespaces/{namespace_path(ident.namespace)}/register",
            TABLE,
            body=body,
        ).json()
        return self._table(ident, result)

    def load_table(self, identifier: IdentifierLike) -> Table:
        """Load a table; a table unchanged since the last load costs one 304."""
        ident = Identifier.parse(identifier)
        key = ident.levels
        with self._etag_lock:
            cached = self._etags.get(key)
        headers = {"If-None-Match": cached[0]} if cached else None
        response = self._call(
            "GET " + _TABLE,
            self._table_path(ident),
            TABLE,
            headers=headers,
            ok=(200, 304),
        )
        if response.status == 304 and cached is not None:
            return cached[1]
        table = self._table(ident, response.json())
        etag = response.headers.get("etag")
        with self._etag_lock:
            if etag:
                self._etags[key] = (etag, table)
            else:
                self._etags.pop(key, None)
        return table

    def table_metadata_location(self, identifier: IdentifierLike) -> str:
        """One request, asking for the refs' snapshots only (``snapshots=refs``), and
        answered 304 when the table has not changed since the last poll; the metadata in
        a 200 is not parsed."""
        ident = Identifier.parse(identifier)
        key = ident.levels
        with self._etag_lock:
            cached = self._locations.get(key)
        response = self._call(
            "GET " + _TABLE,
            self._table_path(ident),
            TABLE,
            query={"snapshots": "refs"},
            headers={"If-None-Match": cached[0]} if cached else None,
            ok=(200, 304),
        )
        if response.status == 304 and cached is not None:
            return cached[1]
        location = response.json().get("metadata-location")
        if not isinstance(location, str) or not location:
            raise CatalogServiceError(f"the REST catalog sent no metadata-location for {ident}")
        etag = response.headers.get("etag")
        with self._etag_lock:
            if etag:
                self._locations[key] = (etag, location)
            else:
                self._locations.pop(key, None)
        return location

    def table_exists(self, identifier: IdentifierLike) -> bool:
        ident = Identifier.parse(identifier)
        head = "HEAD " + _TABLE
        if not self.supports(head):
            return super().table_exists(ident)
        response = self._call(head, self._table_path(ident), TABLE, ok=(200, 204, 404))
        return bool(response.status != 404)

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        ns = namespace_of(namespace)
        found = self._pages(
            "GET " + _TABLES, f"namespaces/{namespace_path(ns)}/tables", "identifiers", {}
        )
        return sorted((_identifier(o) for o in found), key=lambda i: i.name)

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        ident = Identifier.parse(identifier)
        query = {"purgeRequested": "true"} if purge else None
        self._call("DELETE " + _TABLE, self._table_path(ident), TABLE, query=query)
        self._forget(ident)

    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        src, dst = Identifier.parse(source), Identifier.parse(destination)
        body = {"source": _ident_json(src), "destination": _ident_json(dst)}
        self._call("POST /v1/{prefix}/tables/rename", "tables/rename", TABLE, body=body)
        self._forget(src)
        return self.load_table(dst)

    def _forget(self, ident: Identifier) -> None:
        with self._etag_lock:
            self._etags.pop(ident.levels, None)
            self._locations.pop(ident.levels, None)

    # --- commits -------------------------------------------------------------

    @staticmethod
    def _commit_body(ident: Identifier, changes: TableChanges) -> dict[str, Any]:
        return {
            "identifier": _ident_json(ident),
            "requirements": [r.to_json() for r in changes.requirements],
            "updates": [u.to_json() for u in changes.updates],
        }

    def commit_changes(
        self,
        identifier: IdentifierLike,
        base_metadata_location: str,
        base: TableMetadata,
        changes: TableChanges,
        timestamp_ms: int | None = None,
    ) -> tuple[TableMetadata, str]:
        """Send the requirements and updates; the server applies them and writes the
        metadata file. Returns the server's metadata and its location."""
        ident = Identifier.parse(identifier)
        self._forget(ident)
        body = self._commit_body(ident, changes)
        result = self._call("POST " + _TABLE, self._table_path(ident), COMMIT, body=body).json()
        table = self._table(ident, result)
        return table.metadata, table.metadata_location

    @property
    def supports_transactions(self) -> bool:
        """Whether the server advertised ``POST /v1/{prefix}/transactions/commit``."""
        return self.supports(_TRANSACTIONS)

    def commit_transaction(self, changes: Sequence[tuple[IdentifierLike, TableChanges]]) -> None:
        """Send the changes of several tables in one ``transactions/commit`` request;
        the server applies all of them or none (409: a requirement failed)."""
        if not changes:
            raise ValidationError("a transaction needs the changes of at least one table")
        idents = [Identifier.parse(ident) for ident, _ in changes]
        if len({i.levels for i in idents}) != len(idents):
            raise ValidationError("a transaction names a table twice; merge its changes first")
        if not self.supports_transactions:
            raise ValidationError(
                f"the REST catalog at {self._uri} does not offer {_TRANSACTIONS} (not in the "
                "endpoints its /v1/config advertises); commit the tables one by one"
            )
        for ident in idents:
            self._forget(ident)
        bodies = [self._commit_body(i, c) for i, (_, c) in zip(idents, changes, strict=True)]
        body = {"table-changes": bodies}
        self._call(_TRANSACTIONS, "transactions/commit", COMMIT, body=body)

    def commit_table(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: TableMetadata
    ) -> str:
        """Commit whole new metadata: sent as its difference from the current metadata,
        which must still be ``base_metadata_location``."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_table_metadata(new_metadata)
        current = self.load_table(ident)
        if current.metadata_location != base_metadata_location:
            raise CommitFailed(
                f"table {ident} moved on from {base_metadata_location} to "
                f"{current.metadata_location}; reload it and retry"
            )
        if new_metadata.table_uuid != current.metadata.table_uuid:
            raise ValidationError(
                f"the new metadata has table-uuid {new_metadata.table_uuid}, but table {ident} "
                f"is {current.metadata.table_uuid}: a commit must describe the same table"
            )
        changes = table_changes(current.metadata, new_metadata)
        return self.commit_changes(ident, base_metadata_location, current.metadata, changes)[1]

    # --- views ---------------------------------------------------------------

    def _view(self, ident: Identifier, result: Mapping[str, Any]) -> View:
        location = str(result.get("metadata-location") or "")
        document = result.get("metadata")
        if not isinstance(document, Mapping):
            raise CatalogServiceError(f"the REST catalog sent no metadata for view {ident}")
        metadata = view_metadata_from_document(document, location or str(ident))
        io = self._io_for(metadata.location, _strings(result.get("config")))
        return View(ident, metadata, location, io, self)

    def create_view(self, identifier: IdentifierLike, metadata: ViewMetadata) -> View:
        ident = Identifier.parse(identifier)
        metadata = self._check_view_metadata(metadata)
        version = metadata.current_version()
        body: dict[str, Any] = {
            "name": ident.name,
            "schema": metadata.schema_by_id(version.schema_id).to_json(),
            "view-version": version.to_json(),
            "properties": metadata.properties.to_dict(),
        }
        body["location"] = metadata.location
        result = self._call(
            "POST " + _VIEWS, f"namespaces/{namespace_path(ident.namespace)}/views", VIEW, body=body
        ).json()
        return self._view(ident, result)

    def load_view(self, identifier: IdentifierLike) -> View:
        ident = Identifier.parse(identifier)
        result = self._call("GET " + _VIEW, self._table_path(ident, "views"), VIEW).json()
        return self._view(ident, result)

    def view_exists(self, identifier: IdentifierLike) -> bool:
        ident = Identifier.parse(identifier)
        head = "HEAD " + _VIEW
        if not self.supports(head):
            return super().view_exists(ident)
        response = self._call(head, self._table_path(ident, "views"), VIEW, ok=(200, 204, 404))
        return bool(response.status != 404)

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        ns = namespace_of(namespace)
        found = self._pages(
            "GET " + _VIEWS, f"namespaces/{namespace_path(ns)}/views", "identifiers", {}
        )
        return sorted((_identifier(o) for o in found), key=lambda i: i.name)

    def commit_view(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: ViewMetadata
    ) -> str:
        """Replace a view: its difference from the current metadata, guarded by the
        view's uuid (``assert-view-uuid``) and the base location checked first."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_view_metadata(new_metadata)
        current = self.load_view(ident)
        if current.metadata_location != base_metadata_location:
            raise CommitFailed(
                f"view {ident} moved on from {base_metadata_location} to "
                f"{current.metadata_location}; reload it and retry"
            )
        body = {
            "identifier": _ident_json(ident),
            "requirements": [AssertViewUUID(current.metadata.view_uuid).to_json()],
            "updates": view_changes(current.metadata, new_metadata),
        }
        result = self._call(
            "POST " + _VIEW, self._table_path(ident, "views"), VIEW_COMMIT, body=body
        ).json()
        return self._view(ident, result).metadata_location

    def drop_view(self, identifier: IdentifierLike) -> None:
        ident = Identifier.parse(identifier)
        self._call("DELETE " + _VIEW, self._table_path(ident, "views"), VIEW)

    def rename_view(self, source: IdentifierLike, destination: IdentifierLike) -> View:
        """Rename a view."""
        src, dst = Identifier.parse(source), Identifier.parse(destination)
        body = {"source": _ident_json(src), "destination": _ident_json(dst)}
        self._call("POST /v1/{prefix}/views/rename", "views/rename", VIEW, body=body)
        return self.load_view(dst)


def _segment(name: str) -> str:
    return namespace_path((name,))


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if v is not None}


def _identifier(obj: Any) -> Identifier:
    if not isinstance(obj, Mapping):
        raise CatalogServiceError(f"the REST catalog listed {obj!r} as a table identifier")
    return Identifier(tuple(obj.get("namespace") or ()), str(obj.get("name")))


def _table_config(result: Mapping[str, Any], location: str) -> dict[str, str]:
    """The load response's ``config`` with the vended ``storage-credentials`` whose
    prefix is the longest match for ``location``."""
    config = _strings(result.get("config"))
    best: tuple[int, dict[str, str]] | None = None
    for entry in result.get("storage-credentials") or ():
        if isinstance(entry, Mapping):
            prefix = str(entry.get("prefix", ""))
            if location.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), _strings(entry.get("config")))
    if best is not None:
        config.update(best[1])
    return config
