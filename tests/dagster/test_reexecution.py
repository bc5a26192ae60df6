"""Exactly-once across a re-execution from failure: the failed run committed, its
re-execution (same root run) finds the commit key and commits nothing, and a new launch
commits again."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergResource
from tests.dagster import reexecution_defs


def test_reexecution_from_failure_commits_once(
    lake: IcebergResource,
    catalog: SqlCatalog,
    instance: dg.DagsterInstance,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker = tmp_path / "marker"
    monkeypatch.setenv("ICEWRIGHT_TEST_MARKER", str(marker))
    monkeypatch.setenv("ICEWRIGHT_TEST_LAKE", str(tmp_path))
    job = dg.reconstructable(reexecution_defs.load_job)

    failed = dg.execute_job(job, instance=instance, raise_on_error=False)
    assert not failed.success
    table = catalog.load_table(reexecution_defs.TABLE)
    assert len(table.metadata.snapshots) == 1  # the commit landed before the failure

    options = dg.ReexecutionOptions.from_failure(failed.run_id, instance)
    again = dg.execute_job(job, instance=instance, reexecution_options=options)
    assert again.success
    run = instance.get_run_by_id(again.run_id)
    assert run is not None and run.root_run_id == failed.run_id
    assert len(table.refresh().metadata.snapshots) == 1
    assert [line.split()[1] for line in marker.read_text().splitlines()] == ["True", "False"]

    fresh = dg.execute_job(job, instance=instance)
    assert fresh.success
    table = table.refresh()
    assert len(table.metadata.snapshots) == 2
    assert table.metadata.current_snapshot().summary["total-records"] == "12"
