"""Scan planning: which files a scan of a table reads (spec: "Scan Planning").

>>> # from icewright.scan import TableScan, plan_files
>>> # tasks = plan_files(table, filter="region = 'eu' and ts >= '2026-01-01T00:00:00+00:00'")
>>> # tasks = TableScan.of(table).use_ref("audit").select("id", "region").plan_files()

* :class:`TableScan` / :func:`plan_files` -- plan a scan: manifest pruning by partition
  summaries, entry pruning by partition and column metrics, delete file association and
  residual filters; time travel by snapshot id, ref or timestamp;
* :func:`plan_snapshot` -- the planning itself, for a snapshot chosen by the caller;
* :class:`FileScanTask` -- one data file with its delete files and residual;
* :class:`ScanPlan` / :class:`ScanMetrics` -- the tasks and what planning read and skipped;
* :class:`DeleteFileIndex` -- the spec's delete scope rules, indexed;
* :func:`resolve_scan_target`, :func:`snapshot_id_as_of_time`,
  :func:`snapshot_as_of_time`, :func:`schema_for_snapshot` -- time travel.
"""

from __future__ import annotations

from icewright.scan.delete_index import (
    DELETE_FILE_PATH_FIELD_ID,
    DeleteFileIndex,
    file_scoped_deletes,
    is_deletion_vector,
    partition_key,
    referenced_data_file,
)
from icewright.scan.planner import DEFAULT_MAX_WORKERS, plan_snapshot
from icewright.scan.table_scan import Source, TableScan, plan_files, select_columns
from icewright.scan.tasks import FileScanTask, ScanMetrics, ScanPlan
from icewright.scan.time_travel import (
    ScanTarget,
    resolve_scan_target,
    schema_for_snapshot,
    snapshot_as_of_time,
    snapshot_id_as_of_time,
    to_timestamp_ms,
)

__all__ = [
    "DEFAULT_MAX_WORKERS",
    "DELETE_FILE_PATH_FIELD_ID",
    "DeleteFileIndex",
    "FileScanTask",
    "ScanMetrics",
    "ScanPlan",
    "ScanTarget",
    "Source",
    "TableScan",
    "file_scoped_deletes",
    "is_deletion_vector",
    "partition_key",
    "plan_files",
    "plan_snapshot",
    "referenced_data_file",
    "resolve_scan_target",
    "schema_for_snapshot",
    "select_columns",
    "snapshot_as_of_time",
    "snapshot_id_as_of_time",
    "to_timestamp_ms",
]
