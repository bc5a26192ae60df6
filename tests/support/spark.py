"""One local SparkSession for every Spark test in the process (small and quiet), and one
pyspark 3.5 process for the tests that run a job on pyspark 3.5.

Fixtures of the root ``tests/conftest.py`` (``pytest_plugins``): a test asks for
``spark`` and gets the shared session, built by icewright's own local runner; it asks
for ``spark35`` and gets the shared ``.venv-java`` driver process
(:class:`tests.support.spark35.Spark35`), started when a test first runs a script.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tests.support.spark35 import Spark35

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


@pytest.fixture(scope="session")
def spark35() -> Iterator[Spark35]:
    """The shared pyspark 3.5 process: ``spark35.run(source, argv, cwd=...)``."""
    from tests.support.spark35 import Spark35

    runner = Spark35()
    yield runner
    runner.close()
