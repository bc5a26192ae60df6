"""The spark-submit runner on a real Spark standalone cluster (master + worker on
127.0.0.1, started from PySpark's own spark-class), committed by icewright and read by
pyiceberg."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, append, create
from icewright.catalog import SqlCatalog
from icewright.errors import IcewrightError, ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.submit_support import CLUSTER_CONF as CONF
from tests.actions.submit_support import Cluster, slow_source_module

pytestmark = pytest.mark.slow

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
SOURCE = "sql:SELECT id, IF(id % 2 = 0, 'eu', 'us') AS region FROM range(5)"


@pytest.fixture
def cluster(spark_cluster: Cluster) -> Cluster:
    """The session's standalone cluster (tests/conftest.py)."""
    return spark_cluster


def runner(cluster: Cluster, lines: list[str], **settings: Any) -> SparkSubmitRunner:
    conf = {**CONF, **settings.pop("conf", {})}
    settings = SparkSubmitSettings.from_connection(
        "spark://127.0.0.1", int(cluster.master_url.rsplit(":", 1)[1]), {}, conf=conf, **settings
    )
    return SparkSubmitRunner(settings, log=lines.append)


def rows(pycat: Any, name: str) -> list[tuple[Any, ...]]:
    table = pycat.load_table(name).scan().to_arrow()
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_append_on_the_cluster_then_reuse(
    cluster: Cluster, catalog: SqlCatalog, pyiceberg_catalog: Any
) -> None:
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    lines: list[str] = []
    submit = runner(cluster, lines)
    before = cluster.app_ids()
    result = append("db.t", SOURCE, catalog=catalog, runner=submit, commit_key="c1")
    assert result.committed and result.records_added == 5 and result.files_added == 2
    apps = cluster.app_ids() - before
    assert len(apps) == 1 and submit.application_id in apps
    assert rows(pyiceberg_catalog, "db.t") == [(i, "eu" if i % 2 == 0 else "us") for i in range(5)]
    snapshot = pyiceberg_catalog.load_table("db.t").current_snapshot()
    assert snapshot.snapshot_id == result.snapshot_id

    # a task whose job finished but whose commit never happened: the retry reuses it
    table = catalog.load_table("db.t")
    first = submit.write(table.metadata, table.io, SOURCE, job_key="append:c2")
    apps = cluster.app_ids()
    lines.clear()
    again = append("db.t", SOURCE, catalog=catalog, runner=submit, commit_key="c2")
    assert cluster.app_ids() == apps  # no new application: Spark did not run
    assert any("reusing the finished job result" in line for line in lines)
    assert not any(line.startswith("spark-submit started") for line in lines)
    assert again.committed and again.records_added == 5
    listed = {t.file.file_path for t in pyiceberg_catalog.load_table("db.t").scan().plan_files()}
    assert {f.file_path for f in first.data_files} <= listed
    store = submit.job_store(table.metadata, table.io)
    assert not Path(store.path("append:c2")).exists()  # removed after the commit
    assert len(rows(pyiceberg_catalog, "db.t")) == 10


def test_job_error_comes_back_typed(cluster: Cluster, catalog: SqlCatalog, tmp_path: Path) -> None:
    create("db.e", catalog=catalog, schema=SCHEMA)
    missing = tmp_path / "no" / "such" / "dir"
    lines: list[str] = []
    with pytest.raises(ValidationError, match=re.escape(str(missing))) as info:
        append("db.e", f"parquet:{missing}", catalog=catalog, runner=runner(cluster, lines))
    assert "does not exist" in str(info.value)
    assert catalog.load_table("db.e").metadata.current_snapshot() is None


def test_cancel_kills_the_application(
    cluster: Cluster, catalog: SqlCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the job's tasks are seen starting in Spark's own log, quiet unless asked for
    monkeypatch.setenv("ICEWRIGHT_SPARK_VERBOSE", "1")
    create("db.c", catalog=catalog, schema=SCHEMA)
    module = slow_source_module(tmp_path)
    lines: list[str] = []
    submit = runner(cluster, lines, py_files=[str(module)], kill_timeout=15.0)
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            append("db.c", "iw_slow:slow", catalog=catalog, runner=submit)
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run)
    started = time.monotonic()
    thread.start()
    while time.monotonic() - started < 240 and thread.is_alive():
        if any("Starting task" in line for line in list(lines)):
            break
        time.sleep(0.5)
    assert any("Starting task" in line for line in list(lines)), "\n".join(lines[-30:])
    pid = int(
        next(m.group(1) for m in map(re.compile(r"started \(pid (\d+)\)").search, lines) if m)
    )
    app = submit.application_id
    assert app is not None and app in {a["id"] for a in cluster.state()["activeapps"]}
    submit.cancel()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert time.monotonic() - started < 280  # far less than the 300 s the row sleeps
    assert len(outcome) == 1 and isinstance(outcome[0], IcewrightError)
    assert "cancelled" in str(outcome[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the spark-submit process is gone (and reaped)
    deadline = time.monotonic() + 60
    while app in {a["id"] for a in cluster.state()["activeapps"]}:
        assert time.monotonic() < deadline, "the application is still running"
        time.sleep(1)
    assert app in {a["id"] for a in cluster.state()["completedapps"]}
    assert catalog.load_table("db.c").metadata.current_snapshot() is None
