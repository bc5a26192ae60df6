"""What a table's health checks measure: :func:`table_health`.

Orchestrators turn these figures into checks (Dagster asset checks, an Airflow task's
assertions) and :func:`icewright.actions.maintain` decides from them: how old the newest
snapshot is, how many snapshots the history holds and how many of them the table's
retention would expire (a reason to expire), which share of the live data files is small
(a reason to rewrite), how many delete files readers must apply per data file (a reason
to rewrite a table written merge-on-read), how many data manifests hold each partition's
files and how many manifests are small (a reason to rewrite the manifests), whether the
schema is the declared one, and how the row count moved between the last two snapshots.
One metadata read and one read of the branch head's manifests
(:func:`icewright.scan.file_layout.file_layout`).

:func:`health_figures` gives the scalar figures as one flat mapping: what ``icewright
health`` prints, what the Dagster checks attach as metadata and what the maintain
operator pushes, so every surface shows the same numbers under the same names.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icewright.actions._common import CatalogLike, TableLike, load
from icewright.commit.summary import ADDED_DATA_FILES, ADDED_RECORDS, TOTAL_RECORDS
from icewright.errors import IcewrightError
from icewright.scan.file_layout import FileLayout, PartitionLayout, file_layout
from icewright.spec.properties import read_property

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.spec.schema import Schema
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "DEFAULT_SMALL_FILE_BYTES",
    "SMALL_RATIO",
    "HistoryBin",
    "TableHealth",
    "health_figures",
    "small_file_bytes_of",
    "small_manifest_bytes_of",
    "table_health",
]

DEFAULT_SMALL_FILE_BYTES = 32 * 1024 * 1024
"""A data file under this size counts as small (Spark's and Iceberg Java's rewrite
consider files under 75% of the 512 MiB target; 32 MiB flags the clearly small ones)."""

SMALL_RATIO = 0.75
"""What maintain calls small: a data file under 75% of ``write.target-file-size-bytes``
(the files compaction rewrites, Iceberg Java's ``SizeBasedFileRewriter`` rule), a data
manifest under 75% of ``commit.manifest.target-size-bytes``."""

ORPHANS_LAST_RUN = "icewright.maintain.orphans-last-run-ms"
MAX_BINS = 60
_BIN_WIDTHS_MS = (60_000, 600_000, 3_600_000, 6 * 3_600_000, 86_400_000, 7 * 86_400_000)


@dataclass(frozen=True, slots=True)
class HistoryBin:
    """Snapshots committed in ``[start_ms, start_ms + width_ms)`` and what they added."""

    start_ms: int
    width_ms: int
    snapshots: int
    added_records: int
    added_files: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealth:
    """Figures of one table's branch (see the module docstring).

    ``snapshot_age_seconds`` is None for a table without snapshots; ``previous_records``
    is None when the current snapshot has no parent in the metadata. ``small_file_share``
    is 0.0 for a table without data files. ``delete_files`` counts the distinct live
    delete files (position and equality) that apply to some live data file.
    ``expirable_snapshots`` is how many snapshots an expiry by the table's retention
    properties would remove now (None when ``gc.enabled`` is false or a retention property
    is invalid); ``metadata_bytes`` the size of the current metadata file;
    ``orphans_last_run_ms`` when maintain last removed orphan files (None: never).
    ``layout`` holds the file and manifest figures, ``history`` the snapshots binned over
    time (at most 60 bins).
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
    oldest_snapshot_age_seconds: float | None = None
    expirable_snapshots: int | None = None
    metadata_bytes: int | None = None
    orphans_last_run_ms: int | None = None
    layout: FileLayout = field(default_factory=FileLayout)
    history: tuple[HistoryBin, ...] = ()

    @property
    def small_file_share(self) -> float:
        """Small files as a share of the live data files."""
        return self.small_files / self.data_files if self.data_files else 0.0

    @property
    def delete_file_ratio(self) -> float:
        """Live delete files per live data file (0.0 without data files)."""
        return self.delete_files / self.data_files if self.data_files else 0.0

    @property
    def small_manifest_share(self) -> float:
        """Small data manifests as a share of the data manifests (0.0 without any)."""
        manifests = self.layout.data_manifests
        return self.layout.small_manifests / manifests if manifests else 0.0

    @property
    def record_change(self) -> float | None:
        """Relative change of the row count from the previous snapshot (0.25: +25%);
        None without both counts, or from an empty table."""
        if self.total_records is None or not self.previous_records:
            return None
        return (self.total_records - self.previous_records) / self.previous_records

    @property
    def partitions(self) -> tuple[PartitionLayout, ...]:
        """The partitions with the most data manifests (:attr:`FileLayout.partitions`)."""
        return self.layout.partitions


def small_file_bytes_of(metadata: TableMetadata) -> int:
    """The size under which maintain counts a data file as small: 75% of the table's
    ``write.target-file-size-bytes``."""
    target: int = read_property(metadata.properties, "write.target-file-size-bytes")
    return max(1, int(target * SMALL_RATIO))


def small_manifest_bytes_of(metadata: TableMetadata) -> int:
    """The size under which maintain counts a data manifest as small: 75% of the table's
    ``commit.manifest.target-size-bytes``."""
    target: int = read_property(metadata.properties, "commit.manifest.target-size-bytes")
    return max(1, int(target * SMALL_RATIO))


def table_health(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    small_file_bytes: int | None = DEFAULT_SMALL_FILE_BYTES,
    branch: str = "main",
) -> TableHealth:
    """Measure ``table``'s ``branch`` (see :class:`TableHealth`); a data file under
    ``small_file_bytes`` is small (None: what maintain calls small,
    :func:`small_file_bytes_of`)."""
    current = load(table, catalog)
    return measure(current, small_file_bytes=small_file_bytes, branch=branch)


def measure(
    current: Table, *, small_file_bytes: int | None = None, branch: str = "main"
) -> TableHealth:
    """:func:`table_health` of a loaded table."""
    metadata = current.metadata
    head = metadata.snapshot_for_ref(branch)
    small = small_file_bytes_of(metadata) if small_file_bytes is None else small_file_bytes
    layout = file_layout(
        metadata,
        current.io,
        head,
        small_file_bytes=small,
        small_manifest_bytes=small_manifest_bytes_of(metadata),
        manifest_target_bytes=read_property(
            metadata.properties, "commit.manifest.target-size-bytes"
        ),
    )
    parent = (
        None
        if head is None or head.parent_snapshot_id is None
        else metadata.snapshot_by_id(head.parent_snapshot_id)
    )
    now = time.time()
    oldest = min((s.timestamp_ms for s in metadata.snapshots), default=None)
    return TableHealth(
        table=str(current.identifier),
        metadata_location=current.metadata_location,
        snapshot_id=None if head is None else head.snapshot_id,
        snapshot_age_seconds=None if head is None else now - head.timestamp_ms / 1000,
        snapshot_count=len(metadata.snapshots),
        data_files=layout.data_files,
        small_files=layout.small_files,
        small_file_bytes=small,
        delete_files=layout.delete_files,
        total_records=_total_records(head),
        previous_records=_total_records(parent),
        schema=metadata.schema(),
        oldest_snapshot_age_seconds=None if oldest is None else now - oldest / 1000,
        expirable_snapshots=_expirable(current),
        metadata_bytes=_size(current),
        orphans_last_run_ms=_last_run(metadata),
        layout=layout,
        history=history_bins(metadata.snapshots),
    )


def _expirable(table: Table) -> int | None:
    from icewright.commit.expire import ExpireSnapshots

    try:
        base = table.metadata
        after = ExpireSnapshots(table).apply(base)
    except IcewrightError:  # gc.enabled=false, or a retention property is invalid
        return None
    return len(base.snapshots) - len(after.snapshots)


def _size(table: Table) -> int | None:
    try:
        return table.io.size(table.metadata_location)
    except Exception:  # a figure, not a reason to fail: the store may not say
        return None


def _last_run(metadata: TableMetadata) -> int | None:
    value = read_property(metadata.properties, ORPHANS_LAST_RUN)
    return None if value is None else int(value)


def history_bins(snapshots: Sequence[Snapshot]) -> tuple[HistoryBin, ...]:
    """``snapshots`` binned by commit time into at most 60 bins of a round width (a
    minute, ten minutes, an hour, six hours, a day or a week), oldest first; empty bins
    between are kept so that the bins read as a time axis."""
    if not snapshots:
        return ()
    first = min(s.timestamp_ms for s in snapshots)
    last = max(s.timestamp_ms for s in snapshots)
    width = next(
        (w for w in _BIN_WIDTHS_MS if (last // w - first // w) < MAX_BINS), _BIN_WIDTHS_MS[-1]
    )
    start = first // width
    count = min(MAX_BINS, last // width - start + 1)
    tallies = [[0, 0, 0] for _ in range(count)]
    for s in snapshots:
        i = min(count - 1, s.timestamp_ms // width - start)
        tallies[i][0] += 1
        tallies[i][1] += _summary_int(s.summary, ADDED_RECORDS)
        tallies[i][2] += _summary_int(s.summary, ADDED_DATA_FILES)
    return tuple(
        HistoryBin((start + i) * width, width, t[0], t[1], t[2]) for i, t in enumerate(tallies)
    )


def health_figures(h: TableHealth) -> dict[str, Any]:
    """The scalar figures of ``h``, flat, under stable names (see the module docstring):
    counts, bytes, shares rounded to four places, ages in seconds."""
    layout = h.layout
    figures: dict[str, Any] = {
        "snapshot_id": h.snapshot_id,
        "snapshot_age_seconds": _round(h.snapshot_age_seconds, 1),
        "oldest_snapshot_age_seconds": _round(h.oldest_snapshot_age_seconds, 1),
        "snapshots": h.snapshot_count,
        "expirable_snapshots": h.expirable_snapshots,
        "total_records": h.total_records,
        "data_files": h.data_files,
        "data_bytes": layout.data_bytes,
        "small_files": h.small_files,
        "small_file_bytes": h.small_file_bytes,
        "small_file_share": _round(h.small_file_share, 4),
        "delete_files": h.delete_files,
        "live_delete_files": layout.live_delete_files,
        "files_with_deletes": layout.files_with_deletes,
        "delete_file_ratio": _round(h.delete_file_ratio, 4),
        "data_manifests": layout.data_manifests,
        "delete_manifests": layout.delete_manifests,
        "empty_manifests": layout.empty_manifests,
        "data_manifest_bytes": layout.data_manifest_bytes,
        "small_manifests": layout.small_manifests,
        "small_manifest_bytes": layout.small_manifest_bytes,
        "small_manifest_share": _round(h.small_manifest_share, 4),
        "manifests_at_target_size": layout.manifest_target_fill,
        "partitions": layout.partition_count,
        "manifests_per_partition": _round(layout.manifests_per_partition, 2),
        "max_manifests_per_partition": layout.max_manifests_per_partition,
        "metadata_bytes": h.metadata_bytes,
        "orphans_last_run_ms": h.orphans_last_run_ms,
    }
    return figures


def _round(value: float | None, places: int) -> float | None:
    return None if value is None else round(value, places)


def _summary_int(summary: Mapping[str, str] | None, key: str) -> int:
    try:
        return int((summary or {}).get(key, "0"))
    except ValueError:
        return 0


def _total_records(snapshot: Snapshot | None) -> int | None:
    if snapshot is None or not snapshot.summary:
        return None
    try:
        return int(snapshot.summary[TOTAL_RECORDS])
    except (KeyError, ValueError):
        return None
