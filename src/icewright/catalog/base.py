"""The catalog contract: namespaces, tables, views, and the atomic pointer swap.

A catalog maps a name to the location of a table's (or view's) current
metadata file. Everything else about a table lives in that file, so a commit
is: write a new metadata file, then move the pointer from the base file to the
new one only if it still points at the base (spec: "Commit Conflict
Resolution and Retry"). :meth:`Catalog.commit_table` raises exactly one of

* :class:`~icewright.errors.CommitFailed`: the pointer moved; nothing was
  committed, the attempt's metadata file is deleted, and a retry on fresh
  metadata is safe;
* :class:`~icewright.errors.CommitStateUnknown`: the outcome cannot be
  known; nothing is deleted;
* :class:`~icewright.errors.NoSuchTable` or
  :class:`~icewright.errors.ValidationError`.
"""

from __future__ import annotations

import logging
import os
import threading
import types
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from icewright.catalog.changes import TableChanges, apply_updates
from icewright.catalog.identifier import Identifier, Namespace, parse_namespace
from icewright.catalog.metadata_files import read_table_metadata, write_new_metadata
from icewright.errors import (
    CommitFailed,
    FileAlreadyExists,
    NoSuchFile,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
    ViewAlreadyExists,
)
from icewright.io import S3_SCHEMES, FileIO, load_file_io
from icewright.io.base import uri_scheme
from icewright.spec.new_table import new_table_metadata
from icewright.spec.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from icewright.spec.properties import check_properties as check_table_properties
from icewright.spec.schema import Schema
from icewright.spec.sorting import UNSORTED_SORT_ORDER, SortOrder
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["TABLE", "VIEW", "Catalog", "PropertiesUpdate", "Table", "View"]

logger = logging.getLogger(__name__)

TABLE = "table"
VIEW = "view"
"""The two kinds of catalog entry, as the implementations name them."""

IdentifierLike = str | Sequence[str] | Identifier
NamespaceLike = str | Sequence[str]


@dataclass(frozen=True, eq=False)
class Table:
    """A loaded table: its name, metadata, where that metadata lives, and how to reach files.

    A handle is a snapshot in time; :meth:`refresh` loads the table again.
    """

    identifier: Identifier
    metadata: TableMetadata
    metadata_location: str
    io: FileIO = field(repr=False)
    catalog: Catalog = field(repr=False)

    @property
    def location(self) -> str:
        """The table's base location."""
        return self.metadata.location

    def refresh(self) -> Table:
        """The table as the catalog has it now."""
        return self.catalog.load_table(self.identifier)


@dataclass(frozen=True, eq=False)
class View:
    """A loaded view: its name, metadata and metadata file location."""

    identifier: Identifier
    metadata: ViewMetadata
    metadata_location: str
    io: FileIO = field(repr=False)
    catalog: Catalog = field(repr=False)

    def refresh(self) -> View:
        """The view as the catalog has it now."""
        return self.catalog.load_view(self.identifier)


@dataclass(frozen=True)
class PropertiesUpdate:
    """What :meth:`Catalog.update_namespace_properties` did."""

    removed: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def check_properties(properties: Mapping[str, str] | None, what: str) -> dict[str, str]:
    """A plain dict copy of ``properties``, refusing non-string keys or values."""
    out: dict[str, str] = {}
    for key, value in (properties or {}).items():
        if not isinstance(key, str) or not key:
            raise ValidationError(f"{what} keys must be non-empty strings, got {key!r}")
        if not isinstance(value, str):
            raise ValidationError(
                f"{what} values must be strings; {key!r} has {type(value).__name__} {value!r}"
            )
        out[key] = value
    return out


def plan_properties_update(
    current: Mapping[str, str], removals: Iterable[str], updates: Mapping[str, str] | None
) -> tuple[dict[str, str], PropertiesUpdate]:
    """The properties after removing ``removals`` and setting ``updates``, and a summary."""
    removal_set = set(removals)
    update_map = check_properties(updates, "namespace property")
    overlap = removal_set & set(update_map)
    if overlap:
        raise ValidationError(
            f"namespace properties {sorted(overlap)} are both removed and updated; "
            "pass each key in only one of removals and updates"
        )
    result = dict(current)
    removed = tuple(sorted(k for k in removal_set if k in result))
    missing = tuple(sorted(k for k in removal_set if k not in result))
    for key in removed:
        del result[key]
    result.update(update_map)
    return result, PropertiesUpdate(removed, tuple(sorted(update_map)), missing)


class Catalog(ABC):
    """A named catalog of namespaces, tables and views over a warehouse.

    Implementations: :class:`~icewright.catalog.sql.SqlCatalog`,
    :class:`~icewright.catalog.filesystem.FileSystemCatalog` and
    :class:`~icewright.catalog.glue.GlueCatalog`. Names are given as dotted
    strings, tuples of levels, or :class:`Identifier`.
    """

    def __init__(self, name: str, warehouse: str, properties: Mapping[str, str]) -> None:
        if not isinstance(name, str) or not name or len(name) > 255:
            raise ValidationError(
                f"catalog name must be a non-empty string of at most 255 characters, got {name!r}"
            )
        self._name = name
        if warehouse and uri_scheme(warehouse) is None:
            warehouse = os.path.abspath(warehouse)  # FileIO takes absolute paths only
        self._warehouse = warehouse.rstrip("/") if len(warehouse) > 1 else warehouse
        self._properties: Mapping[str, str] = types.MappingProxyType(
            {**check_properties(properties, "catalog property"), "warehouse": self._warehouse}
        )
        self._io_cache: dict[str, FileIO] = {}
        self._io_lock = threading.Lock()

    @property
    def name(self) -> str:
        """The catalog's name (the SQL catalog's ``catalog_name``)."""
        return self._name

    @property
    def warehouse(self) -> str:
        """Where new tables go by default."""
        return self._warehouse

    @property
    def properties(self) -> Mapping[str, str]:
        """The catalog's (read-only) properties, including FileIO ones (``s3.*``)."""
        return self._properties

    def file_io(self, location: str | None = None) -> FileIO:
        """The FileIO for ``location`` (default: the warehouse), built from the properties."""
        target = location or self._warehouse
        scheme = uri_scheme(target)
        if scheme in S3_SCHEMES:
            key = "s3"
        elif scheme in (None, "file"):
            key = "local"
        else:
            return load_file_io(target, self._properties)  # raises a clear error
        with self._io_lock:
            io = self._io_cache.get(key)
            if io is None:
                io = load_file_io(target, self._properties)
                self._io_cache[key] = io
        return io

    def close(self) -> None:  # noqa: B027 - optional hook, most catalogs hold nothing
        """Release connections the catalog holds (the SQL engine)."""

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r}, warehouse={self._warehouse!r})"

    # --- namespaces ----------------------------------------------------------

    @abstractmethod
    def create_namespace(
        self, namespace: NamespaceLike, properties: Mapping[str, str] | None = None
    ) -> None:
        """Create a namespace; ``NamespaceAlreadyExists`` if it exists."""

    @abstractmethod
    def list_namespaces(self, parent: NamespaceLike = ()) -> list[Namespace]:
        """The namespaces directly below ``parent`` (default: the top level), sorted."""

    @abstractmethod
    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """Whether the namespace exists."""

    @abstractmethod
    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The namespace's properties; ``NoSuchNamespace`` if it does not exist."""

    @abstractmethod
    def update_namespace_properties(
        self,
        namespace: NamespaceLike,
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdate:
        """Remove ``removals`` and set ``updates`` on the namespace's properties."""

    @abstractmethod
    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Drop an empty namespace; ``NamespaceNotEmpty`` if it holds tables or views."""

    def _require_namespace(self, namespace: Namespace) -> None:
        if not self.namespace_exists(namespace):
            raise self._missing_namespace(namespace)

    def _missing_namespace(self, namespace: Namespace) -> NoSuchNamespace:
        return NoSuchNamespace(
            f"namespace {'.'.join(namespace)!r} does not exist in catalog {self._name!r}; "
            "create it first with create_namespace"
        )

    # --- tables --------------------------------------------------------------

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """Where :meth:`create_table` puts a table when no location is given."""
        ident = Identifier.parse(identifier)
        return "/".join((self._warehouse, *ident.namespace, ident.name))

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
        """Create a table: build its first metadata, write it, register the pointer.

        Raises ``NoSuchNamespace`` if the namespace is missing and
        ``TableAlreadyExists`` if a table or view has the name.
        """
        ident = Identifier.parse(identifier)
        check_table_properties(properties)  # values icewright interprets, before any change
        self._require_namespace(ident.namespace)
        target = self._table_location(ident, location)
        metadata = new_table_metadata(
            schema,
            partition_spec,
            sort_order,
            target,
            check_properties(properties, "table property"),
            format_version=format_version,
        )
        return self.create_table_from_metadata(ident, metadata)

    def _table_location(self, ident: Identifier, location: str | None) -> str:
        if location is None:
            return self.default_table_location(ident)
        if not isinstance(location, str) or not location.strip():
            raise ValidationError(f"table location must be a non-empty string, got {location!r}")
        load_file_io(location, self._properties)  # refuses schemes icewright cannot write
        return location.rstrip("/") if len(location) > 1 else location

    @abstractmethod
    def create_table_from_metadata(
        self, identifier: IdentifierLike, metadata: TableMetadata
    ) -> Table:
        """Create a table whose first metadata file is ``metadata``."""

    @abstractmethod
    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Add an existing table (its current metadata file) to the catalog."""

    @abstractmethod
    def load_table(self, identifier: IdentifierLike) -> Table:
        """Load a table; ``NoSuchTable`` if there is none of that name."""

    def table_metadata_location(self, identifier: IdentifierLike) -> str:
        """The location of the table's current metadata file, read as cheaply as the
        catalog allows (a pointer row or call; no metadata file where possible).
        ``NoSuchTable`` if there is none of that name."""
        return self.load_table(identifier).metadata_location

    def table_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a table (not a view) of that name exists."""
        try:
            self.load_table(identifier)
        except NoSuchTable:
            return False
        return True

    @abstractmethod
    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """The tables in a namespace (not in its children), sorted by name."""

    @abstractmethod
    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Remove a table from the catalog; with ``purge``, delete its files too."""

    @abstractmethod
    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        """Rename a table (its files stay where they are)."""

    @abstractmethod
    def commit_table(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: TableMetadata
    ) -> str:
        """Write ``new_metadata`` and swap the pointer from the base to it.

        Returns the new metadata location. Raises exactly one of
        ``CommitFailed`` (deleting the file this attempt wrote),
        ``CommitStateUnknown`` (deleting nothing), ``NoSuchTable`` or
        ``ValidationError``.
        """

    def commit_changes(
        self,
        identifier: IdentifierLike,
        base_metadata_location: str,
        base: TableMetadata,
        changes: TableChanges,
        timestamp_ms: int | None = None,
    ) -> tuple[TableMetadata, str]:
        """Commit ``changes`` (the spec's requirements and updates) made on ``base``.

        Returns the metadata now current and its location. A catalog that stores
        metadata files applies the updates to ``base`` (:func:`apply_updates`,
        stamped ``timestamp_ms``), records the base in the metadata log and swaps the
        pointer with :meth:`commit_table`, whose compare-and-swap on the base location
        is the guard the requirements describe. A REST catalog sends ``changes``
        instead. Raises as :meth:`commit_table`.
        """
        new = apply_updates(base, changes.updates, timestamp_ms)
        # Java's builder records the base file in the metadata log, so the committed
        # file and the returned metadata are the same.
        new = new.with_previous_metadata(base_metadata_location, base.last_updated_ms)
        return new, self.commit_table(identifier, base_metadata_location, new)

    @property
    def supports_staged_create(self) -> bool:
        """Whether :meth:`stage_create_table` can stage a table without creating it."""
        return False

    def stage_create_table(  # noqa: PLR0917 - same order as create_table
        self,
        identifier: IdentifierLike,
        schema: Schema,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int = 2,
    ) -> Table:
        """The first metadata of a table, chosen by the catalog but not created: a
        handle (``metadata_location`` empty) whose writes are committed together with
        the creation by :meth:`create_table_from_metadata`. ``ValidationError`` where
        the catalog cannot stage (see :attr:`supports_staged_create`)."""
        raise ValidationError(
            f"catalog {self.name!r} ({type(self).__name__}) cannot stage a table creation"
        )

    @property
    def supports_transactions(self) -> bool:
        """Whether :meth:`commit_transaction` can commit several tables atomically."""
        return False

    def commit_transaction(self, changes: Sequence[tuple[IdentifierLike, TableChanges]]) -> None:
        """Commit the changes of several tables as one: all of them apply, or none.

        Each table's requirements are checked on its current metadata by the catalog.
        Raises ``CommitFailed`` (a requirement failed; nothing applied),
        ``CommitStateUnknown`` (the outcome is unknown), ``NoSuchTable`` or
        ``ValidationError``. Catalogs that swap one pointer per table cannot do this
        atomically and raise ``ValidationError`` (see :attr:`supports_transactions`).
        """
        raise ValidationError(
            f"catalog {self.name!r} ({type(self).__name__}) cannot commit several tables "
            "atomically; use a REST catalog whose server offers "
            "POST /v1/{prefix}/transactions/commit, or commit the tables one by one"
        )

    # --- views ---------------------------------------------------------------

    @abstractmethod
    def create_view(self, identifier: IdentifierLike, metadata: ViewMetadata) -> View:
        """Create a view from its first metadata; ``ViewAlreadyExists`` if the name is taken."""

    @abstractmethod
    def load_view(self, identifier: IdentifierLike) -> View:
        """Load a view; ``NoSuchView`` if there is none of that name."""

    def view_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a view (not a table) of that name exists."""
        try:
            self.load_view(identifier)
        except NoSuchView:
            return False
        return True

    @abstractmethod
    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """The views in a namespace, sorted by name."""

    @abstractmethod
    def commit_view(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: ViewMetadata
    ) -> str:
        """Replace a view's metadata; the same contract as :meth:`commit_table`."""

    @abstractmethod
    def drop_view(self, identifier: IdentifierLike) -> None:
        """Remove a view from the catalog (its metadata files are kept)."""

    # --- shared commit steps ------------------------------------------------------

    @staticmethod
    def _check_table_metadata(metadata: object) -> TableMetadata:
        if not isinstance(metadata, TableMetadata):
            raise ValidationError(
                f"expected TableMetadata, got {type(metadata).__name__}; "
                "build it with icewright.spec.table_metadata"
            )
        return metadata

    @staticmethod
    def _check_view_metadata(metadata: object) -> ViewMetadata:
        if not isinstance(metadata, ViewMetadata):
            raise ValidationError(
                f"expected ViewMetadata, got {type(metadata).__name__}; "
                "build it with icewright.spec.view_metadata"
            )
        return metadata

    @staticmethod
    def _with_base_in_log(
        io: FileIO, base_location: str, new: TableMetadata, base: TableMetadata | None = None
    ) -> TableMetadata:
        """``new`` with the base file appended to its ``metadata-log`` (spec: "Table
        Metadata Fields"), unless the caller has already appended it.

        The entry's timestamp is the base file's ``last-updated-ms``, so the base
        is read unless given; it must describe the same table as ``new``.
        """
        if new.metadata_log and new.metadata_log[-1].metadata_file == base_location:
            return new
        if base is None:
            try:
                base = read_table_metadata(io, base_location)
            except NoSuchFile as e:
                raise ValidationError(
                    f"the base metadata file {base_location} does not exist ({e}); load the "
                    "table again and rebuild the change on its current metadata"
                ) from e
        if base.table_uuid is not None and base.table_uuid != new.table_uuid:
            raise ValidationError(
                f"the new metadata has table-uuid {new.table_uuid}, but the base metadata "
                f"{base_location} belongs to table {base.table_uuid}: a commit must describe "
                "the same table"
            )
        return new.with_previous_metadata(base_location, base.last_updated_ms)

    @staticmethod
    def _write_attempt(io: FileIO, location: str, metadata: TableMetadata | ViewMetadata) -> None:
        """Create the attempt's metadata file; any failure means nothing was committed."""
        try:
            write_new_metadata(io, location, metadata)
        except ValidationError:
            raise
        except FileAlreadyExists as e:
            raise CommitFailed(
                f"metadata file {location} already exists, written by another commit; "
                "reload the table and retry"
            ) from e
        except Exception as e:
            delete_quietly(io, location)
            raise CommitFailed(
                f"could not write metadata file {location} ({type(e).__name__}: {e}); "
                "the pointer was not changed, so retrying is safe"
            ) from e


def no_such(kind: str, message: str) -> NoSuchTable | NoSuchView:
    """The not-found error for ``kind`` (:data:`TABLE` or :data:`VIEW`)."""
    return NoSuchView(message) if kind == VIEW else NoSuchTable(message)


def already_exists(kind: str, message: str) -> TableAlreadyExists | ViewAlreadyExists:
    """The name-taken error for ``kind`` (:data:`TABLE` or :data:`VIEW`)."""
    return ViewAlreadyExists(message) if kind == VIEW else TableAlreadyExists(message)


def delete_quietly(io: FileIO, location: str) -> None:
    """Delete a file this commit attempt wrote; a failure is only logged."""
    try:
        io.delete(location)
    except Exception as e:  # the commit outcome is already decided
        logger.warning("could not delete uncommitted metadata file %s: %s", location, e)


def namespace_of(namespace: NamespaceLike, allow_root: bool = False) -> Namespace:
    """Parse a namespace argument; the root ``()`` only where ``allow_root``."""
    ns = parse_namespace(namespace)
    if not ns and not allow_root:
        raise ValidationError("a namespace needs at least one level, e.g. 'sales'")
    return ns


def table_handle(
    catalog: Catalog, ident: Identifier, metadata: TableMetadata, location: str
) -> Table:
    """A :class:`Table` with the FileIO for its location."""
    return Table(ident, metadata, location, catalog.file_io(metadata.location), catalog)


def view_handle(catalog: Catalog, ident: Identifier, metadata: ViewMetadata, location: str) -> View:
    """A :class:`View` with the FileIO for its location."""
    return View(ident, metadata, location, catalog.file_io(metadata.location), catalog)
