"""The Spark application a ``spark-submit`` job runs as: its id and its web UI.

The job prints one line, :func:`announcement`, as soon as its session is up; the runner
reads the ids from the job's output (:meth:`SparkApplication.reported`, and Spark's own lines
for the standalone driver id), and a keyed job also stores its application in its result
document, so a run that collects a detached job's result learns it too. The operators
link to the application's page (:meth:`SparkApplication.url`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SparkApplication", "announcement"]

DRIVER_ID = re.compile(r"\b(driver-\d{14}-\d{4,})\b")
"""A standalone cluster's driver id, as ``spark-submit`` prints it in cluster mode."""
APP_ID = re.compile(r"\b(app-\d{14}-\d{4,}|application_\d+_\d+|spark-[0-9a-f]{32})\b")
"""An application id of a standalone, YARN or Kubernetes master, in Spark's own lines."""

_PREFIX = "icewright job: application "
_LINE = re.compile(re.escape(_PREFIX) + r"(\S+)(?: ui (\S+))?")


@dataclass(frozen=True, slots=True)
class SparkApplication:
    """An application's id (``app-...``, ``application_...``, ``local-...``) and the
    driver's web UI (None when ``spark.ui.enabled`` is false; live only while it runs)."""

    id: str
    ui: str | None = None

    def url(self, history_url: str | None = None) -> str | None:
        """The application's page: on the Spark history server at ``history_url`` when
        one is given (it outlives the application), else the driver's UI."""
        if history_url:
            return f"{history_url.rstrip('/')}/history/{self.id}/"
        return self.ui

    def to_json(self) -> dict[str, Any]:
        """The form kept in a job's result document."""
        return {"id": self.id, "ui": self.ui}

    @classmethod
    def reported(cls, line: str) -> SparkApplication | None:
        """The application an :func:`announcement` line names, if ``line`` is one."""
        m = _LINE.search(line)
        return None if m is None else cls(m.group(1), m.group(2))

    @classmethod
    def from_json(cls, value: object) -> SparkApplication | None:
        """The application of :meth:`to_json`'s form; None for anything else."""
        if not isinstance(value, Mapping) or not isinstance(value.get("id"), str):
            return None
        ui = value.get("ui")
        return cls(value["id"], ui if isinstance(ui, str) else None)


def announcement(application_id: str, ui: str | None) -> str:
    """The line a job prints about its application."""
    return f"{_PREFIX}{application_id}" + (f" ui {ui}" if ui else "")
