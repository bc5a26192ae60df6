"""Clears task instances the way ``airflow tasks clear`` and the UI do
(``clear_task_instances`` on the metadata database) and runs them again with the
``airflow tasks test`` command, several steps in one process (one Airflow start, one
Spark session); run in the Airflow environment::

    python clear_support.py <dag_id> <run_id> clear/<task_id>[/<map_index>] ...
    python clear_support.py <dag_id> <run_id> test/<task_id>[/<map_index>] ...

Each step's output follows a line ``=== <step>``.
"""

from __future__ import annotations

import sys

from airflow.cli import cli_parser
from airflow.models.taskinstance import TaskInstance, clear_task_instances
from airflow.utils.session import create_session
from sqlalchemy import select


def clear(dag_id: str, task_id: str, map_index: str | None) -> None:
    with create_session() as session:
        query = select(TaskInstance).where(
            TaskInstance.dag_id == dag_id, TaskInstance.task_id == task_id
        )
        if map_index is not None:
            query = query.where(TaskInstance.map_index == int(map_index))
        tis = session.scalars(query).all()
        clear_task_instances(tis, session)
        print("cleared", [(t.task_id, t.map_index, t.try_number, t.max_tries) for t in tis])


def tasks_test(dag_id: str, run_id: str, task_id: str, map_index: str | None) -> None:
    """``airflow tasks test <dag_id> <task_id> <run_id> [--map-index N]``, as the command
    parses and runs it."""
    argv = ["tasks", "test", dag_id, task_id, run_id]
    if map_index is not None:
        argv += ["--map-index", map_index]
    args = cli_parser.get_parser().parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    dag_id, run_id = sys.argv[1], sys.argv[2]
    for step in sys.argv[3:]:
        print(f"=== {step}", flush=True)
        verb, task_id, *index = step.split("/")
        map_index = index[0] if index else None
        if verb == "clear":
            clear(dag_id, task_id, map_index)
        elif verb == "test":
            tasks_test(dag_id, run_id, task_id, map_index)
        else:
            raise SystemExit(f"unknown step {step!r}: clear/... or test/...")
        sys.stdout.flush()
        sys.stderr.flush()
