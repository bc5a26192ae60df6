"""``icewright maintain`` and ``icewright health`` through the installed script (the
tables need no compaction here, so no Spark starts; compaction runs in
tests/actions/test_maintain.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.catalog import SqlCatalog
from tests.actions.test_maintain_plan import NEVER_COMPACT, _appends, _table
from tests.cli.support import icewright, pyiceberg_catalog


def _home_catalog(home: Path) -> SqlCatalog:
    return SqlCatalog("icewright", f"sqlite:///{home}/catalog.db", str(home / "warehouse"))


@pytest.fixture
def tables(home: Path) -> SqlCatalog:
    """sales.orders (14 one-manifest appends over 3 days), sales.empty, ops.log."""
    catalog = _home_catalog(home)
    _appends(_table(catalog, "sales.orders", **NEVER_COMPACT), 14, days=3)
    _table(catalog, "sales.empty", **NEVER_COMPACT)
    _appends(_table(catalog, "ops.log", **NEVER_COMPACT), 2)
    return catalog


def test_dry_run_then_run_then_nothing(home: Path, tables: SqlCatalog) -> None:
    before = tables.load_table("sales.orders").metadata_location
    dry = icewright(home, "maintain", "sales.orders", "--dry-run")
    assert dry.code == 0, dry.stderr
    assert "sales.orders (dry run): due: rewrite_manifests, remove_orphans" in dry.stdout
    assert "small-manifest share 100.0% (limit 50.0%) passed: 14 data manifests" in dry.stdout
    assert tables.load_table("sales.orders").metadata_location == before
    document = icewright(home, "--json", "maintain", "sales.orders", "--dry-run").json()
    (table,) = document["tables"]
    step = next(s for s in table["steps"] if s["name"] == "rewrite_manifests")
    assert step["due"] and step["figures"]["data_manifests"] == 14 and not step["ran"]
    run = icewright(home, "maintain", "sales.orders")
    assert run.code == 0, run.stderr
    assert "sales.orders: ran rewrite_manifests, remove_orphans" in run.stdout
    assert "manifests_replaced 14, manifests_created 1" in run.stdout
    assert "data_manifests" in run.stdout and "14 -> 1" in run.stdout
    again = icewright(home, "maintain", "sales.orders")
    assert again.code == 0 and "sales.orders: nothing was due" in again.stdout
    rows = pyiceberg_catalog(home).load_table("sales.orders").scan().to_arrow().num_rows
    assert rows == 14 * 3


def test_namespace_and_all(home: Path, tables: SqlCatalog) -> None:
    run = icewright(home, "--json", "maintain", "--namespace", "sales")
    assert run.code == 0, run.stderr
    assert [t["table"] for t in run.json()["tables"]] == ["sales.empty", "sales.orders"]
    # one table another engine broke: reported, the others maintained, exit 1
    with pyiceberg_catalog(home).load_table("ops.log").transaction() as tx:
        tx.set_properties({"icewright.maintain.small-manifest-share": "high"})
    every = icewright(home, "maintain", "--all")
    assert every.code == 1
    assert "ops.log: failed: table property icewright.maintain.small-manifest-share" in every.stdout
    assert "sales.orders: nothing was due" in every.stdout
    last = every.stderr.strip().splitlines()[-1]
    assert last.startswith("icewright: error: ops.log: table property icewright.maintain.")
    assert "small-manifest-share='high'" in last


def test_bad_input_is_one_line_and_changes_nothing(home: Path, tables: SqlCatalog) -> None:
    before = tables.load_table("sales.orders").metadata_location
    for args, words in (
        (("maintain", "--namespace", "nowhere"), "namespace nowhere does not exist"),
        (("maintain", "sales.nope"), "sales.nope"),
    ):
        run = icewright(home, *args)
        assert run.code == 1 and run.stdout == ""
        (line,) = run.stderr.strip().splitlines()
        assert line.startswith("icewright: error: ") and words in line
    with pyiceberg_catalog(home).load_table("sales.orders").transaction() as tx:
        tx.set_properties({"icewright.maintain.orphan-interval-ms": "-1"})
    run = icewright(home, "maintain", "sales.orders")
    assert run.code == 1
    assert "orphan-interval-ms='-1' is invalid: it must be a whole number >= 0" in run.stderr
    assert tables.load_table("sales.orders").metadata_location != before  # pyiceberg's change
    after_bad = tables.load_table("sales.orders").metadata_location
    assert icewright(home, "maintain", "sales.orders").code == 1
    assert tables.load_table("sales.orders").metadata_location == after_bad
    assert icewright(home, "maintain").code == 2  # no target: usage


def test_health_prints_the_figures_and_writes_the_report(home: Path, tables: SqlCatalog) -> None:
    run = icewright(home, "health", "sales.orders", "--html", "report.html")
    assert run.code == 0, run.stderr
    for words in ("data manifests               14", "partitions                   3"):
        assert words in run.stdout
    assert "rewrite_manifests  due" in run.stdout
    page = (home / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="file-sizes"' in page
    figures = icewright(home, "--json", "health", "sales.orders").json()["figures"]
    assert figures["data_manifests"] == 14 and figures["manifests_per_partition"] == 4.67
