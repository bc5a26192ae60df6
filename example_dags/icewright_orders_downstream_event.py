"""Event-driven downstream of ``sales.orders`` (embedded default catalog).

The DAG is scheduled on the table's asset, and the asset has a watcher: the triggerer runs
an :class:`~icewright.providers.triggers.IcebergSnapshotEventTrigger` that polls the
catalog pointer and fires one asset event per batch of new data-changing snapshots
committed outside Airflow (Spark elsewhere, another tool, the ``icewright`` command). Its
watermark lives in Airflow's asset state store, so a restarted triggerer does not announce
the same snapshots again.

Commits made by icewright's own operators with this asset among their outlets
(``icewright_nightly_orders``) are announced by the operator's outlet event instead: the
operator claims its commit in the asset state store before committing, and the watcher
leaves claimed snapshots out. Each commit therefore starts this DAG once, and both kinds
of event carry the same payload, which
:func:`~icewright.operators.triggering_snapshots` reads.

The run reads only the new rows: :func:`~icewright.operators.triggering_source` turns the
events into the source ``iceberg:sales.orders@A..B`` (the rows the announced snapshots
appended, planned from the manifests they wrote), and a ``sql:`` query names it as a
quoted identifier to add the new orders per region to ``sales.orders_per_region`` with
a merge (an incremental aggregate: never a scan of the whole table).

``watched_iceberg_asset(TABLE)`` and the writers' ``iceberg_asset(TABLE)`` are one and
the same declaration (the table's asset and its watcher), as Airflow needs them to be in
every file. How often the watcher polls is the deployment's setting
(``[icewright] watcher_poll_interval``, default 60 seconds), not the DAG's.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow.exceptions import AirflowSkipException
from airflow.sdk import DAG, task

from icewright.operators import triggering_snapshots, triggering_source, watched_iceberg_asset

TABLE = "sales.orders"
PER_REGION = "sales.orders_per_region"
ORDERS = watched_iceberg_asset(TABLE)


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
        snapshots = triggering_snapshots(triggering_asset_events)
        report = {
            "table": TABLE,
            "snapshot_ids": [s["snapshot_id"] for s in snapshots],
            "added_records": sum(s["added_records"] for s in snapshots),
        }
        print(f"icewright-downstream-report {report}")
        return report

    @task
    def count_new_orders(
        triggering_asset_events: Any = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Add the new snapshots' orders per region to sales.orders_per_region."""
        from icewright.actions import ensure_table, merge
        from icewright.text.schema import parse_schema

        source = triggering_source(triggering_asset_events, table=TABLE)
        if source is None:
            raise AirflowSkipException(f"the events name no new snapshot of {TABLE}")
        ensure_table(PER_REGION, parse_schema("region string, orders long"))
        result = merge(
            PER_REGION,
            f"sql:SELECT region, count(*) AS orders FROM `{source}` GROUP BY region",
            on="region",
            update_set="orders = target.orders + orders",
            commit_key=f"orders_per_region/{run_id}",
        )
        report = {"source": source, "regions_added": result.rows_inserted}
        report["regions_updated"] = result.rows_updated
        print(f"icewright-incremental-report {report}")
        return report

    react_to_new_orders()
    count_new_orders()
