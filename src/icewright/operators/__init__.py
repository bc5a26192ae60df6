"""The Airflow operators of icewright: one per verb, each calling one action.

=====================================  ==========================================
operator                               action
=====================================  ==========================================
:class:`IcebergCreateTableOperator`    :func:`icewright.actions.create`
:class:`IcebergAppendOperator`         :func:`icewright.actions.append`
:class:`IcebergReplaceOperator`        :func:`icewright.actions.replace`
:class:`IcebergRewriteDataFilesOperator`  :func:`icewright.actions.rewrite`
:class:`IcebergExpireSnapshotsOperator`   :func:`icewright.actions.expire`
:class:`IcebergRemoveOrphanFilesOperator` :func:`icewright.actions.remove_orphan_files`
:class:`IcebergPublishViewOperator`    :func:`icewright.actions.publish_view`
=====================================  ==========================================

What they share (connection, Spark settings, commit key, XCom, asset-event extras,
failure on bad input) is described in :mod:`icewright.operators.base`.
"""

from __future__ import annotations

from icewright.operators.base import IcebergBaseOperator, commit_key_for
from icewright.operators.maintenance import (
    IcebergExpireSnapshotsOperator,
    IcebergRemoveOrphanFilesOperator,
    IcebergRewriteDataFilesOperator,
)
from icewright.operators.tables import (
    IcebergAppendOperator,
    IcebergCreateTableOperator,
    IcebergReplaceOperator,
)
from icewright.operators.views import IcebergPublishViewOperator

__all__ = [
    "IcebergAppendOperator",
    "IcebergBaseOperator",
    "IcebergCreateTableOperator",
    "IcebergExpireSnapshotsOperator",
    "IcebergPublishViewOperator",
    "IcebergRemoveOrphanFilesOperator",
    "IcebergReplaceOperator",
    "IcebergRewriteDataFilesOperator",
    "commit_key_for",
]
