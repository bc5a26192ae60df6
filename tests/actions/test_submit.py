"""SparkSubmitSettings (Airflow's spark connection shape) and the runner in local[2]."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.sql import SparkSession

from icewright.actions import Runner, SparkSubmitRunner, SparkSubmitSettings, append, create
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))


@pytest.mark.parametrize(
    ("host", "port", "master"),
    [
        ("spark://127.0.0.1", 7077, "spark://127.0.0.1:7077"),
        ("spark://127.0.0.1:7077", None, "spark://127.0.0.1:7077"),
        ("mycluster", 7077, "spark://mycluster:7077"),
        ("yarn", None, "yarn"),
        ("local[2]", None, "local[2]"),
        ("k8s://https://kube.example:6443", None, "k8s://https://kube.example:6443"),
        ("k8s://https://kube.example", 443, "k8s://https://kube.example:443"),
        (None, None, "local[*]"),
    ],
)
def test_master_from_connection(host: str | None, port: int | None, master: str) -> None:
    assert SparkSubmitSettings.from_connection(host, port, {}).master == master


def test_extras_and_overrides() -> None:
    s = SparkSubmitSettings.from_connection(
        "yarn",
        None,
        {
            "deploy-mode": "cluster",
            "queue": "etl",
            "namespace": "ns",
            "spark-binary": "spark3-submit",
        },
        conf={"spark.x": 1},
        packages="a:b:1,c:d:2",
    )
    assert (s.deploy_mode, s.queue, s.namespace, s.spark_binary) == (
        "cluster",
        "etl",
        "ns",
        "spark3-submit",
    )
    assert dict(s.conf) == {"spark.x": "1"} and s.packages == ("a:b:1", "c:d:2")
    assert SparkSubmitSettings.from_connection("yarn", None, {"queue": "a"}, queue="b").queue == "b"
    home = SparkSubmitSettings.from_connection("yarn", None, {"spark-home": "/opt/spark"})
    assert home.spark_binary == "/opt/spark/bin/spark-submit"
    with pytest.raises(ValidationError, match="spark-binary 'rm -rf' is not allowed"):
        SparkSubmitSettings.from_connection("yarn", None, {"spark-binary": "rm -rf"})
    with pytest.raises(ValidationError, match="deploy_mode"):
        SparkSubmitSettings.from_connection("yarn", None, {"deploy-mode": "both"})
    with pytest.raises(ValidationError, match="unknown SparkSubmitSettings fields"):
        SparkSubmitSettings.from_connection("yarn", None, {}, nope=1)


def test_binary_falls_back_to_pyspark(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    own = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    assert SparkSubmitSettings().binary() == str(own)
    fake = tmp_path / "spark-submit"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert SparkSubmitSettings().binary() == str(fake)
    with pytest.raises(ValidationError, match="cannot find 'spark9-submit'"):
        SparkSubmitSettings(spark_binary="spark9-submit").binary()


def test_runner_protocol_and_dataframe_sources(spark: SparkSession, catalog: SqlCatalog) -> None:
    submit = SparkSubmitRunner(SparkSubmitSettings(master="local[1]"))
    assert isinstance(submit, Runner)
    create("db.d", catalog=catalog, schema=SCHEMA)
    table = catalog.load_table("db.d")
    frame = spark.createDataFrame([(1, "eu")], "id long, region string")
    with pytest.raises(ValidationError, match="not a DataFrame; use LocalRunner"):
        submit.write(table.metadata, table.io, frame)
    assert submit.last_command == ()  # nothing was submitted
    submit.cancel()  # nothing runs: a no-op


def rows(pycat: Any, name: str) -> list[tuple[Any, ...]]:
    table = pycat.load_table(name).scan().to_arrow()
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.mark.slow
def test_local_spark_submit_append_and_error(
    catalog: SqlCatalog, pyiceberg_catalog: Any, tmp_path: Path
) -> None:
    lines: list[str] = []
    settings = SparkSubmitSettings.from_connection(
        "local[2]",
        None,
        {"deploy-mode": "client"},
        conf={"spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "2"},
    )
    submit = SparkSubmitRunner(settings, log=lines.append)
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    source = "sql:SELECT id, IF(id < 2, 'eu', 'us') AS region FROM range(4)"
    result = append("db.t", source, catalog=catalog, runner=submit, commit_key="k")
    assert result.committed and result.records_added == 4 and result.files_added == 2
    assert rows(pyiceberg_catalog, "db.t") == [(0, "eu"), (1, "eu"), (2, "us"), (3, "us")]
    command = submit.last_command
    assert command[command.index("--master") + 1] == "local[2]"
    assert command[command.index("--deploy-mode") + 1] == "client"
    assert "spark.sql.parquet.fieldId.write.enabled=true" in command
    assert command[command.index("--py-files") + 1].endswith("icewright.zip")
    # The job's JVM is quiet (icewright's log4j2 configuration): only the job's own lines.
    assert any("-Dlog4j2.configurationFile=" in c for c in command)
    assert any("icewright job: result (ok)" in line for line in lines)
    assert not any(" INFO " in line or " WARN " in line for line in lines), lines
    staging = Path(catalog.load_table("db.t").metadata.location) / ".icewright" / "jobs"
    assert not staging.exists() or not any(staging.iterdir())  # spec and result cleaned up

    missing = tmp_path / "nowhere.csv"
    with pytest.raises(ValidationError, match=re.escape(str(missing))):
        append("db.t", f"csv:{missing}", catalog=catalog, runner=submit)
    assert catalog.load_table("db.t").metadata.current_snapshot_id == result.snapshot_id
