"""File-system and object-store tables: Iceberg Java's Hadoop catalog layout.

Spec: "File System Tables". A table (or view) named ``a.b.t`` lives in
``<warehouse>/a/b/t``; its versions are ``metadata/v<N>.metadata.json`` and
the commit is creating ``v<N+1>`` with an atomic create-if-absent
(:meth:`icewright.io.FileIO.create`: a hard link locally, ``If-None-Match: *``
on S3). Whoever creates the file first has committed; the other writer gets
``CommitFailed``. ``metadata/version-hint.text`` holds the newest ``N`` as a
hint only: readers start there and probe forward (``v<N+1>``, ``v<N+2>`` ...
until one is absent), and list the directory when the hint is missing or
wrong, so a failed hint write never loses a commit.

Choices where the layout leaves room:

* Namespaces are directories (prefixes on S3). Namespace properties are kept
  in ``<namespace dir>/.namespace.json``, which also marks an empty
  namespace on an object store; directories that Iceberg Java created without
  it are namespaces with no properties. Updating properties is
  read-modify-write: concurrent updaters of one namespace may lose updates.
* A view uses the same layout; its JSON (``view-uuid``) says it is a view.
* A table's or view's location is its directory. ``create_table`` refuses
  another location, and so does ``create_table_from_metadata``/``create_view``
  for metadata whose location is elsewhere.
* ``register_table`` copies the given metadata file's JSON into the table's
  directory as ``v1.metadata.json``.
* ``rename_table`` is refused (the name is the directory), as Iceberg Java's
  Hadoop catalog does.
* ``drop_table`` removes the table's directory, as Iceberg Java's Hadoop
  catalog does (the directory *is* the catalog entry); ``purge=True`` also
  deletes files the metadata references outside that directory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from icewright.catalog.base import (
    TABLE,
    VIEW,
    Catalog,
    IdentifierLike,
    NamespaceLike,
    PropertiesUpdate,
    Table,
    View,
    already_exists,
    check_properties,
    namespace_of,
    no_such,
    plan_properties_update,
    table_handle,
    view_handle,
)
from icewright.catalog.identifier import Identifier, Namespace, validate_level
from icewright.catalog.metadata_files import (
    basename,
    decode_metadata_bytes,
    encode_metadata,
    hadoop_metadata_candidates,
    hadoop_metadata_location,
    hadoop_metadata_version,
    is_view_document,
    read_metadata_document,
    table_metadata_from_document,
    view_metadata_from_document,
)
from icewright.catalog.metadata_log import delete_removed_metadata_files
from icewright.catalog.purge import referenced_files
from icewright.errors import (
    CommitFailed,
    CommitStateUnknown,
    FileAlreadyExists,
    InvalidMetadata,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchFile,
    ValidationError,
)
from icewright.io import S3_SCHEMES
from icewright.io.base import uri_scheme
from icewright.io.local import local_path
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["NAMESPACE_FILE", "VERSION_HINT", "FileSystemCatalog"]

logger = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"
"""Iceberg Java's hint file: the newest version number, as text."""
NAMESPACE_FILE = ".namespace.json"
"""Namespace properties (and the existence marker on object stores)."""


class FileSystemCatalog(Catalog):
    """Tables and views in directories under a warehouse (local path, ``file:`` or ``s3://``).

    Usage::

        catalog = FileSystemCatalog("lake", "s3://bucket/warehouse", **{"s3.region": "eu-west-1"})
    """

    def __init__(self, name: str, warehouse: str, **properties: str) -> None:
        if not isinstance(warehouse, str) or not warehouse:
            raise ValidationError(
                "FileSystemCatalog needs a warehouse (a directory path or an s3:// URI)"
            )
        super().__init__(name, warehouse, properties)
        self._io = self.file_io(self.warehouse)
        self._local = uri_scheme(self.warehouse) not in S3_SCHEMES

    # --- paths and listing ------------------------------------------------------

    def _path(self, *levels: str) -> str:
        return "/".join((self.warehouse, *levels))

    def _dir(self, ident: Identifier) -> str:
        return self._path(*ident.levels)

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """``<warehouse>/<namespace levels>/<name>``: the only location a table can have."""
        return self._dir(Identifier.parse(identifier))

    def _child_dirs(self, prefix: str) -> set[str]:
        """Names of the directories directly under ``prefix``."""
        if self._local:
            try:
                with os.scandir(local_path(prefix)) as entries:
                    return {e.name for e in entries if e.is_dir()}
            except (FileNotFoundError, NotADirectoryError):
                return set()
        base = prefix.rstrip("/") + "/"
        names: set[str] = set()
        for info in self._io.list_prefix(prefix):
            head, sep, _ = info.path[len(base) :].partition("/")
            if sep:
                names.add(head)
        return names

    def _has_anything(self, prefix: str) -> bool:
        if self._local:
            return os.path.isdir(local_path(prefix))
        return next(iter(self._io.list_prefix(prefix)), None) is not None

    def _versions(self, directory: str) -> dict[int, str]:
        """The ``v<N>`` files in ``<directory>/metadata``, by ``N``."""
        found: dict[int, str] = {}
        for info in self._io.list_prefix(directory + "/metadata"):
            version = hadoop_metadata_version(info.path)
            if version is not None and info.path.rsplit("/", 2)[-2] == "metadata":
                found[version] = info.path
        return found

    def _find_version(self, directory: str, version: int) -> str | None:
        return self._io.first_existing(hadoop_metadata_candidates(directory + "/metadata", version))

    def _read_hint(self, directory: str) -> int | None:
        path = f"{directory}/metadata/{VERSION_HINT}"
        try:
            return int(self._io.read(path).decode("utf-8").strip())
        except NoSuchFile:
            return None
        except Exception as e:  # an unreadable hint is no hint: fall back to listing
            logger.warning("ignoring version hint %s: %s", path, e)
            return None

    def _current(self, directory: str) -> tuple[int, str] | None:
        """The newest version: from the hint probing forward, else from a listing."""
        version = self._read_hint(directory)
        path = None if version is None else self._find_version(directory, version)
        if version is None or path is None:
            listed = self._versions(directory)
            if not listed:
                return None
            version = max(listed)
            path = listed[version]
        while (following := self._find_version(directory, version + 1)) is not None:
            version, path = version + 1, following
        return version, path

    def _is_object_dir(self, directory: str) -> bool:
        return bool(self._versions(directory))

    def _load_document(self, ident: Identifier) -> tuple[int, str, dict[str, Any]] | None:
        """The current version, its path and JSON; None if no table or view is there."""
        directory = self._dir(ident)
        for _ in range(3):
            current = self._current(directory)
            if current is None:
                return None
            version, path = current
            try:
                return version, path, read_metadata_document(self._io, path)
            except NoSuchFile:
                continue  # an old version was cleaned up under us; look again
        return None

    def _write_hint(self, directory: str, version: int) -> None:
        try:
            self._io.write(f"{directory}/metadata/{VERSION_HINT}", str(version).encode())
        except Exception as e:  # the hint is only a hint: readers probe forward
            logger.warning("could not update %s/metadata/%s: %s", directory, VERSION_HINT, e)

    # --- namespaces ---------------------------------------------------------------

    def _marker(self, ns: Namespace) -> str:
        return self._path(*ns, NAMESPACE_FILE)

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """A namespace is a directory (prefix) that is not a table or view."""
        ns = namespace_of(namespace)
        directory = self._path(*ns)
        if self._io.exists(self._marker(ns)):
            return True
        return self._has_anything(directory) and not self._is_object_dir(directory)

    def create_namespace(
        self, namespace: NamespaceLike, properties: Mapping[str, str] | None = None
    ) -> None:
        """Create the directory with its ``.namespace.json``."""
        ns = namespace_of(namespace)
        props = check_properties(properties, "namespace property")
        directory = self._path(*ns)
        if self._is_object_dir(directory):
            raise NamespaceAlreadyExists(
                f"{'.'.join(ns)!r} is a table or view; a namespace cannot have its name"
            )
        if self.namespace_exists(ns):
            raise NamespaceAlreadyExists(f"namespace {'.'.join(ns)!r} already exists")
        try:
            self._io.create(self._marker(ns), _namespace_json(props))
        except FileAlreadyExists as e:
            raise NamespaceAlreadyExists(f"namespace {'.'.join(ns)!r} already exists") from e

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[Namespace]:
        """Child directories of ``parent`` that are neither tables nor views."""
        ns = namespace_of(parent, allow_root=True)
        if ns:
            self._require_namespace(ns)
        out: list[Namespace] = []
        for name in sorted(self._child_dirs(self._path(*ns))):
            if not _valid_level(name):
                continue
            if not self._is_object_dir(self._path(*ns, name)):
                out.append((*ns, name))
        return out

    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """The properties stored in ``.namespace.json`` (empty without one)."""
        ns = namespace_of(namespace)
        self._require_namespace(ns)
        return self._read_properties(ns)

    def _read_properties(self, ns: Namespace) -> dict[str, str]:
        path = self._marker(ns)
        try:
            raw = self._io.read(path)
        except NoSuchFile:
            return {}
        try:
            document = json.loads(raw)
            props = document["properties"]
            return check_properties(props, "namespace property")
        except (ValueError, KeyError, TypeError) as e:
            raise InvalidMetadata(
                f"namespace file {path} is corrupt ({e!r}); fix or delete it"
            ) from None

    def update_namespace_properties(
        self,
        namespace: NamespaceLike,
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdate:
        """Rewrite ``.namespace.json`` (read-modify-write; last writer wins)."""
        ns = namespace_of(namespace)
        self._require_namespace(ns)
        result, summary = plan_properties_update(self._read_properties(ns), removals, updates)
        self._io.write(self._marker(ns), _namespace_json(result))
        return summary

    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Delete an empty namespace's marker and directory."""
        ns = namespace_of(namespace)
        self._require_namespace(ns)
        directory = self._path(*ns)
        marker = self._marker(ns)
        children = self._child_dirs(directory)
        files = [i.path for i in self._io.list_prefix(directory) if i.path != marker]
        if children or files:
            shown = ", ".join(sorted(children)[:5]) or ", ".join(files[:3])
            raise NamespaceNotEmpty(
                f"namespace {'.'.join(ns)!r} is not empty (it holds {shown}); "
                "drop its tables, views and child namespaces first"
            )
        self._io.delete(marker)
        if self._local:
            try:
                os.rmdir(local_path(directory))
            except OSError as e:
                logger.warning("could not remove directory %s: %s", directory, e)

    # --- tables ------------------------------------------------------------------

    def _table_location(self, ident: Identifier, location: str | None) -> str:
        expected = self._dir(ident)
        if location is not None and not _same_location(location, expected):
            raise ValidationError(
                f"a file-system catalog keeps table {str(ident)!r} at {expected}; "
                f"it cannot live at {location}: omit location (or use a SQL or Glue catalog)"
            )
        return expected

    def _check_location(self, ident: Identifier, location: str, kind: str) -> None:
        expected = self._dir(ident)
        if not _same_location(location, expected):
            raise ValidationError(
                f"the {kind} metadata says location {location}, but a file-system catalog "
                f"keeps {kind} {str(ident)!r} at {expected}; build the metadata with "
                "catalog.default_table_location(identifier)"
            )

    def _create_first(
        self,
        ident: Identifier,
        kind: str,
        props: Mapping[str, str],
        content: Callable[[str], bytes],
    ) -> str:
        """Create ``v1`` (with ``content(location)``) for a new table or view."""
        self._require_namespace(ident.namespace)
        directory = self._dir(ident)
        if self._is_object_dir(directory):
            raise already_exists(kind, f"a table or view named {str(ident)!r} already exists")
        if self.namespace_exists(ident.levels):
            raise already_exists(kind, f"{str(ident)!r} is a namespace; a {kind} cannot have it")
        location = hadoop_metadata_location(directory + "/metadata", 1, props)
        try:
            self._io.create(location, content(location))
        except FileAlreadyExists as e:
            raise already_exists(kind, f"a table or view named {str(ident)!r} exists") from e
        self._write_hint(directory, 1)
        return location

    def create_table_from_metadata(
        self, identifier: IdentifierLike, metadata: TableMetadata
    ) -> Table:
        """Create ``<warehouse>/<ns>/<table>/metadata/v1.metadata.json``."""
        ident = Identifier.parse(identifier)
        metadata = self._check_table_metadata(metadata)
        return table_handle(self, ident, metadata, self._create_from(ident, TABLE, metadata))

    def _create_from(
        self, ident: Identifier, kind: str, metadata: TableMetadata | ViewMetadata
    ) -> str:
        self._check_location(ident, metadata.location, kind)
        return self._create_first(
            ident, kind, metadata.properties, lambda location: encode_metadata(metadata, location)
        )

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Copy the metadata file's JSON into the table directory as ``v1.metadata.json``."""
        ident = Identifier.parse(identifier)
        io = self.file_io(metadata_location)
        data = decode_metadata_bytes(io.read(metadata_location), metadata_location)
        try:
            document = json.loads(data)
        except ValueError as e:
            raise InvalidMetadata(f"metadata file {metadata_location} is not JSON: {e}") from None
        if not isinstance(document, dict):
            raise InvalidMetadata(f"metadata file {metadata_location} is not a JSON object")
        metadata = table_metadata_from_document(document, metadata_location)
        location = self._create_first(ident, TABLE, {}, lambda _location: data)
        return table_handle(self, ident, metadata, location)

    def _load(self, ident: Identifier, kind: str) -> tuple[int, str, dict[str, Any]]:
        loaded = self._load_document(ident)
        if loaded is None or is_view_document(loaded[2]) != (kind == VIEW):
            why = "" if loaded is None else f" (it is a {VIEW if kind == TABLE else TABLE})"
            message = f"{kind} {str(ident)!r} does not exist in {self.warehouse}{why}"
            raise no_such(kind, message)
        return loaded

    def load_table(self, identifier: IdentifierLike) -> Table:
        """Find the newest ``v<N>`` (hint, probe, or listing) and read it."""
        ident = Identifier.parse(identifier)
        _, path, document = self._load(ident, TABLE)
        return table_handle(self, ident, table_metadata_from_document(document, path), path)

    def table_metadata_location(self, identifier: IdentifierLike) -> str:
        """The newest ``v<N>`` from the version hint and a probe; nothing is read unless
        there is no table there."""
        ident = Identifier.parse(identifier)
        current = self._current(self._dir(ident))
        if current is None:
            return self.load_table(ident).metadata_location  # raises the precise NoSuchTable
        return current[1]

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Child directories holding a table (their newest metadata is read)."""
        return self._list(namespace, TABLE)

    def _list(self, namespace: NamespaceLike, kind: str) -> list[Identifier]:
        ns = namespace_of(namespace)
        self._require_namespace(ns)
        out: list[Identifier] = []
        for name in sorted(self._child_dirs(self._path(*ns))):
            if not _valid_level(name):
                continue
            ident = Identifier(ns, name)
            try:
                loaded = self._load_document(ident)
            except InvalidMetadata:
                loaded = None
                logger.warning("skipping %s: its metadata is unreadable", ident)
            if loaded is not None and is_view_document(loaded[2]) == (kind == VIEW):
                out.append(ident)
        return out

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Delete the table's directory; with ``purge`` also files it references elsewhere."""
        ident = Identifier.parse(identifier)
        _, path, document = self._load(ident, TABLE)
        extra: list[str] = []
        if purge:
            try:
                metadata = table_metadata_from_document(document, path)
                extra = referenced_files(self.file_io(metadata.location), metadata, path)
            except InvalidMetadata as e:
                logger.warning("purge of %s: cannot read %s: %s", ident, path, e)
        self._delete_directory(self._dir(ident), extra)

    def _delete_directory(self, directory: str, extra: Iterable[str] = ()) -> None:
        # Version files last, so an interrupted drop leaves a loadable table or nothing.
        files = [i.path for i in self._io.list_prefix(directory)]
        versions = [p for p in files if hadoop_metadata_version(p) is not None]
        others = [p for p in files if hadoop_metadata_version(p) is None]
        inside = directory.rstrip("/") + "/"
        outside = [p for p in extra if not _same_prefix(p, inside)]
        for batch in (outside, others, sorted(versions, key=_version_key, reverse=True)):
            for failed, error in self.file_io(directory).delete_many(batch):
                logger.warning("could not delete %s: %s", failed, error)
        if self._local:
            _remove_empty_dirs(local_path(directory))

    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        """Refused: a file-system table's name is its directory."""
        raise ValidationError(
            f"a file-system catalog cannot rename {Identifier.parse(source)}: a table's name is "
            "its directory (as in Iceberg Java's Hadoop catalog); create a new table and copy, "
            "or use a SQL or Glue catalog"
        )

    def _commit(
        self,
        ident: Identifier,
        kind: str,
        base: str,
        make: Callable[[dict[str, Any], str], TableMetadata | ViewMetadata],
        props: Mapping[str, str],
    ) -> str:
        """Create ``v<N+1>`` if ``base`` is the current ``v<N>``; see the module docstring."""
        base_version = hadoop_metadata_version(base) if isinstance(base, str) else None
        if base_version is None:
            raise ValidationError(
                f"{base!r} is not a metadata file of a file-system {kind} "
                "(expected .../metadata/v<N>.metadata.json)"
            )
        directory = self._dir(ident)
        if not _same_location(base.rsplit("/", 1)[0], directory + "/metadata"):
            raise ValidationError(
                f"{base} is not in the metadata directory of {kind} {str(ident)!r} "
                f"({directory}/metadata)"
            )
        version, current, document = self._load(ident, kind)
        if version != base_version:
            raise CommitFailed(
                f"{kind} {str(ident)!r} was changed by another writer: its metadata is "
                f"{basename(current)}, not the base {basename(base)}; reload it and retry"
            )
        metadata = make(document, current)
        new_version = base_version + 1
        location = hadoop_metadata_location(directory + "/metadata", new_version, props)
        data = encode_metadata(metadata, location)
        if self._find_version(directory, new_version) is not None:
            raise CommitFailed(
                f"{kind} {str(ident)!r} already has version {new_version}, written by another "
                "writer; reload it and retry"
            )
        try:
            self._io.create(location, data)
        except FileAlreadyExists as e:
            # Someone else created v<N+1> first: their commit, not ours; delete nothing.
            raise CommitFailed(
                f"{kind} {str(ident)!r} was changed by another writer (v{new_version} exists); "
                "reload it and retry"
            ) from e
        except Exception as e:
            self._settle_unknown_create(ident, kind, location, data, e)
        self._write_hint(directory, new_version)
        return location

    def _settle_unknown_create(
        self, ident: Identifier, kind: str, location: str, data: bytes, error: Exception
    ) -> None:
        """After a create failed oddly: return if our file landed, else raise."""
        try:
            landed = self._io.read(location)
        except NoSuchFile:
            landed = None
        except Exception as again:
            raise CommitStateUnknown(
                f"creating {location} failed ({error}) and it cannot be read back ({again}); "
                f"the commit of {kind} {str(ident)!r} may or may not have happened"
            ) from error
        if landed == data:
            return
        if landed is not None:
            raise CommitFailed(
                f"{kind} {str(ident)!r} was changed by another writer ({basename(location)} "
                "exists with other content); reload it and retry"
            ) from error
        if self._local:
            raise CommitFailed(
                f"could not create {location} ({type(error).__name__}: {error}); nothing was "
                "committed, retrying is safe"
            ) from error
        raise CommitStateUnknown(
            f"creating {location} failed ({error}); the write may still land, so the commit "
            f"of {kind} {str(ident)!r} may or may not have happened"
        ) from error

    def commit_table(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: TableMetadata
    ) -> str:
        """Create ``v<N+1>.metadata.json`` if the base is the current ``v<N>``."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_table_metadata(new_metadata)
        self._check_location(ident, new_metadata.location, TABLE)
        io = self.file_io(new_metadata.location)
        read: list[TableMetadata] = []

        def make(document: dict[str, Any], path: str) -> TableMetadata:
            # The base is the current version, already read: no second read.
            base = table_metadata_from_document(document, path)
            committed = self._with_base_in_log(io, base_metadata_location, new_metadata, base)
            read[:] = [base, committed]
            return committed

        location = self._commit(ident, TABLE, base_metadata_location, make, new_metadata.properties)
        # v<N+1> is ours (a lost race or an unknown outcome raised): the commit landed.
        base, committed = read
        delete_removed_metadata_files(io, base_metadata_location, committed, location, base)
        return location

    # --- views -------------------------------------------------------------------

    def create_view(self, identifier: IdentifierLike, metadata: ViewMetadata) -> View:
        """Create ``<warehouse>/<ns>/<view>/metadata/v1.metadata.json``."""
        ident = Identifier.parse(identifier)
        metadata = self._check_view_metadata(metadata)
        return view_handle(self, ident, metadata, self._create_from(ident, VIEW, metadata))

    def load_view(self, identifier: IdentifierLike) -> View:
        """Find the newest ``v<N>`` of a view and read it."""
        ident = Identifier.parse(identifier)
        _, path, document = self._load(ident, VIEW)
        return view_handle(self, ident, view_metadata_from_document(document, path), path)

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """Child directories holding a view."""
        return self._list(namespace, VIEW)

    def commit_view(
        self, identifier: IdentifierLike, base_metadata_location: str, new_metadata: ViewMetadata
    ) -> str:
        """Create the view's ``v<N+1>.metadata.json`` if the base is the current ``v<N>``."""
        ident = Identifier.parse(identifier)
        new_metadata = self._check_view_metadata(new_metadata)
        self._check_location(ident, new_metadata.location, VIEW)
        return self._commit(
            ident,
            VIEW,
            base_metadata_location,
            lambda _document, _path: new_metadata,
            new_metadata.properties,
        )

    def drop_view(self, identifier: IdentifierLike) -> None:
        """Delete the view's directory."""
        ident = Identifier.parse(identifier)
        self._load(ident, VIEW)
        self._delete_directory(self._dir(ident))


def _namespace_json(properties: Mapping[str, str]) -> bytes:
    return json.dumps({"properties": dict(properties)}, indent=2, sort_keys=True).encode()


def _valid_level(name: str) -> bool:
    try:
        validate_level(name)
    except ValidationError:
        return False
    return True


def _normalize(location: str) -> str:
    location = location.rstrip("/")
    scheme = uri_scheme(location)
    if scheme is None or scheme == "file":
        return local_path(location)
    if scheme in S3_SCHEMES:
        return "s3" + location[len(scheme) :]
    return location


def _same_location(a: str, b: str) -> bool:
    """Whether two spellings name the same place (``file:/x``, ``file:///x``, ``/x``)."""
    try:
        return _normalize(a) == _normalize(b)
    except ValidationError:
        return False


def _same_prefix(path: str, prefix: str) -> bool:
    try:
        return _normalize(path).startswith(_normalize(prefix) + "/")
    except ValidationError:
        return False


def _version_key(path: str) -> int:
    return hadoop_metadata_version(path) or 0


def _remove_empty_dirs(root: str) -> None:
    # Deepest first, so a parent is empty by the time it is tried.
    for dirpath, _, _ in sorted(os.walk(root, topdown=False), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):  # not empty, or already gone
            os.rmdir(dirpath)
