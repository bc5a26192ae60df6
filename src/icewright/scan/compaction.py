"""Which data files a compaction rewrites, and in which groups (bin-packing).

The rules are Iceberg Java's ``SizeBasedFileRewriter`` defaults: a data file is a
candidate when it is under 75% or over 180% of the target file size, or was written with
an older partition spec; candidates of one (spec, partition) are packed first-fit
decreasing into groups of at most 100 GiB, and a group is rewritten when it has
``min_input_files`` files, or more than one file and more than a target file's worth of
data, or a file too large, or files of an older spec. With a ``delete_file_threshold``
(Java's ``delete-file-threshold`` option, off by default) a data file to which at least
that many delete files apply is a candidate too, and its group is rewritten whatever its
size: the rewrite applies the deletes, and the position deletes scoped to it go.

The provider plans with these (:func:`icewright.actions.rewrite.plan_groups`) and so do
Spark executors for big tables (:mod:`icewright.spark.rewrite_planning`), so both give the
same groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from icewright.scan.tasks import FileScanTask

__all__ = [
    "MAX_FILE_SIZE_RATIO",
    "MAX_GROUP_SIZE",
    "MIN_FILE_SIZE_RATIO",
    "CompactionRules",
]

MIN_FILE_SIZE_RATIO = 0.75
MAX_FILE_SIZE_RATIO = 1.80
MAX_GROUP_SIZE = 100 * 1024 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CompactionRules:
    """The candidate and grouping rules for one compaction (see the module docstring)."""

    target_file_size: int
    min_input_files: int
    spec_id: int
    """The table's default (current) partition spec."""
    delete_file_threshold: int | None = None
    """A data file with at least this many delete files is rewritten (None: never for
    its deletes alone)."""

    @property
    def low(self) -> float:
        """Files below this size are candidates."""
        return MIN_FILE_SIZE_RATIO * self.target_file_size

    @property
    def high(self) -> float:
        """Files above this size are candidates."""
        return MAX_FILE_SIZE_RATIO * self.target_file_size

    def is_candidate(self, task: FileScanTask) -> bool:
        """Whether the task's data file is rewritten if its group qualifies."""
        size = task.data_file.file_size_in_bytes
        return (
            size < self.low
            or size > self.high
            or task.spec_id != self.spec_id
            or self.too_many_deletes(task)
        )

    def too_many_deletes(self, task: FileScanTask) -> bool:
        """Whether at least :attr:`delete_file_threshold` delete files apply to the task."""
        threshold = self.delete_file_threshold
        return threshold is not None and len(task.delete_files) >= threshold

    def groups(self, spec_id: int, tasks: Iterable[FileScanTask]) -> list[list[FileScanTask]]:
        """The groups worth rewriting among the candidates ``tasks`` of one partition of
        spec ``spec_id``, each in a fixed order (largest file first, then by path)."""
        found: list[list[FileScanTask]] = []
        for packed in _bin_pack(tasks, MAX_GROUP_SIZE):
            size = sum(t.data_file.file_size_in_bytes for t in packed)
            too_large = any(t.data_file.file_size_in_bytes > self.high for t in packed)
            enough_content = len(packed) > 1 and size > self.target_file_size
            if (
                len(packed) >= self.min_input_files
                or enough_content
                or too_large
                or spec_id != self.spec_id
                or any(self.too_many_deletes(t) for t in packed)
            ):
                found.append(packed)
        return found


def _bin_pack(tasks: Iterable[FileScanTask], limit: int) -> list[list[FileScanTask]]:
    """First-fit decreasing by file size (ties by path) into bins of at most ``limit``
    bytes. The tie-break makes the groups independent of the order files were read in."""
    bins: list[tuple[int, list[FileScanTask]]] = []
    ordered = sorted(tasks, key=lambda t: (-t.data_file.file_size_in_bytes, t.data_file.file_path))
    for task in ordered:
        size = task.data_file.file_size_in_bytes
        for i, (used, items) in enumerate(bins):
            if used + size <= limit:
                items.append(task)
                bins[i] = (used + size, items)
                break
        else:
            bins.append((size, [task]))
    return [items for _, items in bins]
