"""Spark's reads of a table's files get the table's S3 settings (vended keys included) as
per-read Hadoop S3A options, and Spark shows none of the secrets in its plans."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from pyspark.sql import SparkSession

from icewright.io.local import LocalFileIO
from icewright.io.s3 import S3FileIO
from icewright.spark.file_access import hadoop_options

_HADOOP_S3A = "org.apache.hadoop.fs.s3a."
VENDED = {
    "s3.access-key-id": "AKIAVENDEDKEY",
    "s3.secret-access-key": "vended-secret-1",
    "s3.session-token": "vended-token-1",
    "s3.endpoint": "http://127.0.0.1:9",
    "client.region": "eu-west-1",
    "s3.path-style-access": "true",
}


def test_s3_settings_become_s3a_options() -> None:
    assert hadoop_options(S3FileIO(VENDED)) == {
        "fs.s3a.access.key": "AKIAVENDEDKEY",
        "fs.s3a.secret.key": "vended-secret-1",
        "fs.s3a.session.token": "vended-token-1",
        "fs.s3a.endpoint": "http://127.0.0.1:9",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.endpoint.region": "eu-west-1",
        "fs.s3a.aws.credentials.provider": _HADOOP_S3A + "TemporaryAWSCredentialsProvider",
    }
    keys = {k: v for k, v in VENDED.items() if k != "s3.session-token"}
    provider = hadoop_options(S3FileIO(keys))["fs.s3a.aws.credentials.provider"]
    assert provider == _HADOOP_S3A + "SimpleAWSCredentialsProvider"
    # No keys: the cluster's own credential chain stays in charge.
    assert "fs.s3a.aws.credentials.provider" not in hadoop_options(S3FileIO({"s3.region": "x"}))
    assert hadoop_options(LocalFileIO()) == {}


def test_a_read_with_them_shows_no_secret(spark: SparkSession, tmp_path: Path) -> None:
    spark.range(3).write.parquet(str(tmp_path / "p"))
    frame = spark.read.options(**hadoop_options(S3FileIO(VENDED))).parquet(str(tmp_path / "p"))
    assert sorted(r.id for r in frame.collect()) == [0, 1, 2]
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        frame.explain("extended")
        frame.explain("formatted")
    text = shown.getvalue() + frame._jdf.queryExecution().toString()
    assert "FileScan parquet" in text or "Scan parquet" in text
    assert [s for s in ("vended-secret-1", "vended-token-1") if s in text] == []
