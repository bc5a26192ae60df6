"""What a source function may know about the task that runs it, wherever Spark runs.

A source ``"pkg.module:function"`` runs where the Spark driver runs: in the task's own
process with local Spark, in a ``spark-submit`` process (client mode) or on the cluster
(cluster mode). Only the first can ask the orchestrator (Airflow's
``get_current_context()``); so an orchestrator adapter hands the few task values a
source needs to the job through the environment variable :data:`SOURCE_CONTEXT_ENV` (a
JSON object), and a source reads them with :func:`source_context`::

    def first_batch(spark):
        start = source_context().get("data_interval_start")  # ISO 8601 text

Airflow's operators pass ``dag_id``, ``task_id``, ``run_id``, ``map_index``,
``try_number``, ``logical_date``, ``ds``, ``data_interval_start`` and
``data_interval_end`` (dates as ISO 8601 text, absent when the run has none).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["SOURCE_CONTEXT_ENV", "source_context", "source_context_env"]

SOURCE_CONTEXT_ENV = "ICEWRIGHT_SOURCE_CONTEXT"
"""The environment variable that carries the task's values to a Spark job."""


def source_context() -> dict[str, Any]:
    """The task values handed to this Spark job (empty when none were: a job started
    outside an orchestrator, or an unreadable value)."""
    text = os.environ.get(SOURCE_CONTEXT_ENV)
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return dict(value) if isinstance(value, dict) else {}


def source_context_env(values: Mapping[str, Any]) -> dict[str, str]:
    """The environment entry that hands ``values`` (JSON-able; dates become ISO 8601
    text) to a job's :func:`source_context`."""
    return {SOURCE_CONTEXT_ENV: json.dumps(dict(values), default=_text, sort_keys=True)}


def _text(value: object) -> str:
    iso = getattr(value, "isoformat", None)
    return str(iso()) if callable(iso) else str(value)
