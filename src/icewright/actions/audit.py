"""Counting rows for an audit: how many rows of a table, a branch, a tag or a snapshot
match a Spark SQL predicate (the "audit" of write-audit-publish).

>>> # count_rows("sales.orders", ref="audit-20260102")                   # all rows
>>> # count_rows("sales.orders", ref="audit-20260102", where="amount < 0")  # bad rows

The rows are read through icewright's read path on the runner's Spark session
(deletes applied; the predicate means what Spark SQL means: a row where it is NULL does
not count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, load, runner_or_default
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.runners.base import Runner

__all__ = ["count_rows"]


def count_rows(
    table: TableLike,
    *,
    where: str | None = None,
    ref: str | None = None,
    snapshot_id: int | None = None,
    catalog: CatalogLike = None,
    runner: Runner | None = None,
) -> int:
    """The number of rows of ``table`` (at branch or tag ``ref``, or snapshot
    ``snapshot_id``; default: ``main``) for which ``where`` holds (default: every row).

    Reads on the Spark session of ``runner``, which must run Spark in this process (a
    :class:`~icewright.runners.local.LocalRunner`; default: the embedded one). An unknown
    ref, snapshot or column is a :class:`ValidationError` before Spark starts.
    """
    from icewright.expressions import sql_filter
    from icewright.runners.local import LocalRunner
    from icewright.scan import TableScan

    current = load(table, catalog)
    condition = None if where is None else sql_filter(where)
    # binds the predicate and picks the snapshot: bad input fails before the JVM starts
    TableScan.of(
        current,
        ref=ref,
        snapshot_id=snapshot_id,
        **({} if condition is None else {"row_filter": condition}),
    )
    jobs = runner_or_default(runner)
    if not isinstance(jobs, LocalRunner):
        raise ValidationError(
            f"count_rows reads on an in-process Spark session (a LocalRunner), not on a "
            f"{type(jobs).__name__}"
        )
    from icewright.spark.read import read_table

    frame = read_table(jobs.spark, current, ref=ref, snapshot_id=snapshot_id, filter=condition)
    return int(frame.count())
