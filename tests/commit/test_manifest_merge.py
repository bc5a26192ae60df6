"""Manifest merging (Java's ``ManifestMergeManager``): packing rules and real merges.

The expected bins of the unit tests are worked out by hand from Java's algorithm
(``BinPacking.ListPacker.packEnd`` with a look-back of 1, ``mergeGroup``'s rules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icewright.catalog import Table
from icewright.commit.manifest_merge import ManifestMerger, pack_end
from icewright.commit.merge_append import MergeAppend
from icewright.errors import ValidationError
from icewright.manifest.data_file import (
    EntryStatus,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.manifest.manifest_list import read_manifest_list
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    files_for,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
)

# --- packing -------------------------------------------------------------------------


def test_pack_end_leaves_the_first_bin_underfilled() -> None:
    # Packed from the end: 4+5 fit in 10, 5 does not join them, then 1 joins 5.
    assert pack_end([1, 5, 5, 4], lambda x: x, 10) == [[1, 5], [5, 4]]
    # An item heavier than the target gets a bin of its own.
    assert pack_end([3, 20, 3], lambda x: x, 10) == [[3], [20], [3]]
    # With a look-back of one, an earlier bin is closed even if a later item would fit it.
    assert pack_end([2, 9, 2], lambda x: x, 10) == [[2], [9], [2]]
    assert pack_end([], lambda x: x, 10) == []


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=30), st.integers(1, 40))
def test_pack_end_keeps_order_and_respects_the_target(items: list[int], target: int) -> None:
    bins = pack_end(items, lambda x: x, target)
    assert [x for b in bins for x in b] == items
    for b in bins:
        assert b and (len(b) == 1 or sum(b) <= target)


def _m(path: str, length: int, spec_id: int = 0) -> ManifestFile:
    return ManifestFile(
        manifest_path=path, manifest_length=length, partition_spec_id=spec_id, added_snapshot_id=1
    )


class RecordingStore:
    """Records which manifests each merge reads; reads and writes no files."""

    def __init__(self) -> None:
        self.bins: list[list[str]] = []
        self._closed = True

    def read_entries(self, manifest: ManifestFile) -> list[ManifestEntry]:
        if not self.bins or self._closed:
            self.bins.append([])
            self._closed = False
        self.bins[-1].append(manifest.manifest_path)
        return []

    def write_manifest(
        self, spec_id: int, content: ManifestContent, entries: Sequence[ManifestEntry]
    ) -> ManifestFile:
        self._closed = True
        return _m(f"merged{len(self.bins)}", 1, spec_id)


def _merge(
    merger: ManifestMerger, manifests: list[ManifestFile]
) -> tuple[list[str], list[list[str]]]:
    store = RecordingStore()
    out = merger.merge(manifests, snapshot_id=1, content=ManifestContent.DATA, store=store)
    return [m.manifest_path for m in out], store.bins


def test_bin_with_the_new_manifest_waits_for_the_min_count() -> None:
    new, a, b, c = _m("new", 1), _m("a", 5), _m("b", 5), _m("c", 1)
    merger = ManifestMerger(target_size_bytes=10, min_count_to_merge=100)
    # Bins (from the end): [b, c] and [new, a]; the bin holding the new manifest has fewer
    # than 100 manifests and is kept; the older bin is merged anyway.
    out, bins = _merge(merger, [new, a, b, c])
    assert out == ["new", "a", "merged1"]
    assert bins == [["b", "c"]]
    merger = ManifestMerger(target_size_bytes=10, min_count_to_merge=2)
    out, bins = _merge(merger, [new, a, b, c])
    assert out == ["merged1", "merged2"] and bins == [["new", "a"], ["b", "c"]]


def test_merging_groups_by_spec_highest_first_and_can_be_disabled() -> None:
    manifests = [_m("new", 1, 0), _m("old1", 1, 1), _m("old0", 1, 0), _m("old1b", 1, 1)]
    merger = ManifestMerger(target_size_bytes=100, min_count_to_merge=2)
    out, bins = _merge(merger, manifests)
    assert bins == [["old1", "old1b"], ["new", "old0"]]
    assert out == ["merged1", "merged2"]
    off = ManifestMerger(target_size_bytes=100, min_count_to_merge=2, enabled=False)
    assert _merge(off, manifests)[0] == ["new", "old1", "old0", "old1b"]


def test_merger_reads_table_properties() -> None:
    merger = ManifestMerger.from_properties({})
    assert (merger.target_size_bytes, merger.min_count_to_merge, merger.enabled) == (
        8 * 1024 * 1024,
        100,
        True,
    )
    custom = ManifestMerger.from_properties(
        {
            "commit.manifest.target-size-bytes": "1024",
            "commit.manifest.min-count-to-merge": "3",
            "commit.manifest-merge.enabled": "FALSE",
        }
    )
    assert (custom.target_size_bytes, custom.min_count_to_merge, custom.enabled) == (
        1024,
        3,
        False,
    )
    with pytest.raises(ValidationError, match="whole number"):
        ManifestMerger.from_properties({"commit.manifest.min-count-to-merge": "lots"})
    with pytest.raises(ValidationError, match="true or false"):
        ManifestMerger.from_properties({"commit.manifest-merge.enabled": "yes"})


# --- real merges on a table --------------------------------------------------------------


def _manifest_count(table: Table) -> int:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return len(read_manifest_list(table.io.read(snap.manifest_list)))


def test_merge_kicks_in_at_the_min_count(make_table: Callable[..., Table], tmp_path: Path) -> None:
    table = make_table(**FAST, **{"commit.manifest.min-count-to-merge": "3"})
    counts = []
    snapshot_ids = []
    for i in range(5):
        result = MergeAppend(table, files_for(table, rows(2, 1, "eu", 10 * i))).commit()
        table = result.table
        counts.append(_manifest_count(table))
        snapshot_ids.append(result.snapshot_id)
    # 1, 2, then new + 2 old = 3 manifests merge into 1; then 2; then 3 again merge.
    assert counts == [1, 2, 1, 2, 1]
    entries = current_entries(table)
    assert len({m.manifest_path for m, _ in entries}) == 1
    by_snapshot = {e.snapshot_id: e for _, e in entries}
    # The new file stays ADDED; the others are EXISTING with the snapshot and sequence
    # number that added them (spec: "Manifest Entry Fields").
    assert by_snapshot[snapshot_ids[-1]].status is EntryStatus.ADDED
    for seq, sid in enumerate(snapshot_ids[:-1], start=1):
        e = by_snapshot[sid]
        assert e.status is EntryStatus.EXISTING
        assert (e.sequence_number, e.file_sequence_number) == (seq, seq)
    ids, snaps, _ = pyiceberg_read(tmp_path)
    assert ids == sorted(10 * i + j for i in range(5) for j in range(2))
    assert snaps == snapshot_ids
    # Merged-away manifests stay referenced by the older snapshots; nothing is orphaned.
    assert avro_files(table) == referenced_metadata_files(table)


def test_default_min_count_keeps_manifests_apart(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST)
    for i in range(4):
        table = MergeAppend(table, files_for(table, rows(1, 1, "eu", i))).commit().table
    assert _manifest_count(table) == 4


def test_target_size_bounds_the_merge(make_table: Callable[..., Table]) -> None:
    table = make_table(**FAST, **{"commit.manifest.min-count-to-merge": "2"})
    table = MergeAppend(table, files_for(table, rows(1, 1, "eu", 0))).commit().table
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    size = read_manifest_list(table.io.read(snap.manifest_list))[0].manifest_length
    # A target below one manifest's size puts every manifest in a bin of its own.
    from icewright.commit.properties import UpdateProperties

    update = UpdateProperties(table).set("commit.manifest.target-size-bytes", str(size - 1))
    table = update.commit().table
    for i in range(1, 4):
        table = MergeAppend(table, files_for(table, rows(1, 1, "eu", i))).commit().table
        assert _manifest_count(table) == i + 1


def test_merged_manifest_drops_older_deletes(make_table: Callable[..., Table]) -> None:
    from icewright.commit.delete import DeleteFiles

    table = make_table(**FAST, **{"commit.manifest.min-count-to-merge": "2"})
    first = files_for(table, rows(2, 1, "eu", 0) + rows(2, 2, "us", 10))
    table = MergeAppend(table, first).commit().table
    table = DeleteFiles(table).delete_from_row_filter("region = 'us'").commit().table
    # The delete snapshot's manifest has a DELETED entry; merging it away drops the entry.
    assert any(not e.is_live for _, e in current_entries(table, live_only=False))
    table = MergeAppend(table, files_for(table, rows(1, 3, "eu", 20))).commit().table
    entries = current_entries(table, live_only=False)
    assert _manifest_count(table) == 1
    assert all(e.is_live for _, e in entries)
    assert sorted(e.data_file.record_count for _, e in entries) == [1, 2]


@pytest.mark.parametrize("huge", [False, True])
def test_merged_manifests_stay_within_the_target(
    make_table: Callable[..., Table], huge: bool
) -> None:
    table = make_table(**FAST, **{"commit.manifest.min-count-to-merge": "2"})
    table = MergeAppend(table, files_for(table, rows(1, 1, "eu", 0))).commit().table
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    size = read_manifest_list(table.io.read(snap.manifest_list))[0].manifest_length
    # Room for two single-file manifests and a few more entries (each adds ~50 bytes to a
    # compressed manifest): merges go on until the merged manifest is too big to pair.
    target = size * 1000 if huge else 2 * size + 150
    from icewright.commit.properties import UpdateProperties

    update = UpdateProperties(table).set("commit.manifest.target-size-bytes", str(target))
    table = update.commit().table
    counts = []
    for i in range(1, 9):
        table = MergeAppend(table, files_for(table, rows(1, 1, "eu", i))).commit().table
        snap = table.metadata.current_snapshot()
        assert snap is not None and snap.manifest_list is not None
        manifests = read_manifest_list(table.io.read(snap.manifest_list))
        counts.append(len(manifests))
        # Bins never exceed the target, so neither does a merged manifest.
        assert all(m.manifest_length <= target for m in manifests)
    if huge:
        assert counts == [1] * 8  # everything fits one bin: always merged into one
    else:
        assert max(counts) >= 2  # the merged manifest grew too big to take more
    assert len(current_entries(table)) == 9
