"""Sensor-based downstream of ``sales.orders`` (embedded default catalog).

Each daily run waits (in reschedule mode, so no worker slot is held between pokes) until
the table has snapshots newer than the branch head the sensor saw on its previous run,
counting only commits that change data (append, overwrite, delete: a nightly compaction
wakes no one). The sensor's return value lists the new snapshots; the next task reports
what they changed from their summaries (records and files added and removed per
operation), without reading a data file. The first run counts every snapshot of the table.

Run it after ``icewright_nightly_orders`` has written the table::

    airflow dags test icewright_orders_downstream_sensor 2026-01-03
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow.sdk import DAG, task

from icewright.operators import IcebergSnapshotSensor

TABLE = "sales.orders"


def _count(summary: dict[str, str], key: str) -> int:
    try:
        return int(summary.get(key, "0"))
    except ValueError:
        return 0


with DAG(
    dag_id="icewright_orders_downstream_sensor",
    schedule="@daily",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    tags=["icewright", "example"],
    doc_md=__doc__,
) as dag:
    wait = IcebergSnapshotSensor(
        task_id="wait_for_new_orders",
        table=TABLE,
        since_previous_run=True,
        mode="reschedule",
        poll_interval=60,
        timeout=6 * 60 * 60,
    )

    @task
    def summarize_new_orders(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
        """What the new snapshots changed, from their summaries."""
        per_operation: dict[str, int] = {}
        for snap in snapshots:
            op = snap["operation"] or "unknown"
            per_operation[op] = per_operation.get(op, 0) + 1
        report = {
            "table": TABLE,
            "snapshot_ids": [s["snapshot_id"] for s in snapshots],
            "latest_snapshot_id": snapshots[-1]["snapshot_id"] if snapshots else None,
            "operations": per_operation,
            "added_records": sum(_count(s["summary"], "added-records") for s in snapshots),
            "deleted_records": sum(_count(s["summary"], "deleted-records") for s in snapshots),
            "added_files": sum(_count(s["summary"], "added-data-files") for s in snapshots),
            "deleted_files": sum(_count(s["summary"], "deleted-data-files") for s in snapshots),
        }
        print(f"icewright-downstream-report {report}")
        return report

    summarize_new_orders(wait.output)
