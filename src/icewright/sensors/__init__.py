"""Airflow sensors for Iceberg tables.

:class:`IcebergSnapshotSensor` waits until a table (or a branch) has new snapshots; its
orchestrator-neutral core is :mod:`icewright.actions.watch`. Importing this package does
not import Airflow: the sensor is imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from icewright.sensors.snapshot import IcebergSnapshotSensor

__all__ = ["IcebergSnapshotSensor"]


def __getattr__(name: str) -> Any:
    """Import the sensor from its module on first use."""
    if name == "IcebergSnapshotSensor":
        value = importlib.import_module(f"{__name__}.snapshot").IcebergSnapshotSensor
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
