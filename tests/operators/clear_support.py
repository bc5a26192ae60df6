"""Clears task instances the way ``airflow tasks clear`` and the UI do
(``clear_task_instances`` on the metadata database); run in the Airflow environment:
``python clear_support.py <dag_id> <task_id> [<map_index>]``."""

from __future__ import annotations

import sys

from airflow.models.taskinstance import TaskInstance, clear_task_instances
from airflow.utils.session import create_session
from sqlalchemy import select

if __name__ == "__main__":
    dag_id, task_id = sys.argv[1], sys.argv[2]
    with create_session() as session:
        query = select(TaskInstance).where(
            TaskInstance.dag_id == dag_id, TaskInstance.task_id == task_id
        )
        if len(sys.argv) > 3:
            query = query.where(TaskInstance.map_index == int(sys.argv[3]))
        tis = session.scalars(query).all()
        clear_task_instances(tis, session)
        print("cleared", [(t.task_id, t.map_index, t.try_number, t.max_tries) for t in tis])
