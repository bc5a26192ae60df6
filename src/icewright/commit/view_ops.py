"""Views: create, replace (a new version) and drop (the Iceberg view spec; Iceberg Java's
``BaseMetastoreViewCatalog.ViewBuilder``, ``ViewVersionReplace`` and
``ViewMetadata.Builder``).

A replace adds a version with id ``max + 1`` (an identical existing version is
reused instead), reuses the id of an identical schema, appends a ``version-log``
entry when the current version changes, keeps at most ``version.history.num-entries``
versions (default 10; the current one and the new one are always kept), and refuses
to drop a SQL dialect the current version has unless ``replace.drop-dialect.allowed``
is true. Properties given to a replace are set on top of the existing ones.

:func:`_commit_view` is the one retry loop for views, shaped like
:func:`~icewright.commit.update.commit_updates`: on ``CommitFailed`` it reloads the
view and applies the change again (new version id on the refreshed view), retrying
per the view's ``commit.retry.*`` properties. The catalog deletes the metadata file
of a losing attempt itself, so nothing else needs cleaning up.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Mapping

from icewright import __version__
from icewright.catalog.base import Catalog, IdentifierLike, View, check_properties
from icewright.catalog.identifier import Identifier
from icewright.commit.retry import RetryPolicy
from icewright.errors import CommitFailed, NoSuchView, ValidationError, ViewAlreadyExists
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.schema import Schema
from icewright.spec.view_metadata import (
    VERSION_HISTORY_SIZE,
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

__all__ = [
    "REPLACE_DROP_DIALECT_ALLOWED",
    "VERSION_HISTORY_SIZE_DEFAULT",
    "ViewDefinition",
    "create_view",
    "drop_view",
    "new_view_metadata",
    "replace_version",
    "replace_view",
]

log = logging.getLogger(__name__)

VERSION_HISTORY_SIZE_DEFAULT = 10
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
"""View property: whether a replace may leave out a dialect the view had (default false)."""
COMMENT = "comment"
"""View property holding the view's comment (view spec, note 2)."""


def _representations(
    sql: str | Mapping[str, str], dialect: str
) -> tuple[SQLViewRepresentation, ...]:
    queries = {dialect: sql} if isinstance(sql, str) else dict(sql)
    if not queries:
        raise ValidationError("a view needs at least one SQL query")
    return tuple(SQLViewRepresentation(sql=q, dialect=d) for d, q in queries.items())


def _properties(properties: Mapping[str, str] | None, comment: str | None) -> dict[str, str]:
    props = check_properties(properties, "view property")
    if comment is not None:
        if not isinstance(comment, str):
            raise ValidationError(f"a view comment must be a string, got {comment!r}")
        props[COMMENT] = comment
    return props


def _summary() -> dict[str, str]:
    return {"engine-name": "icewright", "engine-version": __version__}


@dataclasses.dataclass(frozen=True)
class ViewDefinition:
    """What one create or replace asks for: the queries, schema, defaults and properties."""

    representations: tuple[SQLViewRepresentation, ...]
    schema: Schema
    default_namespace: tuple[str, ...]
    default_catalog: str | None
    properties: Mapping[str, str]

    def version(self, version_id: int, schema_id: int, now: int) -> ViewVersion:
        """The view version this definition makes, with icewright's engine summary."""
        return ViewVersion(
            version_id=version_id,
            timestamp_ms=now,
            schema_id=schema_id,
            representations=self.representations,
            default_namespace=self.default_namespace,
            default_catalog=self.default_catalog,
            summary=StringMap(_summary()),
        )


def _definition(  # noqa: PLR0917 - mirrors create_view's arguments
    ident: Identifier,
    sql: str | Mapping[str, str],
    schema: Schema,
    dialect: str,
    default_catalog: str | None,
    default_namespace: str | tuple[str, ...] | list[str] | None,
    properties: Mapping[str, str] | None,
    comment: str | None,
) -> ViewDefinition:
    if not isinstance(schema, Schema):
        raise ValidationError(f"a view needs an icewright Schema, got {type(schema).__name__}")
    if default_namespace is None:
        namespace = tuple(ident.namespace)
    elif isinstance(default_namespace, str):
        namespace = tuple(default_namespace.split("."))
    else:
        namespace = tuple(default_namespace)
    return ViewDefinition(
        representations=_representations(sql, dialect),
        schema=schema,
        default_namespace=namespace,
        default_catalog=default_catalog,
        properties=_properties(properties, comment),
    )


def _history_size(properties: Mapping[str, str]) -> int:
    raw = properties.get(VERSION_HISTORY_SIZE, str(VERSION_HISTORY_SIZE_DEFAULT))
    try:
        size = int(raw)
    except ValueError:
        size = 0
    if size <= 0:
        raise ValidationError(
            f"view property {VERSION_HISTORY_SIZE}={raw!r} must be a positive integer"
        )
    return size


def _dialects(version: ViewVersion) -> set[str]:
    return {
        r.dialect.lower() for r in version.representations if isinstance(r, SQLViewRepresentation)
    }


def new_view_metadata(definition: ViewDefinition, location: str, now: int) -> ViewMetadata:
    """The first metadata of a view: version 1, schema 0 (as Java's view builder)."""
    _history_size(definition.properties)
    return ViewMetadata(
        view_uuid=uuid.uuid4(),
        location=location,
        current_version_id=1,
        versions=(definition.version(1, 0, now),),
        version_log=(ViewHistoryEntry(now, 1),),
        schemas=(definition.schema.with_schema_id(0),),
        properties=StringMap(definition.properties),
    )


def replace_version(base: ViewMetadata, definition: ViewDefinition, now: int) -> ViewMetadata:
    """``base`` with ``definition`` as its current version (see the module docstring)."""
    schemas = base.schemas
    schema_id = next((s.schema_id for s in schemas if s.same_structure(definition.schema)), None)
    if schema_id is None:
        schema_id = max(s.schema_id for s in schemas) + 1
        schemas = (*schemas, definition.schema.with_schema_id(schema_id))
    candidate = definition.version(max(v.version_id for v in base.versions) + 1, schema_id, now)
    same = [v for v in base.versions if _same_version(v, candidate)]
    versions, added = base.versions, set()
    if same:
        version_id = same[0].version_id  # Java reuses a version that would behave the same
    else:
        version_id = candidate.version_id
        versions, added = (*versions, candidate), {version_id}
    history = base.version_log
    if version_id != base.current_version_id:
        history = (*history, ViewHistoryEntry(now, version_id))
    properties = {**base.properties, **definition.properties}
    current = next(v for v in versions if v.version_id == version_id)
    allowed = properties.get(REPLACE_DROP_DIALECT_ALLOWED, "false").strip().lower() == "true"
    dropped = _dialects(base.current_version()) - _dialects(current)
    if dropped and not allowed:
        raise ValidationError(
            f"replacing view would drop its SQL for dialect(s) {sorted(dropped)}: give a query "
            f"for every dialect the view has, or set {REPLACE_DROP_DIALECT_ALLOWED}=true"
        )
    keep = max(len(added | {version_id}), _history_size(properties))
    if len(versions) > keep:
        # Keep the current version and the highest other ids (ids grow with time), and
        # cut the log before any entry whose version is gone, as Java does.
        newest = sorted(
            (v.version_id for v in versions if v.version_id != version_id), reverse=True
        )
        retained = {version_id, *newest[: keep - 1]}
        versions = tuple(v for v in versions if v.version_id in retained)
        kept: list[ViewHistoryEntry] = []
        for entry in history:
            if entry.version_id in retained:
                kept.append(entry)
            else:
                kept.clear()
        history = tuple(kept)
    return dataclasses.replace(
        base,
        schemas=schemas,
        versions=versions,
        current_version_id=version_id,
        version_log=history,
        properties=StringMap(properties),
    )


def _same_version(a: ViewVersion, b: ViewVersion) -> bool:
    """Java ``sameViewVersion``: equal but for id and timestamp."""
    return (
        a.summary == b.summary
        and a.representations == b.representations
        and a.default_catalog == b.default_catalog
        and a.default_namespace == b.default_namespace
        and a.schema_id == b.schema_id
    )


def _commit_view(view: View, change: Callable[[ViewMetadata], ViewMetadata]) -> View:
    """The view retry loop: apply ``change`` to the latest metadata and swap the pointer."""
    policy = RetryPolicy.from_properties(view.metadata.properties)
    current = view

    def attempt(n: int) -> View:
        nonlocal current
        if n > 1:
            current = current.refresh()
            if current.metadata.view_uuid != view.metadata.view_uuid:
                # View spec: a refreshed view must keep its uuid.
                raise ValidationError(
                    f"view {current.identifier} was dropped and re-created during the commit "
                    f"(uuid {view.metadata.view_uuid} -> {current.metadata.view_uuid})"
                )
        new = change(current.metadata)
        if new == current.metadata:
            return current  # nothing would change: commit nothing
        try:
            location = current.catalog.commit_view(
                current.identifier, current.metadata_location, new
            )
        except CommitFailed:
            log.info("commit to view %s lost a race (attempt %d)", current.identifier, n)
            raise
        return dataclasses.replace(current, metadata=new, metadata_location=location)

    return policy.run(attempt)


def create_view(  # noqa: PLR0917 - positional order of the documented API
    catalog: Catalog,
    identifier: IdentifierLike,
    sql: str | Mapping[str, str],
    schema: Schema,
    dialect: str = "spark",
    default_catalog: str | None = None,
    default_namespace: str | tuple[str, ...] | list[str] | None = None,
    properties: Mapping[str, str] | None = None,
    comment: str | None = None,
    if_not_exists: bool = False,
    or_replace: bool = False,
) -> View:
    """Create a view; ``sql`` is one query in ``dialect`` or a ``{dialect: query}`` map.

    ``default_namespace`` defaults to the view's own namespace; ``comment`` is stored
    as the ``comment`` property. With ``if_not_exists`` an existing view is returned
    unchanged; with ``or_replace`` it is replaced (CREATE OR REPLACE VIEW).
    """
    ident = Identifier.parse(identifier)
    definition = _definition(
        ident, sql, schema, dialect, default_catalog, default_namespace, properties, comment
    )
    if if_not_exists and or_replace:
        raise ValidationError("pass at most one of if_not_exists and or_replace")
    metadata = new_view_metadata(
        definition, catalog.default_table_location(ident), int(time.time() * 1000)
    )
    try:
        return catalog.create_view(ident, metadata)
    except ViewAlreadyExists:
        if not (if_not_exists or or_replace):
            raise
        try:
            existing = catalog.load_view(ident)
        except NoSuchView:
            pass  # the name belongs to a table: report the original error
        else:
            if if_not_exists:
                return existing
            return _commit_view(existing, lambda base: replace_version(base, definition, _now()))
        raise


def replace_view(  # noqa: PLR0917 - same order as create_view
    catalog: Catalog,
    identifier: IdentifierLike,
    sql: str | Mapping[str, str],
    schema: Schema,
    dialect: str = "spark",
    default_catalog: str | None = None,
    default_namespace: str | tuple[str, ...] | list[str] | None = None,
    properties: Mapping[str, str] | None = None,
    comment: str | None = None,
) -> View:
    """Give an existing view a new version (``NoSuchView`` if there is none)."""
    ident = Identifier.parse(identifier)
    definition = _definition(
        ident, sql, schema, dialect, default_catalog, default_namespace, properties, comment
    )
    view = catalog.load_view(ident)
    return _commit_view(view, lambda base: replace_version(base, definition, _now()))


def drop_view(catalog: Catalog, identifier: IdentifierLike) -> None:
    """Remove a view from the catalog (``NoSuchView`` if there is none)."""
    catalog.drop_view(identifier)


def _now() -> int:
    return int(time.time() * 1000)
