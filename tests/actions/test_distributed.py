"""Maintenance planning as Spark jobs gives the local path's answer, file for file.

A table of a few hundred (empty) data files in ~40 manifests, with history whose files a
delete removed, and orphans on disk; expire's reachable-file walk, orphan listing and
rewrite planning run once in this process and once on Spark (the shared local session,
and the standalone cluster through ``spark-submit``), and must agree.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, expire, remove_orphan_files
from icewright.actions.distributed import DISTRIBUTED_MIN_DATA_FILES, use_distributed
from icewright.actions.rewrite import plan_groups
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend
from icewright.commit.delete import delete_files
from icewright.commit.properties import UpdateProperties
from icewright.commit.update import commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileFormat
from icewright.runners.local import LocalRunner
from icewright.spec.documents import StringMap
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.submit_support import CLUSTER_CONF, Cluster

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "day", LongType()),
    NestedField(3, "region", StringType()),
)
APPENDS = 40
PER_APPEND = 6
DAYS = 7
TEN_DAYS_S = 10 * 86_400


def _files(location: str, n: int) -> list[DataFile]:
    return [
        DataFile(
            file_path=f"{location}/data/day={(n + i) % DAYS}/a{n:03d}-{i}.parquet",
            file_format=FileFormat.PARQUET,
            partition=((n + i) % DAYS,),
            record_count=10 + i,
            file_size_in_bytes=1_000 + n * 10 + i,
        )
        for i in range(PER_APPEND)
    ]


def build(catalog: SqlCatalog, name: str) -> Table:
    """``APPENDS`` one-manifest appends; the first ten appends' files deleted after; every
    file on disk, plus old orphans and a new one."""
    table = catalog.create_table(name, SCHEMA, build_partition_spec(SCHEMA, [("identity", "day")]))
    batches = [_files(table.location, n) for n in range(APPENDS)]
    for start in range(0, APPENDS, 10):
        table = commit_updates(
            table, [FastAppend(table, b) for b in batches[start : start + 10]]
        ).table
    gone = [f.file_path for b in batches[:10] for f in b]
    table = delete_files(table, paths=gone).table
    old = time.time() - TEN_DAYS_S
    orphans = [f"{table.location}/data/day={d}/orphan-{d}.parquet" for d in range(DAYS)]
    orphans += [f"{table.location}/stray/orphan.txt"]
    for path in [f.file_path for b in batches for f in b] + orphans:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).touch()
    for path in orphans:
        os.utime(path, (old, old))
    Path(f"{table.location}/data/day=0/too-new.parquet").touch()
    return table


def _relative(table: Table, paths: Any) -> set[str]:
    return {p.removeprefix(table.location) for p in paths}


def _groups(groups: Any) -> set[tuple[Any, ...]]:
    return {
        (g.spec_id, g.partition, tuple(sorted(t.data_file.file_path for t in g.tasks)))
        for g in groups
    }


def _expired_paths(result: Any) -> set[str]:
    return {
        *result.manifest_list_paths,
        *result.manifest_paths,
        *result.data_file_paths,
        *result.delete_file_paths,
    }


@pytest.mark.slow
def test_distributed_walks_agree_with_local(catalog: SqlCatalog, spark: Any) -> None:
    runner = LocalRunner(spark)
    table = build(catalog, "db.t")
    now = int(time.time() * 1000) + 1

    # expire, dry run: same snapshots, same files, by kind
    local = expire(table, older_than=now, retain_last=1, dry_run=True, distributed=False)
    spread = expire(
        table, older_than=now, retain_last=1, dry_run=True, distributed=True, runner=runner
    )
    assert local.expired_snapshot_ids == spread.expired_snapshot_ids
    assert len(local.data_file_paths) == 10 * PER_APPEND
    for kind in ("manifest_list_paths", "manifest_paths", "data_file_paths", "delete_file_paths"):
        assert set(getattr(local, kind)) == set(getattr(spread, kind)), kind
    assert local.errors == spread.errors == ()

    # orphans, dry run: the same orphans and counts
    day_ago = int(time.time() * 1000) - 86_400_000
    o_local = remove_orphan_files(table, older_than=day_ago, dry_run=True, distributed=False)
    o_spread = remove_orphan_files(
        table, older_than=day_ago, dry_run=True, distributed=True, runner=runner
    )
    assert len(o_local.orphan_paths) == DAYS + 1
    assert o_spread.orphan_paths == o_local.orphan_paths
    assert (o_spread.listed, o_spread.referenced, o_spread.too_new) == (
        o_local.listed,
        o_local.referenced,
        o_local.too_new,
    )
    assert o_local.too_new >= 1

    # rewrite planning: the same groups (a group per day without a filter)
    options: dict[str, Any] = {"target_file_size": 1 << 20, "min_input_files": 5}
    assert len(plan_groups(table, distributed=False, **options)) == DAYS
    mine = plan_groups(table, where="day >= 3", distributed=False, **options)
    theirs = plan_groups(table, where="day >= 3", distributed=True, runner=runner, **options)
    assert len(mine) == DAYS - 3 and _groups(theirs) == _groups(mine)


def test_distributed_expire_deletes_what_local_deletes(catalog: SqlCatalog, spark: Any) -> None:
    runner = LocalRunner(spark)
    a, b = build(catalog, "db.a"), build(catalog, "db.b")
    now = int(time.time() * 1000) + 1
    here = expire(a, older_than=now, retain_last=1, report_paths=True, distributed=False)
    there = expire(
        b, older_than=now, retain_last=1, report_paths=True, distributed=True, runner=runner
    )
    assert here.commit is not None and there.commit is not None
    assert len(here.data_file_paths) == 10 * PER_APPEND
    # data files by name; metadata files are named by uuids and snapshot ids: by count
    assert _relative(a, here.data_file_paths) == _relative(b, there.data_file_paths)
    assert here.delete_file_paths == there.delete_file_paths == ()
    assert len(here.manifest_paths) == len(there.manifest_paths) > 0
    assert len(here.manifest_list_paths) == len(there.manifest_list_paths) > 0
    assert not any(os.path.exists(p) for p in _expired_paths(there))
    left_a = {str(p).removeprefix(a.location) for p in Path(a.location).rglob("*") if p.is_file()}
    left_b = {str(p).removeprefix(b.location) for p in Path(b.location).rglob("*") if p.is_file()}
    # the metadata files' names differ (uuids); the data files left are the same
    assert {p for p in left_a if "/data/" in p} == {p for p in left_b if "/data/" in p}


def _with(table: Table, threshold: str) -> Table:
    return UpdateProperties(table).set(DISTRIBUTED_MIN_DATA_FILES, threshold).commit().table


def test_the_threshold_chooses(catalog: SqlCatalog) -> None:
    table = build(catalog, "db.t")
    assert not use_distributed(table, None)  # 180 files, default 1,000,000
    assert use_distributed(table, True) and not use_distributed(table, False)
    low = _with(table, "100")
    assert use_distributed(low, None)
    assert not use_distributed(_with(low, "1000"), None)
    with pytest.raises(ValidationError, match="min-data-files='many' is invalid"):
        _with(low, "many")  # refused when set, and nothing changes
    assert catalog.load_table("db.t").metadata.properties[DISTRIBUTED_MIN_DATA_FILES] == "1000"
    # A bad value another engine wrote reads as the default (1,000,000): not distributed.
    written = dataclasses.replace(
        low.metadata,
        properties=StringMap({**low.metadata.properties, DISTRIBUTED_MIN_DATA_FILES: "many"}),
    )
    assert not use_distributed(dataclasses.replace(low, metadata=written), None)
    with pytest.raises(ValidationError, match="distributed must be"):
        use_distributed(table, "yes")  # type: ignore[arg-type]


@pytest.mark.slow
def test_distributed_on_the_cluster(catalog: SqlCatalog, spark_cluster: Cluster) -> None:
    """One walk through spark-submit on the standalone cluster: expire's dry run (manifest
    lists and manifests read by the cluster's executors, the path sets joined there)."""
    table = build(catalog, "db.t")
    lines: list[str] = []
    port = int(spark_cluster.master_url.rsplit(":", 1)[1])
    settings = SparkSubmitSettings.from_connection("spark://127.0.0.1", port, {}, conf=CLUSTER_CONF)
    submit = SparkSubmitRunner(settings, log=lines.append)
    now = int(time.time() * 1000) + 1
    local = expire(table, older_than=now, retain_last=1, dry_run=True, distributed=False)
    before = spark_cluster.app_ids()
    spread = expire(
        table, older_than=now, retain_last=1, dry_run=True, distributed=True, runner=submit
    )
    assert len(spark_cluster.app_ids() - before) == 1  # it ran on the cluster
    assert _expired_paths(spread) == _expired_paths(local)
    assert len(spread.data_file_paths) == 10 * PER_APPEND
    assert spread.errors == local.errors == ()


def test_job_documents_carry_the_answers(catalog: SqlCatalog, spark: Any) -> None:
    """The spark-submit path's job kinds, run by the job entry point on the local session:
    their JSON answers read back as the local walks' answers."""
    from icewright.commit.orphans import OrphanSearch, find_orphans
    from icewright.expressions import sql_filter
    from icewright.io.file_keys import describe_conflict
    from icewright.runners.job import run_job
    from icewright.runners.maintenance import found_orphans, groups_from_json, orphan_references
    from icewright.spark.job_spec import expression_to_json, io_to_json

    table = build(catalog, "db.t")
    metadata = table.metadata
    search = OrphanSearch(metadata, table.metadata_location, table.location, 10**15, "/nowhere/")
    common = {"metadata": metadata.to_dict(), "io": io_to_json(table.io)}
    orphan = f"{table.location}/stray/orphan.txt"
    local = find_orphans(table.io, search)
    assert orphan in local.orphans and not local.conflicts
    status, answer = run_job(
        spark,
        {
            **common,
            "kind": "orphan-files",
            # one orphan referenced under another authority only: a conflict, not an orphan
            "references": [*orphan_references(search), f"file://elsewhere{orphan}"],
            "root": search.root,
            "cutoff-ms": search.cutoff_ms,
            "skip-prefix": search.skip_prefix,
        },
    )
    assert status == "ok"
    assert answer["tasks"] >= 6  # 41 manifest lists, 8 a task; 40 manifests, 2 tasks a core
    assert answer["conflicts"] == [describe_conflict(orphan, [("file", "elsewhere")])]
    assert sorted(found_orphans(answer).orphans) == sorted(set(local.orphans) - {orphan})
    current = metadata.current_snapshot()
    assert current is not None
    status, answer = run_job(
        spark,
        {
            **common,
            "kind": "rewrite-groups",
            "snapshot-id": current.snapshot_id,
            "where": expression_to_json(sql_filter("day < 4")),
            "target-file-size": 1 << 20,
            "min-input-files": 5,
        },
    )
    assert status == "ok"
    groups = groups_from_json(answer, metadata)
    mine = plan_groups(table, where="day < 4", target_file_size=1 << 20, distributed=False)
    assert mine and {
        (s, p, tuple(sorted(t.data_file.file_path for t in ts))) for s, p, ts in groups
    } == _groups(mine)


@pytest.mark.slow
def test_distributed_orphans_match_iceberg_java(
    tmp_path: Path, spark: Any, iceberg_java: Any
) -> None:
    """Iceberg Java's ``remove_orphan_files`` dry run and icewright's distributed search
    name the same orphans on the same Hadoop table."""
    from icewright.catalog import load_catalog
    from icewright.io.file_keys import file_key
    from tests.support.java import step_insert, step_procedure

    warehouse = tmp_path / "java"
    location = warehouse / "db" / "t"
    old = time.time() - TEN_DAYS_S
    planted = [location / "data" / f"orphan-{i}.parquet" for i in range(5)]
    planted += [location / "metadata" / "stray.avro", location / "elsewhere" / "x.txt"]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
        os.utime(path, (old, old))
    day_ago = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 86_400))
    with iceberg_java.batch() as batch:
        written = batch.write_table(
            warehouse,
            "db.t",
            "id bigint, region string",
            partitioned_by=["region"],
            steps=[
                *(step_insert([[i, r] for r in ("eu", "us", "ap")]) for i in range(4)),
                step_procedure(
                    "remove_orphan_files", older_than=f"TIMESTAMP '{day_ago}'", dry_run="true"
                ),
            ],
        )
    java = {file_key(row[0]).path for row in written.value["step_results"][-1]["rows"]}
    fs = load_catalog({"type": "filesystem", "warehouse": str(warehouse), "name": "hadoop"})
    ours = remove_orphan_files(
        "db.t",
        catalog=fs,
        older_than=int((time.time() - 86_400) * 1000),
        dry_run=True,
        distributed=True,
        runner=LocalRunner(spark),
    )
    assert {file_key(p).path for p in ours.orphan_paths} == java == {str(p) for p in planted}


def test_distributed_orphans_refuse_like_local(catalog: SqlCatalog, spark: Any) -> None:
    """A manifest that cannot be read stops both orphan searches with the same message:
    its files would look unreferenced."""
    from icewright.manifest.manifest_list import read_manifest_list

    table = build(catalog, "db.t")
    current = table.metadata.current_snapshot()
    assert current is not None and current.manifest_list is not None
    listed = read_manifest_list(table.io.read(current.manifest_list), current.manifest_list)
    os.remove(listed[0].manifest_path)
    day_ago = int(time.time() * 1000) - 86_400_000
    messages = []
    for distributed in (False, True):
        with pytest.raises(ValidationError, match="cannot list every file") as raised:
            remove_orphan_files(
                table, older_than=day_ago, distributed=distributed, runner=LocalRunner(spark)
            )
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and listed[0].manifest_path in messages[1]
