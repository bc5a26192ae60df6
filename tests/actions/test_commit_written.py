"""What happens to a job's data files when its commit fails (issue 12, item 1).

A definite failure deletes them; an unknown outcome or a file of the table missing for an
unknown reason keeps them (and the job's stored result), so that a retry reuses them.
The orchestrators fail at once only on :data:`icewright.errors.BAD_INPUT`, which a
missing file is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from icewright.actions.append import commit_written
from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.table_ops import create_table
from icewright.commit.update import CommitResult
from icewright.errors import (
    BAD_INPUT,
    CommitStateUnknown,
    IcewrightError,
    NoSuchFile,
    NoSuchTable,
    ValidationError,
)
from icewright.io.local import local_path
from icewright.manifest.data_file import DataFile
from tests.commit.support import SCHEMA


def _job_files(catalog: SqlCatalog) -> tuple[Table, list[DataFile]]:
    table = create_table(catalog, "db.t", SCHEMA)
    rows = [{"id": 1, "ts": None, "region": "eu"}]
    return table, write_data_files(table.io, table.metadata, rows_to_arrow(SCHEMA, rows))


@pytest.mark.parametrize(
    ("error", "kept"),
    [
        (NoSuchFile("s3://b/t/metadata/snap-1.avro does not exist"), True),
        (CommitStateUnknown("the catalog did not answer"), True),
        (ValidationError("conflicting files were added"), False),
    ],
    ids=["missing-file", "unknown", "validation"],
)
def test_job_files_after_a_failed_commit(
    catalog: SqlCatalog, error: IcewrightError, kept: bool
) -> None:
    table, files = _job_files(catalog)
    forgotten: list[bool] = []

    def commit() -> CommitResult:
        raise error

    with pytest.raises(type(error)):
        commit_written(table.io, files, commit, forget=lambda: forgotten.append(True))
    assert all(Path(local_path(f.file_path)).exists() for f in files) is kept
    assert forgotten == ([] if kept else [True])


def test_a_missing_file_is_not_bad_input() -> None:
    assert not isinstance(NoSuchFile("x"), BAD_INPUT)
    assert isinstance(NoSuchTable("x"), BAD_INPUT)
    assert isinstance(ValidationError("x"), BAD_INPUT)
