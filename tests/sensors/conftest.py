"""The embedded default catalog in a temporary ``ICEWRIGHT_HOME``, with ``sales.orders``.

The sensor and the triggers are given ``iceberg_conn_id=None`` (the embedded default
catalog, no Airflow connection lookup), so ``ICEWRIGHT_HOME`` decides which catalog they
open, exactly as it does in a deployed task.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Catalog, default_catalog
from tests.sensors.support import make_table


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "icewright"
    monkeypatch.setenv("ICEWRIGHT_HOME", str(path))
    return path


@pytest.fixture
def catalog(home: Path) -> Iterator[Catalog]:
    cat = default_catalog()
    make_table(cat)
    yield cat
    cat.close()


class TaskInstanceXComs:
    """The two task-instance calls the sensor makes (``xcom_push``, ``xcom_pull`` with
    ``include_prior_dates``), over a dict shared between "runs"; the real ones are exercised
    under ``airflow dags test`` in tests/example_dags."""

    def __init__(self, task_id: str, store: dict[tuple[str, str], Any] | None = None) -> None:
        self.task_id = task_id
        self.store: dict[tuple[str, str], Any] = {} if store is None else store

    def xcom_push(self, key: str, value: Any) -> None:
        self.store[(self.task_id, key)] = value

    def xcom_pull(
        self, task_ids: str, key: str = "return_value", include_prior_dates: bool = False
    ) -> Any:
        assert include_prior_dates, "the previous run's value needs include_prior_dates"
        return self.store.get((task_ids, key))


class TaskStateStore:
    """``context['task_state_store']``'s get/set, over a dict (one task instance)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: Any) -> None:
        assert value is not None
        self.values[key] = value
