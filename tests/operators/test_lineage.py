"""OpenLineage from the operators, in this process: each operator's datasets and facets
on start, completion and failure (real actions on a SQLite catalog, local Spark), the
table identity per catalog, the parent job's identity reaching the runners, and that
nothing of OpenLineage is imported without the provider.

The events of real task runs (``airflow dags test`` with the file transport) are in
``tests/example_dags/test_lineage_dag.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icewright.actions.lineage import (
    DatasetName,
    catalog_symlink,
    database_namespace,
    location_dataset,
    table_identity,
)
from icewright.catalog import load_catalog
from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergDeleteOperator,
    IcebergExpireSnapshotsOperator,
    IcebergMergeOperator,
    IcebergPublishViewOperator,
    IcebergReplaceOperator,
    IcebergRewriteDataFilesOperator,
    IcebergSnapshotSensor,
)
from icewright.providers.lineage import RANGE_FACET
from icewright.providers.spark import runner_for
from icewright.runners.local import LocalRunner
from tests.support.airflow import connection_env

REPO = Path(__file__).resolve().parents[2]


def test_location_names_follow_openlineage_spark() -> None:
    assert location_dataset("/wh/sales/orders/") == DatasetName("file", "/wh/sales/orders")
    assert location_dataset("file:///wh/sales/orders") == DatasetName("file", "/wh/sales/orders")
    assert location_dataset("file:/wh/a") == DatasetName("file", "/wh/a")
    assert location_dataset("s3://bucket/wh/orders") == DatasetName("s3://bucket", "wh/orders")
    assert location_dataset("s3a://bucket/wh/orders/") == DatasetName("s3://bucket", "wh/orders")
    assert location_dataset("gs://b/x") == DatasetName("gs://b", "x")
    assert location_dataset("hdfs://nn:8020/wh/t") == DatasetName("hdfs://nn:8020", "/wh/t")


def test_catalog_symlinks(tmp_path: Path) -> None:
    import boto3

    from icewright.catalog.filesystem import FileSystemCatalog
    from icewright.catalog.glue import GlueCatalog
    from icewright.catalog.sql import SqlCatalog

    sql = SqlCatalog("lake", f"sqlite:///{tmp_path}/lake.db", str(tmp_path / "wh"))
    assert catalog_symlink(sql, "sales.orders") == DatasetName(
        f"sqlite:///{tmp_path}/lake.db", "lake.sales.orders"
    )
    url = "postgresql+psycopg://user:secret@db.example:5433/iceberg"
    assert database_namespace(url) == "postgresql://db.example:5433/iceberg"
    files = FileSystemCatalog("fs", str(tmp_path / "fswh"))
    assert catalog_symlink(files, "a.b.t") == DatasetName(f"file://{tmp_path}/fswh", "a.b.t")
    client = boto3.client("glue", region_name="eu-west-1")  # not called: the name is local
    glue = GlueCatalog("glue", "s3://b/wh", client=client, **{"glue.id": "123456789012"})
    assert catalog_symlink(glue, "sales.orders") == DatasetName(
        "arn:aws:glue:eu-west-1:123456789012", "table/sales/orders"
    )
    ident = table_identity(sql, "sales.orders", "s3://bucket/wh/sales/orders")
    assert ident.dataset == DatasetName("s3://bucket", "wh/sales/orders")


@pytest.fixture
def lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A SQLite catalog behind the Airflow connection ``lake``."""
    uri = f"sqlite:///{tmp_path}/lake.db"
    extra = {"catalog_type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")}
    for key, value in connection_env("lake", "icewright", extra=extra).items():
        monkeypatch.setenv(key, value)
    return load_catalog({"type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")})


def _facets(dataset: Any) -> dict[str, Any]:
    from openlineage.client.serde import Serde

    return json.loads(Serde.to_json(dataset))


def _run(op: Any) -> dict[str, Any]:
    """The operator's action as ``execute`` runs it (no outlets, no commit key)."""
    return op._act({}, None)  # type: ignore[no-any-return]


def test_each_operator_reports_its_datasets(lake: Any, tmp_path: Path, spark: Any) -> None:
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "region": ["eu", "us", "eu"]})
    pq.write_table(rows, tmp_path / "batch.parquet")
    common = {"iceberg_conn_id": "lake", "table": "sales.orders"}

    create = IcebergCreateTableOperator(
        task_id="create", schema="id bigint, region string", **common
    )
    start = create.get_openlineage_facets_on_start()
    (out,) = [_facets(d) for d in start.outputs]
    assert out["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert "version" not in out["facets"]
    _run(create)
    (out,) = [_facets(d) for d in create.get_openlineage_facets_on_complete(None).outputs]
    location = lake.load_table("sales.orders").metadata.location
    assert (out["namespace"], out["name"]) == ("file", location)
    (link,) = out["facets"]["symlinks"]["identifiers"]
    assert link == {
        "namespace": f"sqlite:///{tmp_path}/lake.db",
        "name": "default.sales.orders" if lake.name == "default" else f"{lake.name}.sales.orders",
        "type": "TABLE",
    }
    assert [(f["name"], f["type"]) for f in out["facets"]["schema"]["fields"]] == [
        ("id", "long"),
        ("region", "string"),
    ]
    assert out["facets"]["storage"]["storageLayer"] == "iceberg"
    assert out["facets"]["storage"]["fileFormat"] == "parquet"

    append = IcebergAppendOperator(task_id="a", source=str(tmp_path / "batch.parquet"), **common)
    (source,) = [_facets(d) for d in append.get_openlineage_facets_on_start().inputs]
    assert (source["namespace"], source["name"]) == ("file", str(tmp_path / "batch.parquet"))
    payload = _run(append)
    done = append.get_openlineage_facets_on_complete(None)
    (out,) = [_facets(d) for d in done.outputs]
    assert out["facets"]["version"]["datasetVersion"] == str(payload["snapshot_id"])
    stats = out["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] == 3 and stats["fileCount"] == payload["files_added"] >= 1
    assert stats["size"] > 0
    assert "lifecycleStateChange" not in out["facets"]
    # A failure reports what was known before (no version).
    (failed,) = [_facets(d) for d in append.get_openlineage_facets_on_failure(None).outputs]
    assert "version" not in failed["facets"] and "outputStatistics" not in failed["outputFacets"]
    first = payload["snapshot_id"]

    # A sql: source reading the table's new rows: the table, its range, the query.
    query = f"sql:SELECT id, region FROM `iceberg:sales.orders@..{first}` WHERE id > 1"
    replace = IcebergReplaceOperator(task_id="r", source=query, where="region = 'us'", **common)
    payload = _run(replace)
    done = replace.get_openlineage_facets_on_complete(None)
    (read,) = [_facets(d) for d in done.inputs]
    assert (read["namespace"], read["name"]) == ("file", location)
    assert read["facets"]["version"]["datasetVersion"] == str(first)
    assert read["inputFacets"][RANGE_FACET]["end"] == first
    assert done.job_facets["sql"].query.startswith("SELECT id, region FROM `iceberg:")
    (out,) = [_facets(d) for d in done.outputs]
    assert out["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert out["facets"]["version"]["datasetVersion"] == str(payload["snapshot_id"])

    merge = IcebergMergeOperator(
        task_id="m", source=str(tmp_path / "batch.parquet"), on="id", **common
    )
    payload = _run(merge)
    (out,) = [_facets(d) for d in merge.get_openlineage_facets_on_complete(None).outputs]
    assert out["facets"]["version"]["datasetVersion"] == str(payload["snapshot_id"])
    delete = IcebergDeleteOperator(task_id="d", where="id = 3", **common)
    payload = _run(delete)
    (out,) = [_facets(d) for d in delete.get_openlineage_facets_on_complete(None).outputs]
    assert out["facets"]["version"]["datasetVersion"] == str(payload["snapshot_id"])

    rewrite = IcebergRewriteDataFilesOperator(task_id="w", min_input_files=2, **common)
    payload = _run(rewrite)
    (out,) = [_facets(d) for d in rewrite.get_openlineage_facets_on_complete(None).outputs]
    assert out["facets"]["version"]["datasetVersion"] == str(payload["snapshot_id"])
    expire = IcebergExpireSnapshotsOperator(task_id="e", retain_last=10, **common)
    _run(expire)
    (out,) = [_facets(d) for d in expire.get_openlineage_facets_on_complete(None).outputs]
    current = lake.load_table("sales.orders").metadata.current_snapshot_id
    assert out["facets"]["version"]["datasetVersion"] == str(current)
    assert "outputStatistics" not in out["outputFacets"]

    view = IcebergPublishViewOperator(
        task_id="v",
        iceberg_conn_id="lake",
        view="sales.eu_orders",
        sql="SELECT id FROM sales.orders WHERE region = 'eu'",
    )
    assert view.get_openlineage_facets_on_start().outputs == []  # no view yet
    _run(view)
    done = view.get_openlineage_facets_on_complete(None)
    (out,) = [_facets(d) for d in done.outputs]
    (read,) = [_facets(d) for d in done.inputs]
    view_location = lake.load_view("sales.eu_orders").metadata.location
    assert (out["namespace"], out["name"]) == ("file", view_location)
    assert "storage" not in out["facets"] and out["facets"]["version"]["datasetVersion"] == "1"
    assert read["name"] == location
    assert done.job_facets["sql"].query.startswith("SELECT id FROM sales.orders")

    sensor = IcebergSnapshotSensor(task_id="s", table="sales.orders", iceberg_conn_id="lake")
    sensor.lineage_snapshots = [{"snapshot_id": current, "parent_snapshot_id": None}]
    (read,) = [_facets(d) for d in sensor.get_openlineage_facets_on_complete(None).inputs]
    assert read["facets"]["version"]["datasetVersion"] == str(current)
    assert sensor.get_openlineage_facets_on_start().outputs == []


def test_parent_identity_reaches_the_runners() -> None:
    parent = {"spark.openlineage.parentRunId": "0190-run"}
    local = runner_for(None, job_conf=parent)
    assert isinstance(local, LocalRunner) and local._conf == parent
    submit = runner_for(
        None,
        job_conf=parent,
        master="local[1]",
        conf={"spark.openlineage.parentRunId": "mine", "spark.x": "1"},
    )
    # The job's own settings win (as the provider's helper leaves them).
    assert dict(submit.settings.conf) == {"spark.openlineage.parentRunId": "mine", "spark.x": "1"}
    submit = runner_for(None, job_conf=parent, master="local[1]")
    assert dict(submit.settings.conf) == parent


_HIDDEN = """
import sys, importlib.abc

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("openlineage", "airflow.providers.openlineage")):
            raise ModuleNotFoundError(name)
        return None

sys.meta_path.insert(0, Hide())
# ... and its distributions (Airflow's provider discovery reads their entry points)
import importlib.metadata, importlib_metadata

for module in (importlib.metadata, importlib_metadata):
    def visible(*args, _all=module.distributions, **kwargs):
        return [d for d in _all(*args, **kwargs) if "openlineage" not in (d.name or "")]

    module.distributions = visible

import icewright.operators, icewright.sensors.snapshot
from icewright.providers.lineage import spark_lineage_conf
from airflow.providers_manager import ProvidersManager

assert "apache-airflow-providers-openlineage" not in ProvidersManager().providers
op = icewright.operators.IcebergAppendOperator(task_id="t", table="a.b", source="x.parquet")
op.hand_context({})
assert op.lineage_spark_conf == {} and spark_lineage_conf({}) == {}
loaded = sorted(m for m in sys.modules if "openlineage" in m)
assert not loaded, loaded
print("ok")
"""


def test_no_openlineage_without_the_provider() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _HIDDEN],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    # With the provider installed, importing the operators imports no OpenLineage client.
    probe = "import sys, icewright.operators; print('openlineage' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], check=False, capture_output=True, text=True, cwd=REPO
    )
    assert done.stdout.strip() == "False", done.stderr[-2000:]
