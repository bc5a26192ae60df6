"""Rewriting manifests (Java's ``BaseRewriteManifests``): entries keep their snapshot ids
and sequence numbers, manifests are clustered by partition and kept under the target
size, and the conflict rule of Java's action holds."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Table
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.delete import delete_files
from icewright.commit.rewrite_manifests import RewriteManifests, rewrite_manifests
from icewright.commit.row_delta import RowDelta
from icewright.commit.spec_update import UpdatePartitionSpec
from icewright.commit.update import commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import EntryStatus, FileContent, ManifestContent, ManifestFile
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from tests.commit.support import (
    FAST,
    avro_files,
    current_entries,
    duckdb_rows,
    one_file,
    position_delete_file,
    pyiceberg_read,
    referenced_metadata_files,
    rows,
    scan_rows,
)

Live = tuple[str, int | None, int | None, int | None, int]


def _live(table: Table) -> set[Live]:
    """(path, snapshot id, data and file sequence numbers, content) of every live entry."""
    return {
        (
            e.data_file.file_path,
            e.snapshot_id,
            e.sequence_number,
            e.file_sequence_number,
            int(e.data_file.content),
        )
        for _, e in current_entries(table)
    }


def _manifests(table: Table) -> list[ManifestFile]:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return read_manifest_list(table.io.read(snap.manifest_list))


def _appended(make_table: Callable[..., Table], appends: int = 6, **props: str) -> Table:
    """``appends`` fast appends of two files each, over four days and two regions."""
    table = make_table(**FAST, **props)
    for n in range(appends):
        files = [
            one_file(table, rows(2, 1 + (n + k) % 4, ("eu", "us")[k], 10 * n + 5 * k))
            for k in range(2)
        ]
        table = fast_append(table, files).table
    return table


def test_entries_keep_their_snapshot_ids_and_sequence_numbers(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table = _appended(make_table)
    before = _live(table)
    assert len(_manifests(table)) == 6
    head = table.metadata.current_snapshot()
    assert head is not None

    result = rewrite_manifests(table)

    assert result.committed and result.operation is not None
    assert result.operation.value == "replace"
    after = result.table
    assert _live(after) == before  # the same files, ids and both sequence numbers
    assert all(e.status is EntryStatus.EXISTING for _, e in current_entries(after))
    (new,) = _manifests(after)
    assert new.added_snapshot_id == result.snapshot_id
    assert new.sequence_number == result.sequence_number == head.sequence_number + 1
    assert new.min_sequence_number == 1  # the oldest data sequence number it holds
    assert (new.existing_files_count, new.added_files_count) == (12, 0)
    s = result.summary
    assert (s["manifests-created"], s["manifests-replaced"], s["manifests-kept"]) == ("1", "6", "0")
    assert s["entries-processed"] == "12"
    assert s["total-data-files"] == "12" and s["total-records"] == "24"
    assert "added-data-files" not in s and s["changed-partition-count"] == "0"
    # the entries as stored: explicit ids and sequence numbers (spec: inheritance)
    stored = read_manifest(after.io.read(new.manifest_path))
    assert {(e.data_file.file_path, e.snapshot_id, e.sequence_number) for e in stored} == {
        (p, sid, seq) for p, sid, seq, _, _ in before
    }
    assert scan_rows(after) == scan_rows(table)
    ids, _, ops = pyiceberg_read(tmp_path)
    assert ids == sorted(r[0] for r in scan_rows(table))
    assert ops == ["append"] * 6 + ["replace"]
    assert duckdb_rows(after.metadata_location) == scan_rows(table)


def test_entries_are_clustered_by_partition_under_the_target_size(
    make_table: Callable[..., Table],
) -> None:
    table = _appended(make_table, appends=24)
    target = 6_000  # a few entries a manifest (a header is about 4.5 kB)

    result = RewriteManifests(table, target_size_bytes=target).commit()

    manifests = _manifests(result.table)
    assert len(manifests) > 3
    assert all(m.manifest_length <= target for m in manifests)
    ranges = []
    for m in manifests:
        entries = read_manifest(result.table.io.read(m.manifest_path), m)
        parts = [e.data_file.partition for e in entries]
        assert parts == sorted(parts)  # sorted within
        ranges.append((parts[0], parts[-1]))
    # and across: each manifest starts at or after where the previous one ended
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    assert result.summary["manifests-created"] == str(len(manifests))
    assert _live(result.table) == _live(table)


def test_the_table_property_sets_the_target_size(make_table: Callable[..., Table]) -> None:
    table = _appended(make_table, appends=12, **{"commit.manifest.target-size-bytes": "6000"})
    result = rewrite_manifests(table)
    assert len(_manifests(result.table)) > 1
    assert all(m.manifest_length <= 6000 for m in _manifests(result.table))


def test_delete_manifests_are_kept_as_they_are(make_table: Callable[..., Table]) -> None:
    table = _appended(make_table, appends=3)
    target = next(
        e.data_file for _, e in current_entries(table) if e.data_file.content is FileContent.DATA
    )
    table = RowDelta(table).add_deletes(position_delete_file(table, target, [0])).commit().table
    deletes = [m for m in _manifests(table) if m.content is ManifestContent.DELETES]
    before = _live(table)

    result = rewrite_manifests(table)

    after = _manifests(result.table)
    assert [m for m in after if m.content is ManifestContent.DELETES] == [
        m.replace() for m in deletes
    ]
    assert len([m for m in after if m.content is ManifestContent.DATA]) == 1
    assert _live(result.table) == before
    assert scan_rows(result.table) == scan_rows(table)  # the delete still applies


def test_only_the_given_spec_is_rewritten(make_table: Callable[..., Table]) -> None:
    table = _appended(make_table, appends=3)
    table = UpdatePartitionSpec(table).remove_field("region").commit().table
    for n in range(3):
        table = fast_append(table, [one_file(table, rows(2, 9, "eu", 100 + n * 2))]).table
    old_spec = [m for m in _manifests(table) if m.partition_spec_id == 0]
    assert len(old_spec) == 3

    result = RewriteManifests(table, spec_id=1).commit()

    after = _manifests(result.table)
    assert [m for m in after if m.partition_spec_id == 0] == old_spec
    assert len([m for m in after if m.partition_spec_id == 1]) == 1
    assert result.summary["manifests-kept"] == "3"
    # every spec by default
    both = rewrite_manifests(result.table)
    assert sorted(m.partition_spec_id for m in _manifests(both.table)) == [0, 1]
    assert _live(both.table) == _live(table)


def test_nothing_to_rewrite_commits_nothing(make_table: Callable[..., Table]) -> None:
    empty = make_table("db.empty", **FAST)
    assert not rewrite_manifests(empty).committed
    table = _appended(make_table, appends=1)
    location = table.metadata_location
    result = rewrite_manifests(table)
    assert not result.committed and result.table.metadata_location == location
    with pytest.raises(ValidationError, match="partition spec 5 is not a spec"):
        RewriteManifests(table, spec_id=5)
    with pytest.raises(ValidationError, match="target_size_bytes must be a positive"):
        RewriteManifests(table, target_size_bytes=0)


def test_a_concurrent_append_is_kept_when_the_commit_retries(
    make_table: Callable[..., Table],
) -> None:
    table = _appended(make_table, appends=4)
    op = RewriteManifests(table)
    planned = op.plan()
    other = FastAppend(table, [one_file(table, rows(1, 3, "eu", 500))]).commit().table
    appended = _manifests(other)[0]

    result = op.commit()

    after = _manifests(result.table)
    assert after[1:] == [appended]  # new manifests first, then the one appended meanwhile
    assert after[0].manifest_path == planned.created[0].manifest_path
    assert result.summary["manifests-kept"] == "1"
    assert _live(result.table) == _live(other)
    assert avro_files(result.table) == referenced_metadata_files(result.table)


def test_a_rewritten_manifest_gone_from_the_head_fails_the_commit(
    make_table: Callable[..., Table],
) -> None:
    table = _appended(make_table, appends=4)
    op = RewriteManifests(table)
    op.plan()
    gone = next(iter(_live(table)))[0]
    delete_files(table, paths=[gone])  # rewrites the manifest that held it

    with pytest.raises(ValidationError, match="is no longer in the head of branch 'main'"):
        op.commit()

    final = table.refresh()
    assert final.metadata.current_snapshot() is not None
    assert gone not in {p for p, *_ in _live(final)}
    # the manifests the failed rewrite wrote are gone too
    assert avro_files(final) == referenced_metadata_files(final)


def test_a_lost_race_reapplies_on_the_new_head(
    make_table: Callable[..., Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first swap loses (another commit lands in between); the retry lists the same
    new manifests on the new head."""
    table = _appended(make_table, appends=3)
    op = RewriteManifests(table)
    catalog = table.catalog
    real = catalog.commit_changes
    calls: list[Any] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not calls:
            calls.append(None)  # the other commit passes through here too
            calls[0] = FastAppend(table, [one_file(table, rows(1, 2, "us", 900))]).commit()
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog, "commit_changes", racing)
    result = op.commit()
    assert result.committed and len(calls) == 1
    assert _live(result.table) == _live(calls[0].table)
    assert len(_manifests(result.table)) == 2
    assert avro_files(result.table) == referenced_metadata_files(result.table)


@pytest.mark.parametrize("format_version", [1, 2])
def test_format_versions(make_table: Callable[..., Table], format_version: int) -> None:
    table = make_table(format_version=format_version, **FAST)
    batches = [[one_file(table, rows(2, d, "eu", 10 * d))] for d in range(1, 4)]
    table = commit_updates(table, [FastAppend(table, b) for b in batches]).table
    result = rewrite_manifests(table)
    assert result.committed and _live(result.table) == _live(table)
    assert scan_rows(result.table) == scan_rows(table)
