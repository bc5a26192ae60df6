"""What every action shares: finding the catalog and the table, resolving a source that
names a table, timing the phases."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Union

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier, Table
    from icewright.runners.base import Runner

CatalogLike = Union["Catalog", str, Mapping[str, str], None]
"""A catalog, or what :func:`icewright.catalog.load_catalog` builds one from (None: the
embedded default)."""
TableLike = Union[str, tuple[str, ...], "Identifier", "Table"]
"""A table name (``"ns.table"``, parts, an ``Identifier``) or a loaded ``Table``."""


def resolve_catalog(catalog: CatalogLike) -> Catalog:
    """The catalog ``catalog`` names."""
    from icewright.catalog import Catalog, load_catalog

    if isinstance(catalog, Catalog):
        return catalog
    return load_catalog(catalog)


def catalog_of(table: TableLike, catalog: CatalogLike) -> Catalog:
    """The catalog of a ``Table`` handle, else the one ``catalog`` names."""
    from icewright.catalog import Table

    if isinstance(table, Table):
        return table.catalog
    return resolve_catalog(catalog)


def identifier(name: TableLike) -> Identifier:
    """The identifier of ``name``."""
    from icewright.catalog import Identifier, Table

    if isinstance(name, Table):
        return name.identifier
    if isinstance(name, Identifier):
        return name
    if isinstance(name, str | tuple):
        return Identifier.parse(name)
    raise ValidationError(f"a table name must be a string or Identifier, got {name!r}")


def load(table: TableLike, catalog: CatalogLike) -> Table:
    """The current state of ``table`` (a given ``Table`` handle is refreshed)."""
    from icewright.catalog import Table

    if isinstance(table, Table):
        return table.refresh()
    return resolve_catalog(catalog).load_table(identifier(table))


def resolve_source(source: Any, catalog: Catalog) -> Any:
    """``source`` ready for a job. An ``iceberg:`` source (text or
    :class:`~icewright.spark.sources.TableSource`, or one that a ``sql:`` query names as a
    quoted identifier) names a table of ``catalog``: the table is loaded now, its
    snapshot, ref or range checked (a ref or snapshot that does not exist, a range whose
    start is not an ancestor of its end, an overwrite inside an appends range:
    :class:`ValidationError`, before any job) and its metadata fixed, so that the job
    reads exactly the state checked. Any other source is returned as it is.

    Source classes are recognised by name: their module imports pyspark, which an action
    that needs no source must not pay for.
    """
    if isinstance(source, str) and source.strip().lower().startswith(_TABLE_SOURCES):
        from icewright.spark.sources import TableSource

        source = TableSource.parse(source)
    elif isinstance(source, str) and "`iceberg" in source.lower():
        from icewright.spark.sources import parse_source

        source = parse_source(source)
    if type(source).__name__ == "SqlSource" and "`" in source.query:
        from icewright.spark.sources import table_references

        tables = tuple(resolve_source(t, catalog) for t in table_references(source.query))
        return dataclasses.replace(source, tables=tables) if tables else source
    if type(source).__name__ != "TableSource" or source.metadata_location is not None:
        return source
    from icewright.errors import NoSuchTable
    from icewright.scan import TableScan
    from icewright.scan.incremental import check_appends_only, snapshot_range

    try:
        read = catalog.load_table(source.table)
    except NoSuchTable as e:
        raise NoSuchTable(f"the source {source} cannot be read: {e}") from None
    metadata = read.metadata
    if source.is_range:
        snapshots = snapshot_range(metadata, source.start, source.end)
        if not source.changelog:
            check_appends_only(snapshots)
    elif source.snapshot is not None:
        selector = source.snapshot
        if selector in metadata.refs:
            TableScan.of(read, ref=selector)
        elif selector.lstrip("-").isdigit():
            TableScan.of(read, snapshot_id=int(selector))
        else:
            raise ValidationError(
                f"the source {source} names {selector!r}, which is neither a snapshot id nor "
                f"a branch or tag of {read.identifier} (its references: "
                f"{', '.join(sorted(metadata.refs)) or 'none'})"
            )
    return dataclasses.replace(
        source, metadata_location=read.metadata_location, metadata=metadata, io=read.io
    )


_TABLE_SOURCES = ("iceberg:", "iceberg-changelog:")


def runner_or_default(runner: Runner | None) -> Runner:
    """``runner``, or the default local one."""
    if runner is not None:
        return runner
    from icewright.runners.local import default_runner

    return default_runner()


class Timer:
    """Seconds spent per phase of an action, and in total."""

    def __init__(self) -> None:
        self._start = time.monotonic()
        self.phases: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the enclosed block as ``name`` (added to earlier time of that phase)."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.monotonic() - start

    def done(self) -> dict[str, float]:
        """Every phase, and ``total`` since the timer started."""
        return {**self.phases, "total": time.monotonic() - self._start}
