"""The verbs on snapshot references (spec: "Snapshot References"): publish a branch or a
staged snapshot to ``main``, roll ``main`` back, make any snapshot current, create and
drop tags and branches.

Each is one metadata commit through :class:`icewright.commit.ManageSnapshots`, whose
rules are re-checked on every retry (a fast-forward must still go forward, a rollback
target must still be an ancestor). Each is also safe to repeat, as a retried Airflow
task or Dagster step repeats it: when the table already is as asked (``main`` already at
the branch's head, the WAP id already published, the tag already on that snapshot) the
result says ``committed=False`` and nothing is written. Anything else that cannot be
done (a ref or snapshot that does not exist, a rollback to a non-ancestor, a
fast-forward that would drop commits of ``main``) is a :class:`ValidationError` with
nothing changed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from icewright.actions._common import CatalogLike, TableLike, load
from icewright.actions.instants import Instant, duration_ms, instant_ms
from icewright.actions.results import ReferenceResult
from icewright.commit.summary import PUBLISHED_WAP_ID, SOURCE_SNAPSHOT_ID, STAGED_WAP_ID
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.catalog.base import Table
    from icewright.commit.refs import ManageSnapshots
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "branch",
    "drop_branch",
    "publish",
    "rollback",
    "set_current",
    "tag",
    "untag",
]

MAIN = "main"

Change = Callable[["ManageSnapshots"], "ManageSnapshots"]


def _commit(table: Table, ref: str, change: Change) -> ReferenceResult:
    from icewright.commit.refs import ManageSnapshots

    before = table.metadata.refs.get(ref)
    done = change(ManageSnapshots(table)).commit()
    sid = done.snapshot_id
    return _result(
        done.table,
        ref,
        committed=done.committed,
        previous=None if before is None else before.snapshot_id,
        new_snapshot=sid is not None and table.metadata.snapshot_by_id(sid) is None,
    )


def _result(
    table: Table,
    ref: str,
    *,
    committed: bool,
    previous: int | None,
    new_snapshot: bool = False,
) -> ReferenceResult:
    m = table.metadata
    now = m.refs.get(ref)
    return ReferenceResult(
        table=str(table.identifier),
        metadata_location=table.metadata_location,
        committed=committed,
        ref=ref,
        snapshot_id=None if now is None else now.snapshot_id,
        previous_snapshot_id=previous,
        created_snapshot=new_snapshot,
        refs={name: r.snapshot_id for name, r in sorted(m.refs.items())},
    )


def _unchanged(table: Table, ref: str) -> ReferenceResult:
    current = table.metadata.refs.get(ref)
    previous = None if current is None else current.snapshot_id
    return _result(table, ref, committed=False, previous=previous)


def _snapshot_id(value: object, what: str) -> int:
    """A snapshot id given as an int or its text (templated operator arguments)."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be a snapshot id (an integer), got {value!r}")
    return value


def _require_snapshot(table: Table, snapshot_id: int) -> None:
    if table.metadata.snapshot_by_id(snapshot_id) is None:
        known = ", ".join(str(s.snapshot_id) for s in table.metadata.snapshots[-5:])
        raise ValidationError(
            f"{table.identifier} has no snapshot {snapshot_id} (it may have expired); its "
            f"newest snapshots are: {known or 'none'} (icewright snapshots TABLE lists them)"
        )


def _ancestors(metadata: TableMetadata, snapshot_id: int | None) -> list[int]:
    from icewright.commit.refs import ancestor_ids

    return ancestor_ids(metadata, snapshot_id)


def _exactly_one(**given: object) -> str:
    named = [k for k, v in given.items() if v is not None]
    if len(named) != 1:
        options = ", ".join(f"{k}=" for k in given)
        raise ValidationError(f"give exactly one of {options} (got {len(named)})")
    return named[0]


# --- publish ------------------------------------------------------------------------


def publish(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    branch: str | None = None,
    cherry_pick: int | str | None = None,
    wap_id: str | None = None,
) -> ReferenceResult:
    """Publish to ``main`` one of: the head of ``branch`` (a fast-forward: fails when
    ``main``'s head is not an ancestor of it, as Iceberg Java's ``fast_forward``), the
    snapshot ``cherry_pick`` (Java's ``cherrypick_snapshot``), or the snapshot staged
    with ``wap_id`` (Java's ``publish_changes``).

    Repeating a publish that landed does nothing (``committed`` False).
    """
    which = _exactly_one(branch=branch, cherry_pick=cherry_pick, wap_id=wap_id)
    current = load(table, catalog)
    m = current.metadata
    head = m.current_snapshot_id
    if which == "branch":
        name = _ref_name(branch, "branch")
        source = m.refs.get(name)
        if source is None or not source.is_branch:
            raise ValidationError(_missing_ref(current, name, "branch"))
        if head == source.snapshot_id:
            return _unchanged(current, MAIN)
        return _commit(current, MAIN, lambda ms: ms.fast_forward(MAIN, name))
    if which == "cherry_pick":
        sid = _snapshot_id(cherry_pick, "cherry_pick")
        _require_snapshot(current, sid)
        if _is_published(m, sid):
            return _unchanged(current, MAIN)
        return _commit(current, MAIN, lambda ms: ms.cherry_pick(sid))
    wap = _ref_name(wap_id, "WAP id")
    staged = [s for s in m.snapshots if _summary(s).get(STAGED_WAP_ID) == wap]
    if not staged:
        raise ValidationError(
            f"no snapshot of {current.identifier} was staged with wap.id {wap!r}: stage one "
            "with a write's wap_id= (--wap-id) first"
        )
    if any(_is_published(m, s.snapshot_id) for s in staged) or _wap_on_main(m, wap):
        return _unchanged(current, MAIN)
    return _commit(current, MAIN, lambda ms: ms.publish(wap))


def _summary(snapshot: Snapshot | None) -> Mapping[str, str]:
    return {} if snapshot is None or snapshot.summary is None else snapshot.summary


def _is_published(m: TableMetadata, snapshot_id: int) -> bool:
    """Whether ``main`` already holds ``snapshot_id`` or a cherry-pick of it."""
    for sid in _ancestors(m, m.current_snapshot_id):
        if sid == snapshot_id:
            return True
        if _summary(m.snapshot_by_id(sid)).get(SOURCE_SNAPSHOT_ID) == str(snapshot_id):
            return True
    return False


def _wap_on_main(m: TableMetadata, wap_id: str) -> bool:
    for sid in _ancestors(m, m.current_snapshot_id):
        if _summary(m.snapshot_by_id(sid)).get(PUBLISHED_WAP_ID) == wap_id:
            return True
    return False


# --- main's current snapshot --------------------------------------------------------


def rollback(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    to_snapshot: int | str | None = None,
    to_timestamp: Instant | None = None,
) -> ReferenceResult:
    """Roll ``main`` back to ``to_snapshot`` (an ancestor of its head) or to its newest
    ancestor committed before ``to_timestamp`` (an instant: epoch ms, ISO text, an aware
    ``datetime``, an age such as ``2h``), as Iceberg Java's ``rollback_to_snapshot`` and
    ``rollback_to_timestamp``. No snapshot is removed: roll forward with
    :func:`set_current`."""
    which = _exactly_one(to_snapshot=to_snapshot, to_timestamp=to_timestamp)
    current = load(table, catalog)
    m = current.metadata
    if which == "to_snapshot":
        sid = _snapshot_id(to_snapshot, "to_snapshot")
        _require_snapshot(current, sid)
        if sid == m.current_snapshot_id:
            return _unchanged(current, MAIN)
        if sid not in _ancestors(m, m.current_snapshot_id):
            raise ValidationError(
                f"cannot roll {current.identifier} back to snapshot {sid}: it is not an "
                "ancestor of main's current snapshot (set_current / icewright set-current "
                "jumps to any snapshot)"
            )
        return _commit(current, MAIN, lambda ms: ms.rollback_to(sid))
    ts = instant_ms(to_timestamp, "to_timestamp")
    assert ts is not None
    first = min((s.timestamp_ms for s in m.snapshots), default=None)
    if first is None or ts <= first:
        when = "has no snapshots" if first is None else f"has no snapshot before {_iso(first)}"
        raise ValidationError(
            f"cannot roll {current.identifier} back to {_iso(ts)}: the table {when}"
        )
    return _commit(current, MAIN, lambda ms: ms.rollback_to_time(ts))


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).isoformat(timespec="milliseconds")


def set_current(
    table: TableLike, snapshot_id: int | str, *, catalog: CatalogLike = None
) -> ReferenceResult:
    """Make ``snapshot_id`` (any snapshot of the table) ``main``'s current snapshot, as
    Iceberg Java's ``set_current_snapshot``."""
    sid = _snapshot_id(snapshot_id, "snapshot_id")
    current = load(table, catalog)
    _require_snapshot(current, sid)
    if sid == current.metadata.current_snapshot_id:
        return _unchanged(current, MAIN)
    return _commit(current, MAIN, lambda ms: ms.set_current_snapshot(sid))


# --- tags and branches --------------------------------------------------------------


def _ref_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(f"a {what} must be a non-empty name, got {name!r}")
    return name.strip()


def _missing_ref(table: Table, name: str, kind: str) -> str:
    refs = ", ".join(f"{n} ({r.type})" for n, r in sorted(table.metadata.refs.items()))
    return f"{table.identifier} has no {kind} named {name!r}; its references are: {refs or 'none'}"


def _target(table: Table, snapshot_id: int | str | None, name: str, kind: str) -> int | None:
    """The snapshot a new ref points at: ``snapshot_id``, else main's head; None for a
    branch of a table without snapshots (it starts at an empty snapshot, as Java's)."""
    if snapshot_id is None:
        head = table.metadata.current_snapshot_id
        if head is None and kind != "branch":
            raise ValidationError(
                f"cannot create {kind} {name!r} on {table.identifier}: the table has no "
                "snapshot yet"
            )
        return head
    sid = _snapshot_id(snapshot_id, "snapshot_id")
    _require_snapshot(table, sid)
    return sid


def _create(
    table: TableLike,
    name: str,
    kind: str,
    *,
    snapshot_id: int | str | None,
    retain: object,
    catalog: CatalogLike,
    replace: bool = False,
) -> ReferenceResult:
    name = _ref_name(name, kind)
    max_age = None if retain is None else duration_ms(retain, "retain")
    current = load(table, catalog)
    sid = _target(current, snapshot_id, name, kind)
    existing = current.metadata.refs.get(name)
    if existing is not None:
        if str(existing.type) == kind and existing.snapshot_id == sid:
            return _unchanged(current, name)
        if replace and str(existing.type) == kind == "branch":
            if sid is None:  # start again at an empty snapshot
                return _commit(
                    current,
                    name,
                    lambda ms: ms.remove_branch(name).create_branch(name, max_ref_age_ms=max_age),
                )
            target = sid
            return _commit(current, name, lambda ms: ms.replace_branch(name, target))
        raise ValidationError(
            f"{current.identifier} already has a {existing.type} named {name!r} (at snapshot "
            f"{existing.snapshot_id}); drop it first or choose another name"
        )
    if kind == "tag":
        return _commit(current, name, lambda ms: ms.create_tag(name, sid, max_ref_age_ms=max_age))
    return _commit(current, name, lambda ms: ms.create_branch(name, sid, max_ref_age_ms=max_age))


def tag(
    table: TableLike,
    name: str,
    *,
    snapshot_id: int | str | None = None,
    retain: int | str | dt.timedelta | None = None,
    catalog: CatalogLike = None,
) -> ReferenceResult:
    """Tag ``snapshot_id`` (default: ``main``'s current snapshot) as ``name``; ``retain``
    (a duration: ``30d``, milliseconds, a ``timedelta``) is how long expiry keeps the tag
    (its ``max-ref-age-ms``; default: forever)."""
    return _create(table, name, "tag", snapshot_id=snapshot_id, retain=retain, catalog=catalog)


def branch(
    table: TableLike,
    name: str,
    *,
    snapshot_id: int | str | None = None,
    retain: int | str | dt.timedelta | None = None,
    replace: bool = False,
    catalog: CatalogLike = None,
) -> ReferenceResult:
    """Create branch ``name`` at ``snapshot_id`` (default: ``main``'s current snapshot);
    ``retain`` as for :func:`tag`. Writes with ``branch=name`` then go to it. With
    ``replace`` an existing branch of that name is moved there instead (a
    write-audit-publish run that starts again from ``main``)."""
    return _create(
        table,
        name,
        "branch",
        snapshot_id=snapshot_id,
        retain=retain,
        catalog=catalog,
        replace=replace,
    )


def _drop(table: TableLike, name: str, kind: str, catalog: CatalogLike) -> ReferenceResult:
    name = _ref_name(name, kind)
    current = load(table, catalog)
    existing = current.metadata.refs.get(name)
    if existing is None or str(existing.type) != kind:
        raise ValidationError(_missing_ref(current, name, kind))
    if kind == "tag":
        return _commit(current, name, lambda ms: ms.remove_tag(name))
    return _commit(current, name, lambda ms: ms.remove_branch(name))


def untag(table: TableLike, name: str, *, catalog: CatalogLike = None) -> ReferenceResult:
    """Remove tag ``name`` (its snapshot stays until expired)."""
    return _drop(table, name, "tag", catalog)


def drop_branch(table: TableLike, name: str, *, catalog: CatalogLike = None) -> ReferenceResult:
    """Remove branch ``name`` (never ``main``; its snapshots stay until expired)."""
    if isinstance(name, str) and name.strip() == MAIN:
        raise ValidationError("the main branch cannot be dropped")
    return _drop(table, name, "branch", catalog)
