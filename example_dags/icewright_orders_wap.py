"""Write-audit-publish into ``sales.orders_audited`` (embedded default catalog).

Each run writes the day's orders to a branch named after the run's day
(``audit-YYYYMMDD``, started from ``main``'s head), audits what the branch holds (the day
has all its orders, no order has a missing or non-positive amount) and only then
publishes the branch to ``main`` by a fast-forward. Readers of ``main`` never see the
rows before the audit passed. A failed audit fails the run and leaves ``main`` as it was;
the branch is kept with the rows that failed, for inspection
(``icewright read sales.orders_audited --ref audit-YYYYMMDD --where "amount <= 0"``).
The branch is dropped once published.

The day's orders come from a Spark SQL query; trigger a run with the conf
``{"bad_rows": 5}`` to see an audit fail. Safe to run again for a day: the branch starts
again from ``main``; the write's commit key (the day) finds a day already published on
``main`` and writes nothing, while a day whose audit failed is written again (its
rejected snapshot is on no branch any more).
"""

from __future__ import annotations

import datetime as dt

from airflow.exceptions import AirflowFailException
from airflow.sdk import DAG, task

from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateBranchOperator,
    IcebergCreateTableOperator,
    IcebergDropBranchOperator,
    IcebergPublishOperator,
    iceberg_asset,
)

TABLE = "sales.orders_audited"
ORDERS_PER_DAY = 288  # one every five minutes
BRANCH = "audit-{{ ds_nodash }}"
SOURCE = (
    "sql:SELECT CAST(unix_timestamp('{{ ds }}', 'yyyy-MM-dd') / 300 + id AS BIGINT) AS order_id, "
    "CAST(id % 40 AS BIGINT) AS customer_id, "
    "timestamp_seconds(unix_timestamp('{{ ds }}', 'yyyy-MM-dd') + id * 300) AS ts, "
    "CAST(IF(id < {{ params.bad_rows }}, -1, 10 + id % 90) AS DECIMAL(12, 2)) AS amount "
    f"FROM range({ORDERS_PER_DAY})"
)

AUDITED = iceberg_asset(TABLE)

with DAG(
    dag_id="icewright_orders_wap",
    schedule="@daily",
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    params={"bad_rows": 0},
    tags=["icewright", "example"],
    doc_md=__doc__,
) as dag:
    create = IcebergCreateTableOperator(
        task_id="create_table",
        table=TABLE,
        schema="order_id long not null, customer_id long, ts timestamptz, amount decimal(12,2)",
        partition_by="day(ts)",
        if_not_exists=True,
    )
    branch = IcebergCreateBranchOperator(
        task_id="start_branch", table=TABLE, name=BRANCH, replace=True
    )
    write = IcebergAppendOperator(
        task_id="write",
        table=TABLE,
        source=SOURCE,
        branch=BRANCH,
        commit_key="orders_audited/{{ ds }}",
    )

    @task
    def audit(ds: str | None = None, ds_nodash: str | None = None) -> dict[str, int]:
        """Count the day's rows and the bad ones on the branch; fail the run if wrong."""
        from icewright.actions import count_rows

        ref = f"audit-{ds_nodash}"
        day = dt.date.fromisoformat(str(ds))
        after = day + dt.timedelta(days=1)
        window = f"ts >= '{day}T00:00:00+00:00' AND ts < '{after}T00:00:00+00:00'"
        rows = count_rows(TABLE, ref=ref, where=window)
        bad = count_rows(TABLE, ref=ref, where=f"({window}) AND (amount IS NULL OR amount <= 0)")
        print(f"icewright-audit {ref}: {rows} row(s) for {day}, {bad} bad")
        if rows != ORDERS_PER_DAY or bad:
            raise AirflowFailException(
                f"audit of {TABLE}@{ref} failed: {rows} row(s) for {day} (expected "
                f"{ORDERS_PER_DAY}), {bad} with a missing or non-positive amount; main is "
                f"unchanged and branch {ref} is kept for inspection"
            )
        return {"rows": rows, "bad": bad}

    publish = IcebergPublishOperator(
        task_id="publish", table=TABLE, branch=BRANCH, outlets=[AUDITED]
    )
    drop = IcebergDropBranchOperator(task_id="drop_branch", table=TABLE, name=BRANCH)

    create >> branch >> write >> audit() >> publish >> drop
