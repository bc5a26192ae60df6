"""The paths a snapshot's manifests hold live, read for reachability only.

Snapshot expiration and orphan removal need each manifest's live (ADDED or EXISTING)
paths and content kinds, not its column metrics; these helpers are shared by the
provider's walk (:mod:`icewright.commit.reachability`) and the Spark executors that do the
same walk for big tables (:mod:`icewright.spark.maintenance`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from icewright.manifest.data_file import FileContent, ManifestFile
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.snapshots import Snapshot

__all__ = [
    "expired_manifest_lists",
    "inline_manifests",
    "is_inline_placeholder",
    "live_paths",
]


def inline_manifests(snapshot: Snapshot) -> tuple[ManifestFile, ...]:
    """Placeholder records for the manifests an early v1 snapshot lists inline.

    They carry only the path (spec id and counts unknown, so they are treated as possibly
    holding files, and read without list-level inheritance).
    """
    return tuple(
        ManifestFile(
            manifest_path=p,
            manifest_length=0,
            partition_spec_id=0,
            added_snapshot_id=snapshot.snapshot_id,
            sequence_number=0,
            min_sequence_number=0,
        )
        for p in snapshot.manifests or ()
    )


def is_inline_placeholder(manifest: ManifestFile) -> bool:
    """Whether ``manifest`` is a record made by :func:`inline_manifests`."""
    return manifest.manifest_length == 0 and manifest.added_files_count is None


def live_paths(data: bytes, manifest: ManifestFile) -> list[tuple[str, FileContent]]:
    """The path and content kind of every live (ADDED or EXISTING) entry of the manifest
    ``data`` (whose manifest-list record is ``manifest``).

    DELETED entries are skipped, as Java's ``ManifestFiles.readPaths`` skips them: the
    file is live in an older manifest, which is where its reachability is decided.
    """
    # only paths are wanted: the column metrics (most of an entry) are not decoded
    if is_inline_placeholder(manifest):
        entries = read_manifest(data, path=manifest.manifest_path, metrics=())
    else:
        entries = read_manifest(data, manifest, metrics=())
    return [(e.data_file.file_path, e.data_file.content) for e in entries if e.is_live]


def expired_manifest_lists(
    expired: Sequence[Snapshot], retained: Sequence[Snapshot], unreadable: Collection[int]
) -> list[str]:
    """The manifest lists of ``expired`` that no ``retained`` snapshot shares, in order.

    An expired list that could not be read (its snapshot id in ``unreadable``) is kept:
    it is the only record of its manifests.
    """
    retained_lists = {s.manifest_list for s in retained if s.manifest_list}
    return list(
        dict.fromkeys(
            s.manifest_list
            for s in expired
            if s.manifest_list is not None
            and s.manifest_list not in retained_lists
            and s.snapshot_id not in unreadable
        )
    )
