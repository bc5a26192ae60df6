"""The operators run by Airflow (``airflow dags test`` / ``tasks test`` on a temporary
home): XCom and asset-event extras, rendered templates, exactly-once on a retry, bad
input failing with a one-line reason and leaving the table unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from icewright.actions.announce import claim_key
from icewright.catalog import load_catalog
from tests.support.airflow import (
    AirflowHome,
    airflow,
    connection_env,
    dag_run_state,
    dags_test,
    explain,
    query_metadata_db,
    run_id_of,
)

DAGS = Path(__file__).parent / "dags"
pytestmark = pytest.mark.slow


def _lake(tmp_path: Path) -> tuple[dict[str, str], Any]:
    uri = f"sqlite:///{tmp_path}/lake.db"
    extra = {"catalog_type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")}
    env = connection_env("lake", "icewright", extra=extra)
    return env, load_catalog({"type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")})


def _xcom(home: AirflowHome, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
    rows = query_metadata_db(
        home,
        "SELECT value FROM xcom WHERE dag_id = :d AND run_id = :r AND task_id = :t "
        "AND key = 'return_value'",
        d=dag_id,
        r=run_id,
        t=task_id,
    )
    assert len(rows) == 1, rows
    value = rows[0][0]
    return json.loads(value) if isinstance(value, str) else value


def test_xcom_events_templates_and_exactly_once(airflow_home: AirflowHome, tmp_path: Path) -> None:
    env, catalog = _lake(tmp_path)
    env = airflow_home.environment(**env)
    done = dags_test("icewright_operator_checks", DAGS, env=env, logical_date="2026-01-02")
    assert dag_run_state(done) == "success", explain(done)
    run_id = run_id_of(done)

    table = catalog.load_table("ns.events")
    (snapshot,) = table.metadata.snapshots
    # Rendered templates reached the action: table properties from {{ ds }} / {{ dag }}.
    assert table.metadata.properties["loaded.for"] == "2026-01-02"
    assert table.metadata.properties["dag"] == "icewright_operator_checks"

    pushed = _xcom(airflow_home, "icewright_operator_checks", run_id, "append")
    assert pushed["snapshot_id"] == snapshot.snapshot_id
    assert pushed["committed"] is True
    assert pushed["records_added"] == 25
    assert pushed["metadata_location"] == table.metadata_location
    assert pushed["summary"]["icewright.commit-key"].startswith("airflow:")

    events = query_metadata_db(
        airflow_home,
        "SELECT e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id "
        "WHERE a.uri = 'iceberg://lake/ns/events' AND e.source_run_id = :r "
        "AND e.source_task_id = 'append'",
        r=run_id,
    )
    assert len(events) == 1, events
    extra = json.loads(events[0][0]) if isinstance(events[0][0], str) else events[0][0]
    payload = extra["payload"]
    assert [s["snapshot_id"] for s in payload["snapshots"]] == [snapshot.snapshot_id]
    assert payload["snapshots"][0]["added_records"] == 25
    assert payload["snapshots"][0]["operation"] == "append"
    assert payload["table"] == "ns.events" and payload["branch"] == "main"
    assert payload["head"]["snapshot_id"] == snapshot.snapshot_id
    assert payload["metadata_location"] == table.metadata_location
    # The create task committed no snapshot: no event for its outlet.
    assert not query_metadata_db(
        airflow_home,
        "SELECT e.extra FROM asset_event e WHERE e.source_run_id = :r "
        "AND e.source_task_id = 'create'",
        r=run_id,
    )
    # The append claimed its commit in the asset's state store (for a watcher of the asset).
    claims = query_metadata_db(
        airflow_home,
        "SELECT s.key, s.value FROM asset_state_store s JOIN asset a ON a.id = s.asset_id "
        "WHERE a.uri = 'iceberg://lake/ns/events'",
    )
    key = pushed["summary"]["icewright.commit-key"]
    assert claim_key(key) in {k for k, _ in claims}, claims

    # A retry of the same task instance (same run id): finds its commit, adds nothing.
    again = airflow(
        "tasks",
        "test",
        "icewright_operator_checks",
        "append",
        run_id,
        env={**env, "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS), "PYTHONPATH": str(DAGS)},
    )
    assert again.returncode == 0, explain(again)
    assert "found already committed snapshot" in again.stdout + again.stderr, explain(again)
    table = table.refresh()
    assert [s.snapshot_id for s in table.metadata.snapshots] == [snapshot.snapshot_id]


BAD = {
    "missing_connection": "'no_such_conn' does not exist",
    "unknown_table": "NoSuchTable",
    "malformed_predicate": "ValidationError",
    "malformed_schema": "ValidationError",
    "outlet_of_another_table": "names the table ns.other, but the operator writes ns.good",
}


def test_bad_input_fails_with_one_line_and_changes_nothing(
    airflow_home: AirflowHome, tmp_path: Path
) -> None:
    env, catalog = _lake(tmp_path)
    done = dags_test(
        "icewright_bad_input",
        DAGS,
        env=airflow_home.environment(**env),
        logical_date="2026-01-03",
    )
    assert dag_run_state(done) == "failed", explain(done)
    run_id = run_id_of(done)
    states = dict(
        query_metadata_db(
            airflow_home,
            "SELECT task_id, state FROM task_instance WHERE dag_id = 'icewright_bad_input' "
            "AND run_id = :r",
            r=run_id,
        )
    )
    assert states == {"setup": "success", **{t: "failed" for t in BAD}}, states
    output = done.stdout + done.stderr
    for task, reason in BAD.items():
        lines = [
            line
            for line in output.splitlines()
            if line.startswith("airflow.sdk.exceptions.AirflowFailException:") and reason in line
        ]
        assert lines, f"{task}: no one-line reason containing {reason!r}\n{explain(done)}"
    good = catalog.load_table("ns.good")
    assert len(good.metadata.snapshots) == 1  # only the setup's append
    assert not catalog.table_exists("ns.bad_schema")
    assert not catalog.table_exists("ns.no_such_table")
