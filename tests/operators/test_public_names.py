"""A DAG author imports from one place: ``icewright.operators`` holds the operators, the
sensor, the assets, the triggers and the spark-submit settings, as the same objects as
their home modules."""

from __future__ import annotations

import icewright.operators as public
from icewright.providers import assets, triggers
from icewright.runners import settings
from icewright.sensors import snapshot


def test_dag_author_names_come_from_icewright_operators() -> None:
    assert public.IcebergSnapshotSensor is snapshot.IcebergSnapshotSensor
    assert public.iceberg_asset is assets.iceberg_asset
    assert public.watched_iceberg_asset is assets.watched_iceberg_asset
    assert public.IcebergSnapshotTrigger is triggers.IcebergSnapshotTrigger
    assert public.IcebergSnapshotEventTrigger is triggers.IcebergSnapshotEventTrigger
    assert public.SparkSubmitSettings is settings.SparkSubmitSettings
    assert set(public.__all__) <= set(dir(public))
