"""The AWS Glue Data Catalog as an Iceberg catalog.

Glue databases are namespaces (one level); a table is a Glue table whose
parameters say ``table_type=ICEBERG`` and ``metadata_location=<file>``, with
``previous_metadata_location`` after each commit, as Iceberg Java's
GlueCatalog sets them. The swap is ``UpdateTable`` with the ``VersionId``
read together with the base pointer: Glue refuses the update with
``ConcurrentModificationException`` if anyone changed the table since.

Views have no standard Glue form (Iceberg Java's GlueCatalog does not support
views). icewright stores them as Iceberg Java's Hive catalog stores Iceberg
views in a metastore: ``TableType=VIRTUAL_VIEW`` with ``table_type=ICEBERG-VIEW``
and the same ``metadata_location`` parameters.

Names must be lower case letters, digits and ``_`` (Glue lower-cases names;
Iceberg Java validates them the same way).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

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
from icewright.catalog.glue_columns import glue_columns
from icewright.catalog.identifier import Identifier, Namespace
from icewright.catalog.metadata_files import read_table_metadata
from icewright.catalog.metastore import Metadata, MetastoreCatalog
from icewright.catalog.purge import purge_table_files
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
    TableAlreadyExists,
    ValidationError,
)
from icewright.io import FileIO
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.view_metadata import ViewMetadata

__all__ = ["GlueCatalog"]

logger = logging.getLogger(__name__)

TABLE_TYPE_PARAM = "table_type"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
ICEBERG = "ICEBERG"
ICEBERG_VIEW = "ICEBERG-VIEW"

_NAME = re.compile(r"[a-z0-9_]+")
_MAX_DATABASE_NAME = 252
TABLE_INPUT_KEYS = (
    "Description",
    "Owner",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "TableType",
    "Parameters",
    "ViewOriginalText",
    "ViewExpandedText",
)
# Errors after which Glue may or may not have applied the request.
_UNKNOWN_CODES = frozenset(
    {"InternalServiceException", "ServiceUnavailableException", "ThrottlingException"}
)


def _import_boto3() -> Any:
    try:
        import boto3
    except ImportError as e:
        raise MissingDependency(
            "the Glue catalog needs boto3; install icewright[aws] (pip install 'icewright[aws]')"
        ) from e
    return boto3


def _code(error: BaseException) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _status(error: BaseException) -> int:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return 0


def _retried(error: BaseException) -> bool:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return int(response.get("ResponseMetadata", {}).get("RetryAttempts", 0) or 0) > 0
    return False


def _definite_refusal(error: BaseException) -> bool:
    """Whether Glue answered with a 4xx that means the request was not applied."""
    status = _status(error)
    return 400 <= status < 500 and _code(error) not in _UNKNOWN_CODES


def _kind(glue_table: Mapping[str, Any]) -> str | None:
    kind = str(glue_table.get("Parameters", {}).get(TABLE_TYPE_PARAM, "")).upper()
    return {ICEBERG: TABLE, ICEBERG_VIEW: VIEW}.get(kind)


class GlueCatalog(MetastoreCatalog):
    """Iceberg tables and views in the AWS Glue Data Catalog.

    Properties: ``glue.region``, ``glue.endpoint``, ``glue.access-key-id``,
    ``glue.secret-access-key``, ``glue.session-token``, ``glue.profile-name``
    (each falling back to the ``client.*`` key), ``glue.id`` (the catalog id,
    default: the account's), ``glue.skip-archive`` (default ``true``), plus
    FileIO properties (``s3.*``). ``client`` injects a ready boto3 Glue client.

    Usage::

        catalog = GlueCatalog("glue", "s3://bucket/warehouse", **{"glue.region": "eu-west-1"})
    """

    def __init__(self, name: str, warehouse: str = "", client: Any = None, **properties: str):
        super().__init__(name, warehouse, properties)
        self._client = client if client is not None else self._make_client()
        self._catalog_id = self.properties.get("glue.id")
        self._skip_archive = self.properties.get("glue.skip-archive", "true").lower() == "true"

    def _prop(self, key: str) -> str | None:
        return self.properties.get(f"glue.{key}") or self.properties.get(f"client.{key}")

    def _make_client(self) -> Any:
        boto3 = _import_boto3()
        session = boto3.Session(profile_name=self._prop("profile-name"))
        return session.client(
            "glue",
            region_name=self._prop("region"),
            endpoint_url=self._prop("endpoint"),
            aws_access_key_id=self._prop("access-key-id"),
            aws_secret_access_key=self._prop("secret-access-key"),
            aws_session_token=self._prop("session-token"),
        )

    @property
    def client(self) -> Any:
        """The boto3 Glue client."""
        return self._client

    def _call(self, method: str, **kwargs: Any) -> Any:
        if self._catalog_id:
            kwargs["CatalogId"] = self._catalog_id
        return getattr(self._client, method)(**kwargs)

    # --- names ---------------------------------------------------------------------

    @staticmethod
    def _database(namespace: NamespaceLike) -> str:
        ns = namespace_of(namespace)
        if len(ns) != 1:
            raise ValidationError(
                f"Glue has no nested namespaces: {'.'.join(ns)!r} has {len(ns)} levels; "
                "use one level (a Glue database), e.g. 'sales'"
            )
        return _check_glue_name(ns[0], "database", _MAX_DATABASE_NAME)

    def _split(self, identifier: IdentifierLike) -> tuple[Identifier, str, str]:
        ident = Identifier.parse(identifier)
        database = self._database(ident.namespace)
        return ident, database, _check_glue_name(ident.name, "table", 255)

    # --- Glue reads --------------------------------------------------------------------

    def _get_database(self, database: str) -> dict[str, Any] | None:
        try:
            return dict(self._call("get_database", Name=database)["Database"])
        except Exception as e:
            if _code(e) == "EntityNotFoundException":
                return None
            raise

    def _require_database(self, database: str) -> dict[str, Any]:
        found = self._get_database(database)
        if found is None:
            raise NoSuchNamespace(
                f"Glue database {database!r} does not exist; create it with create_namespace"
            )
        return found

    def _get_table(self, database: str, name: str) -> dict[str, Any] | None:
        try:
            return dict(self._call("get_table", DatabaseName=database, Name=name)["Table"])
        except Exception as e:
            if _code(e) == "EntityNotFoundException":
                return None
            raise

    def _glue_tables(self, database: str) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"DatabaseName": database}
            if token:
                kwargs["NextToken"] = token
            try:
                page = self._call("get_tables", **kwargs)
            except Exception as e:
                if _code(e) == "EntityNotFoundException":
                    raise NoSuchNamespace(f"Glue database {database!r} does not exist") from e
                raise
            yield from page.get("TableList", ())
            token = page.get("NextToken")
            if not token:
                return

    def _require_object(self, ident: Identifier, kind: str) -> dict[str, Any]:
        _, database, name = self._split(ident)
        found = self._get_table(database, name)
        if found is None or _kind(found) != kind:
            message = f"{kind} {str(ident)!r} does not exist in Glue"
            if found is not None:
                other = _kind(found)
                message += f" (it is {'a ' + other if other else 'not an Iceberg table or view'})"
            raise no_such(kind, message)
        if not found.get("Parameters", {}).get(METADATA_LOCATION):
            raise NoSuchTable(f"Glue table {str(ident)!r} has no {METADATA_LOCATION} parameter")
        return found

    # --- namespaces ------------------------------------------------------------------

    def create_namespace(
        self, namespace: NamespaceLike, properties: Mapping[str, str] | None = None
    ) -> None:
        """Create a Glue database (``location`` -> LocationUri, ``comment`` -> Description)."""
        database = self._database(namespace)
        props = check_properties(properties, "namespace property")
        try:
            self._call("create_database", DatabaseInput=_database_input(database, props))
        except Exception as e:
            if _code(e) == "AlreadyExistsException":
                raise NamespaceAlreadyExists(f"Glue database {database!r} already exists") from e
            raise

    def list_namespaces(self, parent: NamespaceLike = ()) -> list[Namespace]:
        """All Glue databases (there are no nested ones)."""
        ns = namespace_of(parent, allow_root=True)
        if ns:
            self._require_database(self._database(ns))
            return []
        names: list[str] = []
        token: str | None = None
        while True:
            page = self._call("get_databases", **({"NextToken": token} if token else {}))
            names.extend(d["Name"] for d in page.get("DatabaseList", ()))
            token = page.get("NextToken")
            if not token:
                break
        return sorted((n,) for n in names)

    def namespace_exists(self, namespace: NamespaceLike) -> bool:
        """Whether the Glue database exists (nested names never do)."""
        ns = namespace_of(namespace)
        if len(ns) != 1:
            return False
        return self._get_database(self._database(ns)) is not None

    def load_namespace_properties(self, namespace: NamespaceLike) -> dict[str, str]:
        """Database parameters, plus ``location`` and ``comment``."""
        found = self._require_database(self._database(namespace))
        props = {str(k): str(v) for k, v in found.get("Parameters", {}).items()}
        if found.get("LocationUri"):
            props["location"] = found["LocationUri"]
        if found.get("Description"):
            props["comment"] = found["Description"]
        return props

    def update_namespace_properties(
        self,
        namespace: NamespaceLike,
        removals: Iterable[str] = (),
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdate:
        """Rewrite the database's parameters (``UpdateDatabase``)."""
        database = self._database(namespace)
        current = self.load_namespace_properties(namespace)
        result, summary = plan_properties_update(current, removals, updates)
        database_input = _database_input(database, result)
        self._call("update_database", Name=database, DatabaseInput=database_input)
        return summary

    def drop_namespace(self, namespace: NamespaceLike) -> None:
        """Delete an empty Glue database (Glue would delete its tables with it)."""
        database = self._database(namespace)
        self._require_database(database)
        members = [t["Name"] for t in self._glue_tables(database)]
        if members:
            raise NamespaceNotEmpty(
                f"Glue database {database!r} still holds {', '.join(sorted(members)[:5])}; "
                "drop them first"
            )
        self._call("delete_database", Name=database)

    # --- tables ----------------------------------------------------------------------

    def default_table_location(self, identifier: IdentifierLike) -> str:
        """``<database LocationUri>/<table>``, else ``<warehouse>/<database>.db/<table>``
        (Iceberg Java's Glue default)."""
        _, database, name = self._split(identifier)
        found = self._require_database(database)
        if found.get("LocationUri"):
            return f"{str(found['LocationUri']).rstrip('/')}/{name}"
        if not self.warehouse:
            raise ValidationError(
                f"Glue database {database!r} has no location and the catalog no warehouse; "
                "pass location=..., or configure a warehouse"
            )
        return f"{self.warehouse}/{database}.db/{name}"

    def _register_pointer(
        self, ident: Identifier, kind: str, metadata: Metadata, location: str, written: bool
    ) -> None:
        """``CreateTable`` for a new table or view whose metadata is at ``location``."""
        _, database, name = self._split(ident)
        table_input = _table_input(name, kind, metadata, location, previous=None, existing=None)
        try:
            self._call("create_table", DatabaseName=database, TableInput=table_input)
            return
        except Exception as e:
            error = e
        code = _code(error)
        refusal: Exception | None = None
        if code == "AlreadyExistsException":
            refusal = already_exists(kind, f"a table or view named {str(ident)!r} exists in Glue")
        elif code == "EntityNotFoundException":
            refusal = NoSuchNamespace(f"Glue database {database!r} does not exist")
        elif _definite_refusal(error):
            refusal = ValidationError(f"Glue refused to create {str(ident)!r}: {error}")
        if refusal is not None:
            if written:
                delete_quietly(self.file_io(location), location)
            raise refusal from error
        _, now = self._read_back(database, name)
        if now is not None and now.get("Parameters", {}).get(METADATA_LOCATION) == location:
            return
        raise CommitStateUnknown(
            f"creating {str(ident)!r} in Glue failed ({error}); it cannot be known whether it "
            f"was created; {location} was kept"
        ) from error

    def _check_free(self, ident: Identifier, kind: str) -> None:
        _, database, name = self._split(ident)
        self._require_database(database)
        if self._get_table(database, name) is not None:
            raise already_exists(kind, f"a table or view named {str(ident)!r} exists in Glue")

    def list_tables(self, namespace: NamespaceLike) -> list[Identifier]:
        """Iceberg tables of the database (other Glue tables are skipped)."""
        return self._list(namespace, TABLE)

    def _list(self, namespace: NamespaceLike, kind: str) -> list[Identifier]:
        database = self._database(namespace)
        names = [t["Name"] for t in self._glue_tables(database) if _kind(t) == kind]
        return [Identifier((database,), n) for n in sorted(names)]

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """``DeleteTable``; with ``purge``, then delete the table's files."""
        ident, database, name = self._split(identifier)
        found = self._require_object(ident, TABLE)
        location = found["Parameters"][METADATA_LOCATION]
        metadata: TableMetadata | None = None
        if purge:
            try:
                metadata = read_table_metadata(self.file_io(location), location)
            except (NoSuchFile, InvalidMetadata) as e:
                logger.warning("purge of %s: cannot read %s: %s", ident, location, e)
        self._delete_glue_table(ident, database, name, TABLE)
        if metadata is not None:
            purge_table_files(self.file_io(metadata.location), metadata, location)

    def _delete_glue_table(self, ident: Identifier, database: str, name: str, kind: str) -> None:
        try:
            self._call("delete_table", DatabaseName=database, Name=name)
        except Exception as e:
            if _code(e) == "EntityNotFoundException":
                message = f"{kind} {str(ident)!r} does not exist in Glue"
                raise no_such(kind, message) from e
            raise

    def rename_table(self, source: IdentifierLike, destination: IdentifierLike) -> Table:
        """Create the table under the new name, then delete the old entry (Glue has no
        rename; Iceberg Java does the same two steps)."""
        src, src_db, src_name = self._split(source)
        dst, dst_db, dst_name = self._split(destination)
        found = self._require_object(src, TABLE)
        self._require_database(dst_db)
        table_input = {k: found[k] for k in TABLE_INPUT_KEYS if k in found}
        table_input["Name"] = dst_name
        try:
            self._call("create_table", DatabaseName=dst_db, TableInput=table_input)
        except Exception as e:
            if _code(e) == "AlreadyExistsException":
                raise TableAlreadyExists(
                    f"a table or view named {str(dst)!r} already exists in Glue"
                ) from e
            raise
        try:
            self._call("delete_table", DatabaseName=src_db, Name=src_name)
        except Exception:
            self._call("delete_table", DatabaseName=dst_db, Name=dst_name)
            raise
        return self.load_table(dst)

    def _read_pointer(self, ident: Identifier, kind: str) -> tuple[str, Any]:
        """The ``metadata_location`` parameter, and the Glue table (with its ``VersionId``)."""
        found = self._require_object(ident, kind)
        return str(found["Parameters"][METADATA_LOCATION]), found

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
        """``UpdateTable`` with the ``VersionId`` read together with ``base``."""
        _, database, name = self._split(ident)
        found: dict[str, Any] = token
        version_id = found.get("VersionId")
        if not version_id:
            raise CommitFailed(f"Glue returned no VersionId for {str(ident)!r}; reload and retry")
        table_input = _table_input(name, kind, metadata, new, previous=base, existing=found)
        kwargs: dict[str, Any] = {
            "DatabaseName": database,
            "TableInput": table_input,
            "VersionId": str(version_id),
        }
        if self._skip_archive:
            kwargs["SkipArchive"] = True
        try:
            self._call("update_table", **kwargs)
            return
        except Exception as e:
            error = e
        code = _code(error)
        refused = code in ("ConcurrentModificationException", "EntityNotFoundException") or (
            _definite_refusal(error)
        )
        readable, now = self._read_back(database, name)
        if now is not None and now.get("Parameters", {}).get(METADATA_LOCATION) == new:
            return  # applied: an earlier (retried) attempt landed, or only the answer was lost
        if not refused or _retried(error):
            # A lost answer, or a refusal that a landed earlier attempt of ours may have
            # caused (and someone may have committed on top since): keep everything.
            raise CommitStateUnknown(
                f"the Glue update of {str(ident)!r} failed ({error}); it cannot be known "
                f"whether it was applied; {new} was kept: check the table before retrying"
            ) from error
        delete_quietly(io, new)  # refused on the first try: definitely not committed
        if code == "EntityNotFoundException" or (readable and (now is None or _kind(now) != kind)):
            message = f"{kind} {str(ident)!r} does not exist in Glue"
            raise no_such(kind, message) from error
        if code == "ConcurrentModificationException":
            raise CommitFailed(
                f"{kind} {str(ident)!r} was changed by another writer (Glue version "
                f"{version_id} is no longer current); reload it and retry"
            ) from error
        raise ValidationError(f"Glue refused the update of {str(ident)!r}: {error}") from error

    def _read_back(self, database: str, name: str) -> tuple[bool, dict[str, Any] | None]:
        """``(readable, table)``: the Glue table now, and whether it could be read."""
        try:
            return True, self._get_table(database, name)
        except Exception:
            return False, None

    def list_views(self, namespace: NamespaceLike) -> list[Identifier]:
        """Iceberg views of the database."""
        return self._list(namespace, VIEW)

    def drop_view(self, identifier: IdentifierLike) -> None:
        """``DeleteTable`` on the view (its metadata files are kept)."""
        ident, database, name = self._split(identifier)
        self._require_object(ident, VIEW)
        self._delete_glue_table(ident, database, name, VIEW)


def _check_glue_name(name: str, what: str, limit: int) -> str:
    if _NAME.fullmatch(name) is None or len(name) > limit:
        raise ValidationError(
            f"Glue {what} name {name!r} is not allowed: Glue names are 1-{limit} lower case "
            "letters, digits and '_' (e.g. 'sales_2024')"
        )
    return name


def _database_input(database: str, properties: Mapping[str, str]) -> dict[str, Any]:
    params = {k: v for k, v in properties.items() if k not in ("location", "comment")}
    out: dict[str, Any] = {"Name": database, "Parameters": params}
    if properties.get("location"):
        out["LocationUri"] = properties["location"]
    if properties.get("comment"):
        out["Description"] = properties["comment"]
    return out


def _table_input(
    name: str,
    kind: str,
    metadata: TableMetadata | ViewMetadata,
    location: str,
    *,
    previous: str | None,
    existing: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The ``TableInput`` for a table or view at ``location``, keeping other tools'
    parameters and descriptions from ``existing``."""
    params = {str(k): str(v) for k, v in (existing or {}).get("Parameters", {}).items()}
    params[TABLE_TYPE_PARAM] = ICEBERG_VIEW if kind == VIEW else ICEBERG
    params[METADATA_LOCATION] = location
    if previous:
        params[PREVIOUS_METADATA_LOCATION] = previous
    table_input: dict[str, Any] = {
        "Name": name,
        "TableType": "VIRTUAL_VIEW" if kind == VIEW else "EXTERNAL_TABLE",
        "Parameters": params,
        "StorageDescriptor": {
            "Location": metadata.location,
            "Columns": glue_columns(metadata.schema()),
        },
    }
    for key in ("Description", "Owner"):
        if existing and existing.get(key):
            table_input[key] = existing[key]
    return table_input
