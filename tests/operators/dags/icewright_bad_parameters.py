"""One DAG of bad operator and sensor parameters (issue 12's sweep): every task has one
bad templated parameter, ``retries=2``, and must fail on its first try with a one-line
reason, before any Spark job starts. ``EXPECTED`` maps each task to a fragment of that
reason; ``tests/operators/test_bad_parameters.py`` runs the DAG and checks it.

Parameters that are not templated are refused when the DAG is parsed (plain pytest cases
in the same test module). ``ICEWRIGHT_TEST_FILE`` is a regular file and
``ICEWRIGHT_TEST_EMPTY_DIR`` an empty directory, made by the test.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from airflow.sdk import DAG, task

from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergExpireSnapshotsOperator,
    IcebergPublishViewOperator,
    IcebergRemoveOrphanFilesOperator,
    IcebergReplaceOperator,
    IcebergRewriteDataFilesOperator,
)
from icewright.sensors import IcebergSnapshotSensor

T = "ns.good"
SQL = "sql:SELECT 2L AS id"
A_FILE = os.environ.get("ICEWRIGHT_TEST_FILE", "/nonexistent/afile")
EMPTY_DIR = os.environ.get("ICEWRIGHT_TEST_EMPTY_DIR", "/nonexistent/adir")
EMPTY = "{{ params.empty }}"  # a template that renders to ""

APPEND, REPLACE = IcebergAppendOperator, IcebergReplaceOperator
REWRITE = IcebergRewriteDataFilesOperator
CREATE, VIEW, SENSOR = IcebergCreateTableOperator, IcebergPublishViewOperator, IcebergSnapshotSensor
EXPIRE, ORPHANS = IcebergExpireSnapshotsOperator, IcebergRemoveOrphanFilesOperator

# task id: (operator, parameters, a fragment of the one-line reason)
CASES: dict[str, tuple[type, dict[str, Any], str]] = {
    "append_table_empty": (APPEND, {"table": EMPTY, "source": SQL}, "name is empty"),
    "append_table_unknown": (APPEND, {"table": "ns.nope", "source": SQL}, "NoSuchTable"),
    "append_source_empty": (APPEND, {"table": T, "source": EMPTY}, "a source must be a non-empty"),
    "append_source_no_query": (APPEND, {"table": T, "source": "sql:"}, "no query after 'sql:'"),
    "append_source_no_path": (APPEND, {"table": T, "source": "parquet:"}, "has no path after"),
    "append_source_missing": (
        APPEND,
        {"table": T, "source": "/nonexistent/icewright/x.parquet"},
        "'/nonexistent/icewright/x.parquet' does not exist",
    ),
    "append_source_empty_dir": (
        APPEND,
        {"table": T, "source": f"parquet:{EMPTY_DIR}"},
        "does not exist (or holds no files)",
    ),
    "append_source_not_text": (APPEND, {"table": T, "source": 5}, "unsupported source 5"),
    "append_branch_empty": (APPEND, {"table": T, "source": SQL, "branch": EMPTY}, "branch must"),
    "append_commit_key_empty": (
        APPEND,
        {"table": T, "source": SQL, "commit_key": EMPTY},
        "commit_key must be non-empty",
    ),
    "replace_where_empty": (
        REPLACE,
        {"table": T, "source": SQL, "where": EMPTY},
        "where must be a non-empty SQL predicate",
    ),
    "replace_where_malformed": (
        REPLACE,
        {"table": T, "source": SQL, "where": "id >>> 3"},
        "cannot parse filter",
    ),
    "replace_where_unknown_column": (
        REPLACE,
        {"table": T, "source": SQL, "where": "nope = 1"},
        "cannot find column 'nope'",
    ),
    "replace_where_and_dynamic": (
        REPLACE,
        {"table": T, "source": SQL, "where": "id = 1", "dynamic_partitions": True},
        "pass where or dynamic_partitions=True, not both",
    ),
    "replace_source_missing": (
        REPLACE,
        {"table": T, "source": "json:/nonexistent/icewright/y"},
        "'/nonexistent/icewright/y' does not exist",
    ),
    "rewrite_where_empty": (REWRITE, {"table": T, "where": EMPTY}, "where must be a non-empty"),
    "rewrite_where_malformed": (REWRITE, {"table": T, "where": "id <"}, "cannot parse filter"),
    "rewrite_branch_empty": (REWRITE, {"table": T, "branch": EMPTY}, "branch must"),
    "rewrite_branch_unknown": (REWRITE, {"table": T, "branch": "nobranch"}, "named 'nobranch'"),
    "expire_older_than_unparseable": (
        EXPIRE,
        {"table": T, "older_than": "abc"},
        "older_than 'abc' is neither",
    ),
    "expire_older_than_before_1970": (
        EXPIRE,
        {"table": T, "older_than": "1969-07-20"},
        "'1969-07-20' is before 1970-01-01",
    ),
    "expire_table_unknown": (EXPIRE, {"table": "ns.gone"}, "'ns.gone' does not exist"),
    "orphans_older_than_unparseable": (
        ORPHANS,
        {"table": T, "older_than": "1x"},
        "older_than '1x' is neither",
    ),
    "orphans_older_than_before_1970": (
        ORPHANS,
        {"table": T, "older_than": "-5"},
        "'-5' is before 1970-01-01",
    ),
    "create_table_empty": (CREATE, {"table": "ns.", "schema": "id long"}, "name is empty"),
    "create_schema_empty": (CREATE, {"table": "ns.c1", "schema": EMPTY}, "the schema is empty"),
    "create_schema_malformed": (
        CREATE,
        {"table": "ns.c2", "schema": "id lng"},
        "found 'lng' at position 3",
    ),
    "create_partition_unknown_column": (
        CREATE,
        {"table": "ns.c3", "schema": "id long", "partition_by": "day(ts)"},
        "no column named 'ts'",
    ),
    "create_sort_unknown_column": (
        CREATE,
        {"table": "ns.c4", "schema": "id long", "sort_by": "nope desc"},
        "no column named 'nope'",
    ),
    "create_property_invalid": (
        CREATE,
        {"table": "ns.c5", "schema": "id long", "properties": {"commit.retry.num-retries": "-5"}},
        "commit.retry.num-retries='-5' is invalid",
    ),
    "create_location_empty": (
        CREATE,
        {"table": "ns.c6", "schema": "id long", "location": EMPTY},
        "location must be a URI or path",
    ),
    "create_location_file": (
        CREATE,
        {"table": "ns.c7", "schema": "id long", "location": A_FILE},
        "is a file: give a directory",
    ),
    "create_source_missing": (
        CREATE,
        {"table": "ns.c8", "source": "/nonexistent/icewright/z.csv"},
        "'/nonexistent/icewright/z.csv' does not exist",
    ),
    "create_if_not_exists_and_or_replace": (
        CREATE,
        {"table": "ns.c9", "schema": "id long", "if_not_exists": True, "or_replace": True},
        "pass if_not_exists or or_replace, not both",
    ),
    "view_sql_empty": (VIEW, {"view": "ns.v", "sql": EMPTY}, "a view needs its SQL query"),
    "view_column_comments_not_mapping": (
        VIEW,
        {"view": "ns.v", "sql": "SELECT 1 AS a", "column_comments": ["a"]},
        "column_comments must be a mapping",
    ),
    "view_properties_not_mapping": (
        VIEW,
        {"view": "ns.v", "sql": "SELECT 1 AS a", "properties": "{{ params.empty }}x"},
        "properties must be a mapping",
    ),
    "sensor_table_unknown": (SENSOR, {"table": "ns.nope"}, "'ns.nope' does not exist"),
    "sensor_branch_empty": (SENSOR, {"table": T, "branch": EMPTY}, "branch must be a non-empty"),
    "sensor_branch_unknown": (SENSOR, {"table": T, "branch": "audit"}, "no branch 'audit'"),
    "sensor_after_unknown_id": (
        SENSOR,
        {"table": T, "after_snapshot_id": "123"},
        "snapshot 123 is not in the history of ns.good",
    ),
    "sensor_after_not_an_id": (
        SENSOR,
        {"table": T, "after_snapshot_id": "abc"},
        "after_snapshot_id must be a snapshot id (an integer), got 'abc'",
    ),
    "sensor_summary_filters_not_mapping": (
        SENSOR,
        {"table": T, "summary_filters": EMPTY},
        "summary_filters must be a mapping",
    ),
}

with DAG(
    dag_id="icewright_bad_parameters",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    params={"empty": ""},
    default_args={"retries": 2, "retry_delay": dt.timedelta(seconds=0)},
) as bad_parameters:
    for task_id, (operator, parameters, _) in CASES.items():
        extra: dict[str, Any] = {"timeout": 30} if operator is SENSOR else {}
        operator(task_id=task_id, iceberg_conn_id="lake", **parameters, **extra)

    @task
    def retried() -> None:
        """The control: an error that is not bad input is retried (3 tries)."""
        raise RuntimeError("a retriable failure")

    retried()
