"""Bad arguments fail when the definitions load (``dagster definitions validate``), with
one line that says what to write, not in a run hours later."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg
import pytest

from icewright.dagster import (
    IcebergResource,
    MaintenancePlan,
    iceberg_append_asset,
    iceberg_expire_asset,
    iceberg_maintenance_job,
    iceberg_remove_orphans_asset,
    iceberg_replace_asset,
    iceberg_rewrite_asset,
    iceberg_snapshot_sensor,
    iceberg_table_asset,
    iceberg_table_checks,
    iceberg_view_asset,
)
from icewright.errors import ValidationError

T = "sales.events"
SQL = "sql:SELECT 1 AS id"
ALL = dg.AssetSelection.all()

BAD: list[tuple[str, Callable[[], Any], str]] = [
    (
        "unknown partition column",
        lambda: iceberg_table_asset(T, "id long", partition_by="day(x)"),
        "no column named 'x'",
    ),
    (
        "transform misfit",
        lambda: iceberg_table_asset(T, "id long", partition_by="day(id)"),
        "cannot be applied to column 'id'",
    ),
    (
        "unknown sort column",
        lambda: iceberg_table_asset(T, "id long", sort_by="nope"),
        "no column named 'nope'",
    ),
    ("no schema", lambda: iceberg_table_asset(T, None), "needs the table's schema"),
    ("source not text", lambda: iceberg_append_asset(T, {"a": 1}), "unsupported source"),
    ("empty sql source", lambda: iceberg_append_asset(T, "sql:  "), "no query after 'sql:'"),
    ("where syntax", lambda: iceberg_replace_asset(T, SQL, where="id <"), "cannot parse filter"),
    (
        "where and dynamic",
        lambda: iceberg_replace_asset(T, SQL, where="id < 1", dynamic_partitions=True),
        "not both",
    ),
    (
        "rewrite count",
        lambda: iceberg_rewrite_asset(T, min_input_files=0),
        "min_input_files must be an integer >= 1",
    ),
    ("rewrite where", lambda: iceberg_rewrite_asset(T, where="a = = 1"), "cannot parse filter"),
    (
        "retain none",
        lambda: iceberg_expire_asset(T, retain_last=0),
        "retain_last must be an integer >= 1",
    ),
    (
        "expire instant",
        lambda: iceberg_expire_asset(T, older_than="yesterday-ish"),
        "older_than 'yesterday-ish'",
    ),
    (
        "orphans instant",
        lambda: iceberg_remove_orphans_asset(T, older_than="-5d"),
        "older_than '-5d'",
    ),
    ("view without sql", lambda: iceberg_view_asset("sales.v", " "), "needs its SQL query"),
    (
        "negative age",
        lambda: iceberg_table_checks(T, max_age_seconds=-1),
        "max_age_seconds must be a number >= 0",
    ),
    (
        "share above 1",
        lambda: iceberg_table_checks(T, max_small_file_share=2.0),
        "max_small_file_share must be a number >= 0 and <= 1",
    ),
    ("no snapshots", lambda: iceberg_table_checks(T, max_snapshots=0), "max_snapshots"),
    ("no bound", lambda: iceberg_table_checks(T), "needs at least one bound"),
    (
        "unknown severity",
        lambda: iceberg_table_checks(
            T, max_snapshots=3, severities={"fresh": dg.AssetCheckSeverity.WARN}
        ),
        "severities names checks \\['fresh'\\]",
    ),
    (
        "empty branch",
        lambda: iceberg_snapshot_sensor([T], target=ALL, branch=""),
        "branch must be a non-empty ref name",
    ),
    (
        "no tables to watch",
        lambda: iceberg_snapshot_sensor([], target=ALL),
        "needs at least one table",
    ),
    ("no tables to maintain", lambda: iceberg_maintenance_job([]), "needs at least one table"),
    ("bad plan", lambda: MaintenancePlan(expire_retain_last=-3), "retain_last"),
]


@pytest.mark.parametrize(("define", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_definitions_fail_at_once(define: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        define()


def test_good_definitions_load() -> None:
    table = iceberg_table_asset(
        T, "id long, ts timestamptz", partition_by="day(ts), bucket(4, id)", sort_by="id desc"
    )
    checks = iceberg_table_checks(T, max_age_seconds=10, max_small_file_share=0.5, max_snapshots=5)
    # a predicate with template placeholders is checked once they are filled, in the run
    fix = iceberg_replace_asset(T, SQL, where="ts >= '{start}'", key="fix")
    defs = dg.Definitions(
        assets=[table, fix], asset_checks=checks, resources={"iceberg": IcebergResource()}
    )
    assert len(list(defs.resolve_all_asset_keys())) == 2


def test_tables_show_their_name_and_declared_schema_before_any_run() -> None:
    """Definition metadata (Dagster's ``dagster/table_name`` and ``dagster/column_schema``):
    the UI shows them on the asset before it is ever materialized."""
    declared = iceberg_append_asset(
        T,
        SQL,
        schema="id long not null, note string",
        metadata={"owner_note": "kept", "dagster/table_name": "lake.sales.events"},
    )
    (spec,) = declared.specs
    assert spec.metadata["dagster/table_name"] == "lake.sales.events"  # the user's wins
    assert spec.metadata["owner_note"] == "kept"
    columns = spec.metadata["dagster/column_schema"].columns
    assert [(c.name, c.type, c.constraints.nullable) for c in columns] == [
        ("id", "long", False),
        ("note", "string", True),
    ]
    (table_spec,) = iceberg_table_asset(T, "id long").specs
    assert table_spec.metadata["dagster/table_name"] == T
    assert [c.name for c in table_spec.metadata["dagster/column_schema"].columns] == ["id"]
    (undeclared,) = iceberg_replace_asset(T, SQL).specs
    assert undeclared.metadata["dagster/table_name"] == T
    assert "dagster/column_schema" not in undeclared.metadata  # known after the first run
    (view,) = iceberg_view_asset("sales.v", "SELECT 1 AS id").specs
    assert view.metadata["dagster/table_name"] == "sales.v"
