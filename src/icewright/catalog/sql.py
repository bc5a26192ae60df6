"""The SQL catalog: Iceberg's JDBC catalog schema over SQLAlchemy (SQLite, PostgreSQL).

The pointer swap is one conditional ``UPDATE`` (spec: "Metastore Tables"):
the row moves to the new metadata file only where it still names the base.
One row changed means the commit happened; none means another writer won
(or the table is gone). If the database call itself fails, the row is read
again: if it names the new file, the commit happened; otherwise the outcome
is unknown and nothing is deleted.

Usage::

    catalog = SqlCatalog("prod", "postgresql+psycopg://user@db/iceberg", "s3://bucket/wh",
                         **{"s3.region": "eu-west-1"})
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from icewright.catalog.base import (
    TABLE,
    VIEW,
    IdentifierLike,
    NamespaceLike,
    PropertiesUpdate,
    Table,
    already_exists,
    check_properties,
    delete_quietly,
    namespace_of,
    no_such,
    plan_properties_update,
)
from icewright.catalog.identifier import Identifier, Namespace
from icewright.catalog.metadata_files import read_table_metadata
from icewright.catalog.metastore import Metadata, MetastoreCatalog
from icewright.catalog.purge import purge_table_files
from icewright.catalog.sql_schema import (
    ICEBERG_TABLES,
    MAX_LOCATION_LENGTH,
    MAX_PROPERTY_KEY_LENGTH,
    MAX_PROPERTY_VALUE_LENGTH,
    NAMESPACE_PROPERTIES,
    TABLE_TYPE,
    VIEW_TYPE,
    ensure_schema,
    escape_like,
)
from icewright.errors import (
    CatalogServiceError,
    CommitFailed,
    CommitStateUnknown,
    InvalidMetadata,
    MissingDependency,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchFile,
    NoSuchTable,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
    ViewAlreadyExists,
)
from icewright.io import FileIO
from icewright.spec.table_metadata import TableMetadata

__all__ = ["SqlCatalog"]

logger = logging.getLogger(__name__)

T = ICEBERG_TABLES
NP = NAMESPACE_PROPERTIES

EXISTS_PROPERTY = "exists"
"""The marker row Java and pyiceberg insert so an empty namespace exists."""

SQLITE_BUSY_TIMEOUT_SECONDS = 30.0
"""How long a SQLite writer waits for another writer's lock before failing."""


_ICEBERG_TYPE = {TABLE: TABLE_TYPE, VIEW: VIEW_TYPE}


def _type_filter(kind: str) -> sa.ColumnElement[bool]:
    if kind == VIEW:
        return T.c.iceberg_type == VIEW_TYPE
    # Rows without a type predate views (schema V0) and are tables.
    return sa.or_(T.c.iceberg_type == TABLE_TYPE, T.c.iceberg_type.is_(None))


def _kind_of(iceberg_type: object) -> str:
    return VIEW if str(iceberg_type or "").upper() == VIEW_TYPE else TABLE


_P = ParamSpec("_P")
_R = TypeVar("_R")


def lost_connection(error: sa.exc.DBAPIError) -> bool:
    """Whether ``error`` means the database connection broke or could not be opened (the
    server ended it, a network drop, a restart), as opposed to a refused statement."""
    return error.connection_invalidated or isinstance(
        error, sa.exc.OperationalError | sa.exc.InterfaceError
    )


def database_error(error: BaseException) -> str:
    """A database error in a few words: the driver's first line, not SQLAlchemy's
    statement and help link."""
    orig = getattr(error, "orig", None) or error
    first = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return " ".join(first.split())[:200]


def _typed_connection_errors(what: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Turn a lost database connection in the decorated call into a
    :class:`~icewright.errors.CatalogServiceError` (retriable; one line). The engine drops
    the broken connection and pings the others before use, so the next call reconnects.
    A commit's pointer swap does not use this: there the outcome is unknown."""

    def decorate(call: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(call)
        def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return call(*args, **kwargs)
            except sa.exc.DBAPIError as e:
                if not lost_connection(e):
                    raise
                cause = database_error(e)
                raise CatalogServiceError(
                    f"{what} failed: the database connection was lost ({cause}); retry (the "
                    "catalog reconnects on the next call)"
                ) from e

        return wrapped

    return decorate


class _Pointer(NamedTuple):
    """One ``iceberg_tables`` row: the metadata location and ``table`` or ``view``."""

    location: str | None
    kind: str


def make_engine(uri: str) -> Engine:
    """A SQLAlchemy engine for ``uri``; SQLite gets a busy timeout and thread sharing."""
    try:
        url = sa.engine.make_url(uri)
    except sa.exc.ArgumentError as e:
        raise ValidationError(
            f"{uri!r} is not a database URL: use e.g. 'sqlite:////abs/path/catalog.db' or "
            "'postgresql+psycopg://user@host:5432/db'"
        ) from e
    kwargs: dict[str, Any] = {}
    if url.get_backend_name() == "sqlite":
        # Connections move between threads in the pool; a writer waits for another
        # writer's lock instead of failing at once ("database is locked").
        kwargs["connect_args"] = {
            "check_same_thread": False,
            "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
        }
        if url.database in (None, "", ":memory:"):
            kwargs["poolclass"] = StaticPool  # one shared in-memory database
        else:
            parent = os.path.dirname(os.path.abspath(url.database))
            if not os.path.isdir(parent):
                raise ValidationError(
                    f"the SQLite database directory {parent} does not exist; create it first"
                )
    else:
        kwargs["pool_pre_ping"] = True
    try:
        return sa.create_engine(url, **kwargs)
    except (ModuleNotFoundError, sa.exc.NoSuchModuleError) as e:
        extra = "icewright[postgres]" if url.get_backend_name() == "postgresql" else "the driver"
        raise MissingDependency(
            f"the database driver for {url.drivername!r} is not installed ({e}); install {extra}"
        ) from e


class SqlCatalog(MetastoreCatalog):
    """A catalog in a SQL database with the Iceberg JDBC catalog's schema.

    ``name`` is the ``catalog_name`` column: several catalogs can share a
    database. The tables are created if absent; a database created by
    pyiceberg without ``iceberg_type`` gets the column (Java's V1 migration).
    """

    def __init__(self, name: str, uri: str, warehouse: str, **properties: str) -> None:
        if not isinstance(warehouse, str) or not warehouse:
            raise ValidationError("SqlCatalog needs a warehouse location (a path or s3:// URI)")
        super().__init__(name, warehouse, properties)
        self._uri = uri
        self._engine = make_engine(uri)
        _typed_connection_errors("opening the catalog")(ensure_schema)(self._engine)

    @property
    def uri(self) -> str:
        """The database URL as given (it may hold a password)."""
        return self._uri

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for tests and tools)."""
        return self._engine

    def close(self) -> None:
        """Close the database connections."""
        self._engine.dispose()

    def __repr__(self) -> str:
        url = sa.engine.make_url(self._uri).render_as_string(hide_password=True)
        return f"SqlCatalog(name={self.name!r}, uri={url!r}, warehouse={self.warehouse!r})"

    # --- small queries ---------------------------------------------------------

    def _row(self, conn: Connection, ident: Identifier) -> _Pointer | None:
        stmt = sa.select(T.c.metadata_location, T.c.iceberg_type).where(
            T.c.catalog_name == self.name,
            T.c.table_namespace == ident.namespace_str,
            T.c.table_name == ident.name,
        )
        row = conn.execute(stmt).first()
        return None if row is None else _Pointer(row[0], _kind_of(row[1]))

    @_typed_connection_errors("reading the catalog")
    def _read_row(self, ident: Identifier) -> _Pointer | None:
        with self._engine.connect() as conn:
            return self._row(conn, ident)

    def _ns_exists(self, conn: Connection, ns: str) -> bool:
        like = escape_like(ns) + ".%"
        in_tables = sa.select(sa.literal(1)).where(
            T.c.catalog_name == self.name,
            sa.or_(T.c.table_namespace == ns, T.c.table_namespace.like(like, escape="!")),
        )
        in_props = sa.select(sa.literal(1)).where(
            NP.c.catalog_name == self.name,
            sa.or_(NP.c.namespace == ns, NP.c.namespace.like(like, escape="!")),
        )
        return (
            conn.execute(in_tables.limit(1)).first() is not None
            or conn.execute(in_props.limit(1)).first() is not None
        )

    def _exact_properties(self, conn: Connection, ns: str) -> dict[str, str]:
        stmt = sa.select(NP.c.property_key, NP.c.property_value).where(
            NP.c.catalog_name == self.name, NP.c.namespace == ns
        )
        return {k: v if v is not None else "" for k, v in conn.execute(stmt)}

    # --- namespaces --------------------------------------------------------------

    @_typed_connection_errors("creating a namespace")
    def create_namespace(
        self, namespace: NamespaceLike, properties: Mapping[str, str] | None = None
    ) -> None:
        """Create a namespace (rows in ``iceberg_namespace_properties``, plus ``exists``)."""
        ns = namespace_of(namespace)
        props = _check_namespace_properties(properties)
        ns_str = ".".join(ns)
        rows = [
            {"catalog_name": self.name, "namespace": ns_str, "property_key": k, "property_value": v}
            for k, v in {**props, EXISTS_PROPERTY: "true"}.items()
        ]
        with self._engine.connect() as conn:
            if self._ns_exists(conn, ns_str):
                raise NamespaceAlreadyExists(f"namespace {ns_str!r} already exists")
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(NP), rows)
        except sa.exc.IntegrityError as e:
            raise NamespaceAlreadyExists(f"namespace {ns_str!r} already exists") from e

    @_typed_connection_errors("listing namespaces")
    def list_namespaces(self, parent: NamespaceLike = ()) -> list[Namespace]:
        """Namespaces directly below ``parent``, from property rows and table rows."""
        ns = namespace_of(parent, allow_root=True)
        prefix = ".".join(ns)
        tables = sa.select(T.c.table_namespace.label("ns")).where(T.c.catalog_name == self.name)
        props = sa.select(NP.c.namespace.label("ns")).where(NP.c.catalog_name == self.name)
        if ns:
            like = escape_like(prefix) + ".%"
            tables = tables.where(T.c.table_namespace.like(like, escape="!"))
            props = props.where(NP.c.namespace.like(like, escape="!"))
        with self._engine.connect() as conn:
            if ns and not self._ns_exists(conn, prefix):
                raise self._missing_namespace(ns)
            found = {str(r[0]) for r in conn.execute(sa.union(tables, props))}
        depth = len(ns)
        children = {
            tuple(levels[: depth + 1])
            for levels in (name.split(".") for name in found)
            if len(levels) > depth and tuple(levels[:depth]) == ns
        }
        return sorted(children)

    @_typed_connection_errors("reading the catalog")
    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace exists if a property row or a table row is in it or below it."""
        ns = namespace_of(namespace)
        with self._engine.connect() as conn:
            return self._ns_exists(conn, ".".join(ns))

    @_typed_connection_errors("reading namespace properties")
    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The namespace's properties (without the internal ``exists`` marker)."""
        ns = namespace_of(namespace)
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, ".".join(ns)):
                raise self._missing_namespace(ns)
            props = self._exact_properties(conn, ".".join(ns))
        props.pop(EXISTS_PROPERTY, None)
        return props

    @_typed_connection_errors("updating namespace properties")
    def update_namespace_properties(
        self,
        namespace: NamespaceLike,
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdate:
        """Remove and set properties in one transaction."""
        ns = namespace_of(namespace)
        ns_str = ".".join(ns)
        removal_set = set(removals) - {EXISTS_PROPERTY}
        new_values = _check_namespace_properties(updates)
        with self._engine.begin() as conn:
            if not self._ns_exists(conn, ns_str):
                raise self._missing_namespace(ns)
            current = self._exact_properties(conn, ns_str)
            current.pop(EXISTS_PROPERTY, None)
            _, summary = plan_properties_update(current, removal_set, new_values)
            touched = set(summary.removed) | set(summary.updated)
            if touched:
                conn.execute(
                    sa.delete(NP).where(
                        NP.c.catalog_name == self.name,
                        NP.c.namespace == ns_str,
                        NP.c.property_key.in_(sorted(touched)),
                    )
                )
            if new_values:
                conn.execute(
                    sa.insert(NP),
                    [
                        {
                            "catalog_name": self.name,
                            "namespace": ns_str,
                            "property_key": k,
                            "property_value": v,
                        }
                        for k, v in new_values.items()
                    ],
                )
        return summary

    @_typed_connection_errors("dropping a namespace")
    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Drop a namespace that holds no tables, views or child namespaces."""
        ns = namespace_of(namespace)
        ns_str = ".".join(ns)
        with self._engine.begin() as conn:
            if not self._ns_exists(conn, ns_str):
                raise self._missing_namespace(ns)
            members = conn.execute(
                sa.select(T.c.table_name)
                .where(T.c.catalog_name == self.name, T.c.table_namespace == ns_str)
                .order_by(T.c.table_name)
                .limit(5)
            ).all()
            if members:
                names = ", ".join(f"{ns_str}.{r[0]}" for r in members)
                raise NamespaceNotEmpty(
                    f"namespace {ns_str!r} still holds tables or views ({names}); drop them first"
                )
            like = escape_like(ns_str) + ".%"
            child_tables = sa.select(sa.literal(1)).where(
                T.c.catalog_name == self.name, T.c.table_namespace.like(like, escape="!")
            )
            child_props = sa.select(sa.literal(1)).where(
                NP.c.catalog_name == self.name, NP.c.namespace.like(like, escape="!")
            )
            if (
                conn.execute(child_tables.limit(1)).first() is not None
                or conn.execute(child_props.limit(1)).first() is not None
            ):
                raise NamespaceNotEmpty(
                    f"namespace {ns_str!r} has child namespaces; drop them first"
                )
            conn.execute(
                sa.delete(NP).where(NP.c.catalog_name == self.name, NP.c.namespace == ns_str)
            )

    # --- tables and views: the pointer rows ---------------------------------------

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """``<namespace location>/<table>`` if the namespace has ``location``, else
        ``<warehouse>/<namespace levels>/<table>`` (as the JDBC catalog does)."""
        ident = Identifier.parse(identifier)
        with self._engine.connect() as conn:
            base = self._exact_properties(conn, ident.namespace_str).get("location")
        if base:
            return f"{base.rstrip('/')}/{ident.name}"
        return super().default_table_location(ident)

    def _taken(self, ident: Identifier, kind: str) -> TableAlreadyExists | ViewAlreadyExists:
        row = self._read_row(ident)
        existing = row.kind if row is not None else TABLE
        return already_exists(
            kind, f"a {existing} named {str(ident)!r} already exists in catalog {self.name!r}"
        )

    def _check_location_length(self, location: str) -> None:
        if len(location) > MAX_LOCATION_LENGTH:
            raise ValidationError(
                f"metadata location {location[:60]}... is {len(location)} characters; the "
                f"catalog column holds {MAX_LOCATION_LENGTH}: use a shorter table location"
            )

    @_typed_connection_errors("reading the catalog")
    def _check_free(self, ident: Identifier, kind: str) -> None:
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, ident.namespace_str):
                raise self._missing_namespace(ident.namespace)
            if self._row(conn, ident) is not None:
                raise self._taken(ident, kind)

    def _register_pointer(
        self, ident: Identifier, kind: str, metadata: Metadata, location: str, written: bool
    ) -> None:
        """INSERT the row; the primary key refuses a taken name."""
        row = {
            "catalog_name": self.name,
            "table_namespace": ident.namespace_str,
            "table_name": ident.name,
            "metadata_location": location,
            "previous_metadata_location": None,
            "iceberg_type": _ICEBERG_TYPE[kind],
        }
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(T).values(**row))
        except sa.exc.IntegrityError as e:
            if written:
                delete_quietly(self.file_io(location), location)
            raise self._taken(ident, kind) from e
        except sa.exc.SQLAlchemyError as e:
            try:
                now = self._read_row(ident)
            except (sa.exc.SQLAlchemyError, CatalogServiceError):
                now = None
            if now is not None and now.location == location:
                return  # the insert did happen
            raise CommitStateUnknown(
                f"registering {str(ident)!r} failed with a database error "
                f"({database_error(e)}); it cannot be known whether it was registered: check "
                f"the catalog before retrying; {location} was kept"
            ) from e

    def _read_pointer(self, ident: Identifier, kind: str) -> tuple[str, Any]:
        row = self._read_row(ident)
        if row is None or row.kind != kind:
            raise _not_found(self.name, ident, kind, row)
        if not row.location:
            raise _not_found(self.name, ident, kind, None, "its row has no metadata_location")
        return row.location, None

    def _swap_pointer(
        self,
        ident: Identifier,
        kind: str,
        *,
        token: Any,
        base: str,
        new: str,
        metadata: Metadata,
        io: FileIO,
    ) -> None:
        """The conditional UPDATE, and what its outcome means."""
        stmt = (
            sa.update(T)
            .where(
                T.c.catalog_name == self.name,
                T.c.table_namespace == ident.namespace_str,
                T.c.table_name == ident.name,
                T.c.metadata_location == base,
                _type_filter(kind),
            )
            .values(metadata_location=new, previous_metadata_location=base)
        )
        try:
            with self._engine.begin() as conn:
                changed = conn.execute(stmt).rowcount
        except sa.exc.SQLAlchemyError as e:
            try:
                now = self._read_row(ident)
            except (sa.exc.SQLAlchemyError, CatalogServiceError) as again:
                raise CommitStateUnknown(
                    f"the pointer swap for {str(ident)!r} failed ({database_error(e)}) and the "
                    f"pointer cannot be read back ({database_error(again)}); {new} was kept: "
                    "check the table before retrying"
                ) from e
            if now is not None and now.location == new:
                return  # the UPDATE was applied; only its acknowledgement was lost
            raise CommitStateUnknown(
                f"the pointer swap for {str(ident)!r} failed with a database error "
                f"({database_error(e)}); "
                f"the pointer does not name {new} now, but the swap may still land: "
                "nothing was deleted; check the table before retrying"
            ) from e
        if changed == 1:
            return
        delete_quietly(io, new)  # definitely not committed: the attempt's file is garbage
        try:
            row = self._read_row(ident)
        except (sa.exc.SQLAlchemyError, CatalogServiceError) as e:
            raise CommitFailed(
                f"{str(ident)!r} no longer has the base metadata {base} (and re-reading it "
                f"failed: {database_error(e)}); reload it and retry"
            ) from e
        if row is None or row.kind != kind:
            raise _not_found(self.name, ident, kind, row)
        raise CommitFailed(
            f"{kind} {str(ident)!r} was changed by another writer: its metadata is no longer "
            f"{base}; reload it and retry"
        )

    @_typed_connection_errors("listing the catalog")
    def _list(self, namespace: NamespaceLike, kind: str) -> list[Identifier]:
        ns = namespace_of(namespace)
        ns_str = ".".join(ns)
        stmt = (
            sa.select(T.c.table_name)
            .where(T.c.catalog_name == self.name, T.c.table_namespace == ns_str, _type_filter(kind))
            .order_by(T.c.table_name)
        )
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, ns_str):
                raise self._missing_namespace(ns)
            return [Identifier(ns, r[0]) for r in conn.execute(stmt)]

    # --- tables ------------------------------------------------------------------

    def table_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a table row (not a view row) exists; the file is not read."""
        row = self._read_row(Identifier.parse(identifier))
        return row is not None and row.kind == TABLE

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Table rows in exactly this namespace."""
        return self._list(namespace, TABLE)

    @_typed_connection_errors("dropping a table")
    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Delete the row (only if it still names the file read, so a purge sees the
        newest metadata); with ``purge``, then delete the table's files."""
        ident = Identifier.parse(identifier)
        for _ in range(10):
            location, _ = self._read_pointer(ident, TABLE)
            metadata: TableMetadata | None = None
            if purge:
                try:
                    metadata = read_table_metadata(self.file_io(location), location)
                except (NoSuchFile, InvalidMetadata) as e:
                    logger.warning("purge of %s: cannot read %s: %s", ident, location, e)
            stmt = sa.delete(T).where(
                T.c.catalog_name == self.name,
                T.c.table_namespace == ident.namespace_str,
                T.c.table_name == ident.name,
                T.c.metadata_location == location,
                _type_filter(TABLE),
            )
            with self._engine.begin() as conn:
                if conn.execute(stmt).rowcount == 1:
                    break
        else:
            raise CommitFailed(f"{str(ident)!r} kept changing while being dropped; try again")
        if metadata is not None:
            purge_table_files(self.file_io(metadata.location), metadata, location)

    @_typed_connection_errors("renaming a table")
    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        """Move the row to the new name (files stay where they are)."""
        src, dst = Identifier.parse(source), Identifier.parse(destination)
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, dst.namespace_str):
                raise self._missing_namespace(dst.namespace)
            if self._row(conn, dst) is not None:
                raise self._taken(dst, TABLE)
        stmt = (
            sa.update(T)
            .where(
                T.c.catalog_name == self.name,
                T.c.table_namespace == src.namespace_str,
                T.c.table_name == src.name,
                _type_filter(TABLE),
            )
            .values(table_namespace=dst.namespace_str, table_name=dst.name)
        )
        try:
            with self._engine.begin() as conn:
                changed = conn.execute(stmt).rowcount
        except sa.exc.IntegrityError as e:
            raise self._taken(dst, TABLE) from e
        if changed != 1:
            raise _not_found(self.name, src, TABLE, self._read_row(src))
        return self.load_table(dst)

    # --- views -------------------------------------------------------------------

    def view_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a ``VIEW`` row exists."""
        row = self._read_row(Identifier.parse(identifier))
        return row is not None and row.kind == VIEW

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """``VIEW`` rows in exactly this namespace."""
        return self._list(namespace, VIEW)

    @_typed_connection_errors("dropping a view")
    def drop_view(self, identifier: IdentifierLike) -> None:
        """Delete the ``VIEW`` row (metadata files are kept, as Iceberg Java does)."""
        ident = Identifier.parse(identifier)
        stmt = sa.delete(T).where(
            T.c.catalog_name == self.name,
            T.c.table_namespace == ident.namespace_str,
            T.c.table_name == ident.name,
            _type_filter(VIEW),
        )
        with self._engine.begin() as conn:
            changed = conn.execute(stmt).rowcount
        if changed != 1:
            raise _not_found(self.name, ident, VIEW, self._read_row(ident))


def _not_found(
    catalog: str, ident: Identifier, kind: str, row: _Pointer | None, why: str | None = None
) -> NoSuchTable | NoSuchView:
    if why is None and row is not None and row.kind != kind:
        why = f"it is a {row.kind}; use the {row.kind} methods"
    message = f"{kind} {str(ident)!r} does not exist in catalog {catalog!r}"
    return no_such(kind, f"{message} ({why})" if why else message)


def _check_namespace_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    props = check_properties(properties, "namespace property")
    if EXISTS_PROPERTY in props:
        raise ValidationError(
            f"namespace property {EXISTS_PROPERTY!r} is reserved by the JDBC catalog schema "
            "(it marks that a namespace exists); use another key"
        )
    for key, value in props.items():
        if len(key) > MAX_PROPERTY_KEY_LENGTH or len(value) > MAX_PROPERTY_VALUE_LENGTH:
            raise ValidationError(
                f"namespace property {key[:40]!r} is too long: keys hold "
                f"{MAX_PROPERTY_KEY_LENGTH} and values {MAX_PROPERTY_VALUE_LENGTH} characters"
            )
    return props
