"""Announcing new snapshots: one payload shape, and who announces a commit.

An orchestrator learns about new snapshots in two ways: the task that committed says so
(an Airflow operator's outlet event), or a watcher polling the catalog finds them (the
asset watcher's trigger, a sensor). Both speak the same payload,
:func:`announcement`::

    {"status": "success", "table": "sales.orders", "branch": "main",
     "snapshots": [snapshot_record(...), ...],   # oldest first
     "head": {"snapshot_id": ..., "sequence_number": ..., "timestamp_ms": ...},
     "metadata_location": "..."}

and :func:`snapshots_in` turns any number of such payloads (the events that started a
downstream run) into the list of new snapshots, each once, oldest first.

Exactly one announcement per commit: a task that will announce its commit itself first
*claims* it, under :func:`claim_key` of its commit key, in state the watcher can read (in
Airflow, the asset state store of the outlet asset). A watcher drops the snapshots whose
commit key is claimed (:func:`claimed_by`) and announces the rest: commits made outside
the orchestrator, and commits of tasks without that outlet. The claim is written before
the commit, so a watcher can never see the snapshot before its claim. Nothing here
imports an orchestrator.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from icewright.actions._common import load
from icewright.actions.watch import Watermark, snapshot_record
from icewright.commit.refs import ancestor_ids
from icewright.commit.summary import COMMIT_KEY
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.actions._common import CatalogLike

__all__ = [
    "CLAIM_PREFIX",
    "announcement",
    "claim",
    "claim_key",
    "claimed_by",
    "commit_announcement",
    "snapshots_in",
]

CLAIM_PREFIX = "icewright.announced."
"""State keys of claims: ``icewright.announced.<digest of the commit key>``."""


def claim_key(commit_key: str) -> str:
    """The state key under which the announcer of ``commit_key``'s snapshots claims them."""
    digest = hashlib.sha256(str(commit_key).encode("utf-8")).hexdigest()[:32]
    return CLAIM_PREFIX + digest


def claim(commit_key: str, by: str) -> dict[str, Any]:
    """The claim's value (what is claimed, by whom, when: for people reading the state)."""
    return {"commit_key": commit_key, "by": by, "at": datetime.now(UTC).isoformat()}


def claimed_by(summary: Mapping[str, str] | None) -> list[str]:
    """The claim keys that would claim a snapshot with ``summary``: its commit key's and,
    for a commit of a series (``<key>:<i>``, or ``<key>:<16 hex digits>`` of a rewrite's
    partial progress), the series'."""
    key = (summary or {}).get(COMMIT_KEY)
    if not key:
        return []
    keys = [claim_key(key)]
    base, sep, part = key.rpartition(":")
    if sep and base and _SERIES_PART.match(part):
        keys.append(claim_key(base))
    return keys


_SERIES_PART = re.compile(r"^(\d+|[0-9a-f]{16})$")


def announcement(
    table: str,
    snapshots: Iterable[Mapping[str, Any]],
    *,
    branch: str = "main",
    head: Watermark | None = None,
    metadata_location: str | None = None,
) -> dict[str, Any]:
    """The one payload shape of a "new snapshots" event (module docstring); ``snapshots``
    are :func:`~icewright.actions.watch.snapshot_record` dicts."""
    return {
        "status": "success",
        "table": table,
        "branch": branch,
        "snapshots": [dict(s) for s in snapshots],
        "head": None if head is None else head.to_json(),
        "metadata_location": metadata_location,
    }


def commit_announcement(
    table: str,
    snapshot_ids: Iterable[int | None],
    commit_key: str | None,
    *,
    catalog: CatalogLike = None,
    branch: str = "main",
) -> dict[str, Any]:
    """The announcement of what a task committed: the snapshots among ``snapshot_ids``
    that carry ``commit_key`` (or one of its series, ``<key>:<i>``), read from the table.

    A snapshot id the task only found (a no-op returns the table's current snapshot) is
    left out, so a no-op announces no snapshot; with no commit key every id counts. A
    snapshot that is not in ``branch``'s history (one staged for write-audit-publish) is
    left out too: readers of the branch cannot see its rows yet.
    """
    current = load(table, catalog)
    metadata = current.metadata
    head = metadata.snapshot_for_ref(branch)
    on_branch = set(ancestor_ids(metadata, None if head is None else head.snapshot_id))
    records = []
    for snapshot_id in dict.fromkeys(i for i in snapshot_ids if i is not None):
        snapshot = metadata.snapshot_by_id(int(snapshot_id))
        if snapshot is None or snapshot.snapshot_id not in on_branch:
            continue
        summary: Mapping[str, str] = snapshot.summary or {}
        key = summary.get(COMMIT_KEY)
        if (
            commit_key is not None
            and key != commit_key
            and not (key and key.startswith(f"{commit_key}:"))
        ):
            continue
        records.append(snapshot_record(snapshot))
    records.sort(key=_order)
    return announcement(
        str(current.identifier),
        records,
        branch=branch,
        head=None if head is None else Watermark.of(head),
        metadata_location=current.metadata_location,
    )


def range_source(table: str, start: int | None, end: int, *, changelog: bool = False) -> str:
    """The ``iceberg:`` source of what the snapshots after ``start`` (exclusive; None:
    from the first) up to ``end`` added (:class:`~icewright.spark.sources.TableSource`)."""
    head = "iceberg-changelog" if changelog else "iceberg"
    return f"{head}:{table}@{'' if start is None else start}..{end}"


def announced_source(
    payloads: Iterable[Mapping[str, Any] | None],
    *,
    table: str | None = None,
    changelog: bool = False,
) -> str | None:
    """The ``iceberg:`` source of exactly the rows the announced snapshots added: from the
    parent of the oldest to the newest (for ``table``, which may be left out when the
    payloads name one table). None when they name no snapshot of it.

    The range runs along the branch, so it also holds snapshots between the announced
    ones that were not announced (a compaction, which changes no rows); an overwrite or
    delete in it makes the read fail by name unless ``changelog``."""
    by_table: dict[str, list[Mapping[str, Any]]] = {}
    for given in payloads:
        if not isinstance(given, Mapping):
            continue
        inner = given.get("payload")
        payload = inner if isinstance(inner, Mapping) else given
        records = [r for r in payload.get("snapshots") or () if isinstance(r, Mapping)]
        if records and payload.get("table"):
            by_table.setdefault(str(payload["table"]), []).extend(records)
    if table is None and len(by_table) > 1:
        raise ValidationError(
            f"the events name several tables ({', '.join(sorted(by_table))}): say which one "
            "with table="
        )
    name = table if table is not None else next(iter(by_table), None)
    records = sorted(by_table.get(str(name), []), key=_order)
    if name is None or not records:
        return None
    start = records[0].get("parent_snapshot_id")
    end = int(records[-1]["snapshot_id"])
    return range_source(name, None if start is None else int(start), end, changelog=changelog)


def _order(record: Mapping[str, Any]) -> tuple[int, int, int]:
    return (
        int(record.get("sequence_number") or 0),
        int(record.get("timestamp_ms") or 0),
        int(record.get("snapshot_id") or 0),
    )


def snapshots_in(payloads: Iterable[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """The new snapshots named by ``payloads`` (announcements, as events carry them), each
    once, oldest first (by sequence number, then commit time).

    A payload may also be an event's whole extra holding the announcement under
    ``"payload"`` (how Airflow stores a watcher's event); anything else names nothing.
    """
    found: dict[int, dict[str, Any]] = {}
    for given in payloads:
        if not isinstance(given, Mapping):
            continue
        inner = given.get("payload")
        payload = inner if isinstance(inner, Mapping) else given
        for record in payload.get("snapshots") or ():
            if isinstance(record, Mapping) and record.get("snapshot_id") is not None:
                found.setdefault(int(record["snapshot_id"]), dict(record))
    return sorted(found.values(), key=_order)
