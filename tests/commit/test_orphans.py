"""Remove orphan files: unreferenced old files go; referenced and young ones stay."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import FileSystemCatalog, SqlCatalog, Table
from icewright.commit.append import fast_append
from icewright.commit.expire import expire_snapshots
from icewright.commit.orphans import FileKey, file_key, remove_orphan_files
from icewright.errors import ValidationError
from icewright.io.local import local_path
from icewright.spec.statistics import StatisticsFile
from tests.commit.support import SCHEMA
from tests.commit.test_expire import (
    _overwrite_history,
    all_files,
    append,
    files_for,
    manifests_of,
    pyiceberg_view,
    rows,
)

DAY_MS = 86_400_000


def age_everything(table: Table, days: int = 10) -> None:
    """Set every file under the table location to ``days`` old."""
    when = time.time() - days * DAY_MS / 1000
    for info in table.io.list_prefix(table.location):
        os.utime(local_path(info.path), (when, when))


def stray(table: Table, relative: str, days_old: float | None = 10) -> str:
    path = f"{table.location}/{relative}"
    table.io.create(path, b"left behind by a failed job")
    if days_old is not None:
        when = time.time() - days_old * DAY_MS / 1000
        os.utime(local_path(path), (when, when))
    return path


def test_old_unreferenced_files_go_referenced_and_young_ones_stay(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    t, f = _overwrite_history(make_table())
    snaps = t.metadata.snapshots
    last = snaps[-1]
    # Expire without cleanup: what only the old snapshots reached is now unreferenced.
    expired_manifests = {m.manifest_path for s in snaps[:-1] for m in manifests_of(t, s)} - {
        m.manifest_path for m in manifests_of(t, last)
    }
    expire_snapshots(t, older_than_ms=last.timestamp_ms, clean_files=False)
    t = t.refresh()
    age_everything(t)
    strays = {stray(t, "data/region=eu/stray.parquet"), stray(t, "metadata/stray.avro")}
    young = stray(t, "data/young.parquet", days_old=1)  # within the default 3 days
    before = all_files(t)

    result = remove_orphan_files(t)

    expected = (
        strays
        | expired_manifests
        | {s.manifest_list for s in snaps[:-1] if s.manifest_list}
        | {f["a1"].file_path, f["d1"].file_path}
    )
    assert set(result.orphan_paths) == expected
    assert result.deleted == len(expected) and not result.dry_run
    assert result.too_new == 1 and result.failed == ()
    assert result.listed == len(before)
    assert all_files(t) == before - expected
    assert t.io.exists(young)
    assert t.io.exists(t.metadata_location)
    assert all(t.io.exists(e.metadata_file) for e in t.metadata.metadata_log)
    ids, snapshots = pyiceberg_view(tmp_path)
    assert ids == [100, 101, 102, 200, 201]
    assert snapshots == [last.snapshot_id]


def test_dry_run_lists_and_deletes_nothing(make_table: Callable[..., Table]) -> None:
    t = append(make_table(), rows(2))
    orphan = stray(t, "data/orphan.parquet")
    before = all_files(t)
    result = remove_orphan_files(t, dry_run=True, older_than_ms=int(time.time() * 1000) + 60_000)
    assert result.dry_run and result.orphan_paths == (orphan,) and result.deleted == 0
    assert all_files(t) == before


def test_cutoff_is_explicit_and_keeps_files_not_older(make_table: Callable[..., Table]) -> None:
    t = append(make_table(), rows(2))
    age_everything(t, days=10)
    two_days = stray(t, "data/two-days.parquet", days_old=2)
    five_days = stray(t, "data/five-days.parquet", days_old=5)
    cutoff = int(time.time() * 1000) - 4 * DAY_MS
    result = remove_orphan_files(t, older_than_ms=cutoff)
    assert result.orphan_paths == (five_days,)
    assert result.too_new == 1 and t.io.exists(two_days)
    assert result.older_than_ms == cutoff


def test_file_uri_and_plain_paths_compare_equal(tmp_path: Path) -> None:
    # The metadata says file:///...; the listing is done with plain paths, and vice versa.
    cat = SqlCatalog("uri", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    t = append(cat.create_table("db.t", SCHEMA), rows(3))
    assert t.location.startswith("file:///")
    age_everything(t)
    orphan = stray(t, "data/orphan.parquet")
    plain = local_path(t.location)
    referenced_before = all_files(t) - {orphan}

    result = remove_orphan_files(
        t, location=plain, dry_run=True, older_than_ms=int(time.time() * 1000)
    )
    assert result.orphan_paths == (local_path(orphan),)

    # The Hadoop form file:/... lists as file:/... too; still only the orphan.
    result = remove_orphan_files(t, location=f"file:{plain}")
    assert result.orphan_paths == (f"file:{local_path(orphan)}",)
    assert all_files(t) == referenced_before
    cat.close()


def test_a_path_under_another_authority_is_a_conflict(make_table: Callable[..., Table]) -> None:
    t = append(make_table(), rows(1))
    # A data file the metadata names under a host: the same path exists locally.
    real = files_for(t, rows(1, 2))[0]
    other = real.replace(file_path=f"file://otherhost{local_path(real.file_path)}")
    t = fast_append(t, [other]).table
    age_everything(t)
    orphan = stray(t, "data/orphan.parquet")
    with pytest.raises(ValidationError, match="another scheme or authority"):
        remove_orphan_files(t)
    assert t.io.exists(orphan) and t.io.exists(real.file_path)


def test_unreadable_reference_refuses_and_deletes_nothing(
    make_table: Callable[..., Table],
) -> None:
    t = append(append(make_table(), rows(1)), rows(1, 2))
    age_everything(t)
    orphan = stray(t, "data/orphan.parquet")
    manifest = manifests_of(t, t.metadata.snapshots[0])[0].manifest_path
    Path(local_path(manifest)).write_bytes(b"garbage")
    before = all_files(t)
    with pytest.raises(ValidationError, match=r"cannot list every file.*Nothing was deleted"):
        remove_orphan_files(t)
    assert all_files(t) == before and t.io.exists(orphan)


def test_gc_disabled_is_refused(make_table: Callable[..., Table]) -> None:
    t = append(make_table(**{"gc.enabled": "false"}), rows(1))
    orphan = stray(t, "data/orphan.parquet")
    with pytest.raises(ValidationError, match="garbage collection is disabled"):
        remove_orphan_files(t)
    assert t.io.exists(orphan)


def test_statistics_files_are_referenced(make_table: Callable[..., Table]) -> None:
    t = append(make_table(), rows(1))
    stats = f"{t.location}/metadata/stats.puffin"
    t.io.create(stats, b"PFA1")
    md = dataclasses.replace(
        t.metadata,
        statistics=(StatisticsFile(t.metadata.snapshots[0].snapshot_id, stats, 4, 0),),
    )
    t.catalog.commit_table(
        t.identifier,
        t.metadata_location,
        md.with_previous_metadata(t.metadata_location, md.last_updated_ms),
    )
    t = t.refresh()
    age_everything(t)
    orphan = stray(t, "metadata/orphan.puffin")
    assert remove_orphan_files(t).orphan_paths == (orphan,)
    assert t.io.exists(stats)


def test_file_system_catalog_keeps_version_hint_and_logged_metadata(tmp_path: Path) -> None:
    cat = FileSystemCatalog("fs", str(tmp_path / "fswh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA, properties={"write.metadata.previous-versions-max": "1"})
    t = append(append(append(t, rows(1)), rows(1, 2)), rows(1, 3))
    hint = f"{t.location}/metadata/version-hint.text"
    assert t.io.exists(hint)
    age_everything(t)
    # With one previous version kept, v1 and v2 dropped out of the metadata log.
    dropped = {f"{t.location}/metadata/v1.metadata.json", f"{t.location}/metadata/v2.metadata.json"}
    assert not dropped & {e.metadata_file for e in t.metadata.metadata_log}

    result = remove_orphan_files(t)

    assert set(result.orphan_paths) == dropped
    assert t.io.exists(hint) and t.io.exists(t.metadata_location)
    assert t.refresh().metadata.current_snapshot_id == t.metadata.current_snapshot_id


def test_s3_schemes_compare_equal_and_buckets_conflict(s3_server: Any) -> None:
    bucket = s3_server.new_bucket()
    cat = FileSystemCatalog("s3", f"s3://{bucket}/wh", **s3_server.properties)
    cat.create_namespace("db")
    t = append(cat.create_table("db.t", SCHEMA), rows(2))
    orphan = stray_s3(t, "data/orphan.parquet")
    time.sleep(2.1)  # files of the last two seconds are never candidates (CLOCK_SLACK_MS)
    key_prefix = t.location.removeprefix(f"s3://{bucket}/")
    future = int(time.time() * 1000) + 60_000

    # Listed as s3a://: the referenced s3:// files are the same files.
    result = remove_orphan_files(t, location=f"s3a://{bucket}/{key_prefix}", older_than_ms=future)
    assert result.orphan_paths == (f"s3a://{bucket}/{key_prefix}/data/orphan.parquet",)
    assert not t.io.exists(orphan)
    assert t.refresh().metadata.current_snapshot() is not None
    live = [p for p in all_files(t) if "/data/" in p]
    assert live and all(t.io.exists(p) for p in live)

    # The same keys in another bucket: same paths under another authority -> refused.
    other = s3_server.new_bucket()
    copied = live[0].replace(f"s3://{bucket}/", f"s3://{other}/")
    t.io.create(copied, t.io.read(live[0]))
    with pytest.raises(ValidationError, match="another scheme or authority"):
        remove_orphan_files(t, location=f"s3://{other}/{key_prefix}", older_than_ms=future)
    assert t.io.exists(copied)


def stray_s3(table: Table, relative: str) -> str:
    path = f"{table.location}/{relative}"
    table.io.create(path, b"left behind")
    return path


@pytest.mark.parametrize(
    ("location", "key"),
    [
        ("/t/x.parquet", FileKey("file", None, "/t/x.parquet")),
        ("file:/t/x.parquet", FileKey("file", None, "/t/x.parquet")),
        ("file:///t//x.parquet", FileKey("file", None, "/t/x.parquet")),
        ("file://localhost/t/x.parquet", FileKey("file", None, "/t/x.parquet")),
        ("s3n://b/t/x", FileKey("s3", "b", "/t/x")),
        ("S3://b/t/x", FileKey("s3", "b", "/t/x")),
        ("hdfs://nn:8020/t/x", FileKey("hdfs", "nn:8020", "/t/x")),
    ],
)
def test_file_key_normalizes(location: str, key: FileKey) -> None:
    assert file_key(location) == key


def test_a_write_in_flight_is_never_an_orphan(make_table: Callable[..., Table]) -> None:
    """Whatever older_than says: files of a write holding an in-flight marker stay (a
    window shorter than the write), a job document younger than an hour stays, a dead
    process's marker does not protect anything (and goes itself)."""
    import json

    from icewright.commit.in_flight import in_flight, in_flight_location

    t = append(make_table(), rows(2))
    age_everything(t)
    store_doc = stray(t, ".icewright/jobs/0123.json", days_old=None)  # a job's stored result
    now_plus = int(time.time() * 1000) + 60_000  # every file is "old enough"
    with in_flight(t.io, t.location, "append") as marker:
        time.sleep(2.1)  # the marker's start has two seconds of slack for storage clocks
        mine = stray(t, "data/job-1/part-0.parquet", days_old=None)
        result = remove_orphan_files(t, older_than_ms=now_plus)
        assert result.orphan_paths == () and t.io.exists(mine) and t.io.exists(marker)
    assert not t.io.exists(marker)
    result = remove_orphan_files(t, older_than_ms=now_plus)
    assert result.orphan_paths == ()  # a file of the last two seconds is never a candidate
    os.utime(local_path(mine), (time.time() - 5, time.time() - 5))
    # A marker whose process is gone protects nothing.
    dead = f"{in_flight_location(t.location)}/dead.json"
    t.io.create(
        dead,
        json.dumps({"pid": 2**22 + 17, "host": os.uname().nodename, "started-ms": 0}).encode(),
    )
    result = remove_orphan_files(t, older_than_ms=now_plus)
    assert result.orphan_paths == (mine,) and not t.io.exists(mine)
    assert result.dead_markers == (dead,) and not t.io.exists(dead)
    assert t.io.exists(store_doc)
