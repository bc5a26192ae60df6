"""OpenLineage events of real task runs: ``airflow dags test`` with the OpenLineage
provider's file transport.

* The example DAG ``icewright_nightly_orders`` (create, two appends, a replace, a
  compaction, an expiry on the embedded default), as shipped, over a hundredth of its
  order events (:data:`FEWER_ORDERS`: the events, not the volume, are under test; the
  README's main job runs it at full size): a START and a COMPLETE event per task,
  each naming ``sales.orders`` by its location with its catalog symlink, the schema, the
  storage facet, the snapshot each task left as the dataset version, the rows each write
  added; every event checked against the client's OpenLineage model
  (:mod:`tests.support.openlineage`).
* ``tests/operators/lineage_dags/icewright_lineage_parent.py``: with
  ``spark_inject_parent_job_info`` on, the Spark job of a local and of a
  ``spark-submit`` append reads the task's identity (namespace, job name, run id and the
  DAG run's as root) from its own Spark configuration.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.airflow import AirflowHome, connection_env, dag_run_state, dags_test, explain
from tests.support.openlineage import check_event, read_events

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "icewright-test"
pytestmark = pytest.mark.slow

FEWER_ORDERS = f"""
\"\"\"The example's ``orders_source``, run as it is, with a hundredth of its rows.\"\"\"
import pathlib
EXAMPLE = pathlib.Path({str(REPO / "example_dags" / "orders_source.py")!r})
exec(compile(EXAMPLE.read_text(), str(EXAMPLE), "exec"))
FIRST_BATCH_ROWS = 1_500
SECOND_BATCH_ROWS = 500
"""
"""Beside a copy of the nightly DAG, this ``orders_source`` is the one it imports and its
tasks' sources resolve (``orders_source:first_batch``): the example's own code, whose
functions read the batch sizes from this module."""


def _lineage_env(events: Path, *, in_thread: bool, **more: str) -> dict[str, str]:
    """The provider's settings: the file transport; events built in a forked child of the
    task process (the default) or in a thread (``execute_in_thread``)."""
    transport = {"type": "file", "log_file_path": str(events), "append": True}
    return {
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": NAMESPACE,
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": str(in_thread),
        "AIRFLOW__OPENLINEAGE__EXECUTION_TIMEOUT": "60",
        **more,
    }


def _by_task(events: list[dict[str, Any]], dag_id: str) -> dict[str, dict[str, Any]]:
    """``task_id`` -> ``{eventType: event}`` of the task events of ``dag_id``."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        name = event["job"]["name"]
        if name.startswith(f"{dag_id}."):
            found.setdefault(name.split(".", 1)[1], {})[event["eventType"]] = event
    return found


def test_nightly_dag_events(airflow_home: AirflowHome, tmp_path: Path) -> None:
    events_file = tmp_path / "events.jsonl"
    home = tmp_path / "iw"
    # The provider's default: each event built in a forked child (the operators read
    # their catalog when their templates are rendered, so the child needs no connection).
    lineage = _lineage_env(events_file, in_thread=False)
    env = airflow_home.environment(ICEWRIGHT_HOME=str(home), **lineage)
    dags = tmp_path / "dags"
    dags.mkdir()
    shutil.copyfile(REPO / "example_dags" / "icewright_nightly_orders.py", dags / "nightly.py")
    (dags / "orders_source.py").write_text(FEWER_ORDERS)
    # fresh: the provider sends the DAG run's events as its process ends
    done = dags_test(
        "icewright_nightly_orders",
        dags,
        env=env,
        logical_date="2026-01-02",
        fresh=True,
    )
    assert dag_run_state(done) == "success", explain(done)

    events = read_events(events_file)
    for event in events:
        check_event(event)
    tasks = _by_task(events, "icewright_nightly_orders")
    names = ["create_orders", "append_first_batch", "append_second_batch", "replace_day"]
    names += ["rewrite", "expire"]
    assert set(names) <= set(tasks), sorted(tasks)

    versions = []
    for name in names:
        start, complete = tasks[name]["START"], tasks[name]["COMPLETE"]
        assert start["job"]["namespace"] == NAMESPACE == complete["job"]["namespace"]
        assert start["run"]["runId"] == complete["run"]["runId"]
        (out,) = complete["outputs"]
        assert out["namespace"] == "file" and out["name"].endswith("/sales/orders"), out
        (link,) = out["facets"]["symlinks"]["identifiers"]
        assert link["type"] == "TABLE" and link["name"].endswith("sales.orders")
        assert link["namespace"].startswith("sqlite:///")
        assert out["facets"]["storage"]["storageLayer"] == "iceberg"
        fields = [f["name"] for f in out["facets"]["schema"]["fields"]]
        assert "order_id" in fields and "amount" in fields
        (started,) = start["outputs"]
        assert "version" not in started["facets"]
        versions.append(out["facets"].get("version", {}).get("datasetVersion"))
        if name.startswith(("append", "replace")):
            stats = out["outputFacets"]["outputStatistics"]
            assert stats["rowCount"] > 0 and stats["fileCount"] > 0 and stats["size"] > 0
    appended = [tasks[n]["COMPLETE"]["outputs"][0]["outputFacets"] for n in names[1:3]]
    assert [a["outputStatistics"]["rowCount"] for a in appended] == [1_500, 500]
    create, first, second, replace, rewrite, expire = versions
    assert create is None  # created empty: no snapshot yet
    assert len({first, second, replace, rewrite}) == 4  # a snapshot each
    assert expire == rewrite  # the expiry commits no snapshot
    lifecycle = tasks["replace_day"]["COMPLETE"]["outputs"][0]["facets"]["lifecycleStateChange"]
    assert lifecycle["lifecycleStateChange"] == "OVERWRITE"
    created = tasks["create_orders"]["COMPLETE"]["outputs"][0]["facets"]
    assert created["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"


def test_spark_jobs_get_the_parent_identity(airflow_home: AirflowHome, tmp_path: Path) -> None:
    events_file = tmp_path / "events.jsonl"
    records = tmp_path / "records"
    records.mkdir()
    uri = f"sqlite:///{tmp_path}/lake.db"
    extra = {"catalog_type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")}
    env = airflow_home.environment(
        LINEAGE_RECORD_DIR=str(records),
        **connection_env("icewright_default", "icewright", extra=extra),
        **_lineage_env(
            events_file, in_thread=True, AIRFLOW__OPENLINEAGE__SPARK_INJECT_PARENT_JOB_INFO="true"
        ),
    )
    dag_id = "icewright_lineage_parent"
    done = dags_test(dag_id, REPO / "tests/operators/lineage_dags", env=env, fresh=True)
    assert dag_run_state(done) == "success", explain(done)

    events = read_events(events_file)
    for event in events:
        check_event(event)
    tasks = _by_task(events, dag_id)
    # The DAG run's event (`airflow dags test` emits its COMPLETE only).
    (dag_run,) = [e for e in events if e["job"]["name"] == dag_id]
    seen = {}
    for task in ("append_local", "append_submitted"):
        seen[task] = json.loads((records / f"{task}.json").read_text())
        run = tasks[task]["START"]["run"]
        assert (
            seen[task]
            | {
                "spark.openlineage.parentJobNamespace": NAMESPACE,
                "spark.openlineage.parentJobName": f"{dag_id}.{task}",
                "spark.openlineage.parentRunId": run["runId"],
                "spark.openlineage.rootParentJobNamespace": NAMESPACE,
                "spark.openlineage.rootParentJobName": dag_id,
                "spark.openlineage.rootParentRunId": dag_run["run"]["runId"],
            }
            == seen[task]
        ), (task, seen[task])
    # One job ran in the task's process, the other in a spark-submit driver.
    assert seen["append_local"]["pid"] != seen["append_submitted"]["pid"]
    assert seen["append_submitted"]["master"] == "local[1]"
