"""Pending updates on several tables committed as one catalog transaction.

Write-audit-publish across tables needs every table to move together: either all of
them show the new data or none does. :func:`commit_tables` applies each table's
:class:`~icewright.commit.update.PendingUpdate` list on its latest metadata, turns the
steps into the spec's requirements and updates, and sends them in one
:meth:`~icewright.catalog.base.Catalog.commit_transaction` (a REST catalog's
``POST /v1/{prefix}/transactions/commit``). The retry semantics are those of
:func:`~icewright.commit.update.commit_updates`:

* ``CommitFailed`` (409: a requirement failed on some table; nothing was applied):
  every table is refreshed, every update re-applied, and the transaction re-sent;
* ``CommitStateUnknown`` (5xx, timeout): nothing is deleted;
* a definite failure (retries exhausted, validation): the updates' files are deleted.

Catalogs that swap one pointer per table cannot do this atomically; they are refused
with ``ValidationError`` before any update writes a file.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from icewright.catalog.base import Catalog, Table
from icewright.catalog.changes import TableChanges, table_changes
from icewright.catalog.identifier import Identifier
from icewright.commit.retry import RetryPolicy
from icewright.commit.update import CommitResult, PendingUpdate, _apply_all, _delete
from icewright.errors import CommitFailed, CommitStateUnknown, IcewrightError, ValidationError

__all__ = ["commit_tables"]

log = logging.getLogger(__name__)


def commit_tables(
    changes: Sequence[tuple[Table, Sequence[PendingUpdate]]],
) -> list[CommitResult]:
    """Commit each table's ``updates`` (applied in order) in one atomic transaction.

    All tables must belong to one catalog that supports transactions. Returns one
    :class:`CommitResult` per table, in the given order, each on the table as loaded
    after the commit. The retry policy is the first table's ``commit.retry.*``.
    """
    catalog = _check(changes)
    policy = RetryPolicy.from_properties(changes[0][0].metadata.properties)
    current = [table for table, _ in changes]

    def attempt(n: int) -> list[CommitResult]:
        if n > 1:
            current[:] = [t.refresh() for t in current]
        sent: list[tuple[Identifier, TableChanges]] = []
        for table, (_, updates) in zip(current, changes, strict=True):
            base = table.metadata
            sent.append((table.identifier, table_changes(base, _apply_all(updates, base))))
        try:
            catalog.commit_transaction(sent)
        except CommitFailed:
            log.info("transaction on %d tables lost a race (attempt %d)", len(sent), n)
            raise
        results = []
        for table, (_, updates) in zip(current, changes, strict=True):
            loaded = catalog.load_table(table.identifier)
            snapshot = updates[-1].result_snapshot(loaded.metadata)
            results.append(CommitResult.for_snapshot(loaded, snapshot, committed=True))
        return results

    try:
        results = policy.run(attempt)
    except CommitStateUnknown:
        log.warning(
            "the outcome of a transaction on %d tables is unknown: keeping its files", len(changes)
        )
        raise
    except IcewrightError:
        # Nothing references what the updates wrote (a transaction applies all or none).
        for table, updates in changes:
            _delete(table.io, (p for u in updates for p in u.files_written()))
        raise
    for table, updates in changes:
        _delete(table.io, (p for u in updates for p in u.files_not_committed()))
    return results


def _check(changes: Sequence[tuple[Table, Sequence[PendingUpdate]]]) -> Catalog:
    if not changes:
        raise ValidationError("commit_tables needs at least one table and its updates")
    catalog = changes[0][0].catalog
    seen: set[tuple[str, ...]] = set()
    for table, updates in changes:
        if not updates:
            raise ValidationError(f"no updates given for table {table.identifier}")
        if table.catalog is not catalog:
            raise ValidationError(
                f"table {table.identifier} belongs to catalog {table.catalog.name!r}, not "
                f"{catalog.name!r}: a transaction spans one catalog"
            )
        if table.identifier.levels in seen:
            raise ValidationError(
                f"table {table.identifier} is named twice; give all its updates in one entry"
            )
        seen.add(table.identifier.levels)
    if not catalog.supports_transactions:
        raise ValidationError(
            f"catalog {catalog.name!r} ({type(catalog).__name__}) cannot commit several tables "
            "atomically; use a REST catalog whose server offers "
            "POST /v1/{prefix}/transactions/commit"
        )
    return catalog
