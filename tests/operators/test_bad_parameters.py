"""Issue 12's sweep of operator and sensor parameters.

Templated parameters are checked when the task runs (by the actions'
``icewright.actions.arguments``): one DAG (``dags/icewright_bad_parameters.py``) holds a
task per bad value, each with ``retries=2``; under ``airflow dags test`` every one fails
on its first try with its one-line reason, no Spark job starts, and the table, its files
and the catalog stay as they were. A control task with an ordinary error is retried, so
the single try is the bad-input path and not the run's settings. Parameters that are not
templated are refused when the DAG is parsed (the cases below the DAG test).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import Identifier, load_catalog
from icewright.errors import ValidationError
from tests.support.airflow import (
    AirflowHome,
    connection_env,
    dag_run_state,
    dags_test,
    explain,
    query_metadata_db,
    run_id_of,
)

DAGS = Path(__file__).parent / "dags"
FAIL_LINE = "airflow.sdk.exceptions.AirflowFailException: "


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_bad_parameters_fail_once_with_one_line_and_change_nothing(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    from icewright.arrow import rows_to_arrow, write_data_files
    from icewright.commit import append
    from icewright.text.declaration import parse_schema
    from tests.operators.dags.icewright_bad_parameters import CASES

    uri = f"sqlite:///{tmp_path}/lake.db"
    warehouse = tmp_path / "wh"
    catalog = load_catalog({"type": "sql", "uri": uri, "warehouse": str(warehouse)})
    catalog.create_namespace(("ns",))
    table = catalog.create_table(Identifier.parse("ns.good"), parse_schema("id long"))
    data = rows_to_arrow(table.metadata.schema(), [{"id": 1}])
    append(table, write_data_files(table.io, table.metadata, data))
    table = table.refresh()
    location = Path(table.metadata.location.removeprefix("file://"))
    files_before, pointer_before = _files(location), table.metadata_location
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()

    extra = {"catalog_type": "sql", "uri": uri, "warehouse": str(warehouse)}
    env = airflow_home.environment(
        **connection_env("lake", "icewright", extra=extra),
        ICEWRIGHT_TEST_FILE=str(tmp_path / "afile"),
        ICEWRIGHT_TEST_EMPTY_DIR=str(tmp_path / "adir"),
        # No Spark can start: a task that tried would fail otherwise, and be retried.
        SPARK_HOME=str(tmp_path / "no-spark"),
    )
    done = dags_test("icewright_bad_parameters", DAGS, env=env, logical_date="2026-01-04")
    assert dag_run_state(done) == "failed", explain(done)
    tries = {
        task: (state, number)
        for task, state, number in query_metadata_db(
            airflow_home,
            "SELECT task_id, state, try_number FROM task_instance "
            "WHERE dag_id = 'icewright_bad_parameters' AND run_id = :r",
            r=run_id_of(done),
        )
    }
    assert tries.pop("retried") == ("failed", 3), explain(done)  # the control: retried
    assert tries == {task: ("failed", 1) for task in CASES}, tries

    reasons = [
        line.removeprefix(FAIL_LINE)
        for line in (done.stdout + done.stderr).splitlines()
        if line.startswith(FAIL_LINE)
    ]
    for task, (_, _, fragment) in CASES.items():
        assert [r for r in reasons if fragment in r], f"{task}: no reason with {fragment!r}"
    assert len(reasons) == len(CASES), reasons  # one line each, nothing else failed so

    table = table.refresh()
    assert table.metadata_location == pointer_before
    assert _files(location) == files_before
    names = {str(t) for t in catalog.list_tables(("ns",))}
    assert names == {"ns.good"}, names
    assert not catalog.view_exists(Identifier.parse("ns.v"))
    assert not any(warehouse.glob("ns/c*")), list(warehouse.glob("ns/*"))


def _operators() -> dict[str, tuple[Callable[[], Any], str]]:
    from icewright.operators import (
        IcebergAppendOperator,
        IcebergCreateTableOperator,
        IcebergExpireSnapshotsOperator,
        IcebergPublishViewOperator,
        IcebergRewriteDataFilesOperator,
    )
    from icewright.providers.job_triggers import IcebergSparkJobTrigger
    from icewright.providers.triggers import IcebergSnapshotEventTrigger, IcebergSnapshotTrigger
    from icewright.sensors import IcebergSnapshotSensor

    def append(**kw: Any) -> Any:
        return IcebergAppendOperator(task_id="a", table="ns.t", source="sql:SELECT 1", **kw)

    def rewrite(**kw: Any) -> Any:
        return IcebergRewriteDataFilesOperator(task_id="r", table="ns.t", **kw)

    def sensor(**kw: Any) -> Any:
        return IcebergSnapshotSensor(task_id="s", **{"table": "ns.t", **kw})

    def job_trigger(**kw: Any) -> Any:
        io = {"class": "x"}
        where = {"job_key": "k", "result_location": "/r", "pending_location": "/p", "io": io}
        return IcebergSparkJobTrigger(**where, **kw)

    return {
        "poll_interval 0": (lambda: append(poll_interval=0), "poll_interval must be a positive"),
        "poll_interval -1": (lambda: append(poll_interval=-1), "poll_interval must be a positive"),
        "poll_interval abc": (lambda: append(poll_interval="x"), "poll_interval must be a number"),
        "deferral_timeout 0": (lambda: append(deferral_timeout=0), "deferral_timeout must be"),
        "deferral_timeout -5": (lambda: append(deferral_timeout=-5), "deferral_timeout must be"),
        "deferral_timeout abc": (lambda: append(deferral_timeout="x"), "deferral_timeout must be"),
        "spark_settings list": (lambda: append(spark_settings=["a"]), "spark_settings must be a"),
        "target_file_size 0": (lambda: rewrite(target_file_size=0), "target_file_size must be"),
        "target_file_size -1": (lambda: rewrite(target_file_size=-1), "target_file_size must be"),
        "target_file_size text": (lambda: rewrite(target_file_size="1G"), "target_file_size must"),
        "min_input_files 0": (lambda: rewrite(min_input_files=0), "min_input_files must be"),
        "min_input_files -2": (lambda: rewrite(min_input_files=-2), "min_input_files must be"),
        "partial_progress_max_commits 0": (
            lambda: rewrite(partial_progress_max_commits=0),
            "partial_progress_max_commits must be",
        ),
        "retain_last 0": (
            lambda: IcebergExpireSnapshotsOperator(task_id="e", table="ns.t", retain_last=0),
            "retain_last must be an integer >= 1",
        ),
        "retain_last -1": (
            lambda: IcebergExpireSnapshotsOperator(task_id="e", table="ns.t", retain_last=-1),
            "retain_last must be an integer >= 1",
        ),
        "retain_last text": (
            lambda: IcebergExpireSnapshotsOperator(task_id="e", table="ns.t", retain_last="3"),
            "retain_last must be an integer >= 1",
        ),
        "format_version text": (
            lambda: IcebergCreateTableOperator(
                task_id="c", table="ns.t", schema="id long", format_version="2"
            ),
            "format_version must be an integer",
        ),
        "column_aliases text": (
            lambda: IcebergPublishViewOperator(
                task_id="v", view="ns.v", sql="SELECT 1 AS a", column_aliases="abc"
            ),
            "column_aliases must be a list of column names",
        ),
        "sensor poll_interval 0": (lambda: sensor(poll_interval=0), "poll_interval must be a"),
        "sensor poll_interval abc": (lambda: sensor(poll_interval="x"), "poll_interval must be"),
        "sensor operations unknown": (lambda: sensor(operations=["bogus"]), "operations ['bogus']"),
        "sensor operations empty": (lambda: sensor(operations=[]), "must be a non-empty list"),
        "sensor min_added_records -1": (
            lambda: sensor(min_added_records=-1),
            "min_added_records must be >= 0",
        ),
        "sensor min_added_records text": (
            lambda: sensor(min_added_records="many"),
            "min_added_records must be an integer",
        ),
        "sensor after and since_previous_run": (
            lambda: sensor(after_snapshot_id=1, since_previous_run=True),
            "not both",
        ),
        "trigger table empty": (lambda: IcebergSnapshotTrigger(""), "name is empty"),
        "trigger poll_interval 0": (
            lambda: IcebergSnapshotTrigger("ns.t", poll_interval=0),
            "poll_interval must be a positive",
        ),
        "event trigger table empty": (
            lambda: IcebergSnapshotEventTrigger("ns."),
            "name is empty",
        ),
        "event trigger start_from": (
            lambda: IcebergSnapshotEventTrigger("ns.t", start_from="middle"),
            "start_from must be one of",
        ),
        "event trigger poll_interval -1": (
            lambda: IcebergSnapshotEventTrigger("ns.t", poll_interval=-1),
            "poll_interval must be a positive",
        ),
        "job trigger poll_interval 0": (
            lambda: job_trigger(poll_interval=0),
            "poll_interval must be a positive",
        ),
        "job trigger timeout -1": (lambda: job_trigger(timeout=-1), "timeout must be a positive"),
    }


CONSTRUCTION = _operators()


@pytest.mark.parametrize("case", sorted(CONSTRUCTION))
def test_parameters_that_are_not_templated_fail_when_the_dag_is_parsed(case: str) -> None:
    build, fragment = CONSTRUCTION[case]
    with pytest.raises(ValidationError) as raised:
        build()
    message = str(raised.value)
    assert fragment in message and "\n" not in message, message


def test_the_dag_of_bad_parameters_parses() -> None:
    from tests.operators.dags.icewright_bad_parameters import CASES, bad_parameters

    assert set(bad_parameters.task_ids) == {*CASES, "retried"}
    assert all(t.retries == 2 for t in bad_parameters.tasks)
    assert bad_parameters.start_date == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
