"""Definitions for the re-execution test, importable by module path (``reconstructable``).

The lake and a marker file come from the environment (set by the test). The asset's
step fails once *after* its commit: the first time it runs, it writes the marker and
raises.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from icewright.dagster import IcebergResource, iceberg_append_asset

TABLE = "sales.events"


def fail_once_after_commit(context: dg.AssetExecutionContext, result: Any) -> None:
    """Raise the first time (the marker file does not exist yet)."""
    marker = Path(os.environ["ICEWRIGHT_TEST_MARKER"])
    context.log.info(f"committed={result.committed}")
    with marker.open("a") as f:
        f.write(f"{context.run.run_id} {result.committed}\n")
    if len(marker.read_text().splitlines()) == 1:
        raise RuntimeError("the step died after the commit")


events = iceberg_append_asset(
    TABLE,
    "sql:SELECT CAST(id AS BIGINT) AS id FROM range(6)",
    schema="id long not null",
    on_result=fail_once_after_commit,
)


def load_job() -> dg.JobDefinition:
    """The job materializing ``events`` in-process, on the lake the test set up."""
    home = Path(os.environ["ICEWRIGHT_TEST_LAKE"])
    defs = dg.Definitions(
        assets=[events],
        jobs=[dg.define_asset_job("load", [events], executor_def=dg.in_process_executor)],
        resources={
            "iceberg": IcebergResource(
                catalog_uri=f"sqlite:///{home}/catalog.db", warehouse=str(home / "warehouse")
            )
        },
    )
    return defs.resolve_job_def("load")
