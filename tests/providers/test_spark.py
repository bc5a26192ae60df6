"""``runner_for``: local Spark by default, spark-submit from a ``spark`` connection or
settings (the submit itself is tested with the submit runner)."""

from __future__ import annotations

import pytest

from icewright.errors import ValidationError
from icewright.providers.spark import runner_for
from icewright.runners.local import LocalRunner
from icewright.runners.submit import SparkSubmitRunner
from tests.support.airflow import connection_env


def test_nothing_given_is_local_spark() -> None:
    assert isinstance(runner_for(None), LocalRunner)
    assert isinstance(runner_for(None, master=None), LocalRunner)  # None settings: unset


def test_spark_connection_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in connection_env(
        "spark_cluster",
        "spark",
        host="spark://127.0.0.1",
        port=7077,
        extra={"deploy-mode": "client", "queue": "etl"},
    ).items():
        monkeypatch.setenv(key, value)
    runner = runner_for("spark_cluster", job_key="k1")
    assert isinstance(runner, SparkSubmitRunner)
    assert runner.settings.master == "spark://127.0.0.1:7077"
    assert runner.settings.deploy_mode == "client"
    assert runner.settings.queue == "etl"
    assert runner.job_key == "k1"
    # Operator arguments win over the connection.
    assert runner_for("spark_cluster", master="local[2]").settings.master == "local[2]"


def test_settings_without_connection() -> None:
    runner = runner_for(None, master="local[1]", conf={"spark.ui.enabled": "false"})
    assert isinstance(runner, SparkSubmitRunner)
    assert runner.settings.master == "local[1]"
    assert dict(runner.settings.conf)["spark.ui.enabled"] == "false"


def test_missing_or_wrong_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_NO_SPARK", raising=False)
    with pytest.raises(ValidationError, match=r"'no_spark'.*does not exist"):
        runner_for("no_spark")
    for key, value in connection_env("not_spark", "postgres", host="h").items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValidationError, match="needs a 'spark' connection"):
        runner_for("not_spark")


def test_the_history_server_comes_from_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in connection_env(
        "spark_hist", "spark", host="yarn", extra={"history-url": "http://history:18080"}
    ).items():
        monkeypatch.setenv(key, value)
    runner = runner_for("spark_hist")
    assert isinstance(runner, SparkSubmitRunner)
    assert runner.settings.history_url == "http://history:18080"
    with pytest.raises(ValidationError, match="history_url must be an http"):
        runner_for(None, master="yarn", history_url="history:18080")
