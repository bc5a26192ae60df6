"""One local SparkSession for every Spark test in the process (small and quiet)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from icewright.spark.session import local_session
from tests.support.s3 import s3_server  # noqa: F401 - a real S3 endpoint (moto) for tests

TEST_CONF = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The shared session, built by icewright's own local runner."""
    session = local_session(**TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
