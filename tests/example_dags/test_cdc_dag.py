"""Example DAG ``icewright_customers_cdc`` under ``airflow dags test`` on the embedded
default of a fresh home: two days of the change feed merged (merge-on-read), the closed
customers deleted, the rows equal to a model of the feed, read by pyiceberg; a second
run of a day commits nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import SqlCatalog
from tests.support.airflow import AirflowHome, dag_run_state, dags_test, explain

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "example_dags"
pytestmark = pytest.mark.slow

sys.path.insert(0, str(DAGS))
import customers_source as feed  # noqa: E402 - the example's own constants

DAYS = ("2026-01-02", "2026-01-03")


def _model() -> dict[int, str]:
    """customer id -> tier after the two days, as the feed's docstring says."""
    tiers: dict[int, str] = {}
    for d in (1, 2):
        base, before = d * 10_000, (d - 1) * 10_000
        for i in range(feed.NEW_PER_DAY):
            tiers[base + i] = "standard"
        for i in range(feed.UPDATED_PER_DAY):
            tiers[before + i] = "gold"
        for i in range(feed.DELETED_PER_DAY):
            tiers.pop(before + feed.UPDATED_PER_DAY + i, None)
        for i in range(feed.CLOSED_PER_DAY):
            tiers.pop(before + feed.UPDATED_PER_DAY + feed.DELETED_PER_DAY + i, None)
    return tiers


def test_cdc_dag_merges_two_days_and_deletes_the_closed(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    home = tmp_path / "iw"
    env = airflow_home.environment(ICEWRIGHT_HOME=str(home))
    for day in DAYS:
        done = dags_test("icewright_customers_cdc", DAGS, env=env, logical_date=day)
        assert dag_run_state(done) == "success", explain(done)
    catalog = SqlCatalog("icewright", f"sqlite:///{home}/catalog.db", str(home / "warehouse"))
    table = catalog.load_table(feed.TABLE)
    operations = [str(s.operation) for s in table.metadata.snapshots]
    # per day: the merge (into the empty table: inserts only, an append; then a row delta
    # with deletes), the delete of the closed customers (deletes only)
    assert operations == ["append", "delete", "overwrite", "delete"], operations
    rows = _rows(home)
    assert rows == _model()
    delete_files = [d for t in _tasks(catalog) for d in t.delete_files]
    assert delete_files, "merge-on-read left position delete files"

    again = dags_test("icewright_customers_cdc", DAGS, env=env, logical_date=DAYS[1])
    assert dag_run_state(again) == "success", explain(again)
    assert len(catalog.load_table(feed.TABLE).metadata.snapshots) == 4
    assert _rows(home) == rows


def _rows(home: Path) -> dict[int, str]:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    py = PySqlCatalog(
        "icewright", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/warehouse"
    )
    arrow = py.load_table(feed.TABLE).scan().to_arrow()
    return dict(
        zip(arrow.column("customer_id").to_pylist(), arrow.column("tier").to_pylist(), strict=True)
    )


def _tasks(catalog: SqlCatalog) -> list[Any]:
    from icewright.scan import plan_files

    return list(plan_files(catalog.load_table(feed.TABLE)))
