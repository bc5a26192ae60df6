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

import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from icewright.catalog.base import (
    Catalog,
    IdentifierLike,
    NamespaceLike,
    PropertiesUpdate,
    Table,
    View,
    check_properties,
    delete_quietly,
    namespace_of,
    plan_properties_update,
    table_handle,
    view_handle,
)
from icewright.catalog.identifier import Identifier, Namespace
from icewright.catalog.metadata_files import (
    metadata_dir,
    missing_metadata,
    next_pointer_metadata_location,
    read_table_metadata,
    read_view_metadata,
    write_new_metadata,
)
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
    CommitFailed,
    CommitStateUnknown,
    InvalidMetadata,
    MissingDependency,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchFile,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
    ViewAlreadyExists,
)
from icewright.io import FileIO
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["SqlCatalog"]

logger = logging.getLogger(__name__)

T = ICEBERG_TABLES
NP = NAMESPACE_PROPERTIES

EXISTS_PROPERTY = "exists"
"""The marker row Java and pyiceberg insert so an empty namespace exists."""

SQLITE_BUSY_TIMEOUT_SECONDS = 30.0
"""How long a SQLite writer waits for another writer's lock before failing."""


def _type_filter(kind: str) -> sa.ColumnElement[bool]:
    if kind == VIEW_TYPE:
        return T.c.iceberg_type == VIEW_TYPE
    # Rows without a type predate views (schema V0) and are tables.
    return sa.or_(T.c.iceberg_type == TABLE_TYPE, T.c.iceberg_type.is_(None))


def _kind_of(iceberg_type: object) -> str:
    return VIEW_TYPE if str(iceberg_type or "").upper() == VIEW_TYPE else TABLE_TYPE


class _Pointer(NamedTuple):
    """One ``iceberg_tables`` row: the metadata location and TABLE or VIEW."""

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


class SqlCatalog(Catalog):
    """A catalog in a SQL database with the Iceberg JDBC catalog's schema.

    ``name`` is the ``catalog_name`` column: several catalogs can share a
    database. The tables are created if absent; a database created by
    pyiceberg without ``iceberg_type`` gets the column (Java's V1 migration).
    """

    def __init__(self, name: str, uri: str, warehouse: str, **properties: str) -> None:
        if not isinstance(warehouse, str) or not warehouse:
            raise ValidationError("SqlCatalog needs a warehouse location (a path or s3:// URI)")
        if "://" not in warehouse and not warehouse.startswith("file:"):
            warehouse = os.path.abspath(warehouse)
        super().__init__(name, warehouse, properties)
        self._uri = uri
        self._engine = make_engine(uri)
        ensure_schema(self._engine)

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

    def _missing_namespace(self, ns: Namespace) -> NoSuchNamespace:
        return NoSuchNamespace(
            f"namespace {'.'.join(ns)!r} does not exist in catalog {self.name!r}; "
            "create it first with create_namespace"
        )

    # --- namespaces --------------------------------------------------------------

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

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace exists if a property row or a table row is in it or below it."""
        ns = namespace_of(namespace)
        with self._engine.connect() as conn:
            return self._ns_exists(conn, ".".join(ns))

    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The namespace's properties (without the internal ``exists`` marker)."""
        ns = namespace_of(namespace)
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, ".".join(ns)):
                raise self._missing_namespace(ns)
            props = self._exact_properties(conn, ".".join(ns))
        props.pop(EXISTS_PROPERTY, None)
        return props

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

    # --- tables and views: shared row handling ----------------------------------

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """``<namespace location>/<table>`` if the namespace has ``location``, else
        ``<warehouse>/<namespace levels>/<table>`` (as the JDBC catalog does)."""
        ident = Identifier.parse(identifier)
        with self._engine.connect() as conn:
            base = self._exact_properties(conn, ident.namespace_str).get("location")
        if base:
            return f"{base.rstrip('/')}/{ident.name}"
        return super().default_table_location(ident)

    def _taken(self, ident: Identifier, kind: str) -> Exception:
        row = self._read_row(ident)
        existing = "view" if row is not None and row.kind == VIEW_TYPE else "table"
        cls = ViewAlreadyExists if kind == VIEW_TYPE else TableAlreadyExists
        return cls(f"a {existing} named {str(ident)!r} already exists in catalog {self.name!r}")

    def _insert_pointer(self, ident: Identifier, location: str, kind: str, written: bool) -> None:
        """Insert a new row; ``written`` says the metadata file is ours to delete."""
        _check_length(location)
        row = {
            "catalog_name": self.name,
            "table_namespace": ident.namespace_str,
            "table_name": ident.name,
            "metadata_location": location,
            "previous_metadata_location": None,
            "iceberg_type": kind,
        }
        io = self.file_io(location)
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(T).values(**row))
        except sa.exc.IntegrityError as e:
            if written:
                delete_quietly(io, location)
            raise self._taken(ident, kind) from e
        except sa.exc.SQLAlchemyError as e:
            try:
                now = self._read_row(ident)
            except sa.exc.SQLAlchemyError:
                now = None
            if now is not None and now.location == location:
                return  # the insert did happen
            raise CommitStateUnknown(
                f"registering {str(ident)!r} failed with a database error ({e}); it cannot "
                f"be known whether it was registered: check the catalog before retrying; "
                f"{location} was kept"
            ) from e

    def _prepare_create(self, ident: Identifier, kind: str) -> None:
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, ident.namespace_str):
                raise self._missing_namespace(ident.namespace)
            if self._row(conn, ident) is not None:
                raise self._taken(ident, kind)

    def _pointer(self, ident: Identifier, kind: str) -> str:
        row = self._read_row(ident)
        if row is None or row.kind != kind:
            raise _not_found(self.name, ident, kind, row)
        if not row.location:
            raise _not_found(self.name, ident, kind, None, "its row has no metadata_location")
        return str(row.location)

    def _swap(self, ident: Identifier, kind: str, base: str, new: str, io: FileIO) -> None:
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
            except sa.exc.SQLAlchemyError as again:
                raise CommitStateUnknown(
                    f"the pointer swap for {str(ident)!r} failed ({e}) and the pointer cannot "
                    f"be read back ({again}); {new} was kept: check the table before retrying"
                ) from e
            if now is not None and now.location == new:
                return  # the UPDATE was applied; only its acknowledgement was lost
            raise CommitStateUnknown(
                f"the pointer swap for {str(ident)!r} failed with a database error ({e}); "
                f"the pointer does not name {new} now, but the swap may still land: "
                "nothing was deleted; check the table before retrying"
            ) from e
        if changed == 1:
            return
        delete_quietly(io, new)  # definitely not committed: the attempt's file is garbage
        try:
            row = self._read_row(ident)
        except sa.exc.SQLAlchemyError as e:
            raise CommitFailed(
                f"{str(ident)!r} no longer has the base metadata {base} (and re-reading it "
                f"failed: {e}); reload it and retry"
            ) from e
        if row is None or row.kind != kind:
            raise _not_found(self.name, ident, kind, row)
        raise CommitFailed(
            f"{str(ident)!r} was changed by another writer: its metadata is no longer {base}; "
            "reload it and retry"
        )

    # --- tables ------------------------------------------------------------------

    def create_table_from_metadata(
        self, identifier: IdentifierLike, metadata: TableMetadata
    ) -> Table:
        """Write ``<location>/metadata/00000-<uuid>.metadata.json`` and insert the row."""
        ident = Identifier.parse(identifier)
        metadata = self._check_table_metadata(metadata)
        self._prepare_create(ident, TABLE_TYPE)
        location = next_pointer_metadata_location(
            metadata_dir(metadata.location, metadata.properties), metadata.properties, None
        )
        _check_length(location)
        io = self.file_io(location)
        write_new_metadata(io, location, metadata)
        self._insert_pointer(ident, location, TABLE_TYPE, written=True)
        return table_handle(self, ident, metadata, location)

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Insert a row pointing at an existing metadata file (which must be readable)."""
        ident = Identifier.parse(identifier)
        metadata = read_table_metadata(self.file_io(metadata_location), metadata_location)
        self._prepare_create(ident, TABLE_TYPE)
        self._insert_pointer(ident, metadata_location, TABLE_TYPE, written=False)
        return table_handle(self, ident, metadata, metadata_location)

    def load_table(self, identifier: IdentifierLike) -> Table:
        """Read the row and the metadata file it names."""
        ident = Identifier.parse(identifier)
        location = self._pointer(ident, TABLE_TYPE)
        try:
            metadata = read_table_metadata(self.file_io(location), location)
        except NoSuchFile as e:
            raise missing_metadata(location, f"table {str(ident)!r}", e) from e
        return table_handle(self, ident, metadata, location)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a table row (not a view row) exists; the file is not read."""
        row = self._read_row(Identifier.parse(identifier))
        return row is not None and row.kind == TABLE_TYPE

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Table rows in exactly this namespace."""
        return self._list(namespace, TABLE_TYPE)

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

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Delete the row (only if it still names the file read, so a purge sees the
        newest metadata); with ``purge``, then delete the table's files."""
        ident = Identifier.parse(identifier)
        for _ in range(10):
            location = self._pointer(ident, TABLE_TYPE)
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
                _type_filter(TABLE_TYPE),
            )
            with self._engine.begin() as conn:
                if conn.execute(stmt).rowcount == 1:
                    break
        else:
            raise CommitFailed(f"{str(ident)!r} kept changing while being dropped; try again")
        if metadata is not None:
            purge_table_files(self.file_io(metadata.location), metadata, location)

    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        """Move the row to the new name (files stay where they are)."""
        src, dst = Identifier.parse(source), Identifier.parse(destination)
        with self._engine.connect() as conn:
            if not self._ns_exists(conn, dst.namespace_str):
                raise self._missing_namespace(dst.namespace)
            if self._row(conn, dst) is not None:
                raise self._taken(dst, TABLE_TYPE)
        stmt = (
            sa.update(T)
            .where(
                T.c.catalog_name == self.name,
                T.c.table_namespace == src.namespace_str,
                T.c.table_name == src.name,
                _type_filter(TABLE_TYPE),
            )
            .values(table_namespace=dst.namespace_str, table_name=dst.name)
        )
        try:
            with self._engine.begin() as conn:
                changed = conn.execute(stmt).rowcount
        except sa.exc.IntegrityError as e:
            raise self._taken(dst, TABLE_TYPE) from e
        if changed != 1:
            raise _not_found(self.name, src, TABLE_TYPE, self._read_row(src))
        return self.load_table(dst)

    def commit_table(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: TableMetadata
    ) -> str:
        """Write ``<NNNNN+1>-<uuid>.metadata.json`` and swap the row from the base to it."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_table_metadata(new_metadata)
        current = self._pointer(ident, TABLE_TYPE)
        if current != base_metadata_location:
            raise CommitFailed(
                f"{str(ident)!r} was changed by another writer: its metadata is {current}, "
                f"not the base {base_metadata_location}; reload it and retry"
            )
        io = self.file_io(new_metadata.location)
        prepared = self._with_base_in_log(io, base_metadata_location, new_metadata)
        location = next_pointer_metadata_location(
            metadata_dir(prepared.location, prepared.properties),
            prepared.properties,
            base_metadata_location,
        )
        _check_length(location)
        self._write_attempt(io, location, prepared)
        self._swap(ident, TABLE_TYPE, base_metadata_location, location, io)
        return location

    # --- views -------------------------------------------------------------------

    def create_view(self, identifier: IdentifierLike, metadata: ViewMetadata) -> View:
        """Write the view's first metadata file and insert a ``VIEW`` row."""
        ident = Identifier.parse(identifier)
        metadata = self._check_view_metadata(metadata)
        self._prepare_create(ident, VIEW_TYPE)
        location = next_pointer_metadata_location(
            metadata_dir(metadata.location, metadata.properties), metadata.properties, None
        )
        _check_length(location)
        io = self.file_io(location)
        write_new_metadata(io, location, metadata)
        self._insert_pointer(ident, location, VIEW_TYPE, written=True)
        return view_handle(self, ident, metadata, location)

    def load_view(self, identifier: IdentifierLike) -> View:
        """Read a ``VIEW`` row and its metadata file."""
        ident = Identifier.parse(identifier)
        location = self._pointer(ident, VIEW_TYPE)
        try:
            metadata = read_view_metadata(self.file_io(location), location)
        except NoSuchFile as e:
            raise missing_metadata(location, f"view {str(ident)!r}", e) from e
        return view_handle(self, ident, metadata, location)

    def view_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a ``VIEW`` row exists."""
        row = self._read_row(Identifier.parse(identifier))
        return row is not None and row.kind == VIEW_TYPE

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """``VIEW`` rows in exactly this namespace."""
        return self._list(namespace, VIEW_TYPE)

    def commit_view(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: ViewMetadata
    ) -> str:
        """Write the new view metadata file and swap the ``VIEW`` row to it."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_view_metadata(new_metadata)
        current = self._pointer(ident, VIEW_TYPE)
        if current != base_metadata_location:
            raise CommitFailed(
                f"view {str(ident)!r} was changed by another writer: its metadata is {current}, "
                f"not the base {base_metadata_location}; reload it and retry"
            )
        location = next_pointer_metadata_location(
            metadata_dir(new_metadata.location, new_metadata.properties),
            new_metadata.properties,
            base_metadata_location,
        )
        _check_length(location)
        io = self.file_io(location)
        self._write_attempt(io, location, new_metadata)
        self._swap(ident, VIEW_TYPE, base_metadata_location, location, io)
        return location

    def drop_view(self, identifier: IdentifierLike) -> None:
        """Delete the ``VIEW`` row (metadata files are kept, as Iceberg Java does)."""
        ident = Identifier.parse(identifier)
        stmt = sa.delete(T).where(
            T.c.catalog_name == self.name,
            T.c.table_namespace == ident.namespace_str,
            T.c.table_name == ident.name,
            _type_filter(VIEW_TYPE),
        )
        with self._engine.begin() as conn:
            changed = conn.execute(stmt).rowcount
        if changed != 1:
            raise _not_found(self.name, ident, VIEW_TYPE, self._read_row(ident))


def _not_found(
    catalog: str, ident: Identifier, kind: str, row: _Pointer | None, why: str | None = None
) -> NoSuchTable | NoSuchView:
    wanted = "view" if kind == VIEW_TYPE else "table"
    if why is None and row is not None and row.kind != kind:
        other = "table" if kind == VIEW_TYPE else "view"
        why = f"it is a {other}; use the {other} methods"
    message = f"{wanted} {str(ident)!r} does not exist in catalog {catalog!r}"
    if why:
        message += f" ({why})"
    return NoSuchView(message) if kind == VIEW_TYPE else NoSuchTable(message)


def _check_length(location: str) -> None:
    if len(location) > MAX_LOCATION_LENGTH:
        raise ValidationError(
            f"metadata location {location[:60]}... is {len(location)} characters; the catalog "
            f"column holds {MAX_LOCATION_LENGTH}: use a shorter table location"
        )


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
