"""The commit engine: every table operation, committed with the spec's conflict rules.

Each operation is a :class:`PendingUpdate` (spec: "Commit Conflict Resolution and
Retry"): its ``apply`` turns base metadata into new metadata and may run again on a
refreshed table; :func:`commit_updates` is the one retry loop that swaps the catalog
pointer, and every commit returns a :class:`CommitResult`. The everyday calls::

    from icewright.commit import append, overwrite, expire_snapshots

    append(table, data_files)                                    # merge append
    overwrite(table, row_filter="region = 'eu'", add_files=new)  # copy-on-write
    expire_snapshots(table, retain_last=10)

Data: :func:`fast_append`, :func:`append` (:class:`MergeAppend`), :func:`overwrite`
(:class:`OverwriteFiles`), :func:`replace_partitions` (:class:`ReplacePartitions`),
:func:`delete_files` (:class:`DeleteFiles`), :func:`rewrite_files` (:class:`RewriteFiles`),
:class:`RowDelta`. Maintenance: :func:`expire_snapshots` (:class:`ExpireSnapshots`),
:func:`remove_orphan_files`, :func:`rewrite_manifests` (:class:`RewriteManifests`).
Metadata: :func:`update_schema` (:class:`UpdateSchema`), :class:`UpdatePartitionSpec`,
:class:`ReplaceSortOrder`, :class:`UpdateProperties`, :class:`ManageSnapshots` (branches,
tags, rollback, cherry-pick, write-audit-publish), :class:`Transaction` (several updates
in one commit), :func:`commit_tables` (several tables in one catalog transaction).
Tables: :func:`create_table`, :func:`create_or_replace_table`, :func:`register_table`,
:func:`drop_table`. Views: :func:`create_view`, :func:`replace_view`, :func:`drop_view`.

Importing this package is cheap: each name is imported from its module on first use
(PEP 562), so ``import icewright.commit`` loads no catalog driver, Avro or Arrow code.

Two names are also module names: ``icewright.commit.append`` is the :func:`append`
function (the merging append; the module ``icewright/commit/append.py`` holds
:func:`fast_append`) and ``icewright.commit.overwrite`` is the :func:`overwrite`
function. The package attribute is always the function; import from those modules with
``from icewright.commit.append import FastAppend``, which always reaches the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.lazy import lazy_exports

if TYPE_CHECKING:
    from icewright.commit.append import FastAppend, fast_append
    from icewright.commit.delete import DeleteFiles, delete_files
    from icewright.commit.expire import ExpireResult, ExpireSnapshots, expire_snapshots
    from icewright.commit.merge_append import MergeAppend, append
    from icewright.commit.multi_table import commit_tables
    from icewright.commit.orphans import OrphanResult, remove_orphan_files, remove_store_leftovers
    from icewright.commit.overwrite import (
        IsolationLevel,
        OverwriteFiles,
        ReplacePartitions,
        overwrite,
        replace_partitions,
    )
    from icewright.commit.properties import SetLocation, UpdateProperties, UpgradeFormatVersion
    from icewright.commit.refs import ManageSnapshots, StagedAppend
    from icewright.commit.rewrite import RewriteFiles, rewrite_files
    from icewright.commit.rewrite_manifests import RewriteManifests, rewrite_manifests
    from icewright.commit.row_delta import RowDelta
    from icewright.commit.schema_update import UpdateSchema, update_schema
    from icewright.commit.spec_update import ReplaceSortOrder, UpdatePartitionSpec
    from icewright.commit.table_ops import (
        create_or_replace_table,
        create_table,
        drop_table,
        register_table,
    )
    from icewright.commit.transaction import Transaction
    from icewright.commit.update import (
        CommitResult,
        PendingUpdate,
        PreparedCommit,
        commit_updates,
        prepare_commit,
    )
    from icewright.commit.view_ops import create_view, drop_view, replace_view

# Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    # the commit loop
    "CommitResult": "update",
    "PendingUpdate": "update",
    "commit_updates": "update",
    "PreparedCommit": "update",
    "prepare_commit": "update",
    "commit_tables": "multi_table",
    # data operations
    "FastAppend": "append",
    "fast_append": "append",
    "MergeAppend": "merge_append",
    "append": "merge_append",
    "OverwriteFiles": "overwrite",
    "ReplacePartitions": "overwrite",
    "IsolationLevel": "overwrite",
    "overwrite": "overwrite",
    "replace_partitions": "overwrite",
    "DeleteFiles": "delete",
    "delete_files": "delete",
    "RewriteFiles": "rewrite",
    "rewrite_files": "rewrite",
    "RowDelta": "row_delta",
    # maintenance
    "ExpireSnapshots": "expire",
    "ExpireResult": "expire",
    "expire_snapshots": "expire",
    "OrphanResult": "orphans",
    "remove_orphan_files": "orphans",
    "remove_store_leftovers": "orphans",
    "RewriteManifests": "rewrite_manifests",
    "rewrite_manifests": "rewrite_manifests",
    # metadata changes
    "UpdateSchema": "schema_update",
    "update_schema": "schema_update",
    "UpdatePartitionSpec": "spec_update",
    "ReplaceSortOrder": "spec_update",
    "UpdateProperties": "properties",
    "SetLocation": "properties",
    "UpgradeFormatVersion": "properties",
    "ManageSnapshots": "refs",
    "StagedAppend": "refs",
    "Transaction": "transaction",
    # tables and views
    "create_table": "table_ops",
    "create_or_replace_table": "table_ops",
    "register_table": "table_ops",
    "drop_table": "table_ops",
    "create_view": "view_ops",
    "replace_view": "view_ops",
    "drop_view": "view_ops",
}

__all__ = [
    "CommitResult",
    "DeleteFiles",
    "ExpireResult",
    "ExpireSnapshots",
    "FastAppend",
    "IsolationLevel",
    "ManageSnapshots",
    "MergeAppend",
    "OrphanResult",
    "OverwriteFiles",
    "PendingUpdate",
    "PreparedCommit",
    "ReplacePartitions",
    "ReplaceSortOrder",
    "RewriteFiles",
    "RewriteManifests",
    "RowDelta",
    "SetLocation",
    "StagedAppend",
    "Transaction",
    "UpdatePartitionSpec",
    "UpdateProperties",
    "UpdateSchema",
    "UpgradeFormatVersion",
    "append",
    "commit_tables",
    "commit_updates",
    "create_or_replace_table",
    "create_table",
    "create_view",
    "delete_files",
    "drop_table",
    "drop_view",
    "expire_snapshots",
    "fast_append",
    "overwrite",
    "prepare_commit",
    "register_table",
    "remove_orphan_files",
    "remove_store_leftovers",
    "replace_partitions",
    "replace_view",
    "rewrite_files",
    "rewrite_manifests",
    "update_schema",
]

lazy_exports(__name__, _EXPORTS)
