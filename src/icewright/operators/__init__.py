"""The Airflow operators of icewright: one per verb, each calling one action.

=====================================  ==========================================
operator                               action
=====================================  ==========================================
:class:`IcebergCreateTableOperator`    :func:`icewright.actions.create`
:class:`IcebergAppendOperator`         :func:`icewright.actions.append`
:class:`IcebergReplaceOperator`        :func:`icewright.actions.replace`
:class:`IcebergMergeOperator`          :func:`icewright.actions.merge`
:class:`IcebergDeleteOperator`         :func:`icewright.actions.delete`
:class:`IcebergRewriteDataFilesOperator`  :func:`icewright.actions.rewrite`
:class:`IcebergRewriteManifestsOperator`  :func:`icewright.actions.rewrite_manifests`
:class:`IcebergExpireSnapshotsOperator`   :func:`icewright.actions.expire`
:class:`IcebergRemoveOrphanFilesOperator` :func:`icewright.actions.remove_orphan_files`
:class:`IcebergMaintainOperator`       :func:`icewright.actions.maintain`
:class:`IcebergPublishViewOperator`    :func:`icewright.actions.publish_view`
:class:`IcebergPublishOperator`        :func:`icewright.actions.publish`
:class:`IcebergRollbackOperator`       :func:`icewright.actions.rollback`
:class:`IcebergSetCurrentSnapshotOperator`  :func:`icewright.actions.set_current`
:class:`IcebergCreateTagOperator`      :func:`icewright.actions.tag`
:class:`IcebergDropTagOperator`        :func:`icewright.actions.untag`
:class:`IcebergCreateBranchOperator`   :func:`icewright.actions.branch`
:class:`IcebergDropBranchOperator`     :func:`icewright.actions.drop_branch`
=====================================  ==========================================

What they share (connection, Spark settings, commit key, XCom, asset-event extras,
failure on bad input) is described in :mod:`icewright.operators.base`.

This package is the one import place of a DAG author: besides the operators it
re-exports the sensor (:class:`IcebergSnapshotSensor`), the ``iceberg://`` assets
(:func:`iceberg_asset`, :func:`watched_iceberg_asset` for event-driven DAGs), the
snapshot triggers, :func:`triggering_snapshots` (the new snapshots named by the asset
events that started a run, from watchers and operators alike) and
:func:`triggering_source` (the ``iceberg:`` source of exactly their rows), and the runner types of
:mod:`icewright.actions` (:class:`SparkSubmitSettings`) for ``spark_settings``.
"""

from __future__ import annotations

from icewright.operators.base import (
    IcebergBaseOperator,
    commit_key_for,
    triggering_snapshots,
    triggering_source,
)
from icewright.operators.maintain import IcebergMaintainOperator
from icewright.operators.maintenance import (
    IcebergExpireSnapshotsOperator,
    IcebergRemoveOrphanFilesOperator,
    IcebergRewriteDataFilesOperator,
    IcebergRewriteManifestsOperator,
)
from icewright.operators.references import (
    IcebergCreateBranchOperator,
    IcebergCreateTagOperator,
    IcebergDropBranchOperator,
    IcebergDropTagOperator,
    IcebergPublishOperator,
    IcebergRollbackOperator,
    IcebergSetCurrentSnapshotOperator,
)
from icewright.operators.rows import IcebergDeleteOperator, IcebergMergeOperator
from icewright.operators.tables import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergReplaceOperator,
)
from icewright.operators.views import IcebergPublishViewOperator
from icewright.providers.assets import iceberg_asset, watched_iceberg_asset
from icewright.providers.triggers import IcebergSnapshotEventTrigger, IcebergSnapshotTrigger
from icewright.runners.settings import SparkSubmitSettings
from icewright.sensors.snapshot import IcebergSnapshotSensor

__all__ = [
    "IcebergAppendOperator",
    "IcebergBaseOperator",
    "IcebergCreateBranchOperator",
    "IcebergCreateTableOperator",
    "IcebergCreateTagOperator",
    "IcebergDeleteOperator",
    "IcebergDropBranchOperator",
    "IcebergDropTagOperator",
    "IcebergExpireSnapshotsOperator",
    "IcebergMaintainOperator",
    "IcebergMergeOperator",
    "IcebergPublishOperator",
    "IcebergPublishViewOperator",
    "IcebergRemoveOrphanFilesOperator",
    "IcebergReplaceOperator",
    "IcebergRewriteDataFilesOperator",
    "IcebergRewriteManifestsOperator",
    "IcebergRollbackOperator",
    "IcebergSetCurrentSnapshotOperator",
    "IcebergSnapshotEventTrigger",
    "IcebergSnapshotSensor",
    "IcebergSnapshotTrigger",
    "SparkSubmitSettings",
    "commit_key_for",
    "iceberg_asset",
    "triggering_snapshots",
    "triggering_source",
    "watched_iceberg_asset",
]
