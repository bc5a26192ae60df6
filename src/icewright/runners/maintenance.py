"""The maintenance jobs' answers as the commit engine takes them, and as JSON.

A runner's maintenance jobs (:mod:`icewright.spark.maintenance`) answer in plain JSON-able
objects, so that a ``spark-submit`` job can write them to its result document in the
staging location and the provider read them back; these helpers turn them into what the
commit engine and the rewrite action take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from icewright.commit.orphans import FoundOrphans, OrphanSearch
from icewright.commit.reachability import (
    UnreachableFiles,
    metadata_file_paths,
    statistics_paths,
)
from icewright.commit.rewrite_manifests import ManifestRewrite
from icewright.manifest.data_file import ManifestFile
from icewright.scan.tasks import FileScanTask
from icewright.spark import job_spec as js
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "RewriteGroup",
    "found_orphans",
    "groups_from_json",
    "groups_to_json",
    "manifest_groups_from_json",
    "manifest_rewrite",
    "manifest_rewrite_job",
    "orphan_references",
    "unreachable",
]

RewriteGroup = tuple[int, tuple[Any, ...], tuple[FileScanTask, ...]]
"""A compaction group: spec id, partition, the tasks of its data files."""


def unreachable(obj: Mapping[str, Any]) -> UnreachableFiles:
    """The :class:`UnreachableFiles` of a job's answer."""
    return UnreachableFiles(
        manifest_lists=tuple(obj.get("manifest_lists") or ()),
        manifests=tuple(obj.get("manifests") or ()),
        data_files=tuple(obj.get("data_files") or ()),
        delete_files=tuple(obj.get("delete_files") or ()),
        errors=tuple(obj.get("errors") or ()),
        data_files_skipped=obj.get("data_files_skipped"),
    )


def found_orphans(obj: Mapping[str, Any]) -> FoundOrphans:
    """The :class:`FoundOrphans` of a job's answer."""
    return FoundOrphans(
        orphans=tuple(obj.get("orphans") or ()),
        listed=int(obj.get("listed", 0)),
        referenced=int(obj.get("referenced", 0)),
        too_new=int(obj.get("too_new", 0)),
        conflicts=tuple(obj.get("conflicts") or ()),
    )


def orphan_references(search: OrphanSearch) -> list[str]:
    """The references an orphan search takes from the table metadata itself (metadata
    files, version hints, statistics): what executors cannot find in manifests."""
    metadata = search.metadata
    paths = metadata_file_paths(metadata, search.metadata_location) | statistics_paths(metadata)
    return sorted(paths)


def groups_to_json(groups: Sequence[RewriteGroup], metadata: TableMetadata) -> dict[str, Any]:
    """Compaction groups as JSON (the tasks carry their partitions)."""
    types = js.partition_types(metadata)
    return {
        "groups": [
            {"spec-id": spec_id, "tasks": [js.scan_task_to_json(t, types) for t in tasks]}
            for spec_id, _, tasks in groups
        ]
    }


def groups_from_json(obj: Mapping[str, Any], metadata: TableMetadata) -> list[RewriteGroup]:
    """The inverse of :func:`groups_to_json`."""
    types = js.partition_types(metadata)
    schema = metadata.schema()
    found: list[RewriteGroup] = []
    for group in obj.get("groups") or ():
        tasks = tuple(js.scan_task_from_json(t, types, schema) for t in group["tasks"])
        found.append((int(group["spec-id"]), tasks[0].partition, tasks))
    return found


def manifest_rewrite(
    obj: Mapping[str, Any], groups: Mapping[int, Sequence[ManifestFile]]
) -> ManifestRewrite:
    """The :class:`ManifestRewrite` of a manifest rewrite job's answer (``groups``: the
    manifests it was given)."""
    return ManifestRewrite(
        replaced=tuple(m for found in groups.values() for m in found),
        created=tuple(js.manifest_file_from_json(m) for m in obj.get("manifests") or ()),
        entries=int(obj.get("entries", 0)),
    )


def manifest_rewrite_job(
    metadata: TableMetadata,
    groups: Mapping[int, Sequence[ManifestFile]],
    *,
    snapshot_id: int,
    target_size_bytes: int,
    prefix: str,
) -> dict[str, Any]:
    """The job spec of a manifest rewrite (``spark-submit`` kind ``rewrite-manifests``)."""
    return {
        "kind": "rewrite-manifests",
        "metadata": metadata.to_dict(),
        "manifests": [js.manifest_file_to_json(m) for found in groups.values() for m in found],
        "snapshot-id": snapshot_id,
        "target-size-bytes": target_size_bytes,
        "prefix": prefix,
    }


def manifest_groups_from_json(spec: Mapping[str, Any]) -> dict[int, list[ManifestFile]]:
    """The manifests of a manifest rewrite job spec, by partition spec id."""
    groups: dict[int, list[ManifestFile]] = {}
    for obj in spec.get("manifests") or ():
        m = js.manifest_file_from_json(obj)
        groups.setdefault(m.partition_spec_id, []).append(m)
    return groups
