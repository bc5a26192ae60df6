"""The ``spark-submit`` job spec of a position delete rewrite (kind
``rewrite-position-deletes``; :mod:`icewright.runners.job` runs it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.runners.store import row_change_fingerprint
from icewright.spark import job_spec as js

if TYPE_CHECKING:
    from icewright.scan.tasks import FileScanTask
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["position_delete_job"]


def position_delete_job(
    metadata: TableMetadata,
    tasks: Sequence[FileScanTask],
    properties: Mapping[str, str] | None,
) -> tuple[dict[str, Any], str]:
    """The job spec of a position delete rewrite of ``tasks`` and its fingerprint."""
    types = js.partition_types(metadata)
    mark = row_change_fingerprint(
        metadata, "rewrite-position-deletes", None, tasks=tasks, properties=properties
    )
    job = {
        "kind": "rewrite-position-deletes",
        "tasks": [js.scan_task_to_json(t, types) for t in tasks],
        "partition-types": js.partition_types_to_json(types),
        "properties": dict(properties or {}),
    }
    return job, mark
