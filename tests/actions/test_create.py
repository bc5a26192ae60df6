"""The ``create`` verb in its two resumable steps: a detached write leaves the created
table for the resumed call; a failed write drops only a table the creation made."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, create
from icewright.actions.create import finish_create, start_create
from icewright.catalog import Catalog, SqlCatalog
from icewright.errors import IcewrightError
from icewright.runners.detached import process_alive
from icewright.runners.local import LocalRunner
from icewright.runners.store import JobSubmitted
from icewright.scan import plan_files
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField
from tests.support.rest import RestServer

SCHEMA = Schema(NestedField(1, "id", LongType()))
SOURCE = "sql:SELECT id FROM range(3)"


def _vanishing_runner(tmp_path: Path, *, detach: bool = True) -> SparkSubmitRunner:
    """A spark-submit runner whose binary exits at once (no JVM): detached, every call
    submits and raises JobSubmitted; attached, every job fails."""
    fake = tmp_path / "fake-submit"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    return SparkSubmitRunner(
        SparkSubmitSettings(master="local[1]", detach=detach, spark_binary=str(fake))
    )


def _wait_gone(submitted: JobSubmitted) -> None:
    deadline = time.monotonic() + 30
    while process_alive(submitted.pending):
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_a_detached_write_keeps_the_created_table_for_the_resumed_call(
    catalog: SqlCatalog, tmp_path: Path
) -> None:
    runner = _vanishing_runner(tmp_path)
    with pytest.raises(JobSubmitted) as first:
        create("db.t", catalog=catalog, schema=SCHEMA, source=SOURCE, runner=runner, commit_key="k")
    _wait_gone(first.value)
    table = catalog.load_table("db.t")  # not dropped: the job runs on (here: it vanished)
    assert table.metadata.current_snapshot() is None
    # The resumed call finishes the creation with the same key (here: submits again).
    with pytest.raises(JobSubmitted) as again:
        finish_create("db.t", SOURCE, catalog=catalog, made=True, commit_key="k", runner=runner)
    _wait_gone(again.value)
    assert catalog.table_exists("db.t")


def test_a_failed_write_drops_only_a_table_the_creation_made(
    catalog: SqlCatalog, tmp_path: Path
) -> None:
    failing = _vanishing_runner(tmp_path, detach=False)
    started = start_create("db.made", catalog=catalog, schema=SCHEMA)
    assert started.made and started.result.committed
    with pytest.raises(IcewrightError):
        finish_create("db.made", SOURCE, catalog=catalog, made=started.made, runner=failing)
    assert not catalog.table_exists("db.made")

    start_create("db.kept", catalog=catalog, schema=SCHEMA)
    replaced = start_create("db.kept", catalog=catalog, schema=SCHEMA, or_replace=True)
    assert replaced.result.committed and not replaced.made
    with pytest.raises(IcewrightError):
        finish_create("db.kept", SOURCE, catalog=catalog, made=replaced.made, runner=failing)
    assert catalog.table_exists("db.kept")

    kept = start_create("db.kept", catalog=catalog, schema=SCHEMA, if_not_exists=True)
    assert not kept.result.committed and not kept.made


def _rest(server: RestServer) -> Catalog:
    catalog = server.catalog(warehouse=f"c{uuid.uuid4().hex[:12]}")
    catalog.create_namespace("db")
    return catalog


def test_rest_create_from_source_is_one_commit(rest_server: RestServer, spark: Any) -> None:
    catalog = _rest(rest_server)
    rest_server.clear_requests()
    result = create("db.t", catalog=catalog, source=SOURCE, runner=LocalRunner(spark))
    prefix = catalog.properties["prefix"]
    posts = [r for r in rest_server.requests() if r.startswith("POST")]
    # staged (creates nothing), then assert-create + the table's updates + add-snapshot
    assert posts == [
        f"POST /v1/{prefix}/namespaces/db/tables 200",
        f"POST /v1/{prefix}/namespaces/db/tables/t 200",
    ]
    table = catalog.load_table("db.t")
    assert result.committed and result.snapshot_id == table.metadata.current_snapshot_id
    assert len(table.metadata.snapshots) == 1
    assert sum(t.data_file.record_count for t in plan_files(table)) == 3


def test_rest_failed_write_leaves_no_table(rest_server: RestServer, tmp_path: Path) -> None:
    catalog = _rest(rest_server)
    with pytest.raises(IcewrightError):
        create(
            "db.t",
            catalog=catalog,
            schema=SCHEMA,
            source=SOURCE,
            runner=_vanishing_runner(tmp_path, detach=False),
        )
    assert not catalog.table_exists("db.t")
    assert catalog.list_tables("db") == []
    # A detached job creates the (empty) table, for finish_create to resume.
    with pytest.raises(JobSubmitted) as first:
        create(
            "db.d",
            catalog=catalog,
            schema=SCHEMA,
            source=SOURCE,
            runner=_vanishing_runner(tmp_path),
            commit_key="k",
        )
    _wait_gone(first.value)
    assert catalog.load_table("db.d").metadata.current_snapshot() is None
