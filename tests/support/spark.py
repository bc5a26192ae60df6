"""One local SparkSession for every Spark test in the process (small and quiet).

A fixture of the root ``tests/conftest.py`` (``pytest_plugins``): a test asks for
``spark`` and gets the shared session, built by icewright's own local runner.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TEST_CONF = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The shared session, built by icewright's own local runner."""
    from icewright.spark.session import local_session

    session = local_session(**TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
