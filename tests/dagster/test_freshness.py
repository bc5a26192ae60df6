"""Freshness the way Dagster 1.13 does it: a ``FreshnessPolicy`` given to a factory is on
the asset's definition, and Dagster's freshness daemon evaluates it from the asset's
materializations on a real instance (its iteration run in-process, as the daemon runs it;
the states read back through the instance)."""

from __future__ import annotations

import asyncio
import datetime as dt
import warnings
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.freshness import FreshnessState
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import InProcessTestWorkspaceLoadTarget, freeze_time
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._daemon.freshness import FreshnessDaemon

from icewright.dagster import IcebergResource, iceberg_table_asset
from icewright.errors import ValidationError

DEFS = Path(__file__).with_name("freshness_defs.py")
PAGES = dg.AssetKey(["sales", "pages"])
CLICKS = dg.AssetKey(["sales", "clicks"])


@pytest.fixture
def workspace(
    lake: IcebergResource, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> Iterator[WorkspaceProcessContext]:
    """freshness_defs.py as a code location of ``instance``, over ``lake``."""
    monkeypatch.setenv(
        "ICEWRIGHT_TEST_LAKE", str(Path(lake.catalog_properties()["warehouse"]).parent)
    )
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(python_file=str(DEFS), attribute="defs")
    )
    with WorkspaceProcessContext(instance, InProcessTestWorkspaceLoadTarget(origin)) as ctx:
        yield ctx


def _states(instance: dg.DagsterInstance, ctx: WorkspaceProcessContext) -> dict[str, str]:
    """One iteration of the freshness daemon, then each asset's state on the instance."""
    asyncio.run(FreshnessDaemon()._evaluate_assets(workspace_process_context=ctx))
    records = instance.get_freshness_state_records([PAGES, CLICKS])
    return {k.to_user_string(): r.freshness_state.value for k, r in records.items()}


def test_the_policy_is_on_the_definition_and_dagster_evaluates_it(
    lake: IcebergResource, instance: dg.DagsterInstance, workspace: WorkspaceProcessContext
) -> None:
    from tests.dagster import freshness_defs

    repo = freshness_defs.defs.get_repository_def()
    pages = repo.asset_graph.get(PAGES).freshness_policy
    assert isinstance(pages, dg.FreshnessPolicy)
    assert pages.fail_window.to_timedelta() == dt.timedelta(hours=2)
    assert repo.asset_graph.get(CLICKS).freshness_policy is not None
    # the workspace the daemon reads has the same policies
    node = workspace.create_request_context().asset_graph.get(PAGES)
    assert node.freshness_policy == pages

    assert _states(instance, workspace) == {"sales/pages": "UNKNOWN", "sales/clicks": "UNKNOWN"}

    assert dg.materialize(
        [freshness_defs.pages], instance=instance, resources={"iceberg": lake}
    ).success
    assert _states(instance, workspace)["sales/pages"] == FreshnessState.PASS.value

    # Dagster's own clock, moved on: past the warn window, then past the fail window
    now = dt.datetime.now(dt.UTC)
    with freeze_time(now + dt.timedelta(minutes=90)):
        assert _states(instance, workspace)["sales/pages"] == FreshnessState.WARN.value
    with freeze_time(now + dt.timedelta(hours=3)):
        assert _states(instance, workspace)["sales/pages"] == FreshnessState.FAIL.value


def test_a_legacy_policy_is_refused_in_one_line() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        legacy = dg.LegacyFreshnessPolicy(maximum_lag_minutes=60)
    with pytest.raises(ValidationError, match=r"FreshnessPolicy\.time_window") as e:
        iceberg_table_asset("sales.pages", "page string", freshness_policy=legacy)
    assert "\n" not in str(e.value)
