"""One orchestrator-neutral function per user verb: plan, run the Spark job, commit.

>>> # from icewright.actions import append, replace
>>> # append("sales.orders", "parquet:/landing/orders/2026-01-01/")
>>> # replace("sales.orders", "sql:SELECT * FROM staging", where="day = '2026-01-01'")

Every action takes a table name (or ``Table``), ``catalog=`` (a catalog, or what
:func:`icewright.catalog.load_catalog` accepts; default: the embedded one),
``commit_key=`` for exactly-once commits where it commits a snapshot, and ``runner=``
(where the Spark work runs; default :class:`LocalRunner`, the in-process session).
Each returns a frozen, typed result (:mod:`icewright.actions.results`).
Watching a table for new snapshots (:func:`wait_for_snapshot`, and any orchestrator's
sensor) goes through :mod:`icewright.actions.watch` (:class:`SnapshotWatch`,
:class:`SnapshotFilter`, :class:`Watermark`).

Importing this package is cheap: names are imported from their modules on first use.
The package attributes ``append``, ``create``, ``delete``, ``merge``, ``replace`` and
``rewrite`` are always the
functions; their modules are reached with ``from icewright.actions.append import ...``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.lazy import lazy_exports

if TYPE_CHECKING:
    from icewright.actions.announce import commit_announcement, snapshots_in
    from icewright.actions.append import append
    from icewright.actions.audit import count_rows
    from icewright.actions.create import create
    from icewright.actions.delete import delete
    from icewright.actions.ensure import EnsureResult, ensure_table
    from icewright.actions.health import TableHealth, health_figures, table_health
    from icewright.actions.maintain import MaintainResult, maintain, maintain_tables
    from icewright.actions.maintain_plan import MaintainPlan, plan_maintenance
    from icewright.actions.maintenance import expire, remove_orphan_files, rewrite_manifests
    from icewright.actions.merge import merge
    from icewright.actions.references import (
        branch,
        drop_branch,
        publish,
        rollback,
        set_current,
        tag,
        untag,
    )
    from icewright.actions.replace import replace
    from icewright.actions.results import (
        ActionResult,
        GroupFailure,
        ManifestRewriteResult,
        ReferenceResult,
        RewriteResult,
        RowChangeResult,
        ViewResult,
        WaitResult,
    )
    from icewright.actions.rewrite import rewrite
    from icewright.actions.rewrite_deletes import rewrite_position_delete_files
    from icewright.actions.views import publish_view
    from icewright.actions.wait import wait_for_snapshot
    from icewright.actions.watch import (
        DEFAULT_OPERATIONS,
        PollResult,
        SnapshotFilter,
        SnapshotWatch,
        Watermark,
        new_snapshots,
        snapshot_record,
    )
    from icewright.runners.base import Runner
    from icewright.runners.local import LocalRunner
    from icewright.runners.settings import SparkSubmitSettings
    from icewright.runners.submit import SparkSubmitRunner

_EXPORTS: dict[str, str] = {
    "append": "append",
    "count_rows": "audit",
    "commit_announcement": "announce",
    "snapshots_in": "announce",
    "create": "create",
    "ensure_table": "ensure",
    "EnsureResult": "ensure",
    "table_health": "health",
    "TableHealth": "health",
    "health_figures": "health",
    "maintain": "maintain",
    "maintain_tables": "maintain",
    "MaintainResult": "maintain",
    "MaintainPlan": "maintain_plan",
    "plan_maintenance": "maintain_plan",
    "expire": "maintenance",
    "remove_orphan_files": "maintenance",
    "rewrite_manifests": "maintenance",
    "replace": "replace",
    "merge": "merge",
    "delete": "delete",
    "rewrite": "rewrite",
    "rewrite_position_delete_files": "rewrite_deletes",
    "publish": "references",
    "rollback": "references",
    "set_current": "references",
    "tag": "references",
    "untag": "references",
    "branch": "references",
    "drop_branch": "references",
    "publish_view": "views",
    "wait_for_snapshot": "wait",
    "DEFAULT_OPERATIONS": "watch",
    "PollResult": "watch",
    "SnapshotFilter": "watch",
    "SnapshotWatch": "watch",
    "Watermark": "watch",
    "new_snapshots": "watch",
    "snapshot_record": "watch",
    "ActionResult": "results",
    "GroupFailure": "results",
    "ManifestRewriteResult": "results",
    "ReferenceResult": "results",
    "RewriteResult": "results",
    "RowChangeResult": "results",
    "ViewResult": "results",
    "WaitResult": "results",
    "LocalRunner": "icewright.runners.local",
    "Runner": "icewright.runners.base",
    "SparkSubmitRunner": "icewright.runners.submit",
    "SparkSubmitSettings": "icewright.runners.settings",
}

__all__ = [
    "DEFAULT_OPERATIONS",
    "ActionResult",
    "EnsureResult",
    "GroupFailure",
    "LocalRunner",
    "MaintainPlan",
    "MaintainResult",
    "ManifestRewriteResult",
    "PollResult",
    "ReferenceResult",
    "RewriteResult",
    "RowChangeResult",
    "Runner",
    "SnapshotFilter",
    "SnapshotWatch",
    "SparkSubmitRunner",
    "SparkSubmitSettings",
    "TableHealth",
    "ViewResult",
    "WaitResult",
    "Watermark",
    "append",
    "branch",
    "commit_announcement",
    "count_rows",
    "create",
    "delete",
    "drop_branch",
    "ensure_table",
    "expire",
    "health_figures",
    "maintain",
    "maintain_tables",
    "merge",
    "new_snapshots",
    "plan_maintenance",
    "publish",
    "publish_view",
    "remove_orphan_files",
    "replace",
    "rewrite",
    "rewrite_manifests",
    "rewrite_position_delete_files",
    "rollback",
    "set_current",
    "snapshot_record",
    "snapshots_in",
    "table_health",
    "tag",
    "untag",
    "wait_for_snapshot",
]

lazy_exports(__name__, _EXPORTS)
