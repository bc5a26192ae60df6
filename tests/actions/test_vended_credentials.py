"""Credentials a REST catalog vends reach the Spark jobs, and only through the secret-safe
path: moto's S3 checks every request's key (only the vended pair is let in), the REST
test server vends that pair in its table responses (``storage-credentials`` for the
warehouse's prefix, beside a wrong pair for a shorter prefix), and icewright itself has no
S3 credentials at all. Appends and a replace run in-process and through ``spark-submit``;
pyiceberg's REST client reads the rows back; the secret is in no output, log, file or
object."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from icewright.actions import (
    LocalRunner,
    SparkSubmitRunner,
    SparkSubmitSettings,
    append,
    create,
    replace,
)
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.support.rest import RestServer
from tests.support.s3 import AuthenticatedS3

pytestmark = pytest.mark.slow

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
CONF = {"spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "1"}


def _rows(lo: int, hi: int, region: str) -> str:
    return f"sql:SELECT id, '{region}' AS region FROM range({lo}, {hi})"


@pytest.fixture(scope="module")
def vended(rest_server: RestServer, authenticated_s3: AuthenticatedS3) -> Iterator[str]:
    """A warehouse of the REST server on the checking S3, vending its key pair."""
    s3 = authenticated_s3
    name = f"vend{uuid.uuid4().hex[:10]}"
    location = f"s3://{s3.bucket}/{name}"
    rest_server.vend(
        name,
        location,
        config={
            "s3.endpoint": s3.endpoint,
            "s3.region": "us-east-1",
            "s3.path-style-access": "true",
        },
        storage_credentials=[
            # The longest prefix wins: this pair, wrong, is for the bucket's other tables.
            {
                "prefix": f"s3://{s3.bucket}",
                "config": {"s3.access-key-id": "AKIAWRONGWRONGWRONG0", "s3.secret-access-key": "x"},
            },
            {
                "prefix": location,
                "config": {
                    "s3.access-key-id": s3.access_key_id,
                    "s3.secret-access-key": s3.secret_access_key,
                },
            },
        ],
    )
    yield name


@pytest.fixture
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No S3 credentials but the vended ones: none in the environment or AWS's files."""
    for key in list(os.environ):
        if key.startswith("AWS_") and key != "AWS_CA_BUNDLE":
            monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def _bucket_leaks(s3: AuthenticatedS3) -> list[str]:
    client = s3.client()
    found = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket):
        for obj in page.get("Contents", []):
            body = client.get_object(Bucket=s3.bucket, Key=obj["Key"])["Body"].read()
            if s3.secret_access_key.encode() in body:
                found.append(obj["Key"])
    return found


def _file_leaks(root: Path, secret: str) -> list[str]:
    return [
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and secret.encode() in p.read_bytes()
    ]


def test_vended_credentials_reach_local_and_submitted_jobs(
    rest_server: RestServer,
    authenticated_s3: AuthenticatedS3,
    vended: str,
    spark: SparkSession,
    no_aws_credentials: None,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    s3, secret = authenticated_s3, authenticated_s3.secret_access_key
    caplog.set_level(logging.DEBUG)
    catalog = rest_server.catalog(warehouse=vended)
    assert not any("s3" in k for k in catalog.properties), catalog.properties
    catalog.create_namespace("db")
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    table = catalog.load_table("db.t")
    assert table.location.startswith(f"s3://{s3.bucket}/{vended}/")
    assert table.io.properties["s3.access-key-id"] == s3.access_key_id  # the longest prefix

    local = LocalRunner(spark)
    first = append("db.t", _rows(0, 3, "eu"), catalog=catalog, runner=local, commit_key="a")
    assert first.committed and first.records_added == 3
    append("db.t", _rows(3, 5, "us"), catalog=catalog, runner=local)
    swapped = replace("db.t", _rows(10, 12, "eu"), catalog=catalog, where="region = 'eu'",
                      runner=local)  # fmt: skip
    assert swapped.committed

    lines: list[str] = []
    submit = SparkSubmitRunner(SparkSubmitSettings(master="local[1]", conf=CONF), log=lines.append)
    added = append("db.t", _rows(20, 22, "us"), catalog=catalog, runner=submit, commit_key="b")
    assert added.committed and added.records_added == 2
    again = append("db.t", _rows(20, 22, "us"), catalog=catalog, runner=submit, commit_key="b")
    assert not again.committed
    swapped = replace("db.t", _rows(30, 31, "us"), catalog=catalog, where="region = 'us'",
                      runner=submit)  # fmt: skip
    assert swapped.committed

    from pyiceberg.catalog.rest import RestCatalog

    read = RestCatalog("rest", uri=rest_server.uri, warehouse=vended).load_table("db.t")
    rows = read.scan().to_arrow().sort_by("id").to_pylist()
    assert rows == [{"id": 10, "region": "eu"}, {"id": 11, "region": "eu"},
                    {"id": 30, "region": "us"}]  # fmt: skip

    # Only the vended pair gets in: the checking S3 refuses a wrong secret.
    bad = s3.client(s3.access_key_id, "not-the-secret")
    with pytest.raises(Exception, match="SignatureDoesNotMatch"):
        bad.list_objects_v2(Bucket=s3.bucket)

    out, err = capfd.readouterr()
    shown = [out, err, caplog.text, "\n".join(lines), rest_server.stderr()]
    assert [i for i, text in enumerate(shown) if secret in text] == []
    assert lines, "the spark-submit log was not captured"
    assert _bucket_leaks(s3) == []
    assert _file_leaks(tmp_path, secret) == []
    assert _file_leaks(rest_server.warehouse, secret) == []
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    leaks = [str(p) for p in tmp.glob("icewright*") if p.is_dir() and _file_leaks(p, secret)]
    leaks += [
        str(p) for p in tmp.glob("icewright*") if p.is_file() and secret.encode() in p.read_bytes()
    ]
    assert leaks == []
