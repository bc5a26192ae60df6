"""Commit keys that outlive snapshot retention.

A commit key (summary property ``icewright.commit-key``) makes a repeated commit a
no-op while its snapshot is in the branch's history. Expiring that snapshot would
forget the key, and a late retry would commit the same data again. So every keyed
commit also records its key in the table property ``icewright.commit-keys``, in the
same metadata file as the snapshot (so the record is exactly as atomic as the
commit). Every Iceberg engine keeps unknown table properties, so the record survives
expire, rewrite and commits made by other writers.

The record is bounded: an entry is dropped once it is older than
``icewright.commit-keys.max-age-ms`` (default 30 days) and, beyond
``icewright.commit-keys.max-count`` entries (default 2,000), the oldest go first.
After that a key is forgotten and the same key commits again. An entry is a
96-bit digest of the key, the snapshot id and the commit time::

    <digest base64url, 16 chars>:<snapshot id base 36>:<timestamp ms base 36> ...

Malformed entries (a hand-edited property) are ignored, never an error: the record
must not be able to stop a table from committing.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from icewright.commit import summary as keys
from icewright.spec.snapshots import Operation, Snapshot
from icewright.spec.table_metadata import TableMetadata

log = logging.getLogger(__name__)

COMMIT_KEYS = "icewright.commit-keys"
MAX_AGE_MS = "icewright.commit-keys.max-age-ms"
MAX_COUNT = "icewright.commit-keys.max-count"
DEFAULT_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000
DEFAULT_MAX_COUNT = 2000

__all__ = [
    "COMMIT_KEYS",
    "DEFAULT_MAX_AGE_MS",
    "DEFAULT_MAX_COUNT",
    "MAX_AGE_MS",
    "MAX_COUNT",
    "RememberedCommit",
    "find_commit_key",
    "find_staged_commit_key",
    "remember",
    "remembered",
]


@dataclass(frozen=True)
class RememberedCommit:
    """A keyed commit whose snapshot has been expired: only its id and time are known.

    It stands where a :class:`~icewright.spec.snapshots.Snapshot` is reported for a
    repeated commit key (same attribute names; what is no longer known is None).
    """

    snapshot_id: int
    timestamp_ms: int
    sequence_number: int | None = None
    operation: Operation | None = None
    summary: Mapping[str, str] | None = None


def digest(commit_key: str) -> str:
    """The 96-bit digest a key is recorded under (16 base64url characters)."""
    raw = hashlib.sha256(commit_key.encode("utf-8")).digest()[:12]
    return base64.urlsafe_b64encode(raw).decode("ascii")


def _int_property(properties: Mapping[str, str], name: str, default: int) -> int:
    value = properties.get(name)
    if value is None:
        return default
    try:
        parsed = int(value)
    except ValueError:
        parsed = -1
    if parsed <= 0:
        log.warning(
            "table property %s=%r is not a positive integer: using %d", name, value, default
        )
        return default
    return parsed


def _entries(value: str | None) -> dict[str, tuple[int, int]]:
    """Digest -> (snapshot id, timestamp) of a recorded property; malformed parts skipped."""
    found: dict[str, tuple[int, int]] = {}
    for entry in (value or "").split():
        parts = entry.split(":")
        if len(parts) != 3:
            continue
        try:
            found[parts[0]] = (int(parts[1], 36), int(parts[2], 36))
        except ValueError:
            continue
    return found


def _encode(entries: Mapping[str, tuple[int, int]]) -> str:
    return " ".join(
        f"{d}:{_base36(snapshot_id)}:{_base36(ts)}" for d, (snapshot_id, ts) in entries.items()
    )


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    sign, n = ("-", -n) if n < 0 else ("", n)
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return sign + "".join(reversed(out))


def remember(
    properties: Mapping[str, str], commit_key: str, snapshot_id: int, timestamp_ms: int
) -> dict[str, str]:
    """``properties`` with ``commit_key`` recorded and entries past the bounds dropped."""
    entries = _entries(properties.get(COMMIT_KEYS))
    key = digest(commit_key)
    entries.pop(key, None)  # re-inserted last: the newest among equal timestamps
    entries[key] = (snapshot_id, timestamp_ms)
    oldest = timestamp_ms - _int_property(properties, MAX_AGE_MS, DEFAULT_MAX_AGE_MS)
    kept = sorted(((d, e) for d, e in entries.items() if e[1] >= oldest), key=lambda x: x[1][1])
    kept = kept[-_int_property(properties, MAX_COUNT, DEFAULT_MAX_COUNT) :]
    new = dict(properties)
    new[COMMIT_KEYS] = _encode(dict(kept))
    return new


def remembered(metadata: TableMetadata, commit_key: str) -> RememberedCommit | None:
    """The record of ``commit_key`` if its snapshot is no longer in ``metadata``.

    A recorded snapshot that is still in the metadata but not in the branch's history
    (rolled back, or on another branch) does not count: the key is not on the branch,
    and committing again is what a rollback asks for.
    """
    entry = _entries(metadata.properties.get(COMMIT_KEYS)).get(digest(commit_key))
    if entry is None or metadata.snapshot_by_id(entry[0]) is not None:
        return None
    return RememberedCommit(snapshot_id=entry[0], timestamp_ms=entry[1])


def find_commit_key(
    metadata: TableMetadata, branch: str, commit_key: str
) -> Snapshot | RememberedCommit | None:
    """The commit that already carries ``commit_key`` on ``branch``.

    The snapshot in the branch's history whose summary holds the key, else the record
    of a keyed commit whose snapshot was expired since (:func:`remembered`).
    """
    snapshot = metadata.branch_head(branch)
    seen: set[int] = set()
    while snapshot is not None and snapshot.snapshot_id not in seen:
        seen.add(snapshot.snapshot_id)
        if snapshot.summary is not None and snapshot.summary.get(keys.COMMIT_KEY) == commit_key:
            return snapshot
        parent = snapshot.parent_snapshot_id
        snapshot = metadata.snapshot_by_id(parent) if parent is not None else None
    return remembered(metadata, commit_key)


def find_staged_commit_key(
    metadata: TableMetadata, commit_key: str
) -> Snapshot | RememberedCommit | None:
    """The commit that already carries ``commit_key`` among all snapshots (a staged,
    write-audit-publish snapshot is on no branch), else the record of a keyed commit
    whose snapshot was expired since."""
    for snapshot in metadata.snapshots:
        if snapshot.summary is not None and snapshot.summary.get(keys.COMMIT_KEY) == commit_key:
            return snapshot
    return remembered(metadata, commit_key)
