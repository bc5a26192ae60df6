"""Fast append (Iceberg Java's ``FastAppend``): add data files in a new manifest.

The parent snapshot's manifests are kept as they are; the new files go into one
new manifest per partition spec. An append never conflicts with anything: on a
lost race it re-applies on the refreshed table (spec: "Commit Conflict Resolution
and Retry").
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Unpack

from icewright.catalog.base import Table
from icewright.commit.snapshot_producer import SnapshotKeywords, SnapshotOptions, SnapshotProducer
from icewright.commit.summary import SummaryBuilder
from icewright.commit.update import CommitResult
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileContent, ManifestFile
from icewright.manifest.manifest import ManifestWriter
from icewright.manifest.manifest_list import ManifestListReader, ManifestListWriter
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata


class FastAppend(SnapshotProducer):
    """Append data files to a branch without rewriting existing manifests."""

    def __init__(
        self,
        table: Table,
        files: Iterable[DataFile] = (),
        *,
        options: SnapshotOptions | None = None,
        **keywords: Unpack[SnapshotKeywords],
    ) -> None:
        super().__init__(table, options=options, **keywords)
        self._files: list[DataFile] = []
        self._new_manifests: list[ManifestFile] | None = None
        self._spec_ids = frozenset(table.metadata.specs_by_id())
        for f in files:
            self.append_file(f)

    def append_file(self, data_file: DataFile) -> FastAppend:
        """Add one data file (of the table's current or an older partition spec)."""
        if data_file.content is not FileContent.DATA:
            raise ValidationError(
                f"{data_file.file_path}: an append adds data files; delete files go through "
                "a row-delta operation"
            )
        if data_file.spec_id not in self._spec_ids:
            raise ValidationError(
                f"{data_file.file_path}: partition spec {data_file.spec_id} is not a spec of "
                f"table {self.table.identifier}"
            )
        self._files.append(data_file)
        self._new_manifests = None
        return self

    def operation(self) -> Operation:
        return Operation.APPEND

    def _write_new_manifests(self, base: TableMetadata) -> list[ManifestFile]:
        if self._new_manifests is None:
            by_spec: dict[int, list[DataFile]] = {}
            for f in self._files:
                by_spec.setdefault(f.spec_id, []).append(f)
            written = []
            for spec_id, files in sorted(by_spec.items()):
                writer = ManifestWriter(
                    format_version=base.format_version,
                    spec=base.spec_by_id(spec_id),
                    schema=base.schema(),
                    snapshot_id=self.snapshot_id,
                )
                for f in files:
                    writer.add(f)
                path = self.new_manifest_path(base)
                data, manifest = writer.finish(path)
                self.table.io.create(path, data)
                written.append(manifest)
            self._new_manifests = written
        return self._new_manifests

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        new = self._added_manifests(base, parent, summary)
        if parent is None or parent.manifest_list is None:
            return new
        existing = _list_reader().read(
            self.table.io.read(parent.manifest_list), parent.manifest_list
        )
        return [*new, *existing]

    def list_manifests(
        self,
        base: TableMetadata,
        parent: Snapshot | None,
        summary: SummaryBuilder,
        writer: ManifestListWriter,
    ) -> None:
        # The parent's manifests are kept as they are, so its list's records are copied
        # (ManifestListWriter.add_list) instead of decoded and encoded again. A subclass
        # that changes the manifests (a cherry-pick) is given them decoded.
        if type(self).manifests is not FastAppend.manifests:
            super().list_manifests(base, parent, summary, writer)
            return
        writer.add_all(self._added_manifests(base, parent, summary))
        if parent is not None and parent.manifest_list is not None:
            writer.add_list(self.table.io.read(parent.manifest_list), parent.manifest_list)

    def _added_manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        """The manifests of the added files (written once), recorded in ``summary``."""
        if parent is not None and parent.manifest_list is None and parent.manifests:
            # An old v1 snapshot listing manifests inline: rewriting it as a manifest list
            # needs each manifest's counts; refuse rather than drop its files.
            raise ValidationError(
                f"snapshot {parent.snapshot_id} lists its manifests inline (an early v1 table); "
                "appending to it is not supported: rewrite the table with another engine first"
            )
        specs = base.specs_by_id()
        for f in self._files:
            spec = specs.get(f.spec_id)
            summary.added_file(spec if spec is not None else base.spec_by_id(f.spec_id), f)
        return self._write_new_manifests(base)


_READERS = threading.local()


def _list_reader() -> ManifestListReader:
    """This thread's manifest list reader.

    A parent's list is usually the previous commit's list plus one new record; the
    reader decodes only what it has not seen in the last list it read (see
    :class:`ManifestListReader`), so repeated appends in one process stop decoding the
    whole history each time.
    """
    reader: ManifestListReader | None = getattr(_READERS, "reader", None)
    if reader is None:
        reader = _READERS.reader = ManifestListReader()
    return reader


def fast_append(
    table: Table,
    files: Iterable[DataFile],
    *,
    options: SnapshotOptions | None = None,
    **keywords: Unpack[SnapshotKeywords],
) -> CommitResult:
    """Append ``files`` to ``table`` in one snapshot and commit it."""
    return FastAppend(
        table,
        files,
        options=options,
        **keywords,
    ).commit()
