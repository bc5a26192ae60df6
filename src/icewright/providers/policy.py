"""The cluster policy icewright registers with Airflow (the ``airflow.policy`` entry
point, loaded by every Airflow process): a DAG that declares an ``iceberg://`` asset
other than through :func:`~icewright.providers.assets.iceberg_asset` or
:func:`~icewright.providers.assets.watched_iceberg_asset` does not load, and its file
shows an import error that says what to write instead
(:func:`icewright.providers.watchers.declaration_problem`).

Light on purpose: a process whose DAGs name no ``iceberg://`` asset imports nothing of
icewright but this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from airflow.policies import hookimpl
from airflow.sdk import Asset

__all__ = ["dag_policy", "iceberg_assets_of"]


def iceberg_assets_of(dag: Any) -> Iterator[Asset]:
    """The ``iceberg://`` assets a DAG names: its schedule's, and its tasks' outlets and
    inlets."""

    def walk(condition: object) -> Iterator[Asset]:
        if isinstance(condition, Asset):
            yield condition
        for part in getattr(condition, "objects", None) or ():
            yield from walk(part)

    found = list(walk(getattr(dag.timetable, "asset_condition", None)))
    for task in dag.tasks:
        for item in [*(getattr(task, "outlets", None) or ()), *(task.inlets or ())]:
            found.extend(walk(item))
    for asset in found:
        if asset.uri.lower().startswith("iceberg://"):
            yield asset


@hookimpl
def dag_policy(dag: Any) -> None:
    """Refuse ``dag`` when it declares a table's asset differently (one line)."""
    from airflow.exceptions import AirflowClusterPolicyViolation

    for asset in iceberg_assets_of(dag):
        from icewright.providers.watchers import declaration_problem

        problem = declaration_problem(asset)
        if problem is not None:
            raise AirflowClusterPolicyViolation(f"DAG {dag.dag_id}: {problem}")
