"""When maintenance planning runs as a Spark job instead of in this process.

Expire's reachable-file walk, orphan listing and comparison, and rewrite planning read
every manifest of a table. Above the table property
``icewright.maintenance.distributed.min-data-files`` (default 1,000,000 data files in the current
snapshot, its summary's ``total-data-files``) they run on the Spark the runner starts
(:mod:`icewright.spark.maintenance`): executors read the manifests, Spark joins the path
sets, and only the answer comes back; the commit and the deletes stay here. An action's
``distributed=True``/``False`` forces either way; ``None`` decides by the property.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.errors import ValidationError
from icewright.spec.properties import read_property

if TYPE_CHECKING:
    from icewright.catalog import Table

__all__ = ["DISTRIBUTED_MIN_DATA_FILES", "use_distributed"]

DISTRIBUTED_MIN_DATA_FILES = "icewright.maintenance.distributed.min-data-files"
"""Table property: from this many data files in the current snapshot, maintenance
planning runs as a Spark job (declared with its default in
:data:`icewright.spec.properties.PROPERTIES`)."""


def use_distributed(table: Table, distributed: bool | None) -> bool:
    """Whether ``table``'s maintenance planning runs as a Spark job: ``distributed`` when
    it is True or False, else whether the current snapshot's ``total-data-files`` reaches
    :data:`DISTRIBUTED_MIN_DATA_FILES` (an invalid value another engine wrote reads as the
    default, with a warning, as every property icewright interprets)."""
    if distributed is not None:
        if not isinstance(distributed, bool):
            raise ValidationError(f"distributed must be True, False or None, got {distributed!r}")
        return distributed
    metadata = table.metadata
    threshold: int = read_property(metadata.properties, DISTRIBUTED_MIN_DATA_FILES)
    snapshot = metadata.current_snapshot()
    if snapshot is None or snapshot.summary is None:
        return False
    try:
        files = int(snapshot.summary.get("total-data-files", "0"))
    except ValueError:
        return False
    return files >= threshold
