"""The ``rewrite_manifests`` action: in this process and as a Spark job (the local session,
the job document of ``spark-submit``, and the standalone cluster), with the same entries
and the same clustering rules."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, rewrite_manifests
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend
from icewright.commit.update import commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileFormat, ManifestFile
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.runners.local import LocalRunner
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.actions.submit_support import CLUSTER_CONF, Cluster

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "day", LongType()),
    NestedField(3, "region", StringType()),
)
APPENDS = 30
PER_APPEND = 5
TARGET = 12_000  # a header (about 4.5 kB) and some 40 entries


def _files(location: str, n: int) -> list[DataFile]:
    return [
        DataFile(
            file_path=f"{location}/data/a{n:03d}-{i}.parquet",
            file_format=FileFormat.PARQUET,
            partition=((n * 7 + i) % 11, ("eu", "us", None)[i % 3]),
            record_count=10 + i,
            file_size_in_bytes=1_000 + n * 10 + i,
            column_sizes={1: 100, 2: 20, 3: 40},
            value_counts={1: 10, 2: 10, 3: 10},
        )
        for i in range(PER_APPEND)
    ]


def build(catalog: SqlCatalog, name: str) -> Table:
    """``APPENDS`` one-manifest appends (in commits of ten) over 11 days and 3 regions."""
    spec = build_partition_spec(SCHEMA, [("identity", "day"), ("identity", "region")])
    table = catalog.create_table(name, SCHEMA, spec)
    batches = [_files(table.location, n) for n in range(APPENDS)]
    for start in range(0, APPENDS, 10):
        table = commit_updates(
            table, [FastAppend(table, b) for b in batches[start : start + 10]]
        ).table
    return table


def _manifests(table: Table) -> list[ManifestFile]:
    snap = table.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    return read_manifest_list(table.io.read(snap.manifest_list))


def _entries(table: Table) -> set[tuple[str, int | None, int | None, int | None]]:
    """(path under the table, snapshot position, data and file sequence numbers)."""
    order = {s.snapshot_id: i for i, s in enumerate(table.metadata.snapshots)}
    return {
        (
            e.data_file.file_path.removeprefix(table.location),
            order.get(e.snapshot_id or -1),
            e.sequence_number,
            e.file_sequence_number,
        )
        for m in _manifests(table)
        for e in read_manifest(table.io.read(m.manifest_path), m)
        if e.is_live
    }


def _check_clustered(table: Table) -> None:
    """Every manifest under the target, sorted within, ranges in order across."""
    ranges = []
    for m in _manifests(table):
        assert m.manifest_length <= TARGET
        parts = [
            tuple((v is not None, v) for v in e.data_file.partition)
            for e in read_manifest(table.io.read(m.manifest_path), m)
        ]
        assert parts == sorted(parts)
        ranges.append((parts[0], parts[-1]))
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))


def test_the_action_rewrites_and_reports(catalog: SqlCatalog) -> None:
    table = build(catalog, "db.t")
    before = _entries(table)

    result = rewrite_manifests(table, target_size_bytes=TARGET, commit_key="nightly")

    assert result.committed and result.operation == "replace" and not result.distributed
    assert result.manifests_replaced == APPENDS
    result_table = table.refresh()
    assert result.manifests_created == len(_manifests(result_table)) > 1
    assert (result.manifests_kept, result.entries_processed) == (0, APPENDS * PER_APPEND)
    assert (result.files_added, result.files_removed) == (0, 0)
    assert set(result.timings) >= {"write", "commit", "total"}
    assert _entries(result_table) == before
    _check_clustered(result_table)
    # the same commit key: nothing again
    again = rewrite_manifests("db.t", catalog=catalog, commit_key="nightly")
    assert not again.committed and again.snapshot_id == result.snapshot_id
    # the default target (8 MiB): one manifest; then nothing left to rewrite
    done = rewrite_manifests("db.t", catalog=catalog)
    assert done.committed and done.manifests_created == 1
    assert not rewrite_manifests("db.t", catalog=catalog).committed


def test_bad_input_is_refused_before_anything_changes(catalog: SqlCatalog) -> None:
    table = build(catalog, "db.t")
    for kwargs, message in (
        ({"spec_id": 3}, "partition spec 3 is not a spec"),
        ({"spec_id": "0"}, "spec_id must be a partition spec id"),
        ({"target_size_bytes": 0}, "target_size_bytes must be an integer >= 1"),
        ({"commit_key": ""}, "commit"),
    ):
        with pytest.raises(ValidationError, match=message):
            rewrite_manifests(table, **kwargs)
    assert catalog.load_table("db.t").metadata_location == table.metadata_location


def test_distributed_writes_what_local_writes(catalog: SqlCatalog, spark: Any) -> None:
    a, b = build(catalog, "db.a"), build(catalog, "db.b")
    assert _entries(a) == _entries(b)
    here = rewrite_manifests(a, target_size_bytes=TARGET, distributed=False)
    there = rewrite_manifests(
        b, target_size_bytes=TARGET, distributed=True, runner=LocalRunner(spark)
    )
    assert there.distributed and there.committed
    assert there.entries_processed == here.entries_processed == APPENDS * PER_APPEND
    assert there.manifests_replaced == here.manifests_replaced == APPENDS
    a, b = a.refresh(), b.refresh()
    assert _entries(a) == _entries(b) == _entries(build(catalog, "db.c"))
    _check_clustered(b)
    assert there.manifests_created == len(_manifests(b)) > 1
    # only the given spec: nothing else to rewrite
    none = rewrite_manifests(b, spec_id=0, distributed=True, runner=LocalRunner(spark))
    assert none.committed and none.manifests_created == 1


def test_the_job_document_carries_the_manifests(catalog: SqlCatalog, spark: Any) -> None:
    """The spark-submit path's job kind, run by the job entry point on the local session:
    its JSON answer commits as the local runner's does."""
    from icewright.commit.rewrite_manifests import RewriteManifests
    from icewright.runners.job import run_job
    from icewright.runners.maintenance import manifest_rewrite, manifest_rewrite_job
    from icewright.spark.job_spec import io_to_json

    table = build(catalog, "db.t")
    before = _entries(table)
    op = RewriteManifests(table, target_size_bytes=TARGET)
    groups = op.selection(table.metadata)
    spec = manifest_rewrite_job(
        table.metadata,
        groups,
        snapshot_id=op.snapshot_id,
        target_size_bytes=TARGET,
        prefix=op.manifest_prefix(table.metadata),
    )
    status, answer = run_job(spark, {**spec, "io": io_to_json(table.io)})
    assert status == "ok" and answer["entries"] == APPENDS * PER_APPEND
    result = op.use_rewrite(manifest_rewrite(answer, groups)).commit()
    assert result.committed and _entries(result.table) == before
    _check_clustered(result.table)


@pytest.mark.slow
def test_distributed_on_the_cluster(catalog: SqlCatalog, spark_cluster: Cluster) -> None:
    """The manifests written by the standalone cluster's executors through spark-submit."""
    table = build(catalog, "db.t")
    before = _entries(table)
    port = int(spark_cluster.master_url.rsplit(":", 1)[1])
    settings = SparkSubmitSettings.from_connection("spark://127.0.0.1", port, {}, conf=CLUSTER_CONF)
    submit = SparkSubmitRunner(settings)
    apps = spark_cluster.app_ids()
    result = rewrite_manifests(table, target_size_bytes=TARGET, distributed=True, runner=submit)
    assert len(spark_cluster.app_ids() - apps) == 1  # it ran on the cluster
    assert result.committed and result.distributed
    assert _entries(table.refresh()) == before
    _check_clustered(table.refresh())
