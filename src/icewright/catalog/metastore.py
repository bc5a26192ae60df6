"""Catalogs that keep one pointer per table or view: the SQL and Glue catalogs.

Spec: "Metastore Tables". The catalog stores, per name, the location of the
current metadata file; metadata files are named
``<metadata dir>/<NNNNN>-<uuid>.metadata.json`` (:mod:`metadata_files`). The
steps of creating and committing are the same for every such catalog and live
here; a subclass supplies how to read, register and swap its pointer.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from icewright.catalog.base import (
    TABLE,
    VIEW,
    Catalog,
    IdentifierLike,
    Table,
    View,
    table_handle,
    view_handle,
)
from icewright.catalog.identifier import Identifier
from icewright.catalog.metadata_files import (
    metadata_dir,
    missing_metadata,
    next_pointer_metadata_location,
    read_table_metadata,
    read_view_metadata,
    write_new_metadata,
)
from icewright.catalog.metadata_log import delete_removed_metadata_files
from icewright.errors import CommitFailed, NoSuchFile
from icewright.io import FileIO
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["MetastoreCatalog"]

Metadata = TableMetadata | ViewMetadata


class MetastoreCatalog(Catalog):
    """A :class:`Catalog` over a store of ``name -> metadata location`` pointers.

    ``kind`` is :data:`~icewright.catalog.base.TABLE` or
    :data:`~icewright.catalog.base.VIEW` throughout.
    """

    # --- what a subclass supplies --------------------------------------------------

    @abstractmethod
    def _read_pointer(self, ident: Identifier, kind: str) -> tuple[str, Any]:
        """The current metadata location, and whatever :meth:`_swap_pointer` needs
        to make the swap conditional (e.g. Glue's ``VersionId``); raises
        ``NoSuchTable``/``NoSuchView``."""

    @abstractmethod
    def _check_free(self, ident: Identifier, kind: str) -> None:
        """Raise unless the namespace exists and no table or view has the name."""

    @abstractmethod
    def _register_pointer(
        self, ident: Identifier, kind: str, metadata: Metadata, location: str, written: bool
    ) -> None:
        """Record a new pointer; ``written`` says the file is this call's to delete
        if the name turns out to be taken."""

    @abstractmethod
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
        """Move the pointer from ``base`` to ``new`` if it still names ``base``;
        the outcomes of :meth:`Catalog.commit_table`."""

    def _check_location_length(self, location: str) -> None:
        """Refuse a location the store cannot hold (the SQL columns are 1000 long)."""

    # --- the shared steps ---------------------------------------------------------------

    def _create_new(self, ident: Identifier, kind: str, metadata: Metadata) -> str:
        self._check_free(ident, kind)
        location = next_pointer_metadata_location(
            metadata_dir(metadata.location, metadata.properties), metadata.properties, None
        )
        self._check_location_length(location)
        write_new_metadata(self.file_io(location), location, metadata)
        self._register_pointer(ident, kind, metadata, location, written=True)
        return location

    def table_metadata_location(self, identifier: IdentifierLike) -> str:
        """One pointer read; the metadata file is not opened."""
        location, _ = self._read_pointer(Identifier.parse(identifier), TABLE)
        return location

    def _load(self, ident: Identifier, kind: str) -> tuple[str, Metadata]:
        location, _ = self._read_pointer(ident, kind)
        read = read_view_metadata if kind == VIEW else read_table_metadata
        try:
            return location, read(self.file_io(location), location)
        except NoSuchFile as e:
            raise missing_metadata(location, f"{kind} {str(ident)!r}", e) from e

    def _commit(self, ident: Identifier, kind: str, base: str, new_metadata: Metadata) -> str:
        current, token = self._read_pointer(ident, kind)
        if current != base:
            # Checked before writing anything, so a stale base leaves no file behind;
            # the conditional swap below is what decides a race.
            raise CommitFailed(
                f"{kind} {str(ident)!r} was changed by another writer: its metadata is "
                f"{current}, not the base {base}; reload it and retry"
            )
        io = self.file_io(new_metadata.location)
        if isinstance(new_metadata, TableMetadata):
            new_metadata = self._with_base_in_log(io, base, new_metadata)
        location = next_pointer_metadata_location(
            metadata_dir(new_metadata.location, new_metadata.properties),
            new_metadata.properties,
            base,
        )
        self._check_location_length(location)
        self._write_attempt(io, location, new_metadata)
        self._swap_pointer(
            ident, kind, token=token, base=base, new=location, metadata=new_metadata, io=io
        )
        if isinstance(new_metadata, TableMetadata):
            # The swap returned: the commit is known to have landed (an unknown outcome or a
            # refusal raised above), so the files the log dropped may go.
            delete_removed_metadata_files(io, base, new_metadata, location)
        return location

    # --- tables ------------------------------------------------------------------------

    def create_table_from_metadata(
        self, identifier: IdentifierLike, metadata: TableMetadata
    ) -> Table:
        """Write ``<metadata dir>/00000-<uuid>.metadata.json`` and register it."""
        ident = Identifier.parse(identifier)
        metadata = self._check_table_metadata(metadata)
        return table_handle(self, ident, metadata, self._create_new(ident, TABLE, metadata))

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Register an existing (readable) metadata file under a new name."""
        ident = Identifier.parse(identifier)
        metadata = read_table_metadata(self.file_io(metadata_location), metadata_location)
        self._check_free(ident, TABLE)
        self._check_location_length(metadata_location)
        self._register_pointer(ident, TABLE, metadata, metadata_location, written=False)
        return table_handle(self, ident, metadata, metadata_location)

    def load_table(self, identifier: IdentifierLike) -> Table:
        """Read the pointer and the metadata file it names."""
        ident = Identifier.parse(identifier)
        location, metadata = self._load(ident, TABLE)
        return table_handle(self, ident, self._check_table_metadata(metadata), location)

    def commit_table(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: TableMetadata
    ) -> str:
        """Write ``<NNNNN+1>-<uuid>.metadata.json`` and swap the pointer from the base to it."""
        ident = Identifier.parse(identifier)
        metadata = self._check_table_metadata(new_metadata)
        return self._commit(ident, TABLE, base_metadata_location, metadata)

    # --- views -------------------------------------------------------------------------

    def create_view(self, identifier: IdentifierLike, metadata: ViewMetadata) -> View:
        """Write the view's ``00000-<uuid>.metadata.json`` and register it."""
        ident = Identifier.parse(identifier)
        metadata = self._check_view_metadata(metadata)
        return view_handle(self, ident, metadata, self._create_new(ident, VIEW, metadata))

    def load_view(self, identifier: IdentifierLike) -> View:
        """Read a view's pointer and its metadata file."""
        ident = Identifier.parse(identifier)
        location, metadata = self._load(ident, VIEW)
        return view_handle(self, ident, self._check_view_metadata(metadata), location)

    def commit_view(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: ViewMetadata
    ) -> str:
        """Write the view's next metadata file and swap its pointer (as commit_table)."""
        ident = Identifier.parse(identifier)
        metadata = self._check_view_metadata(new_metadata)
        return self._commit(ident, VIEW, base_metadata_location, metadata)
