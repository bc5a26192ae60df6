"""Every verb family through the INSTALLED console script (``.venv/bin/icewright`` in a
subprocess, ``ICEWRIGHT_HOME`` in tmp_path): ``--json`` documents, exit codes 0/1/2/3, and
the tables read back with pyiceberg.

Rows for the metadata-only verbs are appended by pyiceberg (no JVM); the Spark verbs
(``append``, ``read``) start one JVM each, so only those two run here; the other Spark
verbs' argument handling is tested in-process (test_inprocess.py).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.support import icewright, pyiceberg_catalog

SCHEMA = "id long not null, ts timestamptz, region string"


def _rows(first: int, n: int) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return [
        {"id": i, "ts": base + dt.timedelta(hours=i), "region": "eu" if i % 2 else "us"}
        for i in range(first, first + n)
    ]


def _create_with_data(home: Path, appends: int = 3) -> Any:
    """db.events created by the command, then ``appends`` pyiceberg appends of 5 rows."""
    run = icewright(home, "create", "db.events", "--schema", SCHEMA, "--partition-by", "region")
    assert run.code == 0, run.stderr
    tbl = pyiceberg_catalog(home).load_table("db.events")
    for k in range(appends):
        tbl.append(pa.Table.from_pylist(_rows(5 * k, 5), schema=tbl.schema().as_arrow()))
    return pyiceberg_catalog(home).load_table("db.events")


def test_create_json_and_describe(home: Path) -> None:
    run = icewright(
        home,
        "create",
        "sales.orders",
        "--json",
        "--schema",
        "id long not null, ts timestamptz, region string, amount decimal(12, 2)",
        "--partition-by",
        "day(ts), bucket(16, id)",
        "--sort-by",
        "ts desc nulls last, id",
        "--property",
        "write.target-file-size-bytes=1048576",
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["table"] == "sales.orders" and doc["committed"] is True
    assert doc["snapshot_id"] is None
    tbl = pyiceberg_catalog(home).load_table("sales.orders")
    assert [f.name for f in tbl.schema().fields] == ["id", "ts", "region", "amount"]
    assert tbl.schema().find_field("id").required
    assert [(f.name, str(f.transform)) for f in tbl.spec().fields] == [
        ("ts_day", "day"),
        ("id_bucket", "bucket[16]"),
    ]
    order = tbl.sort_order()
    assert [(f.direction.value, f.null_order.value) for f in order.fields] == [
        ("desc", "nulls-last"),
        ("asc", "nulls-first"),
    ]
    assert tbl.properties["write.target-file-size-bytes"] == "1048576"
    assert doc["metadata_location"] == tbl.metadata_location

    again = icewright(
        home, "create", "sales.orders", "--schema", "id long", "--if-not-exists", "--json"
    )
    assert again.code == 0 and again.json()["committed"] is False

    desc = icewright(home, "describe", "sales.orders", "--json")
    assert desc.code == 0, desc.stderr
    d = desc.json()
    assert d["kind"] == "table" and d["format_version"] == 2
    assert d["schema"]["fields"][3]["type"] == "decimal(12,2)"
    assert d["partition_spec"]["fields"][1]["transform"] == "bucket[16]"
    human = icewright(home, "describe", "sales.orders")
    assert human.code == 0
    assert "day(ts) as ts_day, bucket[16](id) as id_bucket" in human.stdout
    assert "amount  decimal(12,2)" in human.stdout


def test_snapshots_files_and_wait(home: Path) -> None:
    tbl = _create_with_data(home)
    ids = [s.snapshot_id for s in tbl.snapshots()]
    snaps = icewright(home, "snapshots", "db.events", "--json")
    assert snaps.code == 0, snaps.stderr
    doc = snaps.json()
    assert [s["snapshot-id"] for s in doc["snapshots"]] == ids
    assert doc["current_snapshot_id"] == tbl.current_snapshot().snapshot_id
    assert doc["snapshots"][-1]["refs"] == ["main"] and doc["snapshots"][-1]["current"]
    human = icewright(home, "snapshots", "db.events")
    assert human.code == 0 and f"{ids[0]}" in human.stdout and "append" in human.stdout

    files = icewright(home, "files", "db.events", "--json")
    assert files.code == 0, files.stderr
    f = files.json()
    theirs = {t.file.file_path for t in tbl.scan().plan_files()}
    assert {x["path"] for x in f["files"]} == theirs
    assert f["record_count"] == 15
    assert {x["partition"]["region"] for x in f["files"]} == {"eu", "us"}
    eu = icewright(home, "files", "db.events", "--where", "region = 'eu'", "--json").json()
    assert {x["partition"]["region"] for x in eu["files"]} == {"eu"}

    found = icewright(home, "wait", "db.events", "--after", str(ids[0]), "--timeout", "0", "--json")
    assert found.code == 0, found.stderr
    w = found.json()
    assert w["found"] is True and w["timed_out"] is False
    assert [s["snapshot-id"] for s in w["snapshots"]] == ids[1:]

    # An id the table does not have (here: never one of its snapshots) is an error ...
    unknown = icewright(home, "wait", "db.events", "--after", "12345", "--timeout", "0")
    assert unknown.code == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith("icewright: error: snapshot 12345 is not in the history")
    assert "--from-current" in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
    # ... unless asked to wait from the current snapshot instead.
    current = icewright(
        home, "wait", "db.events", "--after", "12345", "--from-current", "--timeout", "0", "--json"
    )
    assert current.code == 1 and current.json()["timed_out"] is True

    start = time.monotonic()
    late = icewright(
        home,
        "wait",
        "db.events",
        "--after",
        "current",
        "--timeout",
        "0.5",
        "--poll-interval",
        "0.1",
        "--json",
    )
    assert late.code == 1
    assert late.json()["timed_out"] is True and late.json()["snapshots"] == []
    assert late.stderr.strip().startswith("icewright: error: no new snapshot of db.events")
    assert len(late.stderr.strip().splitlines()) == 1
    assert time.monotonic() - start < 60


def test_expire_and_remove_orphans(home: Path) -> None:
    tbl = _create_with_data(home)
    assert len(tbl.snapshots()) == 3
    dry = icewright(
        home,
        "expire",
        "db.events",
        "--retain-last",
        "1",
        "--older-than",
        "now",
        "--dry-run",
        "--json",
    )
    assert dry.code == 0, dry.stderr
    d = dry.json()
    assert d["dry_run"] is True and len(d["expired_snapshot_ids"]) == 2
    assert len(pyiceberg_catalog(home).load_table("db.events").snapshots()) == 3

    run = icewright(
        home, "expire", "db.events", "--retain-last", "1", "--older-than", "now", "--json"
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    expected = sorted(s.snapshot_id for s in tbl.snapshots()[:2])
    assert sorted(doc["expired_snapshot_ids"]) == expected
    assert doc["commit"]["table"] == "db.events" and doc["commit"]["committed"] is True
    after = pyiceberg_catalog(home).load_table("db.events")
    assert [s.snapshot_id for s in after.snapshots()] == [tbl.current_snapshot().snapshot_id]
    assert after.scan().to_arrow().num_rows == 15

    data_dir = Path(after.location().removeprefix("file://")) / "data"
    stray = data_dir / "stray.parquet"
    stray.write_bytes(b"not referenced")
    old = time.time() - 86400 * 10
    os.utime(stray, (old, old))
    listed = icewright(
        home, "remove-orphans", "db.events", "--older-than", "1d", "--dry-run", "--json"
    )
    assert listed.code == 0, listed.stderr
    assert [p.removeprefix("file:") for p in listed.json()["orphan_paths"]] == [str(stray)]
    assert stray.exists()
    removed = icewright(home, "remove-orphans", "db.events", "--older-than", "1d", "--json")
    assert removed.code == 0 and removed.json()["deleted"] == 1
    assert not stray.exists()
    assert pyiceberg_catalog(home).load_table("db.events").scan().to_arrow().num_rows == 15


def test_usage_errors_exit_2(home: Path) -> None:
    for args in (
        ("frobnicate",),
        ("create", "db.t"),  # --schema missing
        ("read", "db.t", "--limit", "many"),
        ("replace", "db.t", "--source", "x", "--where", "id = 1", "--dynamic-partitions"),
        ("expire", "db.t", "--older-than", "someday"),
    ):
        run = icewright(home, *args)
        assert run.code == 2, (args, run.stderr)
        assert run.stdout == ""
        assert "usage: icewright" in run.stderr


def test_errors_exit_1_with_one_line(home: Path) -> None:
    missing = icewright(home, "describe", "db.nothing", "--json")
    assert missing.code == 1 and missing.stdout == ""
    assert missing.stderr == (
        "icewright: error: no table or view named 'db.nothing' in catalog 'icewright'\n"
    )
    bad = icewright(home, "create", "db.t", "--schema", "id long, ts timestamp_tz")
    assert bad.code == 1 and bad.stdout == ""
    line = bad.stderr.strip()
    assert line.startswith("icewright: error: schema:") and "'timestamp_tz' at position 12" in line
    assert "\n" not in line
    assert not (home / "catalog.db").exists() or not pyiceberg_catalog(home).table_exists("db.t")
    spec = icewright(home, "create", "db.t", "--schema", "id long", "--partition-by", "day(nope)")
    assert spec.code == 1 and "nope" in spec.stderr
    # Nothing was created, not even the namespace.
    assert pyiceberg_catalog(home).list_namespaces() == []
    debug = icewright(home, "describe", "db.nothing", "--debug")
    assert debug.code == 1 and "Traceback" in debug.stderr


def test_commit_conflict_exit_3(home: Path) -> None:
    """A catalog whose compare-and-swap always loses: a SQLite trigger makes every
    conditional pointer UPDATE change no row, which is exactly what the SQL catalog sees
    when another writer moved the pointer first. The retries (commit.retry.*) cannot
    resolve it; the command exits 3 and the table is unchanged."""
    tbl = _create_with_data(home)
    metadata_dir = Path(tbl.location().removeprefix("file://")) / "metadata"
    before = sorted(p.name for p in metadata_dir.glob("*.metadata.json"))
    with sqlite3.connect(home / "catalog.db") as db:
        db.execute(
            "CREATE TRIGGER other_writer_wins BEFORE UPDATE OF metadata_location "
            "ON iceberg_tables BEGIN SELECT RAISE(IGNORE); END"
        )
    run = icewright(
        home, "expire", "db.events", "--retain-last", "1", "--older-than", "now", "--json"
    )
    assert run.code == 3, run.stderr
    assert run.stdout == ""
    line = run.stderr.strip()
    assert line.startswith("icewright: error: commit conflict:") and "another writer" in line
    assert "\n" not in line
    after = pyiceberg_catalog(home).load_table("db.events")
    assert after.metadata_location == tbl.metadata_location
    assert len(after.snapshots()) == 3
    # Every attempt's metadata file was deleted again (definitely not committed).
    assert sorted(p.name for p in metadata_dir.glob("*.metadata.json")) == before


@pytest.mark.slow
def test_spark_append_and_read(home: Path, tmp_path: Path) -> None:
    """Two JVMs: ``append --format parquet`` then ``read --where --columns``."""
    assert (
        icewright(
            home, "create", "db.events", "--schema", SCHEMA, "--partition-by", "day(ts), region"
        ).code
        == 0
    )
    landing = tmp_path / "landing"
    landing.mkdir()
    rows = _rows(0, 40)
    pq.write_table(
        pa.Table.from_pylist(
            rows,
            schema=pa.schema(
                [("id", pa.int64()), ("ts", pa.timestamp("us", "UTC")), ("region", pa.string())]
            ),
        ),
        landing / "batch-1",  # no extension: --format says what it is
    )
    run = icewright(
        home,
        "append",
        "db.events",
        "--source",
        str(landing),
        "--format",
        "parquet",
        "--commit-key",
        "batch-1",
        "--json",
    )
    assert run.code == 0, run.stderr
    assert run.stderr == ""  # the JVM's log is quiet (--verbose shows it)
    doc = run.json()
    assert doc["committed"] is True and doc["operation"] == "append"
    assert doc["records_added"] == 40 and doc["files_added"] >= 2
    tbl = pyiceberg_catalog(home).load_table("db.events")
    assert tbl.current_snapshot().snapshot_id == doc["snapshot_id"]
    assert tbl.current_snapshot().summary["icewright.commit-key"] == "batch-1"
    got = tbl.scan().to_arrow().sort_by("id").to_pylist()
    assert got == rows

    read = icewright(
        home,
        "read",
        "db.events",
        "--where",
        "region = 'eu' and id < 10",
        "--columns",
        "id,region",
        "--limit",
        "3",
        "--json",
    )
    assert read.code == 0, read.stderr
    assert read.stderr == ""
    r = read.json()
    assert r["columns"] == ["id", "region"]
    assert r["truncated"] is True and r["row_count"] == 3
    expected = {(x["id"], x["region"]) for x in rows if x["region"] == "eu" and x["id"] < 10}
    assert len(expected) == 5
    assert {(x["id"], x["region"]) for x in r["rows"]} <= expected


def test_home_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "home-file"
    not_a_dir.write_text("x")
    run = icewright(tmp_path, "--home", str(not_a_dir), "snapshots", "db.events")
    assert run.code == 1 and run.stdout == ""
    assert run.stderr.startswith("icewright: error: the icewright home")
    assert "is not a directory" in run.stderr and len(run.stderr.strip().splitlines()) == 1
