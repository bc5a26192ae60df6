"""Detached spark-submit jobs: JobSubmitted, no second submission while running, reuse of
the finished result, a failed job's error raised once, a vanished job submitted again."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, append, create
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.io.loader import load_file_io
from icewright.runners.detached import process_alive, stop_detached
from icewright.runners.store import JobStore, JobSubmitted
from icewright.spark.job_spec import error_document
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
CONF = {
    "spark.driver.memory": "512m",
    "spark.sql.shuffle.partitions": "1",
    "spark.ui.enabled": "false",
}
SOURCE = "sql:SELECT id, IF(id < 2, 'eu', 'us') AS region FROM range(3)"


def _detached(**more: Any) -> SparkSubmitRunner:
    return SparkSubmitRunner(SparkSubmitSettings(master="local[1]", detach=True, conf=CONF, **more))


def _wait_for(path: str, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"no result document at {path}"
        time.sleep(1)
    doc: dict[str, Any] = json.loads(Path(path).read_text())
    return doc


def _wait_gone(pending: dict[str, Any], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while process_alive(pending):
        assert time.monotonic() < deadline, f"pid {pending['pid']} still runs"
        time.sleep(0.5)


def _staging(catalog: SqlCatalog, name: str) -> Path:
    return Path(catalog.load_table(name).metadata.location) / ".icewright" / "jobs"


@pytest.mark.slow
def test_detached_append_submits_once_and_a_later_call_commits(
    catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    first_runner = _detached()
    start = time.monotonic()
    with pytest.raises(JobSubmitted) as first:
        append("db.t", SOURCE, catalog=catalog, runner=first_runner, commit_key="k1")
    assert time.monotonic() - start < 60  # it does not wait for Spark
    submitted = first.value
    assert process_alive(submitted.pending) is True
    assert os.path.exists(submitted.pending_location)
    assert not os.path.exists(submitted.result_location)
    assert submitted.log_location and os.path.exists(submitted.log_location)
    assert first_runner.last_command  # it ran spark-submit

    # While the job runs, another call (a new runner, as a resumed task has) does not submit.
    second_runner = _detached()
    with pytest.raises(JobSubmitted) as second:
        append("db.t", SOURCE, catalog=catalog, runner=second_runner, commit_key="k1")
    assert second.value.pid == submitted.pid
    assert second.value.result_location == submitted.result_location
    assert second_runner.last_command == ()  # nothing was submitted
    assert catalog.load_table("db.t").metadata.current_snapshot() is None

    doc = _wait_for(submitted.result_location)
    assert doc["status"] == "ok", doc
    _wait_gone(submitted.pending)

    third_runner = _detached()
    result = append("db.t", SOURCE, catalog=catalog, runner=third_runner, commit_key="k1")
    assert third_runner.last_command == ()  # the stored result was reused: no Spark
    assert result.committed and result.records_added == 3 and result.files_added == 2
    table = pyiceberg_catalog.load_table("db.t")
    assert len(table.snapshots()) == 1
    rows = sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())
    assert rows == [(0, "eu"), (1, "eu"), (2, "us")]
    # The result, pending document, spec and log are all gone once the commit landed.
    staging = _staging(catalog, "db.t")
    assert not staging.exists() or sorted(p.name for p in staging.iterdir()) == []

    # The same key again: the commit is found, nothing runs.
    again = append("db.t", SOURCE, catalog=catalog, runner=_detached(), commit_key="k1")
    assert not again.committed and again.snapshot_id == result.snapshot_id


@pytest.mark.slow
def test_failed_detached_job_raises_its_error_once(catalog: SqlCatalog, tmp_path: Path) -> None:
    create("db.f", catalog=catalog, schema=SCHEMA)
    # A file that exists (paths that do not are refused before any job is submitted)
    # but that the job cannot read: its error is the job's.
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": 1, "region": "eu"}\n{"id": oops}\n')
    source = f"json:{broken}"
    with pytest.raises(JobSubmitted) as first:
        append("db.f", source, catalog=catalog, runner=_detached(), commit_key="k2")
    doc = _wait_for(first.value.result_location)
    assert doc["status"] == "error" and doc["error"]["class"] == "ValidationError", doc
    _wait_gone(first.value.pending)

    with pytest.raises(ValidationError, match=re.escape(str(broken))) as failed:
        append("db.f", source, catalog=catalog, runner=_detached(), commit_key="k2")
    assert "spark-submit log:" in str(failed.value)
    assert not os.path.exists(first.value.result_location)
    assert not os.path.exists(first.value.pending_location)

    # Forgotten: the next call (a retry) submits the job again.
    retry_runner = _detached()
    with pytest.raises(JobSubmitted) as again:
        append("db.f", source, catalog=catalog, runner=retry_runner, commit_key="k2")
    try:
        assert retry_runner.last_command
        assert again.value.pid != first.value.pid
    finally:
        stop_detached(again.value.pending, timeout=20)  # the process group this test started
    assert catalog.load_table("db.f").metadata.current_snapshot() is None


def test_vanished_job_is_submitted_again(catalog: SqlCatalog, tmp_path: Path) -> None:
    """A spark-submit that ends without a result document (here a stand-in binary that
    exits at once) is not waited for: the next call submits again."""
    fake = tmp_path / "fake-submit"
    fake.write_text('#!/bin/sh\necho started "$@"\nexit 3\n')
    fake.chmod(0o755)
    create("db.v", catalog=catalog, schema=SCHEMA)
    runner = _detached(spark_binary=str(fake))
    with pytest.raises(JobSubmitted) as first:
        append("db.v", SOURCE, catalog=catalog, runner=runner, commit_key="k3")
    _wait_gone(first.value.pending, timeout=30)
    log = Path(first.value.log_location or "")
    assert log.read_text().startswith("started --master local[1]")
    with pytest.raises(JobSubmitted) as second:
        append("db.v", SOURCE, catalog=catalog, runner=runner, commit_key="k3")
    assert second.value.pid != first.value.pid
    assert json.loads(Path(second.value.pending_location).read_text())["pid"] == second.value.pid
    _wait_gone(second.value.pending, timeout=30)


def test_error_document_is_raised_only_for_detached_jobs(tmp_path: Path) -> None:
    staging = str(tmp_path / "jobs")
    io = load_file_io(staging)
    store = JobStore(io, staging, prefix="run-1")
    os.makedirs(staging)
    error = error_document(ValidationError("column x is missing"), job_key=store.full_key("a"))

    # An attached job's leftover error document: ignored (the job just runs again).
    io.write(store.path("a"), json.dumps(error).encode())
    assert store.load("a") is None
    assert os.path.exists(store.path("a"))

    # With a pending document (a detached job): raised once, as its class, then forgotten.
    log = tmp_path / "job.log"
    log.write_text("spark output\n")
    store.write_pending("a", {"pid": 1, "host": "elsewhere", "log": str(log)})
    assert store.read_pending("a") is not None
    with pytest.raises(ValidationError, match="column x is missing"):
        store.load("a")
    assert store.load("a") is None
    assert store.read_pending("a") is None
    assert not os.path.exists(store.path("a"))
    assert log.exists()  # kept: the error message names it


def test_process_alive_tells_running_gone_and_unknown() -> None:
    import socket
    import subprocess

    from icewright.runners.detached import process_start_ticks

    here = socket.gethostname()
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        pending = {"pid": child.pid, "host": here, "process-start": process_start_ticks(child.pid)}
        assert process_alive(pending) is True
        assert process_alive({**pending, "process-start": -1}) is False  # a reused pid
        assert process_alive({**pending, "host": "another-host"}) is None
        assert process_alive({**pending, "watch-process": False}) is None
        assert stop_detached(pending, timeout=10) is True
        child.wait(timeout=10)
        assert process_alive(pending) is False
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
