"""The operators' link to the Spark application of a ``spark-submit`` job.

Airflow evaluates a task's extra links on the worker when the try ends and keeps each
as an XCom (``_link_SparkApplicationLink``) that the UI shows as a button. The link is
the application's page on the Spark history server of the ``spark`` connection (extra
``history-url``), else the driver's UI while the application runs; a task whose Spark
ran in-process, or whose job never started, has none (an empty link, not shown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperatorLink

if TYPE_CHECKING:
    from airflow.sdk.types import TaskInstanceKey

__all__ = ["SparkApplicationLink", "application_url"]


def application_url(runner: object) -> str | None:
    """The page of the application ``runner`` last ran (see the module docstring)."""
    application = getattr(runner, "application", None)
    settings = getattr(runner, "settings", None)
    if application is None:
        return None
    url: str | None = application.url(getattr(settings, "history_url", None))
    return url


class SparkApplicationLink(BaseOperatorLink):
    """``Spark application``: the page of the try's ``spark-submit`` application."""

    name = "Spark application"

    def get_link(self, operator: Any, *, ti_key: TaskInstanceKey) -> str:
        """The URL the operator noted when its action ended ("" when it has none)."""
        return str(getattr(operator, "spark_application_url", None) or "")
