"""Airflow sensors for Iceberg tables.

:class:`IcebergSnapshotSensor` waits until a table (or a branch) has new snapshots; its
orchestrator-neutral core is :mod:`icewright.actions.watch`. Importing this package does
not import Airflow: the sensor is imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.lazy import lazy_exports

if TYPE_CHECKING:
    from icewright.sensors.snapshot import IcebergSnapshotSensor

__all__ = ["IcebergSnapshotSensor"]

_EXPORTS = {"IcebergSnapshotSensor": "snapshot"}

lazy_exports(__name__, _EXPORTS)
