"""Event-driven downstream of ``sales.orders`` (embedded default catalog).

The DAG is scheduled on the table's asset, and the asset has a watcher: the triggerer runs
an :class:`~icewright.providers.triggers.IcebergSnapshotEventTrigger` that polls the
catalog pointer and fires one asset event per batch of new data-changing snapshots,
whoever committed them (Spark outside Airflow, another tool, a CLI). Its watermark lives
in Airflow's asset state store, so a restarted triggerer does not announce the same
snapshots again.

Commits made by icewright's own operators (``icewright_nightly_orders``) also emit asset
events on this asset through their outlets, so one commit may reach this DAG twice; the
task below therefore works on the set of snapshot ids named by all triggering events
(watcher events carry ``extra["payload"]["snapshots"]``, operator events
``extra["snapshot_id"]``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow.sdk import DAG, task

from icewright.operators import watched_iceberg_asset

TABLE = "sales.orders"
POLL_INTERVAL = 30.0
"""Seconds between catalog pointer reads in the triggerer."""

ORDERS = watched_iceberg_asset(TABLE, poll_interval=POLL_INTERVAL)


def snapshots_of(events: list[Any]) -> dict[int, dict[str, Any]]:
    """Snapshot id -> what the triggering asset events say about it."""
    found: dict[int, dict[str, Any]] = {}
    for event in events:
        extra = dict(getattr(event, "extra", None) or {})
        payload = extra.get("payload")
        if isinstance(payload, dict):
            for snap in payload.get("snapshots") or []:
                found[int(snap["snapshot_id"])] = snap
        elif extra.get("snapshot_id") is not None:
            sid = int(extra["snapshot_id"])
            found.setdefault(
                sid,
                {
                    "snapshot_id": sid,
                    "operation": extra.get("operation"),
                    "added_records": extra.get("added_records", 0),
                },
            )
    return found


with DAG(
    dag_id="icewright_orders_downstream_event",
    schedule=[ORDERS],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    tags=["icewright", "example"],
    doc_md=__doc__,
) as dag:

    @task
    def react_to_new_orders(triggering_asset_events: Any = None) -> dict[str, Any]:
        """Report the new snapshots named by the events that started this run."""
        events = [e for evs in (triggering_asset_events or {}).values() for e in evs]
        snaps = snapshots_of(events)
        report = {
            "table": TABLE,
            "events": len(events),
            "snapshot_ids": sorted(snaps),
            "added_records": sum(int(s.get("added_records") or 0) for s in snaps.values()),
        }
        print(f"icewright-downstream-report {report}")
        return report

    react_to_new_orders()
