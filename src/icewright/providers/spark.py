"""Where an operator's Spark work runs: a runner from a ``spark`` connection or arguments.

Airflow's ``spark`` connection conventions (those of the Apache Spark provider's
``SparkSubmitHook``): ``host`` is the master (``spark://host``, ``yarn``, ``k8s://...``,
``local[2]``), ``port`` is added to it, and the extras ``deploy-mode``, ``queue``,
``namespace`` and ``spark-binary`` configure ``spark-submit``. No connection and no
settings: the in-process local session (:class:`~icewright.runners.local.LocalRunner`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icewright.errors import ValidationError
from icewright.runners.local import LocalRunner
from icewright.runners.submit import submit_runner

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from icewright.runners.base import Runner

__all__ = ["runner_for"]


def _spark_connection(conn_id: str) -> tuple[str | None, int | None, dict[str, Any]]:
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        raise ValidationError(
            f"the Airflow connection {conn_id!r} (spark_conn_id) does not exist: create a "
            "'spark' connection (host = master) or leave spark_conn_id unset for local Spark"
        ) from None
    if conn.conn_type not in ("spark", None, ""):
        raise ValidationError(
            f"the Airflow connection {conn_id!r} has type {conn.conn_type!r}; spark_conn_id "
            "needs a 'spark' connection"
        )
    try:
        extra = dict(conn.extra_dejson or {})
    except Exception:
        raise ValidationError(f"the extra of Airflow connection {conn_id!r} is not JSON") from None
    return conn.host or None, conn.port or None, extra


def runner_for(
    spark_conn_id: str | None,
    *,
    job_key: str | None = None,
    log: Callable[[str], None] | None = None,
    job_conf: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Runner:
    """The runner for an operator: local when neither ``spark_conn_id`` nor ``overrides``
    (``master``, ``conf``, ``packages``, ``deploy_mode``, ...) are given, else a
    ``spark-submit`` runner configured by the connection, with ``overrides`` on top.

    ``job_key`` names the submitted job's result document so a retried task reuses a
    finished job; ``log`` receives spark-submit's output lines. ``job_conf`` is added to
    every job's Spark configuration either way (the OpenLineage parent job's identity):
    ``spark-submit``'s ``conf`` (the given ``conf`` wins), or set on the local session
    while a job runs.
    """
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if spark_conn_id is None and not overrides:
        return LocalRunner(conf=job_conf)
    host: str | None = None
    port: int | None = None
    extra: dict[str, Any] = {}
    if spark_conn_id is not None:
        host, port, extra = _spark_connection(spark_conn_id)
    if job_conf:
        overrides["conf"] = {**job_conf, **dict(overrides.get("conf") or {})}
    return submit_runner(host, port, extra, job_key=job_key, log=log, **overrides)
