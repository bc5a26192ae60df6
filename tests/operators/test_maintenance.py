"""The maintenance operators in this process: ``IcebergRewriteManifestsOperator`` and
``IcebergRewriteDataFilesOperator(deletes_only=True)`` run their action on the embedded
catalog and push the result; bad numbers are refused when the DAG is parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.catalog import Catalog
from icewright.commit.append import FastAppend
from icewright.commit.update import commit_updates
from icewright.errors import ValidationError
from icewright.manifest.data_file import DataFile, FileFormat
from icewright.operators import IcebergRewriteDataFilesOperator, IcebergRewriteManifestsOperator


def _appended(catalog: Catalog, appends: int) -> None:
    table = catalog.load_table("sales.orders")
    files = [
        DataFile(
            file_path=f"{table.location}/data/f{n}.parquet",
            file_format=FileFormat.PARQUET,
            partition=tuple(None for _ in table.metadata.spec().fields),
            record_count=10,
            file_size_in_bytes=100,
        )
        for n in range(appends)
    ]
    commit_updates(table, [FastAppend(table, [f]) for f in files])


def test_the_operator_rewrites_and_pushes_the_result(
    embedded_catalog: Catalog, embedded_home: Path
) -> None:
    _appended(embedded_catalog, 3)
    op = IcebergRewriteManifestsOperator(
        task_id="manifests", table="sales.orders", iceberg_conn_id=None, commit_key="nightly"
    )
    payload = op.execute({})
    assert payload["committed"] is True and payload["operation"] == "replace"
    assert (payload["manifests_replaced"], payload["manifests_created"]) == (3, 1)
    assert payload["entries_processed"] == 3
    assert payload["summary"]["icewright.commit-key"] == "nightly"
    # a retry with the same key: the snapshot found, nothing again
    again = IcebergRewriteManifestsOperator(
        task_id="manifests", table="sales.orders", iceberg_conn_id=None, commit_key="nightly"
    ).execute({})
    assert again["committed"] is False and again["snapshot_id"] == payload["snapshot_id"]


def test_deletes_only_removes_a_dangling_delete_file(
    embedded_catalog: Catalog, embedded_home: Path
) -> None:
    """Metadata only: a position delete file of a data file that is gone (no Spark job)."""
    from icewright.commit import RowDelta, delete_files
    from icewright.manifest.data_file import FileContent

    _appended(embedded_catalog, 2)
    table = embedded_catalog.load_table("sales.orders")
    victim = f"{table.location}/data/f0.parquet"
    deletes = DataFile(
        file_path=f"{table.location}/data/d0.parquet",
        file_format=FileFormat.PARQUET,
        content=FileContent.POSITION_DELETES,
        partition=tuple(None for _ in table.metadata.spec().fields),
        record_count=1,
        file_size_in_bytes=100,
        referenced_data_file=victim,
    )
    table = RowDelta(table).add_deletes(deletes).commit().table
    delete_files(table, paths=[victim])
    op = IcebergRewriteDataFilesOperator(
        task_id="deletes",
        table="sales.orders",
        iceberg_conn_id=None,
        commit_key="nightly",
        deletes_only=True,
    )
    payload = op.execute({})
    assert payload["committed"] is True and payload["operation"] == "replace"
    assert payload["summary"]["removed-position-delete-files"] == "1"
    assert payload["groups_rewritten"] == 0


def test_bad_numbers_are_refused_when_the_dag_is_parsed() -> None:
    for kwargs in ({"spec_id": "0"}, {"target_size_bytes": 0}, {"target_size_bytes": True}):
        with pytest.raises(ValidationError):
            IcebergRewriteManifestsOperator(task_id="m", table="ns.t", **kwargs)
