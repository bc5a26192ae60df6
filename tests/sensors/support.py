"""Real snapshots for the sensor and trigger tests, without Spark.

A table ``sales.orders`` in a SQLite catalog; snapshots are committed with the commit
engine (:func:`icewright.commit.fast_append`, ``rewrite_files``, ``delete_files``) over
real Parquet files written by :func:`icewright.arrow.write_data_files`.

Run as a script (``python -m tests.sensors.support append <catalog uri> <table> <rows>
[key=value ...]``) it appends from another process and prints the new snapshot id.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import Catalog, SqlCatalog, Table
from icewright.commit import delete_files, fast_append, rewrite_files
from icewright.commit.update import CommitResult
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType

__all__ = [
    "SCHEMA",
    "TABLE",
    "TaskInstanceXComs",
    "TaskStateStore",
    "append",
    "compact",
    "delete_all",
    "make_table",
    "sql_catalog",
]

TABLE = "sales.orders"
SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "region", StringType()),
)
REPO = Path(__file__).resolve().parents[2]


def sql_catalog(path: Path) -> SqlCatalog:
    """A SQLite catalog in ``path`` (the same layout as the embedded default)."""
    path.mkdir(parents=True, exist_ok=True)
    return SqlCatalog("icewright", f"sqlite:///{path / 'catalog.db'}", str(path / "warehouse"))


def make_table(catalog: Catalog, name: str = TABLE, format_version: int = 2) -> Table:
    """An unpartitioned table ``name`` (its namespace created when missing)."""
    namespace = name.rsplit(".", 1)[0]
    if not catalog.namespace_exists(namespace):
        catalog.create_namespace(namespace)
    return catalog.create_table(name, SCHEMA, format_version=format_version)


def _files(table: Table, rows: int, start: int) -> list[DataFile]:
    data: list[dict[str, Any]] = [
        {"order_id": start + i, "region": "eu" if i % 2 else "us"} for i in range(rows)
    ]
    return write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))


def append(
    catalog: Catalog,
    rows: int,
    *,
    name: str = TABLE,
    start: int = 0,
    props: Mapping[str, str] | None = None,
    branch: str = "main",
) -> CommitResult:
    """One ``append`` snapshot of ``rows`` rows (summary ``props`` added)."""
    table = catalog.load_table(name)
    return fast_append(table, _files(table, rows, start), branch=branch, snapshot_properties=props)


def _live_files(table: Table) -> list[DataFile]:
    from icewright.scan import plan_files

    return [task.data_file for task in plan_files(table)]


def compact(catalog: Catalog, name: str = TABLE) -> CommitResult:
    """One ``replace`` snapshot: every live file rewritten into one (same rows)."""
    table = catalog.load_table(name)
    old = _live_files(table)
    total = sum(f.record_count for f in old)
    return rewrite_files(table, old, _files(table, total, 0))


def delete_all(catalog: Catalog, name: str = TABLE) -> CommitResult:
    """One ``delete`` snapshot removing every live file."""
    table = catalog.load_table(name)
    return delete_files(table, paths=_live_files(table))


def main(argv: list[str]) -> int:
    """``append <catalog uri> <table> <rows> [key=value ...]``: print the snapshot id."""
    command, uri, name, rows, *pairs = argv
    if command != "append":
        raise SystemExit(f"unknown command {command!r}")
    from icewright.catalog import load_catalog

    props = dict(p.split("=", 1) for p in pairs)
    result = append(load_catalog(uri), int(rows), name=name, props=props or None)
    print(result.snapshot_id, flush=True)
    return 0


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
