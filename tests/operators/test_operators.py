"""Operator parts in this process: commit keys, template rendering, schema and instant
arguments, JSON-able results. (Runs through Airflow are in ``test_operators_airflow``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icewright.actions.results import ActionResult, RewriteResult, ViewResult
from icewright.errors import ValidationError
from icewright.operators import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergExpireSnapshotsOperator,
    IcebergPublishViewOperator,
    IcebergReplaceOperator,
    IcebergRewriteDataFilesOperator,
    IcebergSnapshotSensor,
    commit_key_for,
)
from icewright.operators.base import one_line, to_jsonable
from icewright.operators.tables import as_schema
from icewright.spec.schema import Schema
from icewright.spec.types import DecimalType, LongType, NestedField, TimestamptzType


def test_commit_key_is_stable_and_distinct() -> None:
    key = commit_key_for("d", "t", "manual__2026-01-02", -1)
    assert key == commit_key_for("d", "t", "manual__2026-01-02", -1)
    assert key.startswith("airflow:")
    others = {
        commit_key_for("d2", "t", "manual__2026-01-02", -1),
        commit_key_for("d", "t2", "manual__2026-01-02", -1),
        commit_key_for("d", "t", "manual__2026-01-03", -1),
        commit_key_for("d", "t", "manual__2026-01-02", 0),
    }
    assert key not in others and len(others) == 4
    # No ambiguity from separators inside the names.
    assert commit_key_for("a/b", "c", "r") != commit_key_for("a", "b/c", "r")


@pytest.mark.parametrize(
    ("operator", "fields"),
    [
        (IcebergCreateTableOperator, {"table", "schema", "source", "partition_by", "properties"}),
        (IcebergAppendOperator, {"table", "source", "commit_key"}),
        (IcebergReplaceOperator, {"table", "source", "where"}),
        (IcebergRewriteDataFilesOperator, {"table", "where"}),
        (IcebergExpireSnapshotsOperator, {"table", "older_than"}),
        (IcebergPublishViewOperator, {"view", "sql", "properties"}),
    ],
)
def test_template_fields(operator: type, fields: set[str]) -> None:
    assert fields <= set(operator.template_fields)


def test_no_operator_or_sensor_templates_its_connection() -> None:
    """The connection id names the table's ``iceberg://`` asset, which Airflow reads when
    it parses the DAG: templated nowhere, so every class treats it alike."""
    import icewright.operators as operators
    from icewright.operators.base import IcebergBaseOperator

    classes = [
        c
        for c in vars(operators).values()
        if isinstance(c, type) and hasattr(c, "template_fields") and "Iceberg" in c.__name__
    ]
    assert IcebergSnapshotSensor in classes and IcebergBaseOperator in classes
    assert len(classes) > 15
    assert [c.__name__ for c in classes if "iceberg_conn_id" in c.template_fields] == []


def test_template_rendering() -> None:
    op = IcebergReplaceOperator(
        task_id="r",
        table="{{ params.ns }}.orders",
        source="sql:SELECT * FROM staging WHERE day = '{{ ds }}'",
        where="ts >= '{{ ds }}T00:00:00+00:00'",
        commit_key="orders/{{ ds }}",
    )
    context = {"ds": "2026-01-02", "params": {"ns": "sales"}}
    op.render_template_fields(context)
    assert op.table == "sales.orders"
    assert op.source == "sql:SELECT * FROM staging WHERE day = '2026-01-02'"
    assert op.where == "ts >= '2026-01-02T00:00:00+00:00'"
    assert op.commit_key == "orders/2026-01-02"

    create = IcebergCreateTableOperator(
        task_id="c",
        table="sales.t_{{ ds_nodash }}",
        schema="id long, note string",
        partition_by=[("bucket", "id", 4)],
        properties={"loaded": "{{ ds }}"},
    )
    create.render_template_fields({"ds": "2026-01-02", "ds_nodash": "20260102"})
    assert create.table == "sales.t_20260102"
    assert create.properties == {"loaded": "2026-01-02"}
    assert create.partition_by == [("bucket", "id", 4)]


def test_schema_argument_forms() -> None:
    expected = Schema(
        NestedField(1, "id", LongType(), True),
        NestedField(2, "ts", TimestamptzType(), False),
        NestedField(3, "amount", DecimalType(12, 2), False),
    )
    from_text = as_schema("id long not null, ts timestamptz, amount decimal(12,2)")
    assert from_text.to_json() == expected.to_json()
    assert as_schema(expected) is expected
    assert as_schema(expected.to_json()).to_json() == expected.to_json()
    assert as_schema(json.dumps(expected.to_json())).to_json() == expected.to_json()
    for bad in ("id lng", "", {"type": "list"}, 42):
        with pytest.raises(ValidationError):
            as_schema(bad)


def test_results_become_json() -> None:
    result = RewriteResult(
        table="sales.orders",
        metadata_location="/w/m.json",
        committed=True,
        snapshot_id=7,
        sequence_number=3,
        operation="replace",
        summary={"added-records": "10"},
        records_added=10,
        commits=(
            ActionResult(table="sales.orders", metadata_location="/w/m.json", committed=True),
        ),
    )
    payload = to_jsonable(result)
    assert json.loads(json.dumps(payload)) == payload
    assert payload["commits"][0]["table"] == "sales.orders"
    schema = Schema(NestedField(1, "id", LongType(), True))
    view = to_jsonable(
        ViewResult(view="sales.v", metadata_location="/v.json", version_id=2, schema=schema)
    )
    assert view["schema"] == schema.to_json()


def test_one_line_reason() -> None:
    assert one_line(ValidationError("bad\n  predicate")) == "ValidationError: bad predicate"


def test_an_outlet_of_another_connection_is_refused_when_the_dag_is_parsed() -> None:
    from icewright.operators import IcebergAppendOperator, iceberg_asset

    ok = IcebergAppendOperator(
        task_id="ok",
        iceberg_conn_id="lake",
        table="ns.t",
        source="sql:SELECT 1L AS id",
        outlets=[iceberg_asset("ns.t", iceberg_conn_id="lake")],
    )
    assert [o.uri for o in ok.check_outlets()] == ["iceberg://lake/ns/t"]
    with pytest.raises(
        ValidationError,
        match=r"names the connection 'icewright_default'.*"
        r"iceberg_conn_id='lake'",
    ):
        IcebergAppendOperator(
            task_id="bad",
            iceberg_conn_id="lake",
            table="ns.t",
            source="sql:SELECT 1L AS id",
            outlets=[iceberg_asset("ns.t")],
        )


def test_a_source_module_next_to_the_dag_goes_with_a_spark_submit_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from icewright.operators import IcebergAppendOperator
    from icewright.operators.base import source_module_file

    (tmp_path / "iw_rows_source.py").write_text("def rows(spark):\n    return spark.range(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    shipped = str(tmp_path / "iw_rows_source.py")
    assert source_module_file("iw_rows_source:rows") == shipped
    # Not a module file of its own: SQL, paths, the standard library, installed packages.
    for source in ("sql:SELECT 1", "parquet:/x", "csv:x", "json:x", "pyspark:x", None, 3):
        assert source_module_file(source) is None, source
    op = IcebergAppendOperator(
        task_id="t",
        table="ns.t",
        source="iw_rows_source:rows",
        spark_settings={"master": "local[1]", "py_files": ["/opt/dep.zip"]},
    )
    assert op.make_runner().settings.py_files == ("/opt/dep.zip", shipped)  # type: ignore[attr-defined]
    local = IcebergAppendOperator(task_id="l", table="ns.t", source="iw_rows_source:rows")
    assert not hasattr(local.make_runner(), "settings")  # local Spark: nothing to ship


def test_a_view_query_from_a_sql_file_is_rendered(tmp_path: Path) -> None:
    """``sql="recent.sql"``: Airflow reads the file from the DAG's template search path
    (``template_ext``) and renders it like an inline query."""
    import datetime as dt

    from airflow.sdk import DAG

    (tmp_path / "recent.sql").write_text("SELECT * FROM sales.orders WHERE day = '{{ ds }}'")
    with DAG(
        "views_from_files",
        schedule=None,
        start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        template_searchpath=[str(tmp_path)],
    ) as dag:
        op = IcebergPublishViewOperator(task_id="v", view="sales.recent", sql="recent.sql")
    assert ".sql" in op.template_ext
    op.render_template_fields({"ds": "2026-01-02"}, jinja_env=dag.get_template_env())
    assert op.sql == "SELECT * FROM sales.orders WHERE day = '2026-01-02'"
