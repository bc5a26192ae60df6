"""What a table's health checks measure: :func:`table_health`.

Orchestrators turn these figures into checks (Dagster asset checks, an Airflow task's
assertions): how old the newest snapshot is, how many snapshots the history holds
(a reason to expire), which share of the live data files is small (a reason to
rewrite), how many delete files readers must apply per data file (a reason to rewrite a
table written merge-on-read), whether the schema is the declared one, and how the row
count moved between the last two snapshots. One metadata read and one scan plan of the
current snapshot.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, load
from icewright.commit.summary import TOTAL_RECORDS

if TYPE_CHECKING:
    from icewright.spec.schema import Schema
    from icewright.spec.snapshots import Snapshot

__all__ = ["DEFAULT_SMALL_FILE_BYTES", "TableHealth", "table_health"]

DEFAULT_SMALL_FILE_BYTES = 32 * 1024 * 1024
"""A data file under this size counts as small (Spark's and Iceberg Java's rewrite
consider files under 75% of the 512 MiB target; 32 MiB flags the clearly small ones)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealth:
    """Figures of one table's current state (see the module docstring).

    ``snapshot_age_seconds`` is None for a table without snapshots; ``previous_records``
    is None when the current snapshot has no parent in the metadata. ``small_file_share``
    is 0.0 for a table without data files. ``delete_files`` counts the distinct live
    delete files (position and equality) that apply to some live data file.
    """

    table: str
    metadata_location: str
    snapshot_id: int | None
    snapshot_age_seconds: float | None
    snapshot_count: int
    data_files: int
    small_files: int
    small_file_bytes: int
    delete_files: int = 0
    total_records: int | None
    previous_records: int | None
    schema: Schema

    @property
    def small_file_share(self) -> float:
        """Small files as a share of the live data files."""
        return self.small_files / self.data_files if self.data_files else 0.0

    @property
    def delete_file_ratio(self) -> float:
        """Live delete files per live data file (0.0 without data files)."""
        return self.delete_files / self.data_files if self.data_files else 0.0

    @property
    def record_change(self) -> float | None:
        """Relative change of the row count from the previous snapshot (0.25: +25%);
        None without both counts, or from an empty table."""
        if self.total_records is None or not self.previous_records:
            return None
        return (self.total_records - self.previous_records) / self.previous_records


def table_health(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    small_file_bytes: int = DEFAULT_SMALL_FILE_BYTES,
    branch: str = "main",
) -> TableHealth:
    """Measure ``table``'s ``branch`` (see :class:`TableHealth`)."""
    from icewright.scan import TableScan

    current = load(table, catalog)
    metadata = current.metadata
    head = metadata.snapshot_for_ref(branch)
    files = small = 0
    deletes: set[str] = set()
    if head is not None:
        for task in TableScan.of(current, ref=branch).iter_tasks():
            files += 1
            if task.data_file.file_size_in_bytes < small_file_bytes:
                small += 1
            deletes.update(d.file_path for d in task.delete_files)
    parent = (
        None
        if head is None or head.parent_snapshot_id is None
        else metadata.snapshot_by_id(head.parent_snapshot_id)
    )
    return TableHealth(
        table=str(current.identifier),
        metadata_location=current.metadata_location,
        snapshot_id=None if head is None else head.snapshot_id,
        snapshot_age_seconds=None if head is None else time.time() - head.timestamp_ms / 1000,
        snapshot_count=len(metadata.snapshots),
        data_files=files,
        small_files=small,
        small_file_bytes=small_file_bytes,
        delete_files=len(deletes),
        total_records=_total_records(head),
        previous_records=_total_records(parent),
        schema=metadata.schema(),
    )


def _total_records(snapshot: Snapshot | None) -> int | None:
    if snapshot is None or not snapshot.summary:
        return None
    try:
        return int(snapshot.summary[TOTAL_RECORDS])
    except (KeyError, ValueError):
        return None
