"""``icewright rewrite-manifests`` through the installed console script: the JSON document,
the text output, bad input (one line, exit 1 or 2, nothing changed), and pyiceberg reading
the same rows afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.cli.support import icewright, pyiceberg_catalog

SCHEMA = "id long not null, region string"


def _table(home: Path, appends: int) -> Any:
    """db.events (partitioned by region), ``appends`` pyiceberg appends of 4 rows."""
    run = icewright(home, "create", "db.events", "--schema", SCHEMA, "--partition-by", "region")
    assert run.code == 0, run.stderr
    tbl = pyiceberg_catalog(home).load_table("db.events")
    for k in range(appends):
        rows = [{"id": 4 * k + i, "region": ("eu", "us")[i % 2]} for i in range(4)]
        tbl.append(pa.Table.from_pylist(rows, schema=tbl.schema().as_arrow()))
    return pyiceberg_catalog(home).load_table("db.events")


def test_rewrite_manifests(home: Path) -> None:
    tbl = _table(home, appends=4)
    assert len(tbl.current_snapshot().manifests(tbl.io)) == 4
    ids = sorted(tbl.scan().to_arrow().column("id").to_pylist())

    run = icewright(home, "rewrite-manifests", "db.events", "--no-distributed", "--json")

    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["committed"] is True and doc["operation"] == "replace"
    assert (doc["manifests_replaced"], doc["manifests_created"]) == (4, 1)
    assert doc["entries_processed"] == 8 and doc["distributed"] is False
    assert doc["summary"]["manifests-replaced"] == "4"
    after = pyiceberg_catalog(home).load_table("db.events")
    assert after.current_snapshot().snapshot_id == doc["snapshot_id"]
    assert len(after.current_snapshot().manifests(after.io)) == 1
    assert sorted(after.scan().to_arrow().column("id").to_pylist()) == ids

    again = icewright(home, "rewrite-manifests", "db.events", "--target-size", "8M")
    assert again.code == 0, again.stderr
    assert again.stdout.startswith("nothing to rewrite in db.events")
    assert "manifests replaced" in again.stdout


def test_rewrite_manifests_bad_input(home: Path) -> None:
    tbl = _table(home, appends=2)
    location = tbl.metadata_location
    for args, code, text in (
        (["--spec-id", "7"], 1, "partition spec 7 is not a spec of table db.events"),
        (["--spec-id", "x"], 2, "--spec-id"),
        (["--target-size", "0"], 2, "--target-size"),
    ):
        run = icewright(home, "rewrite-manifests", "db.events", *args)
        assert run.code == code, run.stderr
        lines = run.stderr.strip().splitlines()
        assert text in lines[-1] and "error" in lines[-1], run.stderr
        assert code == 2 or len(lines) == 1, run.stderr  # argparse adds its usage
    missing = icewright(home, "rewrite-manifests", "db.nope")
    assert missing.code != 0 and len(missing.stderr.strip().splitlines()) == 1
    assert pyiceberg_catalog(home).load_table("db.events").metadata_location == location
