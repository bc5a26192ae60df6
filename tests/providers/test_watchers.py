"""One declaration per table asset: every ``iceberg_asset`` and ``watched_iceberg_asset``
of a table is the same asset with the same watcher (so Airflow's file-by-file parsing
never replaces the watcher), a watched variant is an asset of its own, and anything
else is refused when the DAG is parsed, by the operator and by the cluster policy
Airflow loads from icewright's ``airflow.policy`` entry point. The real scheduler,
dag-processor and triggerer run these layouts in ``tests/example_dags/
test_announcements.py``."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from airflow.exceptions import AirflowClusterPolicyViolation
from airflow.sdk import DAG, Asset, AssetWatcher
from airflow.triggers.base import BaseEventTrigger

from icewright.errors import ValidationError
from icewright.operators import IcebergAppendOperator, iceberg_asset, watched_iceberg_asset
from icewright.providers.policy import dag_policy, iceberg_assets_of
from icewright.providers.triggers import IcebergSnapshotEventTrigger
from icewright.providers.watchers import declaration_problem

URI = "iceberg://icewright_default/sales/orders"
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _hashes(asset: Asset) -> list[int]:
    return [BaseEventTrigger.hash(*w.trigger.serialize()) for w in asset.watchers]


def test_every_declaration_of_a_table_is_one_asset_with_one_watcher() -> None:
    plain = iceberg_asset("sales.orders")
    assert (plain.name, plain.uri) == (URI, URI)
    (watcher,) = plain.watchers
    assert isinstance(watcher.trigger, IcebergSnapshotEventTrigger)
    assert watcher.trigger.poll_interval is None  # read where it runs, not declared
    for same in (
        iceberg_asset(("sales", "orders")),
        watched_iceberg_asset("sales.orders"),
        watched_iceberg_asset("sales.orders", watcher_name="mine"),
    ):
        assert (same.name, same.uri) == (URI, URI)
        assert _hashes(same) == _hashes(plain)
        assert declaration_problem(same) is None
    assert _hashes(iceberg_asset("sales.refunds")) != _hashes(plain)


def test_options_make_a_watched_variant_of_its_own() -> None:
    variant = watched_iceberg_asset("sales.orders", min_added_records=1, poll_interval=5)
    assert variant.uri == URI
    assert variant.name == f"{URI}#min_added_records=1;poll_interval=5.0"
    (watcher,) = variant.watchers
    assert watcher.trigger.serialize()[1]["min_added_records"] == 1
    assert watcher.name == "icewright-snapshots-sales-orders-main"
    assert declaration_problem(variant) is None
    again = watched_iceberg_asset("sales.orders", poll_interval=5.0, min_added_records=1)
    assert (again.name, _hashes(again)) == (variant.name, _hashes(variant))
    dev = watched_iceberg_asset("sales.orders", branch="dev")
    assert dev.name == f'{URI}#branch="dev"'
    assert dev.watchers[0].name == "icewright-snapshots-sales-orders-dev"


def _trigger(**kwargs: Any) -> IcebergSnapshotEventTrigger:
    return IcebergSnapshotEventTrigger("sales.orders", **kwargs)


@pytest.mark.parametrize(
    ("asset", "message"),
    [
        (Asset(URI), "does not carry the table's watcher"),
        (
            Asset(URI, watchers=[AssetWatcher(name="w", trigger=_trigger(poll_interval=5))]),
            "does not carry the table's watcher",
        ),
        (
            Asset(name="orders", uri=URI, watchers=iceberg_asset("sales.orders").watchers),
            "'orders' (URI iceberg://icewright_default/sales/orders) is not a declaration",
        ),
        (
            Asset(
                name=f"{URI}#min_added_records=1",
                uri=URI,
                watchers=[AssetWatcher(name="w", trigger=_trigger(min_added_records=2))],
            ),
            "is not a declaration icewright makes",
        ),
    ],
    ids=["no watcher", "another watcher", "another name", "variant of other options"],
)
def test_other_declarations_are_named_with_the_fix(asset: Asset, message: str) -> None:
    problem = declaration_problem(asset)
    assert problem is not None and message in problem
    assert "iceberg_asset('sales.orders', iceberg_conn_id='icewright_default')" in problem
    assert "\n" not in problem


def test_iceberg_asset_keeps_its_name_and_watcher() -> None:
    with pytest.raises(ValidationError, match="iceberg_asset sets name, watchers itself"):
        iceberg_asset("sales.orders", name="x", watchers=[])
    assert iceberg_asset("sales.orders", group="lake").group == "lake"


def _dag(schedule: Any = None, outlets: list[Any] | None = None) -> DAG:
    with DAG("d", schedule=schedule, start_date=START) as dag:
        if outlets is not None:
            IcebergAppendOperator(
                task_id="load", table="sales.orders", source="sql:SELECT 1 AS id", outlets=outlets
            )
    return dag


def test_the_cluster_policy_refuses_a_hand_made_iceberg_asset() -> None:
    dag_policy(_dag(schedule=[iceberg_asset("sales.orders")]))
    dag_policy(_dag(schedule=watched_iceberg_asset("sales.orders", branch="dev")))
    dag_policy(_dag(outlets=[iceberg_asset("sales.orders")]))
    hand_made = Asset(URI)
    with pytest.raises(AirflowClusterPolicyViolation, match="DAG d: the asset iceberg://"):
        dag_policy(_dag(schedule=(iceberg_asset("sales.refunds") | hand_made)))
    assert [a.uri for a in iceberg_assets_of(_dag(schedule=[hand_made, Asset("s3://b/k")]))] == [
        URI
    ]


def test_the_policy_is_registered_with_airflow() -> None:
    """Airflow loads the ``airflow.policy`` entry points into its policy plugin manager
    (``settings.load_policy_plugins``); built the same way here, its hook refuses."""
    import pluggy
    from airflow import policies

    manager = pluggy.PluginManager("airflow.policy")
    manager.add_hookspecs(policies)
    manager.load_setuptools_entrypoints("airflow.policy")
    assert "icewright" in [i.plugin_name for i in manager.hook.dag_policy.get_hookimpls()]
    with pytest.raises(AirflowClusterPolicyViolation, match="does not carry the table's watcher"):
        manager.hook.dag_policy(dag=_dag(schedule=[Asset(URI)]))


@pytest.mark.parametrize(
    ("outlet", "message"),
    [
        (
            watched_iceberg_asset("sales.orders", min_added_records=1),
            "is a watched variant of sales.orders, which its own watcher announces",
        ),
        (Asset(URI), "outlet the asset iceberg://icewright_default/sales/orders does not carry"),
    ],
    ids=["variant", "hand-made"],
)
def test_an_operator_refuses_an_outlet_no_watcher_agrees_with(outlet: Asset, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _dag(outlets=[outlet])
