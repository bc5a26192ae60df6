"""A DAG whose ``load`` task dies right after its commit on its first try (retries=1),
plus a mapped ``load_each``: for the clear-versus-retry test."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from airflow.sdk import DAG

from icewright.operators import IcebergAppendOperator, IcebergCreateTableOperator

LANDING = os.path.join(os.environ["ICEWRIGHT_HOME"], "landing")


class DiesAfterCommit(IcebergAppendOperator):
    """Appends, then fails the first try of the task instance (after the commit)."""

    def execute(self, context: Any) -> Any:
        result = super().execute(context)
        ti = context["ti"]
        print(
            f"PROBE {ti.task_id} map={ti.map_index} try={ti.try_number} "
            f"max_tries={ti.max_tries} committed={result['committed']}"
        )
        if ti.try_number == 1:
            raise RuntimeError("the worker died after the commit")
        return result


with DAG(
    "icewright_retry_clear",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
) as dag:
    create = IcebergCreateTableOperator(
        task_id="create",
        table="db.t",
        schema="id long, batch string",
        if_not_exists=True,
        create_namespace=True,
    )
    load = DiesAfterCommit(
        task_id="load",
        table="db.t",
        source=f"parquet:{LANDING}/load/",
        retries=1,
        retry_delay=dt.timedelta(seconds=0),
    )
    each = IcebergAppendOperator.partial(task_id="load_each", table="db.t").expand(
        source=[f"parquet:{LANDING}/each0/", f"parquet:{LANDING}/each1/"]
    )
    create >> [load, each]
