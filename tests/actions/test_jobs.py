"""Stored job results: reuse by job key, removal after the commit, LocalRunner.cancel."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from icewright.actions import LocalRunner, append, create
from icewright.actions.append import commit_written
from icewright.catalog import SqlCatalog
from icewright.commit import append as commit_append
from icewright.errors import CommitFailed, CommitStateUnknown, IcewrightError
from icewright.runners.store import JobStore, default_staging, job_key
from icewright.spark.job_spec import partition_types
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
SOURCE = "sql:SELECT id, IF(id % 2 = 0, 'eu', 'us') AS region FROM range(6)"


def rows(pycat: Any, name: str) -> list[tuple[Any, ...]]:
    table = pycat.load_table(name).scan().to_arrow()
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.fixture
def table(catalog: SqlCatalog) -> Any:
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    return catalog.load_table("db.t")


def test_store_location_is_deterministic(table: Any) -> None:
    store = JobStore.for_table(table.metadata, table.io)
    digest = hashlib.sha256(b"append:k").hexdigest()[:32]
    assert store.path("append:k") == f"{table.metadata.location}/.icewright/jobs/{digest}.json"
    assert store.staging == default_staging(table.metadata.location)
    prefixed = JobStore(table.io, "/s", prefix="run-1")
    assert prefixed.path("k") == f"/s/{hashlib.sha256(b'run-1/k').hexdigest()[:32]}.json"
    assert job_key(None, "append") is None and job_key("k", "rewrite", 3) == "rewrite:3:k"


def test_keyed_write_is_reused_until_a_file_is_gone(
    spark: SparkSession, table: Any, caplog: pytest.LogCaptureFixture
) -> None:
    runner = LocalRunner(spark)
    first = runner.write(table.metadata, table.io, SOURCE, job_key="k")
    store = runner.job_store(table.metadata, table.io)
    doc = json.loads(Path(store.path("k")).read_text())
    assert doc["status"] == "ok" and doc["job-key"] == "k"
    with caplog.at_level(logging.INFO, logger="icewright.runners.store"):
        again = runner.write(table.metadata, table.io, SOURCE, job_key="k")
    assert again == first  # same job id: Spark did not run again
    assert "reusing the finished job result" in caplog.text
    other_source = runner.write(table.metadata, table.io, SOURCE + " WHERE id < 3", job_key="k")
    assert other_source.job_id != first.job_id and other_source.record_count == 3
    Path(other_source.data_files[0].file_path).unlink()
    rerun = runner.write(table.metadata, table.io, SOURCE + " WHERE id < 3", job_key="k")
    assert rerun.job_id != other_source.job_id
    assert all(Path(f.file_path).exists() for f in rerun.data_files)


def test_append_reuses_a_finished_job_and_removes_its_result(
    spark: SparkSession, table: Any, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    runner = LocalRunner(spark)
    # a previous attempt of the task ran the job but never committed
    done = runner.write(table.metadata, table.io, SOURCE, job_key=job_key("ck", "append"))
    store = runner.job_store(table.metadata, table.io)
    path = Path(store.path("append:ck"))
    assert path.exists()
    result = append("db.t", SOURCE, catalog=catalog, runner=runner, commit_key="ck")
    assert result.committed and result.records_added == 6
    snapshot = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert snapshot.summary["added-data-files"] == str(len(done.data_files))
    listed = {
        task.file.file_path for task in pyiceberg_catalog.load_table("db.t").scan().plan_files()
    }
    assert listed == {f.file_path for f in done.data_files}
    assert not path.exists()  # removed after the commit landed
    assert rows(pyiceberg_catalog, "db.t") == [(i, "eu" if i % 2 == 0 else "us") for i in range(6)]


def _stored(runner: LocalRunner, table: Any, key: str) -> tuple[Any, Path]:
    written = runner.write(table.metadata, table.io, SOURCE, job_key=key)
    return written, Path(runner.job_store(table.metadata, table.io).path(key))


def test_definite_failure_deletes_files_and_result(spark: SparkSession, table: Any) -> None:
    runner = LocalRunner(spark)
    written, path = _stored(runner, table, "fail")
    store = runner.job_store(table.metadata, table.io)

    def commit() -> Any:
        raise CommitFailed("someone else won")

    with pytest.raises(CommitFailed):
        commit_written(table.io, written.data_files, commit, forget=lambda: store.forget("fail"))
    assert not path.exists()
    assert not any(Path(f.file_path).exists() for f in written.data_files)


def test_unknown_outcome_keeps_files_and_result(spark: SparkSession, table: Any) -> None:
    runner = LocalRunner(spark)
    written, path = _stored(runner, table, "unknown")
    store = runner.job_store(table.metadata, table.io)

    def commit() -> Any:
        raise CommitStateUnknown("the catalog did not answer")

    with pytest.raises(CommitStateUnknown):
        commit_written(table.io, written.data_files, commit, forget=lambda: store.forget("unknown"))
    assert path.exists()
    assert all(Path(f.file_path).exists() for f in written.data_files)
    # the retry reuses the files and commits them
    reused = store.load("unknown")
    assert reused == written
    result = commit_written(
        table.io,
        reused.data_files,
        lambda: commit_append(table, reused.data_files),
        forget=lambda: store.forget("unknown"),
    )
    assert result.committed and not path.exists()


def test_stored_result_carries_the_partition_types(spark: SparkSession, table: Any) -> None:
    runner = LocalRunner(spark)
    written, path = _stored(runner, table, "types")
    doc = json.loads(path.read_text())
    types = doc["result"]["partition-types"]
    assert set(types) == {"0"}
    assert types["0"]["fields"][0]["type"] == "string"
    assert partition_types(table.metadata)[0].fields[0].name == "region"
    assert sorted(f.partition for f in written.data_files) == [("eu",), ("us",)]


def _slow(spark: SparkSession) -> DataFrame:
    def sleepy(x: int) -> tuple[int, str]:
        time.sleep(120)
        return (x, "eu")

    rdd = spark.sparkContext.parallelize(range(2), 2).map(sleepy)
    return spark.createDataFrame(rdd, "id long, region string")


def test_local_runner_cancel(spark: SparkSession, table: Any) -> None:
    runner = LocalRunner(spark)
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            runner.write(table.metadata, table.io, _slow(spark))
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run)
    started = time.monotonic()
    thread.start()
    tracker = spark.sparkContext.statusTracker()
    while not tracker.getActiveJobsIds() and time.monotonic() - started < 120:
        time.sleep(0.2)
    assert tracker.getActiveJobsIds(), "the slow job never started"
    runner.cancel()
    thread.join(timeout=90)
    assert not thread.is_alive()
    assert time.monotonic() - started < 110  # it did not sleep its 120 s out
    assert len(outcome) == 1 and isinstance(outcome[0], IcewrightError)
    assert "cancelled" in str(outcome[0])
    data = Path(table.metadata.location) / "data"
    assert not data.exists() or not any(p.is_file() for p in data.rglob("*"))
