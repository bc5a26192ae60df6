"""What scan planning produces: file scan tasks, the plan and its metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icewright.expressions import Expression
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Snapshot

__all__ = ["FileScanTask", "ScanMetrics", "ScanPlan"]


@dataclass(frozen=True, slots=True)
class FileScanTask:
    """One data file to read, with the delete files to apply and the filter left to apply.

    ``residual`` is bound to the scan schema: :data:`~icewright.expressions.ALWAYS_TRUE`
    when every row of the file's partition matches the filter. ``delete_files`` follow the
    spec's scope rules (see :mod:`icewright.scan.delete_index`).
    """

    data_file: DataFile
    delete_files: tuple[DataFile, ...]
    residual: Expression
    spec_id: int
    data_sequence_number: int
    file_sequence_number: int | None = None
    snapshot_id: int | None = None

    @property
    def file_path(self) -> str:
        """The data file's location."""
        return self.data_file.file_path

    @property
    def record_count(self) -> int:
        """Rows in the data file (before deletes)."""
        return self.data_file.record_count

    @property
    def partition(self) -> tuple[Any, ...]:
        """The data file's partition tuple (of spec ``spec_id``)."""
        return self.data_file.partition


@dataclass(frozen=True, slots=True)
class ScanMetrics:
    """What planning read and skipped (names as in Iceberg Java's ``ScanMetrics``).

    ``scanned_*_manifests`` counts the manifests that were opened and read.
    """

    total_data_manifests: int = 0
    scanned_data_manifests: int = 0
    skipped_data_manifests: int = 0
    total_delete_manifests: int = 0
    scanned_delete_manifests: int = 0
    skipped_delete_manifests: int = 0
    result_data_files: int = 0
    skipped_data_files: int = 0
    indexed_delete_files: int = 0
    skipped_delete_files: int = 0
    result_delete_files: int = 0


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """The outcome of planning: the snapshot read, the schema and filter used, the tasks."""

    snapshot: Snapshot | None
    schema: Schema
    projected_schema: Schema
    filter: Expression
    tasks: tuple[FileScanTask, ...]
    metrics: ScanMetrics

    @property
    def data_files(self) -> tuple[DataFile, ...]:
        """The data files of the tasks, in task order."""
        return tuple(t.data_file for t in self.tasks)

    @property
    def delete_files(self) -> tuple[DataFile, ...]:
        """Every delete file some task applies, each once, in first-use order."""
        seen: dict[str, DataFile] = {}
        for t in self.tasks:
            for d in t.delete_files:
                seen.setdefault(d.file_path, d)
        return tuple(seen.values())
