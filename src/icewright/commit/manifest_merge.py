"""Merging small manifests into bigger ones (Iceberg Java's ``ManifestMergeManager``).

Every commit adds at least one manifest; without merging, a table's manifest list grows
by one entry per commit and scan planning slows down. Merging bin-packs the manifests of
a new snapshot, per partition spec, into manifests of about
``commit.manifest.target-size-bytes`` (8 MiB), when ``commit.manifest-merge.enabled``
(true). The table properties are Java's, and so is the packing:

* manifests are grouped by partition spec, highest spec id first, order kept within;
* each group is packed from its end with a look-back of one bin, so the bin that stays
  under-filled is the first one -- the one holding the commit's new manifest -- and old
  manifests are not reordered;
* a bin with one manifest is kept as is; the bin holding the first (new) manifest is
  merged only when it has at least ``commit.manifest.min-count-to-merge`` (100)
  manifests, so that a few large manifests do not prevent merging; every other bin of
  two or more manifests is merged.

A merged manifest keeps this snapshot's ADDED entries as ADDED and this snapshot's
DELETED entries as DELETED; every other live entry becomes EXISTING (with its snapshot
id and sequence numbers), and entries deleted by earlier snapshots are dropped. Merged
manifests are cached by their bin, so a retry reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from icewright.commit.manifest_filter import ManifestStore
from icewright.errors import ValidationError
from icewright.manifest.data_file import EntryStatus, ManifestContent, ManifestEntry, ManifestFile

__all__ = [
    "MANIFEST_MERGE_ENABLED",
    "MANIFEST_MERGE_ENABLED_DEFAULT",
    "MANIFEST_MIN_MERGE_COUNT",
    "MANIFEST_MIN_MERGE_COUNT_DEFAULT",
    "MANIFEST_TARGET_SIZE_BYTES",
    "MANIFEST_TARGET_SIZE_BYTES_DEFAULT",
    "ManifestMerger",
    "pack_end",
]

MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
MANIFEST_MERGE_ENABLED_DEFAULT = True
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"
MANIFEST_MIN_MERGE_COUNT_DEFAULT = 100
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
MANIFEST_TARGET_SIZE_BYTES_DEFAULT = 8 * 1024 * 1024

T = TypeVar("T")


@dataclass(slots=True)
class _Bin(Generic[T]):
    items: list[T] = field(default_factory=list)
    weight: int = 0


def _pack(
    items: Sequence[T], weight: Callable[[T], int], target: int, lookback: int
) -> list[list[T]]:
    """First-fit packing over the last ``lookback`` open bins (Java's ``PackingIterator``)."""
    done: list[list[T]] = []
    open_bins: list[_Bin[T]] = []
    for item in items:
        w = weight(item)
        for b in open_bins:
            if b.weight + w <= target:
                b.items.append(item)
                b.weight += w
                break
        else:
            open_bins.append(_Bin([item], w))
            if len(open_bins) > lookback:
                done.append(open_bins.pop(0).items)
    done.extend(b.items for b in open_bins)
    return done


def pack_end(
    items: Sequence[T], weight: Callable[[T], int], target: int, lookback: int = 1
) -> list[list[T]]:
    """Bins of ``items`` packed from the end, in the items' order (Java's ``packEnd``)."""
    bins = _pack(list(reversed(items)), weight, target, lookback)
    return [list(reversed(b)) for b in reversed(bins)]


def _bool_property(props: Mapping[str, str], key: str, default: bool) -> bool:
    value = props.get(key)
    if value is None:
        return default
    if value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValidationError(f"table property {key}={value!r} must be true or false")


def _int_property(props: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise ValidationError(
            f"table property {key}={value!r} must be a whole number; fix or unset it"
        ) from None
    if number < minimum:
        raise ValidationError(f"table property {key}={value!r} must be at least {minimum}")
    return number


class ManifestMerger:
    """Bin-packs the manifests of one content kind of a new snapshot."""

    def __init__(
        self,
        *,
        target_size_bytes: int = MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
        min_count_to_merge: int = MANIFEST_MIN_MERGE_COUNT_DEFAULT,
        enabled: bool = MANIFEST_MERGE_ENABLED_DEFAULT,
    ) -> None:
        self.target_size_bytes = target_size_bytes
        self.min_count_to_merge = min_count_to_merge
        self.enabled = enabled
        self._merged: dict[tuple[str, ...], ManifestFile] = {}

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> ManifestMerger:
        """The merger a table's ``commit.manifest*`` properties ask for."""
        return cls(
            target_size_bytes=_int_property(
                properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT, 1
            ),
            min_count_to_merge=_int_property(
                properties, MANIFEST_MIN_MERGE_COUNT, MANIFEST_MIN_MERGE_COUNT_DEFAULT, 0
            ),
            enabled=_bool_property(
                properties, MANIFEST_MERGE_ENABLED, MANIFEST_MERGE_ENABLED_DEFAULT
            ),
        )

    def merge(
        self,
        manifests: Sequence[ManifestFile],
        *,
        snapshot_id: int,
        content: ManifestContent,
        store: ManifestStore,
    ) -> list[ManifestFile]:
        """The manifests of the new snapshot after merging; the first of ``manifests`` is
        the commit's new manifest (if it has one)."""
        if not self.enabled or not manifests:
            return list(manifests)
        first = manifests[0].manifest_path
        groups: dict[int, list[ManifestFile]] = {}
        for m in manifests:
            groups.setdefault(m.partition_spec_id, []).append(m)
        out: list[ManifestFile] = []
        for spec_id in sorted(groups, reverse=True):
            bins = pack_end(groups[spec_id], lambda m: m.manifest_length, self.target_size_bytes)
            for b in bins:
                if len(b) == 1:
                    out.append(b[0])
                elif any(m.manifest_path == first for m in b) and len(b) < self.min_count_to_merge:
                    out.extend(b)
                else:
                    out.append(self._merged_manifest(spec_id, b, snapshot_id, content, store))
        return out

    def _merged_manifest(
        self,
        spec_id: int,
        bin_: list[ManifestFile],
        snapshot_id: int,
        content: ManifestContent,
        store: ManifestStore,
    ) -> ManifestFile:
        key = tuple(m.manifest_path for m in bin_)
        cached = self._merged.get(key)
        if cached is not None:
            return cached
        entries: list[ManifestEntry] = []
        for m in bin_:
            for e in store.read_entries(m):
                if e.status is EntryStatus.DELETED:
                    # Deletes of earlier snapshots are not carried forward.
                    if e.snapshot_id == snapshot_id:
                        entries.append(e)
                elif e.status is EntryStatus.ADDED and e.snapshot_id == snapshot_id:
                    entries.append(e)
                else:
                    entries.append(e.replace(status=EntryStatus.EXISTING))
        merged = store.write_manifest(spec_id, content, entries)
        self._merged[key] = merged
        return merged
