"""Deferrable operators: IcebergSparkJobTrigger (serialize, run against real documents and
processes) and an IcebergAppendOperator(deferrable=True) run by ``airflow dags test``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import load_catalog
from icewright.errors import IcewrightError, ValidationError
from icewright.io.loader import load_file_io
from icewright.operators import IcebergAppendOperator
from icewright.providers.job_triggers import IcebergSparkJobTrigger
from icewright.runners.detached import process_alive, process_start_ticks
from icewright.runners.store import JobStore, JobSubmitted
from icewright.spark.job_spec import error_document, io_to_json, ok_document
from tests.actions.submit_support import Cluster
from tests.support.airflow import (
    AirflowHome,
    connection_env,
    dag_run_state,
    dags_test,
    explain,
    query_metadata_db,
    run_id_of,
)

DAGS = Path(__file__).parent / "deferrable_dags"


def _trigger(store: JobStore, key: str, **more: Any) -> IcebergSparkJobTrigger:
    return IcebergSparkJobTrigger(
        job_key=store.full_key(key),
        result_location=store.path(key),
        pending_location=store.pending_path(key),
        io=io_to_json(store.io),
        **more,
    )


@pytest.fixture
def store(tmp_path: Path) -> JobStore:
    staging = tmp_path / "jobs"
    staging.mkdir()
    return JobStore(load_file_io(str(staging)), str(staging), prefix="airflow:run")


def _first_event(trigger: IcebergSparkJobTrigger, *, within: float = 30) -> dict[str, Any]:
    async def first() -> Any:
        return await asyncio.wait_for(anext(trigger.run()), within)

    event = asyncio.run(first())
    payload: dict[str, Any] = event.payload
    return payload


def test_serialize_round_trips_through_airflow_serde(store: JobStore) -> None:
    from airflow.sdk._shared.module_loading import import_string
    from airflow.sdk.serde import deserialize, serialize

    trigger = _trigger(
        store,
        "append:k",
        pending={"pid": 12, "host": "h", "process-start": 99, "log": "/tmp/x.log"},
        poll_interval=3,
        timeout=600,
        grace_period=5,
        extra={"created": True, "deferrals": 1},
    )
    path, kwargs = trigger.serialize()
    assert path == "icewright.providers.job_triggers.IcebergSparkJobTrigger"
    # As the task runner hands kwargs to the triggerer (serde-encoded JSON) and back.
    decoded = deserialize(json.loads(json.dumps(serialize(kwargs))))
    rebuilt = import_string(path)(**decoded)
    assert rebuilt.serialize() == (path, kwargs)
    assert kwargs["io"]["class"].endswith(type(store.io).__qualname__)
    with pytest.raises(ValidationError, match="poll_interval"):
        _trigger(store, "k", poll_interval=0)


def test_run_fires_when_the_result_document_appears(store: JobStore) -> None:
    key = "append:k"
    trigger = _trigger(store, key, poll_interval=0.2, extra={"created": False})
    doc = ok_document("write", {"data-files": []}, job_key=store.full_key(key))

    async def scenario() -> tuple[Any, float]:
        started = time.monotonic()
        task = asyncio.ensure_future(anext(trigger.run()))
        await asyncio.sleep(1.0)
        assert not task.done()  # nothing there yet: still polling
        await asyncio.to_thread(store.io.write, store.path(key), json.dumps(doc).encode())
        event = await asyncio.wait_for(task, 10)
        return event, time.monotonic() - started

    event, elapsed = asyncio.run(scenario())
    assert 1.0 <= elapsed < 10
    assert event.payload["status"] == "finished"
    assert event.payload["result_location"] == store.path(key)
    assert event.payload["extra"] == {"created": False}


def test_run_reports_an_error_document(store: JobStore) -> None:
    key = "append:bad"
    error = error_document(ValidationError("no such path /x.csv"), job_key=store.full_key(key))
    store.io.write(store.path(key), json.dumps(error).encode())
    payload = _first_event(_trigger(store, key, poll_interval=0.2))
    assert payload["status"] == "failed"
    assert payload["error"] == {"class": "ValidationError", "message": "no such path /x.csv"}


def test_run_reports_a_lost_process_and_removes_the_pending_document(
    store: JobStore, tmp_path: Path
) -> None:
    key = "append:lost"
    log = tmp_path / "lost.log"
    log.write_text("line 1\nException in thread main\n")
    gone = subprocess.Popen(["true"])
    gone.wait()
    pending = {"pid": gone.pid, "host": socket.gethostname(), "log": str(log)}
    store.write_pending(key, pending)
    assert process_alive(pending) is False
    trigger = _trigger(store, key, pending=pending, poll_interval=0.1, grace_period=0.5)
    payload = _first_event(trigger)
    assert payload["status"] == "lost"
    assert "Exception in thread main" in payload["message"]
    assert store.read_pending(key) is None  # a retry submits again


def test_run_times_out_and_stops_a_local_job(store: JobStore) -> None:
    key = "append:slow"
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        pending = {
            "pid": child.pid,
            "host": socket.gethostname(),
            "process-start": process_start_ticks(child.pid),
        }
        store.write_pending(key, pending)
        payload = _first_event(_trigger(store, key, pending=pending, poll_interval=0.2, timeout=1))
        assert payload["status"] == "timeout"
        assert "it was stopped" in payload["message"]
        assert child.wait(timeout=10) != 0  # killed by the trigger
        assert store.read_pending(key) is None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_killed_deferred_task_stops_its_job_and_drops_its_result(store: JobStore) -> None:
    key = "merge:killed"
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        pending = {
            "pid": child.pid,
            "host": socket.gethostname(),
            "process-start": process_start_ticks(child.pid),
        }
        store.write_pending(key, pending)
        doc = ok_document("row-changes", {"data-files": []}, job_key=store.full_key(key))
        store.io.write(store.path(key), json.dumps(doc).encode())
        asyncio.run(_trigger(store, key, pending=pending).on_kill())
        assert child.wait(timeout=10) != 0  # stopped
        assert store.read_pending(key) is None
        assert store.read(key) is None  # the next try runs the job again, commits nothing old
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.slow
def test_deferrable_merge_under_dags_test(airflow_home: AirflowHome, tmp_path: Path) -> None:
    from icewright.actions import append, create
    from icewright.text.declaration import parse_schema

    uri, warehouse, conn, catalog = _lake(tmp_path)
    create("ns.merged", catalog=catalog, schema=parse_schema("id long, name string"))
    append("ns.merged", "sql:SELECT id, CAST(id AS STRING) AS name FROM range(6)", catalog=catalog)
    done = dags_test(
        "icewright_deferrable_merge",
        DAGS,
        env=airflow_home.environment(**conn),
        logical_date="2026-01-05",
    )
    assert dag_run_state(done) == "success", explain(done)
    output = done.stdout + done.stderr
    assert "started detached" in output, explain(done)
    assert "running trigger in line" in output, explain(done)  # it deferred, then resumed
    table = catalog.load_table("ns.merged")
    assert len(table.metadata.snapshots) == 2  # the append, and the merge once
    merged = table.metadata.current_snapshot()
    assert merged is not None and merged.summary is not None
    assert merged.summary["added-position-delete-files"] == "1"

    from pyiceberg.catalog.sql import SqlCatalog

    py = SqlCatalog("icewright", uri=uri, warehouse=f"file://{warehouse}")
    rows = sorted(
        tuple(r.values()) for r in py.load_table("ns.merged").scan().to_arrow().to_pylist()
    )
    assert rows == [(0, "0"), (1, "one"), (3, "3"), (4, "4"), (5, "5"), (9, "nine")]


def _lake(tmp_path: Path) -> tuple[str, str, dict[str, str], Any]:
    """The ``lake`` connection's SQLite catalog (uri, warehouse, connection env, catalog)
    with the namespace ``ns``."""
    uri = f"sqlite:///{tmp_path}/lake.db"
    warehouse = str(tmp_path / "wh")
    conn = connection_env(
        "lake", "icewright", extra={"catalog_type": "sql", "uri": uri, "warehouse": warehouse}
    )
    catalog = load_catalog({"type": "sql", "uri": uri, "warehouse": warehouse})
    catalog.create_namespace("ns")
    return uri, warehouse, conn, catalog


@pytest.mark.slow
def test_deferrable_append_under_dags_test(airflow_home: AirflowHome, tmp_path: Path) -> None:
    uri, warehouse, conn, _ = _lake(tmp_path)
    done = dags_test(
        "icewright_deferrable",
        DAGS,
        env=airflow_home.environment(**conn),
        logical_date="2026-01-05",
    )
    assert dag_run_state(done) == "success", explain(done)
    output = done.stdout + done.stderr
    assert "started detached" in output, explain(done)
    assert "running trigger in line" in output, explain(done)  # it deferred, then resumed
    run_id = run_id_of(done)

    from pyiceberg.catalog.sql import SqlCatalog

    table = SqlCatalog("icewright", uri=uri, warehouse=f"file://{warehouse}").load_table(
        "ns.deferred"
    )
    (snapshot,) = table.snapshots()
    assert snapshot.summary is not None and snapshot.summary.operation.value == "append"
    rows = sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())
    assert rows == [(i, str(i * 10)) for i in range(7)]

    pushes = query_metadata_db(
        airflow_home,
        "SELECT value FROM xcom WHERE dag_id = 'icewright_deferrable' AND run_id = :r "
        "AND task_id = 'append' AND key = 'return_value'",
        r=run_id,
    )
    assert len(pushes) == 1, pushes
    value = pushes[0][0]
    pushed = json.loads(value) if isinstance(value, str) else value
    assert pushed["snapshot_id"] == snapshot.snapshot_id and pushed["records_added"] == 7
    # The task's link to its Spark application: the page of the application the detached
    # job ran as (its id read from the job's stored result when the task resumed).
    (link,) = query_metadata_db(
        airflow_home,
        "SELECT value FROM xcom WHERE dag_id = 'icewright_deferrable' AND run_id = :r "
        "AND task_id = 'append' AND key = '_link_SparkApplicationLink'",
        r=run_id,
    )
    url = json.loads(link[0]) if isinstance(link[0], str) else link[0]
    assert re.fullmatch(r"http://spark-history\.example:18080/history/local-\d+/", url), url
    events = query_metadata_db(
        airflow_home,
        "SELECT e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id "
        "WHERE a.uri = 'iceberg://lake/ns/deferred' AND e.source_run_id = :r",
        r=run_id,
    )
    assert len(events) == 1, events
    extra = json.loads(events[0][0]) if isinstance(events[0][0], str) else events[0][0]
    (announced,) = extra["payload"]["snapshots"]
    assert announced["snapshot_id"] == snapshot.snapshot_id and announced["added_records"] == 7
    # Created from a source: the table first, then the append's job detached.
    created = SqlCatalog("icewright", uri=uri, warehouse=f"file://{warehouse}").load_table(
        "ns.created"
    )
    (snapshot,) = created.snapshots()
    assert snapshot.summary is not None and snapshot.summary.operation.value == "append"
    rows = sorted(tuple(r.values()) for r in created.scan().to_arrow().to_pylist())
    assert rows == [(i, "eu") for i in range(4)]
    assert output.count("started detached") == 2, explain(done)
    staging = Path(warehouse)
    assert not [p for p in staging.rglob("*.pending.json")]  # the job was collected
    assert os.path.isdir(staging)


def test_provider_registers_the_job_trigger_module() -> None:
    from icewright.providers import get_provider_info

    modules = [m for e in get_provider_info()["triggers"] for m in e["python-modules"]]
    assert "icewright.providers.job_triggers" in modules


class _Submits(IcebergAppendOperator):
    """An append whose action reports a detached job (the part the operator reacts to)."""

    calls: list[str | None]

    def run_action(self, context: Any, commit_key: str | None) -> Any:
        self.calls.append(commit_key)
        raise JobSubmitted(
            "submitted",
            job_key=f"k/{commit_key}",
            result_location="/tmp/r.json",
            pending_location="/tmp/r.pending.json",
            io={"class": "icewright.io.local:LocalFileIO", "properties": {}},
            pending={"pid": 7, "host": "h"},
        )


def test_operator_defers_on_a_submitted_job_and_fails_on_a_lost_one() -> None:
    from airflow.sdk.exceptions import TaskDeferred

    op = _Submits(
        task_id="t",
        table="ns.t",
        source="sql:SELECT 1",
        commit_key="ck",
        deferrable=True,
        poll_interval=4,
        deferral_timeout=60,
        spark_settings={"master": "local[1]"},
    )
    op.calls = []
    with pytest.raises(TaskDeferred) as deferred:
        op.execute({})
    assert deferred.value.method_name == "execute_complete"
    trigger = deferred.value.trigger
    assert isinstance(trigger, IcebergSparkJobTrigger)
    _, kwargs = trigger.serialize()
    assert kwargs["job_key"] == "k/ck" and kwargs["poll_interval"] == 4
    assert kwargs["timeout"] == 60 and kwargs["extra"] == {"deferrals": 1}

    # Resumed after a finished job: the action runs again with the same key (here it
    # submits again, so the task defers again, counting).
    with pytest.raises(TaskDeferred) as again:
        op.execute_complete({}, event={"status": "finished", "extra": {"deferrals": 1}})
    assert again.value.trigger.serialize()[1]["extra"] == {"deferrals": 2}
    assert op.calls == ["ck", "ck"]
    with pytest.raises(IcewrightError, match="submitted a Spark job 17 times"):
        op.execute_complete({}, event={"status": "finished", "extra": {"deferrals": 16}})
    with pytest.raises(IcewrightError, match="ended without a result"):
        op.execute_complete({}, event={"status": "lost", "message": "ended without a result"})
    assert op.calls == ["ck", "ck", "ck"]  # a lost job is not run again in this try


def test_runner_detaches_only_spark_submit_when_deferrable() -> None:
    from icewright.runners.local import LocalRunner
    from icewright.runners.submit import SparkSubmitRunner

    settings = {"master": "local[1]"}
    submit = IcebergAppendOperator(
        task_id="a", table="ns.t", source="x", deferrable=True, spark_settings=settings
    )
    runner = submit.make_runner()
    assert isinstance(runner, SparkSubmitRunner) and runner.settings.detach
    # no key namespace on the runner: a job is stored under the action's key only
    assert runner.job_key is None
    plain = IcebergAppendOperator(
        task_id="b", table="ns.t", source="x", spark_settings={"master": "local[1]", "detach": True}
    )
    runner = plain.make_runner()
    assert isinstance(runner, SparkSubmitRunner) and not runner.settings.detach
    local = IcebergAppendOperator(task_id="c", table="ns.t", source="x", deferrable=True)
    assert isinstance(local.make_runner(), LocalRunner)


def _two_partitions_of_three_files(catalog: Any, name: str) -> None:
    """``name`` partitioned by region, three small files in each of two partitions (two
    file groups: one job each, and the fewest that put a group before a failing one)."""
    import pyarrow as pa

    from icewright.actions import create
    from icewright.arrow import write_data_files
    from icewright.commit import fast_append
    from icewright.text.declaration import parse_partitioning, parse_schema

    create(
        name,
        catalog=catalog,
        schema=parse_schema("id long, region string"),
        partition_by=parse_partitioning("region"),
    )
    for batch in range(3):
        table = catalog.load_table(name)
        ids = list(range(batch * 10, batch * 10 + 6))
        rows = pa.table({"id": ids, "region": [("a", "b")[i % 2] for i in ids]})
        fast_append(table, write_data_files(table.io, table.metadata, rows))


@pytest.mark.slow
def test_deferrable_rewrite_of_several_groups_under_dags_test(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    """Issue 17 item 4: one deferral per file group; a failing group's job fails the task
    and leaves the groups committed before it in place."""
    from icewright.actions.rewrite import plan_groups, target_size
    from icewright.scan import plan_files

    _, _, conn, catalog = _lake(tmp_path)
    for name in ("ns.compact", "ns.broken"):
        _two_partitions_of_three_files(catalog, name)
    broken = catalog.load_table("ns.broken")
    groups = plan_groups(broken, target_file_size=target_size(broken), min_input_files=3)
    assert len(groups) == 2
    lost = groups[-1].tasks[0].data_file.file_path  # the last group's job cannot read it
    Path(lost.removeprefix("file://")).unlink()

    done = dags_test(
        "icewright_deferrable_rewrite",
        DAGS,
        env=airflow_home.environment(**conn),
        logical_date="2026-01-06",
    )
    output = done.stdout + done.stderr
    run_id = run_id_of(done)
    states = dict(
        query_metadata_db(
            airflow_home,
            "SELECT task_id, state FROM task_instance "
            "WHERE dag_id = 'icewright_deferrable_rewrite' AND run_id = :r",
            r=run_id,
        )
    )
    assert states == {"rewrite_compact": "success", "rewrite_broken": "failed"}, explain(done)
    assert output.count("started detached") >= 4, explain(done)  # a job per group, detached

    compacted = catalog.load_table("ns.compact")
    operations = [str(s.operation) for s in compacted.metadata.snapshots]
    assert operations == ["append"] * 3 + ["replace"] * 2  # every group, a commit each
    live = [t.data_file for t in plan_files(compacted)]
    assert len(live) == 2 and sum(f.record_count for f in live) == 18
    pushes = query_metadata_db(
        airflow_home,
        "SELECT value FROM xcom WHERE dag_id = 'icewright_deferrable_rewrite' AND run_id = :r "
        "AND task_id = 'rewrite_compact' AND key = 'return_value'",
        r=run_id,
    )
    (value,) = pushes[0]
    pushed = json.loads(value) if isinstance(value, str) else value
    assert pushed["groups_rewritten"] == 2 and len(pushed["commits"]) == 2

    # The broken table: the group before the failing one landed and stays.
    kept = catalog.load_table("ns.broken")
    operations = [str(s.operation) for s in kept.metadata.snapshots]
    assert operations == ["append"] * 3 + ["replace"]
    live_paths = {t.data_file.file_path for t in plan_files(kept)}
    assert {t.data_file.file_path for t in groups[-1].tasks} <= live_paths  # untouched
    assert len(live_paths) == 1 + 3


@pytest.mark.parametrize(("setting", "expected"), [(None, False), ("True", True), ("False", False)])
def test_deferrable_follows_the_default_deferrable_setting(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, expected: bool
) -> None:
    """Airflow's ``[operators] default_deferrable`` decides when ``deferrable`` is not
    given; an explicit value wins."""
    from icewright.operators import IcebergAppendOperator

    if setting is None:
        monkeypatch.delenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", raising=False)
    else:
        monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", setting)
    op = IcebergAppendOperator(task_id="a", table="ns.t", source="sql:SELECT 1 AS id")
    assert op.deferrable is expected
    explicit = IcebergAppendOperator(
        task_id="b", table="ns.t", source="sql:SELECT 1 AS id", deferrable=not expected
    )
    assert explicit.deferrable is (not expected)


@pytest.mark.slow
def test_a_killed_deferred_merge_stops_its_application_on_the_cluster(
    spark_cluster: Cluster, tmp_path: Path
) -> None:
    """The kill of a deferred task, as the triggerer runs it (``on_kill`` of the task's
    trigger), on a merge whose detached job runs on the standalone cluster: the
    application stops, no document of it is left, and nothing is committed."""
    from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, append, create, merge
    from icewright.text.declaration import parse_schema
    from tests.actions.submit_support import CLUSTER_CONF, slow_source_module

    _, _, _, catalog = _lake(tmp_path)
    create("ns.k", catalog=catalog, schema=parse_schema("id long, region string"))
    append("ns.k", "sql:SELECT id, 'us' AS region FROM range(3)", catalog=catalog)
    before = catalog.load_table("ns.k").metadata_location
    settings = SparkSubmitSettings.from_connection(
        "spark://127.0.0.1",
        int(spark_cluster.master_url.rsplit(":", 1)[1]),
        {},
        conf=CLUSTER_CONF,
        py_files=[str(slow_source_module(tmp_path))],
        detach=True,
    )
    known = spark_cluster.app_ids()
    with pytest.raises(JobSubmitted) as submitted:
        merge(
            "ns.k",
            "iw_slow:slow",
            on="id",
            catalog=catalog,
            commit_key="killed",
            runner=SparkSubmitRunner(settings),
        )
    deadline = time.monotonic() + 240
    while True:
        active = {a["id"] for a in spark_cluster.state()["activeapps"]} - known
        if active:
            break
        assert time.monotonic() < deadline, "the merge's application never started"
        time.sleep(1)
    trigger = IcebergSparkJobTrigger.from_submitted(submitted.value)
    asyncio.run(trigger.on_kill())
    deadline = time.monotonic() + 60
    while active & {a["id"] for a in spark_cluster.state()["activeapps"]}:
        assert time.monotonic() < deadline, "the application is still running"
        time.sleep(1)
    io = load_file_io(submitted.value.result_location)
    assert not io.exists(submitted.value.pending_location)
    assert not io.exists(submitted.value.result_location)  # no later try can commit it
    assert catalog.load_table("ns.k").metadata_location == before
