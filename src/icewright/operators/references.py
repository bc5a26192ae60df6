"""Operators on snapshot references: publish (write-audit-publish), rollback, set the
current snapshot, create and drop tags and branches.

Each calls one action of :mod:`icewright.actions.references`: one metadata commit, no
Spark job. They take no commit key: each is safe to repeat by itself (a retried publish
finds ``main`` already published and does nothing). Bad input (a ref or snapshot that
does not exist, a rollback to a non-ancestor, a fast-forward over commits of ``main``)
fails the task without retries. :class:`IcebergPublishOperator` announces, to its
``iceberg://`` outlets, the snapshots that ``main`` gained; the others announce nothing
(no new rows reached ``main``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.announce import commit_announcement
from icewright.operators.base import IcebergBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = [
    "IcebergCreateBranchOperator",
    "IcebergCreateTagOperator",
    "IcebergDropBranchOperator",
    "IcebergDropTagOperator",
    "IcebergPublishOperator",
    "IcebergRollbackOperator",
    "IcebergSetCurrentSnapshotOperator",
]


class _ReferenceOperator(IcebergBaseOperator):
    """What the reference operators share: no commit key, no new snapshot to announce."""

    commits_snapshot = False

    def extras_of(self, payload: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """No snapshot reached ``main`` with new rows: nothing to announce."""
        return {
            "payload": commit_announcement(str(payload["table"]), [], None, catalog=self.catalog)
        }


class IcebergPublishOperator(_ReferenceOperator):
    """Publish to ``main`` (:func:`icewright.actions.publish`): the head of ``branch``
    (a fast-forward; fails when ``main`` moved on meanwhile), the snapshot
    ``cherry_pick``, or the snapshot a write staged with ``wap_id``. Give exactly one.

    :param table: ``"ns.table"`` (templated).
    :param branch: a branch to fast-forward ``main`` to (templated).
    :param cherry_pick: a snapshot id (templated).
    :param wap_id: a write-audit-publish id (templated), e.g. ``"{{ run_id }}"``.

    Its ``iceberg://`` outlets are announced with the snapshots ``main`` gained, so a
    downstream DAG starts once per publish and reads exactly those snapshots.
    """

    template_fields: Sequence[str] = ("table", "branch", "cherry_pick", "wap_id")

    def __init__(
        self,
        *,
        table: str,
        branch: str | None = None,
        cherry_pick: int | str | None = None,
        wap_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.branch = branch
        self.cherry_pick = cherry_pick
        self.wap_id = wap_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.publish`."""
        from icewright.actions import publish

        return publish(
            self.table,
            catalog=self.catalog,
            branch=self.branch or None,
            cherry_pick=self.cherry_pick or None,
            wap_id=self.wap_id or None,
        )

    def extras_of(self, payload: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """The snapshots ``main`` gained: its ancestors after the previous head."""
        from icewright.actions._common import load
        from icewright.commit.refs import ancestor_ids

        gained: list[int] = []
        if payload.get("committed"):
            metadata = load(str(payload["table"]), self.catalog).metadata
            previous = payload.get("previous_snapshot_id")
            for sid in ancestor_ids(metadata, payload.get("snapshot_id")):
                if sid == previous:
                    break
                gained.append(sid)
        table = str(payload["table"])
        return {"payload": commit_announcement(table, gained, None, catalog=self.catalog)}


class IcebergRollbackOperator(_ReferenceOperator):
    """Roll ``main`` back (:func:`icewright.actions.rollback`) to ``to_snapshot`` (an
    ancestor of its head) or to its newest snapshot before ``to_timestamp``.

    :param table: ``"ns.table"`` (templated).
    :param to_snapshot: a snapshot id (templated).
    :param to_timestamp: an instant: ISO text, epoch ms, an aware datetime, an age such as
        ``"2h"`` (templated).
    """

    template_fields: Sequence[str] = ("table", "to_snapshot", "to_timestamp")

    def __init__(
        self,
        *,
        table: str,
        to_snapshot: int | str | None = None,
        to_timestamp: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.to_snapshot = to_snapshot
        self.to_timestamp = to_timestamp

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.rollback`."""
        from icewright.actions import rollback

        return rollback(
            self.table,
            catalog=self.catalog,
            to_snapshot=self.to_snapshot or None,
            to_timestamp=self.to_timestamp or None,
        )


class IcebergSetCurrentSnapshotOperator(_ReferenceOperator):
    """Make any snapshot ``main``'s current one (:func:`icewright.actions.set_current`).

    :param table: ``"ns.table"`` (templated).
    :param snapshot_id: the snapshot (templated).
    """

    template_fields: Sequence[str] = ("table", "snapshot_id")

    def __init__(self, *, table: str, snapshot_id: int | str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.snapshot_id = snapshot_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.set_current`."""
        from icewright.actions import set_current

        return set_current(self.table, self.snapshot_id, catalog=self.catalog)


class _CreateRef(_ReferenceOperator):
    kind = "tag"
    template_fields: Sequence[str] = ("table", "name", "snapshot_id")

    def __init__(
        self,
        *,
        table: str,
        name: str,
        snapshot_id: int | str | None = None,
        retain: Any = None,
        replace: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.name = name
        self.snapshot_id = snapshot_id
        self.retain = retain
        self.replace = replace

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.tag` or :func:`icewright.actions.branch`."""
        from icewright.actions import branch, tag

        target = self.snapshot_id or None
        if self.kind == "tag":
            return tag(
                self.table, self.name, snapshot_id=target, retain=self.retain, catalog=self.catalog
            )
        return branch(
            self.table,
            self.name,
            snapshot_id=target,
            retain=self.retain,
            replace=self.replace,
            catalog=self.catalog,
        )


class IcebergCreateTagOperator(_CreateRef):
    """Tag a snapshot (:func:`icewright.actions.tag`); repeating it on the same snapshot
    does nothing.

    :param table: ``"ns.table"`` (templated).
    :param name: the tag (templated), e.g. ``"load-{{ ds }}"``.
    :param snapshot_id: default: ``main``'s current snapshot (templated).
    :param retain: how long expiry keeps the tag (``"30d"``, ms, a timedelta).
    """

    kind = "tag"


class IcebergCreateBranchOperator(_CreateRef):
    """Create a branch (:func:`icewright.actions.branch`); writes with ``branch=name``
    then go to it. Parameters as :class:`IcebergCreateTagOperator`'s, and ``replace``:
    move a branch of that name that exists already (a write-audit-publish run starting
    again from ``main``; the tag operator refuses it)."""

    kind = "branch"


class _DropRef(_ReferenceOperator):
    kind = "tag"
    template_fields: Sequence[str] = ("table", "name")

    def __init__(self, *, table: str, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.name = name

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.untag` or :func:`icewright.actions.drop_branch`."""
        from icewright.actions import drop_branch, untag

        drop = untag if self.kind == "tag" else drop_branch
        return drop(self.table, self.name, catalog=self.catalog)


class IcebergDropTagOperator(_DropRef):
    """Remove a tag (:func:`icewright.actions.untag`).

    :param table: ``"ns.table"`` (templated).
    :param name: the tag (templated).
    """

    kind = "tag"


class IcebergDropBranchOperator(_DropRef):
    """Remove a branch, never ``main`` (:func:`icewright.actions.drop_branch`).

    :param table: ``"ns.table"`` (templated).
    :param name: the branch (templated).
    """

    kind = "branch"
