"""The maintenance verbs: ``expire`` snapshots and ``remove_orphan_files``.

Both wrap the commit engine's (:func:`icewright.commit.expire_snapshots`,
:func:`icewright.commit.remove_orphan_files`) and return its results; the listing and the
deletes run in this process (a Spark job for very large tables is not done yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, load
from icewright.actions.instants import Instant, instant_ms

if TYPE_CHECKING:
    from icewright.commit.expire import ExpireResult
    from icewright.commit.orphans import OrphanResult

__all__ = ["expire", "remove_orphan_files"]


def expire(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    older_than: Instant | None = None,
    retain_last: int | None = None,
    dry_run: bool = False,
) -> ExpireResult:
    """Expire snapshots older than ``older_than`` beyond the last ``retain_last`` (defaults:
    the table's ``history.expire.*``), deleting the files only they reached.

    ``dry_run`` commits and deletes nothing and reports what would go.
    """
    from icewright.commit import expire_snapshots

    return expire_snapshots(
        load(table, catalog),
        older_than_ms=instant_ms(older_than, "older_than"),
        retain_last=retain_last,
        dry_run=dry_run,
    )


def remove_orphan_files(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    older_than: Instant | None = None,
    dry_run: bool = False,
) -> OrphanResult:
    """Delete files under the table location that no metadata references and that are
    older than ``older_than`` (default: three days ago); ``dry_run`` only lists them."""
    from icewright.commit import remove_orphan_files as remove

    return remove(
        load(table, catalog), older_than_ms=instant_ms(older_than, "older_than"), dry_run=dry_run
    )
