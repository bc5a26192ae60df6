"""The Spark application a job reports (``icewright.runners.application``)."""

from __future__ import annotations

import pytest

from icewright.runners.application import SparkApplication, announcement


@pytest.mark.parametrize(
    ("app_id", "ui"),
    [
        ("local-1764316800000", "http://driver-host:4040"),
        ("app-20261128080000-0001", None),
        ("application_1764316800000_0042", "http://10.0.0.5:4041"),
    ],
)
def test_the_announced_application_is_read_back(app_id: str, ui: str | None) -> None:
    line = f"26/11/28 08:00:00 INFO {announcement(app_id, ui)}"
    assert SparkApplication.reported(line) == SparkApplication(app_id, ui)


def test_other_lines_name_no_application() -> None:
    assert SparkApplication.reported("INFO SparkContext: Submitted application: icewright") is None


def test_the_page_is_the_history_server_when_there_is_one() -> None:
    app = SparkApplication("app-20261128080000-0001", "http://driver:4040")
    assert app.url() == "http://driver:4040"
    assert app.url("https://history.example:18080/") == (
        "https://history.example:18080/history/app-20261128080000-0001/"
    )
    assert SparkApplication("local-1").url() is None  # no UI, no history server


def test_the_stored_form_round_trips_and_ignores_foreign_values() -> None:
    app = SparkApplication("local-1", "http://driver:4040")
    assert SparkApplication.from_json(app.to_json()) == app
    assert SparkApplication.from_json({"id": "local-1", "ui": 4040}) == SparkApplication("local-1")
    for foreign in (None, "local-1", {"ui": "http://x"}, {"id": 3}):
        assert SparkApplication.from_json(foreign) is None
