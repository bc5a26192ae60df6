"""Pending updates on several tables committed as one catalog transaction.

Write-audit-publish across tables needs every table to move together: either all of
them show the new data or none does. :func:`commit_tables` applies each table's
:class:`~icewright.commit.update.PendingUpdate` list on its latest metadata, turns the
steps into the spec's requirements and updates, and sends them in one
:meth:`~icewright.catalog.base.Catalog.commit_transaction` (a REST catalog's
``POST /v1/{prefix}/transactions/commit``). Each table is prepared as
:func:`~icewright.commit.update.commit_updates` prepares its one table
(:func:`~icewright.commit.update.prepare_commit`: commit keys looked up, a stale base
that lost a file to another writer's expire retried), and the retry semantics are its:

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
from icewright.commit.retry import RetryPolicy
from icewright.commit.update import CommitResult, PendingUpdate, clean_up, prepare_commit
from icewright.errors import CommitFailed, CommitStateUnknown, IcewrightError, ValidationError

__all__ = ["commit_tables"]

log = logging.getLogger(__name__)


def commit_tables(
    changes: Sequence[tuple[Table, Sequence[PendingUpdate]]],
) -> list[CommitResult]:
    """Commit each table's ``updates`` (applied in order) in one atomic transaction.

    All tables must belong to one catalog that supports transactions. Returns one
    :class:`CommitResult` per table, in the given order, each on the table as loaded
    after the commit. The retry policy is the first table's ``commit.retry.*``. A table
    whose last update's commit key is already on it is left out of the transaction and
    reported with ``committed`` False (a repeated call after a transaction landed sends
    nothing).
    """
    catalog = _check(changes)
    policy = RetryPolicy.from_properties(changes[0][0].metadata.properties)
    current = [table for table, _ in changes]

    def attempt(n: int) -> list[CommitResult]:
        if n > 1:
            current[:] = [t.refresh() for t in current]
        prepared = [
            prepare_commit(table, updates)
            for table, (_, updates) in zip(current, changes, strict=True)
        ]
        current[:] = [p.table for p in prepared]
        sent = [(p.table.identifier, p.changes()) for p in prepared if p.done is None]
        if sent:
            try:
                catalog.commit_transaction(sent)
            except CommitFailed:
                log.info("transaction on %d tables lost a race (attempt %d)", len(sent), n)
                raise
        results = []
        for p, (_, updates) in zip(prepared, changes, strict=True):
            if p.done is not None:
                results.append(p.done)
                continue
            loaded = catalog.load_table(p.table.identifier)
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
            clean_up(table.io, updates, committed=False)
        raise
    for (table, updates), result in zip(changes, results, strict=True):
        clean_up(table.io, updates, committed=result.committed)
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
