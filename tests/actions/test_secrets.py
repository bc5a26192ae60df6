"""Credentials stay secret: an S3 secret key configured for the catalog appears in no
job spec, result or pending document, object in the bucket, file under the home or the
temporary directory, JobSubmitted JSON (XCom), trigger kwargs, command output or log,
for jobs run through spark-submit to a local master, attached and detached, succeeding
and failing, with --debug. The job still reaches S3: its credentials come through the
submitted process's environment."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from icewright.actions import SparkSubmitRunner, SparkSubmitSettings, append, create
from icewright.catalog import SqlCatalog
from icewright.runners.store import JobSubmitted
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.cli.support import icewright

pytestmark = pytest.mark.slow

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
SOURCE = "sql:SELECT id, IF(id < 2, 'eu', 'us') AS region FROM range(3)"
CONF = {"spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "1"}


def _secret() -> str:
    return f"sEcReT{uuid.uuid4().hex}"


def _bucket_leaks(s3: Any, bucket: str, secret: str) -> list[str]:
    client = s3.client()
    found = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for obj in page.get("Contents", []):
            body = client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
            if secret.encode() in body:
                found.append(obj["Key"])
    return found


def _file_leaks(root: Path, secret: str, skip: Path | None = None) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and path != skip and secret.encode() in path.read_bytes():
            found.append(str(path))
    return found


def test_detached_job_spec_xcom_and_trigger_hold_no_secret(
    s3_server: Any,
    tmp_path: Path,
) -> None:
    secret = _secret()
    bucket = s3_server.new_bucket()
    props = {**s3_server.properties, "s3.secret-access-key": secret}
    catalog = SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"s3://{bucket}/wh", **props
    )
    catalog.create_namespace("db")
    create("db.t", catalog=catalog, schema=SCHEMA)
    runner = SparkSubmitRunner(SparkSubmitSettings(master="local[1]", detach=True, conf=CONF))
    with pytest.raises(JobSubmitted) as info:
        append("db.t", SOURCE, catalog=catalog, runner=runner, commit_key="k1")
    submitted = info.value
    assert secret not in json.dumps(submitted.to_json()) and secret not in str(submitted)
    from icewright.providers.job_triggers import IcebergSparkJobTrigger

    trigger = IcebergSparkJobTrigger.from_submitted(submitted, iceberg_conn_id="iceberg_s3")
    assert secret not in json.dumps(trigger.serialize()[1], default=str)
    assert trigger.serialize()[1]["iceberg_conn_id"] == "iceberg_s3"
    # While the job runs, its spec is in the bucket: no secret in it.
    assert _bucket_leaks(s3_server, bucket, secret) == []
    result_key = submitted.result_location.split(f"s3://{bucket}/", 1)[1]
    client = s3_server.client()
    deadline = time.monotonic() + 600
    while True:
        try:
            client.head_object(Bucket=bucket, Key=result_key)
            break
        except Exception:
            assert time.monotonic() < deadline, "no result document"
            time.sleep(1)
    log = Path(str(submitted.log_location))
    assert secret not in log.read_text(errors="replace")
    assert _bucket_leaks(s3_server, bucket, secret) == []
    # The job reached S3 with the environment's credentials and wrote the files.
    result = append("db.t", SOURCE, catalog=catalog, runner=runner, commit_key="k1")
    assert result.committed and result.records_added == 3
    assert _bucket_leaks(s3_server, bucket, secret) == []
    assert _file_leaks(tmp_path, secret) == []


def test_the_command_shows_no_secret(
    s3_server: Any,
    tmp_path: Path,
) -> None:
    secret = _secret()
    bucket = s3_server.new_bucket()
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "secret" / "catalog.toml"  # the user's own file: not searched
    config.parent.mkdir()
    lines = [f'uri = "sqlite:///{home}/c.db"', f'warehouse = "s3://{bucket}/wh"']
    lines += [f'"{k}" = "{v}"' for k, v in {**s3_server.properties}.items() if "secret" not in k]
    lines.append(f'"s3.secret-access-key" = "{secret}"')
    config.write_text("[catalog]\n" + "\n".join(lines) + "\n")
    corrupt = tmp_path / "in" / "part-0.parquet"
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"PAR1 not parquet PAR1")
    common = ["--config", str(config), "--master", "local[1]", "--debug"]
    common += [x for k, v in CONF.items() for x in ("--spark-conf", f"{k}={v}")]
    runs = [
        icewright(home, "create", "db.t", "--schema", "id long, region string", *common),
        icewright(home, "append", "db.t", "--source", SOURCE, "--commit-key", "a", *common),
        icewright(home, "append", "db.t", "--source", str(corrupt), *common),
        icewright(home, "files", "db.t", "--json", *common),
        icewright(home, "describe", "db.t", "--json", *common),
    ]
    assert [r.code for r in runs] == [0, 0, 1, 0, 0], [r.stderr[-2000:] for r in runs]
    assert "is not Parquet" in runs[2].stderr
    for run in runs:
        assert secret not in run.stdout and secret not in run.stderr
    assert _file_leaks(home, secret) == []
    assert _file_leaks(tmp_path, secret, skip=config) == []
    assert _bucket_leaks(s3_server, bucket, secret) == []
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    leaks = [p for p in tmp.glob("icewright*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaks == []
