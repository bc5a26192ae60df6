"""How a snapshot's files and manifests lie: the figures maintenance decides from.

:func:`file_layout` reads a snapshot's manifest list and every manifest once (delete
manifests first, indexed as scan planning does, then the data manifests a few at a time)
and keeps only counts: live data files and bytes, how many are small, a size histogram,
the delete files that apply to some live data file (spec: "Scan Planning", as
:class:`~icewright.scan.delete_index.DeleteFileIndex` decides), data manifests and how
many are small, and per partition how many data manifests hold its files (what planning
a query of one partition reads at least). Memory holds one manifest's entries at a time
plus a few counters per partition.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from icewright.io.base import FileIO
from icewright.manifest.data_file import ManifestContent, ManifestEntry, ManifestFile
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.scan.delete_index import DeleteFileIndex
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "SIZE_BUCKETS",
    "FileLayout",
    "PartitionLayout",
    "file_layout",
]

SIZE_BUCKETS: tuple[int, ...] = tuple(1024 * 4**i for i in range(11))
"""Lower bounds (bytes) of the size histogram's buckets after the first (under 1 KiB):
1 KiB, 4 KiB, 16 KiB ... 1 GiB."""

READ_WORKERS = 8
TOP_PARTITIONS = 40
"""Partitions listed one by one in :attr:`FileLayout.partitions` (those with the most
data manifests; ties by name)."""


@dataclass(frozen=True, slots=True)
class PartitionLayout:
    """One partition: its name (``day=2026-01-01/region=eu``; ``(unpartitioned)``), spec,
    live data files, the data manifests holding them, and the delete files applying to
    them."""

    name: str
    spec_id: int
    data_files: int
    manifests: int
    delete_files: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FileLayout:
    """A snapshot's files and manifests in numbers (see the module docstring).

    ``size_histogram`` pairs each bucket's lower bound in bytes (0, then
    :data:`SIZE_BUCKETS`) with the live data files in it. ``delete_files`` counts the
    distinct live delete files that apply to some live data file, ``files_with_deletes``
    the data files that have at least one. ``manifests_per_partition`` is the mean over
    partitions of the data manifests holding a partition's files;
    ``empty_manifests`` the manifests (data or delete) without a live file, which
    only the snapshot that wrote them needs; ``manifest_target_fill`` the data manifests
    a rewrite would write at least (each
    spec's manifest bytes over the target size, rounded up). ``partitions`` lists the
    :data:`TOP_PARTITIONS` partitions with the most data manifests.
    """

    data_files: int = 0
    data_bytes: int = 0
    records: int = 0
    small_files: int = 0
    small_file_bytes: int = 0
    size_histogram: tuple[tuple[int, int], ...] = ()
    delete_files: int = 0
    live_delete_files: int = 0
    files_with_deletes: int = 0
    data_manifests: int = 0
    delete_manifests: int = 0
    empty_manifests: int = 0
    data_manifest_specs: int = 0
    data_manifest_bytes: int = 0
    small_manifests: int = 0
    small_manifest_bytes: int = 0
    manifest_target_fill: int = 0
    partition_count: int = 0
    manifests_per_partition: float = 0.0
    max_manifests_per_partition: int = 0
    partitions: tuple[PartitionLayout, ...] = ()


def file_layout(
    metadata: TableMetadata,
    io: FileIO,
    snapshot: Snapshot | None,
    *,
    small_file_bytes: int,
    small_manifest_bytes: int,
    manifest_target_bytes: int,
    workers: int = READ_WORKERS,
) -> FileLayout:
    """The layout of ``snapshot`` of the table ``metadata`` (an empty one for None).

    A data file under ``small_file_bytes`` is small, and so is a data manifest under
    ``small_manifest_bytes``; ``manifest_target_bytes`` is the manifest rewrite's target.
    """
    if snapshot is None or snapshot.manifest_list is None:
        return FileLayout(
            small_file_bytes=small_file_bytes,
            small_manifest_bytes=small_manifest_bytes,
            size_histogram=tuple((low, 0) for low in (0, *SIZE_BUCKETS)),
        )
    manifests = read_manifest_list(io.read(snapshot.manifest_list), snapshot.manifest_list)
    data = [m for m in manifests if m.content is ManifestContent.DATA]
    deletes = [m for m in manifests if m.content is ManifestContent.DELETES]
    specs = metadata.specs_by_id()
    delete_entries = [e for entries in _read(io, deletes, workers, True) for e in entries]
    index = DeleteFileIndex(delete_entries, specs, metadata.schemas)
    with_deletes = bool(index.referenced_delete_files())
    need_metrics = index.has_equality_deletes
    tally = _Tally(small_file_bytes)
    for manifest, entries in zip(data, _read(io, data, workers, need_metrics), strict=True):
        tally.add_manifest(manifest, entries, index if with_deletes else None)
    by_spec: dict[int, int] = {}
    for m in data:
        by_spec[m.partition_spec_id] = by_spec.get(m.partition_spec_id, 0) + m.manifest_length
    fill = sum(-(-size // manifest_target_bytes) for size in by_spec.values())
    counts = [len(p.manifests) for p in tally.partitions.values()]
    return FileLayout(
        data_files=tally.files,
        data_bytes=tally.bytes,
        records=tally.records,
        small_files=tally.small,
        small_file_bytes=small_file_bytes,
        size_histogram=tuple(zip((0, *SIZE_BUCKETS), tally.histogram, strict=True)),
        delete_files=len(tally.applied),
        live_delete_files=sum(1 for e in delete_entries if e.is_live),
        files_with_deletes=tally.with_deletes,
        data_manifests=len(data),
        delete_manifests=len(deletes),
        data_manifest_specs=len(by_spec),
        empty_manifests=sum(
            1 for m in manifests if not (m.has_added_files() or m.has_existing_files())
        ),
        data_manifest_bytes=sum(m.manifest_length for m in data),
        small_manifests=sum(1 for m in data if m.manifest_length < small_manifest_bytes),
        small_manifest_bytes=small_manifest_bytes,
        manifest_target_fill=fill,
        partition_count=len(counts),
        manifests_per_partition=sum(counts) / len(counts) if counts else 0.0,
        max_manifests_per_partition=max(counts, default=0),
        partitions=_top(metadata, tally.partitions),
    )


class _Partition:
    __slots__ = ("delete_files", "files", "manifests")

    def __init__(self) -> None:
        self.files = 0
        self.manifests: set[int] = set()
        self.delete_files: set[str] = set()


class _Tally:
    """Counters over the data manifests, one manifest at a time."""

    def __init__(self, small_file_bytes: int) -> None:
        self.small_file_bytes = small_file_bytes
        self.files = self.bytes = self.records = self.small = self.with_deletes = 0
        self.histogram = [0] * (len(SIZE_BUCKETS) + 1)
        self.applied: set[str] = set()
        self.partitions: dict[tuple[Any, ...], _Partition] = {}
        self._manifests = 0

    def add_manifest(
        self,
        manifest: ManifestFile,
        entries: Iterable[ManifestEntry],
        index: DeleteFileIndex | None,
    ) -> None:
        number = self._manifests
        self._manifests += 1
        for entry in entries:
            if not entry.is_live:
                continue
            f = entry.data_file
            size = f.file_size_in_bytes
            self.files += 1
            self.bytes += size
            self.records += f.record_count
            if size < self.small_file_bytes:
                self.small += 1
            self.histogram[_bucket(size)] += 1
            key = (manifest.partition_spec_id, *_hashable(f.partition))
            part = self.partitions.get(key)
            if part is None:
                part = self.partitions[key] = _Partition()
            part.files += 1
            part.manifests.add(number)
            if index is not None and entry.sequence_number is not None:
                applied = index.for_data_file(f, entry.sequence_number)
                if applied:
                    self.with_deletes += 1
                    paths = [d.file_path for d in applied]
                    self.applied.update(paths)
                    part.delete_files.update(paths)


def _bucket(size: int) -> int:
    found = 0
    for i, low in enumerate(SIZE_BUCKETS, start=1):
        if size < low:
            break
        found = i
    return found


def _hashable(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(bytes(v) if isinstance(v, bytearray | memoryview) else v for v in values)


def _read(
    io: FileIO, manifests: Sequence[ManifestFile], workers: int, metrics: bool
) -> Iterator[list[ManifestEntry]]:
    """Each manifest's entries, in order, read ``workers`` at a time."""
    if not manifests:
        return iter(())
    options: dict[str, Any] = {} if metrics else {"metrics": ()}

    def entries(m: ManifestFile) -> list[ManifestEntry]:
        return read_manifest(io.read(m.manifest_path), m, **options)

    def run() -> Iterator[list[ManifestEntry]]:
        with ThreadPoolExecutor(max(1, min(workers, len(manifests)))) as pool:
            # a window of reads ahead: memory holds a few manifests, not all of them
            window = max(1, workers) * 2
            pending = deque(pool.submit(entries, m) for m in manifests[:window])
            for nxt in range(window, len(manifests) + window):
                yield pending.popleft().result()
                if nxt < len(manifests):
                    pending.append(pool.submit(entries, manifests[nxt]))

    return run()


def _top(
    metadata: TableMetadata, partitions: Mapping[tuple[Any, ...], _Partition]
) -> tuple[PartitionLayout, ...]:
    specs = metadata.specs_by_id()
    schema = metadata.schema()
    ranked = sorted(partitions.items(), key=lambda kv: (-len(kv[1].manifests), repr(kv[0])))
    out: list[PartitionLayout] = []
    for key, part in ranked[:TOP_PARTITIONS]:
        spec_id, values = key[0], key[1:]
        spec = specs.get(spec_id)
        if spec is None or spec.is_unpartitioned:
            name = "(unpartitioned)"
        else:
            try:
                name = spec.partition_to_path(values, schema)
            except Exception:  # an evolved schema may no longer name a source column
                name = "/".join(map(str, values))
        out.append(
            PartitionLayout(
                name=name,
                spec_id=spec_id,
                data_files=part.files,
                manifests=len(part.manifests),
                delete_files=len(part.delete_files),
            )
        )
    return tuple(out)
