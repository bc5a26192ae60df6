"""The merging append (Iceberg Java's ``MergeAppend``).

:class:`MergeAppend` appends data files and merges manifests per the table's
``commit.manifest*`` properties; :func:`append` picks it or the fast append as the
``commit.manifest-merge.enabled`` property says. Its base,
:class:`~icewright.commit.merging_snapshot_producer.MergingSnapshotProducer` (shared by
every operation that rewrites manifests), lives in its own module and is re-exported
here for compatibility.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.append import FastAppend
from icewright.commit.manifest_merge import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MERGE_ENABLED_DEFAULT,
    _bool_property,
)
from icewright.commit.merging_snapshot_producer import MergingSnapshotProducer, to_expression
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions
from icewright.commit.update import CommitResult
from icewright.manifest.data_file import DataFile
from icewright.spec.snapshots import Operation

__all__ = ["MergeAppend", "MergingSnapshotProducer", "append", "new_append", "to_expression"]


class MergeAppend(MergingSnapshotProducer):
    """Append data files and merge manifests per the table's ``commit.manifest*`` properties.

    An append never conflicts: on a lost race it re-applies on the refreshed table.
    """

    def __init__(
        self,
        table: Table,
        files: Iterable[DataFile] = (),
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        for f in files:
            self.append_file(f)

    def append_file(self, data_file: DataFile) -> MergeAppend:
        """Add one data file (of the table's current or an older partition spec)."""
        self._add_data_file(data_file)
        return self

    def operation(self) -> Operation:
        return Operation.APPEND


def new_append(
    table: Table,
    files: Iterable[DataFile] = (),
    *,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> MergeAppend | FastAppend:
    """An append of ``files``: a :class:`MergeAppend` when the table's
    ``commit.manifest-merge.enabled`` is true (the default), else a fast append."""
    merge = _bool_property(
        table.metadata.properties, MANIFEST_MERGE_ENABLED, MANIFEST_MERGE_ENABLED_DEFAULT
    )
    cls = MergeAppend if merge else FastAppend
    return cls(table, files, options=options, **keywords)


def append(
    table: Table,
    files: Iterable[DataFile],
    *,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Append ``files`` to ``table`` in one snapshot and commit it (see :func:`new_append`)."""
    return new_append(table, files, options=options, **keywords).commit()
