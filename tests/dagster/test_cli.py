"""Every asset factory materialized through the real ``dagster`` command (one run, in
dependency order), on a fresh lake; the table then read by pyiceberg."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from icewright.catalog import SqlCatalog

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

MODULE = ("-m", "tests.dagster.cli_defs", "--select")

ASSETS = [
    "sales/events_table",
    "sales/events",
    "sales/events_fix",
    "sales/events/rewrite",
    "sales/events/expire",
    "sales/events/remove_orphans",
    "sales/recent",
]


def test_every_factory_through_the_dagster_command(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    catalog = SqlCatalog("icewright", f"sqlite:///{lake}/catalog.db", str(lake / "warehouse"))
    catalog.create_namespace("sales")
    env = {
        **os.environ,
        "ICEWRIGHT_TEST_LAKE": str(lake),
        "DAGSTER_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "asset", "materialize", *MODULE, "*"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "RUN_SUCCESS" in output, output[-4000:]

    table = catalog.load_table("sales.events")
    operations = [s.operation.value for s in table.metadata.snapshots]
    assert operations == ["replace"]  # expire kept the compaction's snapshot alone
    assert catalog.load_view("sales.recent").metadata.current_version_id == 1

    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    py = PySqlCatalog(
        "icewright", uri=f"sqlite:///{lake}/catalog.db", warehouse=f"file://{lake}/warehouse"
    )
    rows = py.load_table("sales.events").scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["tag"]) for r in rows) == [
        *((i, "x") for i in range(5, 10)),
        (100, "y"),
        (101, "y"),
    ]

    os.environ["DAGSTER_HOME"] = str(home)
    with dg.DagsterInstance.get() as instance:
        for key in ASSETS:
            event = instance.get_latest_materialization_event(dg.AssetKey.from_user_string(key))
            assert event is not None, key
