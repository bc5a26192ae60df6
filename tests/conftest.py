"""Suite-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check, because the
suite runs on a shared 2-core machine where a slow example says nothing about
correctness; every property still runs its full number of examples.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from tests.actions.submit_support import Cluster

settings.register_profile("icewright", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("icewright")


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A Spark standalone master and worker on 127.0.0.1 (PySpark's own ``spark-class``),
    started once for the tests that use it and stopped at the end of the session."""
    from tests.actions.submit_support import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
