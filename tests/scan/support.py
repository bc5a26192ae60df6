"""Helpers of the scan tests: rows, tables with real Parquet data files, and a test-only
row delta.

icewright has no row-delta operation yet, so :class:`RowDelta` (a small
:class:`~icewright.commit.snapshot_producer.SnapshotProducer`) commits delete files in a
delete manifest, optionally with explicit data sequence numbers, and can remove data
files (writing DELETED entries) to exercise the planner's status handling.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import Table
from icewright.commit.append import fast_append
from icewright.commit.snapshot_producer import SnapshotProducer
from icewright.commit.summary import SummaryBuilder
from icewright.io import LocalFileIO
from icewright.manifest import (
    DataFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestFile,
    ManifestWriter,
    read_manifest,
    read_manifest_list,
)
from icewright.scan.delete_index import DELETE_FILE_PATH_FIELD_ID
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    DateType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

UTC = dt.UTC
CATALOG_NAME = "scan"

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "region", StringType()),
    NestedField(4, "name", StringType()),
    NestedField(5, "score", DoubleType()),
    NestedField(6, "d", DateType()),
)

REGIONS = ("eu", "us", "apac", "latam")
NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
START = dt.datetime(2025, 11, 28, 20, tzinfo=UTC)


def make_rows(n: int, *, start: int = 0, step_hours: int = 7) -> list[dict[str, Any]]:
    """``n`` deterministic rows spread over regions, names, hours, days and months."""
    out = []
    for i in range(start, start + n):
        ts = START + dt.timedelta(hours=i * step_hours)
        out.append(
            {
                "id": i,
                "ts": ts,
                "region": REGIONS[i % len(REGIONS)],
                "name": None if i % 11 == 5 else NAMES[i % len(NAMES)],
                "score": float("nan") if i % 13 == 7 else (i * 1.5) - 20.0,
                "d": ts.date(),
            }
        )
    return out


def write(table: Table, rows: Sequence[dict[str, Any]]) -> list[DataFile]:
    """Real Parquet data files of ``rows`` (one per partition of the current spec)."""
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), rows))


def append(table: Table, rows: Sequence[dict[str, Any]]) -> Table:
    """Append ``rows`` in one snapshot; the refreshed table."""
    result = fast_append(table, write(table, rows))
    return result.table


def pause() -> None:
    """Let the clock move so that consecutive snapshots get distinct timestamps."""
    time.sleep(0.003)


class CountingFileIO(LocalFileIO):
    """A local FileIO that records every path it reads (thread-safe)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self._lock = threading.Lock()

    def read(self, path: str) -> bytes:
        with self._lock:
            self.reads.append(path)
        return super().read(path)


# --- delete files ---------------------------------------------------------------------------


def position_delete(
    table: Table,
    targets: Iterable[str],
    *,
    name: str,
    spec_id: int | None = None,
    partition: tuple[Any, ...] = (),
    referenced: bool = False,
    path_bounds: bool = True,
    records: int = 1,
) -> DataFile:
    """A position delete file record naming rows of ``targets`` (file_path bounds set)."""
    paths = sorted(targets)
    lower = upper = None
    if path_bounds and paths:
        lower = {DELETE_FILE_PATH_FIELD_ID: paths[0].encode()}
        upper = {DELETE_FILE_PATH_FIELD_ID: paths[-1].encode()}
    return DataFile(
        content=FileContent.POSITION_DELETES,
        file_path=f"{table.location}/data/{name}-pos-deletes.parquet",
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=records,
        file_size_in_bytes=100,
        lower_bounds=lower,
        upper_bounds=upper,
        spec_id=table.metadata.default_spec_id if spec_id is None else spec_id,
        referenced_data_file=paths[0] if referenced and len(paths) == 1 else None,
    )


def equality_delete(
    table: Table,
    *,
    name: str,
    equality_ids: tuple[int, ...] = (1,),
    spec_id: int | None = None,
    partition: tuple[Any, ...] = (),
    lower: dict[int, bytes] | None = None,
    upper: dict[int, bytes] | None = None,
    records: int = 1,
) -> DataFile:
    """An equality delete file record on ``equality_ids``."""
    return DataFile(
        content=FileContent.EQUALITY_DELETES,
        file_path=f"{table.location}/data/{name}-eq-deletes.parquet",
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=records,
        file_size_in_bytes=100,
        equality_ids=equality_ids,
        lower_bounds=lower,
        upper_bounds=upper,
        spec_id=table.metadata.default_spec_id if spec_id is None else spec_id,
    )


class RowDelta(SnapshotProducer):
    """Test-only: add data and delete files, and remove data files, in one snapshot.

    ``deletes`` items are delete files, or (delete file, data sequence number) pairs to
    pin an older data sequence number. Removed files get DELETED entries in a rewritten
    manifest that keeps the other files as EXISTING.
    """

    def __init__(
        self,
        table: Table,
        *,
        data: Iterable[DataFile] = (),
        deletes: Iterable[DataFile | tuple[DataFile, int]] = (),
        remove: Iterable[str] = (),
    ) -> None:
        super().__init__(table)
        self.data = list(data)
        self.deletes = [d if isinstance(d, tuple) else (d, None) for d in deletes]
        self.remove = set(remove)
        self._written: list[ManifestFile] | None = None

    def operation(self) -> Operation:
        if self.deletes or self.remove:
            return Operation.OVERWRITE if self.data else Operation.DELETE
        return Operation.APPEND

    def _write(
        self,
        base: TableMetadata,
        spec: PartitionSpec,
        content: ManifestContent,
        fill: Callable[[ManifestWriter], None],
    ) -> ManifestFile:
        writer = ManifestWriter(
            format_version=base.format_version,
            spec=spec,
            schema=base.schema(),
            snapshot_id=self.snapshot_id,
            content=content,
        )
        fill(writer)
        path = self.new_manifest_path(base)
        data, manifest = writer.finish(path)
        self.table.io.create(path, data)
        return manifest

    def _new_manifests(self, base: TableMetadata) -> list[ManifestFile]:
        if self._written is not None:
            return self._written
        out = []
        by_spec: dict[tuple[int, ManifestContent], list[tuple[DataFile, int | None]]] = {}
        for f in self.data:
            by_spec.setdefault((f.spec_id, ManifestContent.DATA), []).append((f, None))
        for f, seq in self.deletes:
            by_spec.setdefault((f.spec_id, ManifestContent.DELETES), []).append((f, seq))
        for (spec_id, content), files in sorted(by_spec.items()):

            def fill(w: ManifestWriter, files: list[tuple[DataFile, int | None]] = files) -> None:
                for f, seq in files:
                    w.add(f, data_sequence_number=seq)

            out.append(self._write(base, base.spec_by_id(spec_id), content, fill))
        self._written = out
        return out

    def manifests(
        self, base: TableMetadata, parent: Snapshot | None, summary: SummaryBuilder
    ) -> list[ManifestFile]:
        for f in self.data:
            summary.added_file(base.spec_by_id(f.spec_id), f)
        for f, _ in self.deletes:
            summary.added_file(base.spec_by_id(f.spec_id), f)
        kept: list[ManifestFile] = []
        if parent is not None and parent.manifest_list is not None:
            for m in read_manifest_list(self.table.io.read(parent.manifest_list)):
                if not self.remove or m.content is not ManifestContent.DATA:
                    kept.append(m)
                    continue
                entries = read_manifest(self.table.io.read(m.manifest_path), m)
                if not any(e.is_live and e.data_file.file_path in self.remove for e in entries):
                    kept.append(m)
                    continue

                def fill(w: ManifestWriter, entries: list[Any] = entries) -> None:
                    for e in entries:
                        if not e.is_live:
                            continue
                        f = e.data_file
                        if f.file_path in self.remove:
                            summary.deleted_file(base.spec_by_id(f.spec_id), f)
                            w.delete(
                                f,
                                data_sequence_number=e.sequence_number,
                                file_sequence_number=e.file_sequence_number,
                            )
                        else:
                            w.existing(
                                f,
                                snapshot_id=e.snapshot_id,
                                data_sequence_number=e.sequence_number,
                                file_sequence_number=e.file_sequence_number,
                            )

                kept.append(
                    self._write(base, base.spec_by_id(m.partition_spec_id), m.content, fill)
                )
        return [*self._new_manifests(base), *kept]


def row_delta(table: Table, **kwargs: Any) -> Table:
    """Commit a :class:`RowDelta`; the refreshed table."""
    return RowDelta(table, **kwargs).commit().table
