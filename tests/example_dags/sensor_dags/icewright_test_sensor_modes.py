"""Test DAG: the snapshot sensor in reschedule mode, then in deferrable mode.

``after`` (a param) is the branch head when the test starts the run; the test commits
``batch=1`` once the first sensor has been rescheduled and ``batch=2`` once the second one
has deferred, so each really waits.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG, Param

from icewright.sensors import IcebergSnapshotSensor

with DAG(
    dag_id="icewright_test_sensor_modes",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    params={"after": Param("", type="string")},
) as dag:
    rescheduled = IcebergSnapshotSensor(
        task_id="rescheduled",
        table="sales.orders",
        after_snapshot_id="{{ params.after }}",
        summary_filters={"batch": "1"},
        mode="reschedule",
        poll_interval=1,
        timeout=600,
    )
    deferred = IcebergSnapshotSensor(
        task_id="deferred",
        table="sales.orders",
        after_snapshot_id="{{ params.after }}",
        summary_filters={"batch": "2"},
        deferrable=True,
        poll_interval=0.5,
        timeout=600,
    )
    rescheduled >> deferred
