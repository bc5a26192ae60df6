"""``spark_cluster``: a Spark standalone master and worker on 127.0.0.1 (PySpark's own
``spark-class``), started once for the tests that use it and stopped at the end of the
session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.actions.submit_support import Cluster, standalone_cluster

__all__ = ["spark_cluster"]


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The standalone cluster of the session."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
