"""``IcebergMaintainOperator`` in this process on the embedded catalog: the XCom value
carries the decisions and the health figures ``icewright health`` prints; a retry with
the same key rewrites nothing twice; failures and bad arguments."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowFailException

from icewright.actions import health_figures, table_health
from icewright.catalog import Catalog
from icewright.errors import IcewrightError, ValidationError
from icewright.operators import IcebergMaintainOperator
from icewright.spec.documents import StringMap
from tests.actions.test_maintain_plan import NEVER_COMPACT, _appends, _table


def test_the_operator_maintains_and_pushes_the_figures(
    embedded_catalog: Catalog, embedded_home: Path
) -> None:
    _appends(_table(embedded_catalog, "lake.t", **NEVER_COMPACT), 12, days=2)
    expected = health_figures(
        table_health("lake.t", catalog=embedded_catalog, small_file_bytes=None)
    )
    dry = IcebergMaintainOperator(
        task_id="m", table="lake.t", iceberg_conn_id=None, dry_run=True, commit_key="d"
    )
    payload = dry.execute({})
    assert payload["dry_run"] and not payload["changed"]
    before = payload["before"]
    for key in ("data_files", "data_manifests", "manifests_per_partition", "small_file_share"):
        assert before[key] == expected[key], key
    step = next(s for s in payload["steps"] if s["name"] == "rewrite_manifests")
    assert step["due"] and step["figures"]["data_manifests"] == 12
    run = IcebergMaintainOperator(task_id="m", table="lake.t", iceberg_conn_id=None, commit_key="k")
    done = run.execute({})
    assert done["changed"] and done["after"]["data_manifests"] == 1
    manifests = next(s for s in done["steps"] if s["name"] == "rewrite_manifests")
    assert manifests["changes"]["manifests_replaced"] == 12
    snapshot = manifests["changes"]["snapshot_id"]
    summary = embedded_catalog.load_table("lake.t").metadata.snapshot_by_id(snapshot).summary
    assert summary["icewright.commit-key"] == "k:manifests"
    again = IcebergMaintainOperator(
        task_id="m", table="lake.t", iceberg_conn_id=None, commit_key="k"
    )
    assert not again.execute({})["changed"]


def test_a_failing_table_fails_the_task_after_the_others(
    embedded_catalog: Catalog, embedded_home: Path
) -> None:
    _appends(_table(embedded_catalog, "lake.a", **NEVER_COMPACT), 12)
    bad = _table(embedded_catalog, "lake.b", **NEVER_COMPACT)
    props = dict(bad.metadata.properties)
    props["icewright.maintain.enabled"] = "perhaps"
    # as another engine would write it (icewright refuses the value)
    embedded_catalog.commit_table(
        "lake.b",
        bad.metadata_location,
        dataclasses.replace(bad.metadata, properties=StringMap(props)),
    )
    op = IcebergMaintainOperator(
        task_id="m", namespace="lake", iceberg_conn_id=None, commit_key="k"
    )
    with pytest.raises(
        IcewrightError, match=r"lake\.b: table property icewright\.maintain\.enabled"
    ):
        op.execute({})
    assert len(embedded_catalog.load_table("lake.a").metadata.snapshots) == 13  # a was done
    single = IcebergMaintainOperator(
        task_id="m", table="lake.b", iceberg_conn_id=None, commit_key="k"
    )
    with pytest.raises(AirflowFailException, match=r"maintain\.enabled='perhaps' is invalid"):
        single.execute({})
    with pytest.raises(AirflowFailException, match="nowhere"):
        IcebergMaintainOperator(
            task_id="m", namespace="nowhere", iceberg_conn_id=None, commit_key="k"
        ).execute({})


def test_arguments_are_checked_when_the_dag_is_parsed() -> None:
    for kwargs in ({}, {"table": "a.b", "namespace": "a"}, {"namespace": "a", "all_tables": True}):
        with pytest.raises(ValidationError, match="exactly one"):
            IcebergMaintainOperator(task_id="m", **kwargs)
