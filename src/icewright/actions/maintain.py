"""The ``maintain`` verb: look at a table and do the maintenance that is due, in order.

::

    maintain("sales.orders")                        # one table
    maintain("sales.orders", dry_run=True).plan     # what it would do, and why
    maintain_tables(namespace="sales")              # every table of a namespace
    maintain_tables()                               # every table of the catalog

The steps and their rules are :mod:`icewright.actions.maintain_plan`'s: compaction
(:func:`icewright.actions.rewrite`), manifest rewriting
(:func:`icewright.actions.rewrite_manifests`), expiry by the table's retention
(:func:`icewright.actions.expire` with its defaults) and, at most once per interval,
orphan removal (:func:`icewright.actions.remove_orphan_files`, which also removes
icewright's dead markers and old job documents). A run decides each step on the table
as the steps before left it (a compaction changes the manifests); a dry run decides them
all on the table as it is and changes nothing.

Each step commits through the one retry loop like the verb it calls, so a writer
committing to the table meanwhile is not harmed: a lost race is retried, and a step
whose files another commit rewrote fails alone (its error is reported, the next steps
still run). After an unknown commit outcome the table's remaining steps are skipped.
When orphan removal ran, its time is recorded in the table property
``icewright.maintain.orphans-last-run-ms`` (a property update: no snapshot; it is in the
metadata maintain reads anyway, any engine sees it, and per-key last-writer-wins makes it
safe beside other writers).

Over many tables (:func:`maintain_tables`) each table is maintained on its own: one that
fails (bad input, a conflict) is reported and the others go on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icewright.actions._common import CatalogLike, TableLike, catalog_of, load, resolve_catalog
from icewright.actions.arguments import check_commit_key
from icewright.actions.health import health_figures, measure
from icewright.actions.maintain_plan import (
    COMPACTION,
    EXPIRE,
    MIN_INPUT_FILES,
    ORPHANS_LAST_RUN,
    REMOVE_ORPHANS,
    REWRITE_MANIFESTS,
    MaintainPlan,
    MaintainPolicy,
    MaintainStep,
    decide_expire,
    decide_manifests,
    decide_orphans,
    plan_maintenance,
)
from icewright.errors import CommitStateUnknown, IcewrightError, one_line

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Table
    from icewright.runners.base import Runner

__all__ = ["MaintainResult", "StepResult", "maintain", "maintain_tables"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    """What one step did: ``ran`` (False when it was not due, or skipped), ``changes``
    (counts of what it changed: files, bytes, manifests, snapshots), ``error`` (one line)
    when it failed, and ``seconds``."""

    name: str
    ran: bool
    reason: str
    changes: Mapping[str, Any] = field(default_factory=dict)
    changed: bool = False
    """Whether the step committed a snapshot or deleted files."""
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintainResult:
    """The maintenance of one table: the ``plan`` (the decisions and the figures they came
    from), each step's result in order, the figures ``before`` and (when a step changed
    something) ``after``. ``error`` is set when the table could not be planned at all
    (bad input, not found); ``failed`` when that or any step failed."""

    table: str
    dry_run: bool
    plan: MaintainPlan | None = None
    steps: tuple[StepResult, ...] = ()
    before: Mapping[str, Any] = field(default_factory=dict)
    after: Mapping[str, Any] = field(default_factory=dict)
    metadata_location: str | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Whether the table or one of its steps failed."""
        return self.error is not None or any(s.error for s in self.steps)

    @property
    def changed(self) -> bool:
        """Whether any step changed something."""
        return any(s.changed for s in self.steps)

    def to_document(self) -> dict[str, Any]:
        """The result as JSON-able data (the command's ``--json``, the operator's XCom,
        Dagster metadata): the steps with their decision, figures and changes."""
        from icewright.actions.results import to_jsonable

        decisions = {s.name: s for s in self.plan.steps} if self.plan else {}
        steps = []
        for step in self.steps:
            decision = decisions.get(step.name)
            steps.append(
                {
                    "name": step.name,
                    "due": bool(decision and decision.due),
                    "ran": step.ran,
                    "changed": step.changed,
                    "reason": step.reason,
                    "figures": to_jsonable(decision.figures if decision else {}),
                    "changes": to_jsonable(step.changes),
                    "error": step.error,
                    "seconds": round(step.seconds, 3),
                }
            )
        return {
            "table": self.table,
            "dry_run": self.dry_run,
            "failed": self.failed,
            "changed": self.changed,
            "error": self.error,
            "metadata_location": self.metadata_location,
            "planning_seconds": None if self.plan is None else round(self.plan.planning_seconds, 3),
            "seconds": round(self.seconds, 3),
            "steps": steps,
            "before": to_jsonable(self.before),
            "after": to_jsonable(self.after),
        }


def maintain(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    dry_run: bool = False,
    commit_key: str | None = None,
    runner: Runner | None = None,
    distributed: bool | None = None,
) -> MaintainResult:
    """Maintain ``table`` (see the module docstring); ``dry_run`` only plans.

    ``commit_key`` K makes the compaction and the manifest rewrite exactly-once (keys
    ``K:compaction`` and ``K:manifests``): a retried run finds them and commits nothing
    twice. ``distributed`` is passed to every step (None: by the table's size). Bad input
    (an invalid ``icewright.maintain.*`` or ``history.expire.*`` property, a missing
    table) raises :class:`~icewright.errors.ValidationError` or
    :class:`~icewright.errors.NotFound` before anything changes.
    """
    check_commit_key(commit_key)
    started = time.perf_counter()
    current = load(table, catalog)
    plan = plan_maintenance(current, runner=runner, distributed=distributed)
    if dry_run:
        steps = tuple(StepResult(name=s.name, ran=False, reason=s.reason) for s in plan.steps)
        return MaintainResult(
            table=plan.table,
            dry_run=True,
            plan=plan,
            steps=steps,
            before=plan.figures,
            metadata_location=current.metadata_location,
            seconds=time.perf_counter() - started,
        )
    run = _Run(current, plan, commit_key=commit_key, runner=runner, distributed=distributed)
    steps = run.all()
    after: Mapping[str, Any] = {}
    if any(s.changed for s in steps):
        after = health_figures(measure(run.table.refresh(), small_file_bytes=None))
    return MaintainResult(
        table=plan.table,
        dry_run=False,
        plan=plan,
        steps=steps,
        before=plan.figures,
        after=after,
        metadata_location=run.table.refresh().metadata_location,
        seconds=time.perf_counter() - started,
    )


def maintain_tables(
    tables: Sequence[TableLike] | None = None,
    *,
    namespace: str | Sequence[str] | None = None,
    catalog: CatalogLike = None,
    dry_run: bool = False,
    commit_key: str | None = None,
    runner: Runner | None = None,
    distributed: bool | None = None,
    on_table: Callable[[MaintainResult], None] | None = None,
) -> tuple[MaintainResult, ...]:
    """:func:`maintain` every table of ``tables``, or of ``namespace`` (with its nested
    namespaces), or of the whole catalog when both are None; one result per table, in
    name order, each table on its own (one failing does not stop the others: its result
    has ``error``). A namespace that does not exist raises
    :class:`~icewright.errors.NoSuchNamespace` before any table is touched.
    ``on_table`` is called with each result as it is made (progress)."""
    check_commit_key(commit_key)
    cat = resolve_catalog(catalog)
    names: list[TableLike] = list(tables if tables is not None else _tables_under(cat, namespace))
    results: list[MaintainResult] = []
    for name in names:
        started = time.perf_counter()
        key = None if commit_key is None else f"{commit_key}:{name}"
        try:
            result = maintain(
                name,
                catalog=catalog_of(name, cat),
                dry_run=dry_run,
                commit_key=key,
                runner=runner,
                distributed=distributed,
            )
        except Exception as e:  # each table on its own: report it, go on with the next
            result = MaintainResult(
                table=str(getattr(name, "identifier", name)),
                dry_run=dry_run,
                error=_line(e),
                seconds=time.perf_counter() - started,
            )
        results.append(result)
        if on_table is not None:
            on_table(result)
    return tuple(results)


def _tables_under(catalog: Catalog, namespace: str | Sequence[str] | None) -> list[str]:
    from icewright.catalog.identifier import parse_namespace
    from icewright.errors import NoSuchNamespace

    if namespace is None:
        roots = catalog.list_namespaces()
    else:
        root = parse_namespace(namespace)
        if not catalog.namespace_exists(root):
            raise NoSuchNamespace(
                f"namespace {'.'.join(root)} does not exist in catalog {catalog.name}; name an "
                "existing namespace (nothing was changed)"
            )
        roots = [root]
    found: set[str] = set()
    pending = list(roots)
    seen: set[tuple[str, ...]] = set()
    while pending:
        ns = pending.pop()
        if ns in seen:
            continue
        seen.add(ns)
        found.update(str(t) for t in catalog.list_tables(ns))
        pending.extend(catalog.list_namespaces(ns))
    return sorted(found)


def _line(e: BaseException) -> str:
    """An icewright error's message on one line (its class name for anything else)."""
    text = " ".join(str(e).split())
    if isinstance(e, IcewrightError) and text:
        return text
    return one_line(e)


class _Run:
    """The steps of one table's maintenance, run in order."""

    def __init__(
        self,
        table: Table,
        plan: MaintainPlan,
        *,
        commit_key: str | None,
        runner: Runner | None,
        distributed: bool | None,
    ) -> None:
        self.table = table
        self.plan = plan
        self.key = commit_key
        self.runner = runner
        self.distributed = distributed
        self.stopped: str | None = None

    def all(self) -> tuple[StepResult, ...]:
        done = [self.step(self.plan.step(COMPACTION), self.compact)]
        manifests = self.plan.step(REWRITE_MANIFESTS)
        if done[0].changed:  # decide again on the manifests the compaction left
            fresh = self.table.refresh()
            health = measure(fresh, small_file_bytes=None)
            manifests = decide_manifests(health, MaintainPolicy.of(fresh.metadata))
        done.append(self.step(manifests, self.rewrite_manifests))
        changed = any(s.changed for s in done)
        done.append(self.step(self.redecide(EXPIRE, changed), self.expire))
        done.append(self.step(self.redecide(REMOVE_ORPHANS, changed), self.remove_orphans))
        return tuple(done)

    def redecide(self, name: str, changed: bool) -> MaintainStep:
        """The decision of ``name`` on the table as the steps before left it when they
        ``changed`` it (a compaction's snapshot may make an older one expirable now);
        cheap: no file is read."""
        planned = self.plan.step(name)
        if self.stopped is not None or not (planned.due or changed):
            return planned
        fresh = self.table = self.table.refresh()
        if name == EXPIRE:
            return decide_expire(fresh)
        return decide_orphans(fresh.metadata, MaintainPolicy.of(fresh.metadata))

    def step(self, decision: MaintainStep, act: Callable[[], dict[str, Any]]) -> StepResult:
        if self.stopped is not None:
            return StepResult(name=decision.name, ran=False, reason=self.stopped)
        if not decision.due:
            return StepResult(name=decision.name, ran=False, reason=decision.reason)
        started = time.perf_counter()
        try:
            changes = act()
        except CommitStateUnknown as e:
            self.stopped = f"skipped: the {decision.name} commit's outcome is unknown"
            return StepResult(
                name=decision.name,
                ran=True,
                reason=decision.reason,
                error=_line(e),
                seconds=time.perf_counter() - started,
            )
        except IcewrightError as e:
            return StepResult(
                name=decision.name,
                ran=True,
                reason=decision.reason,
                error=_line(e),
                seconds=time.perf_counter() - started,
            )
        self.table = self.table.refresh()
        changed = bool(changes.pop("changed", False))
        return StepResult(
            name=decision.name,
            ran=True,
            reason=decision.reason,
            changes=changes,
            changed=changed,
            seconds=time.perf_counter() - started,
        )

    def _key(self, suffix: str) -> str | None:
        return None if self.key is None else f"{self.key}:{suffix}"

    def compact(self) -> dict[str, Any]:
        from icewright.actions.rewrite import rewrite

        figures = self.plan.step(COMPACTION).figures
        result = rewrite(
            self.table,
            min_input_files=MIN_INPUT_FILES,
            delete_file_threshold=figures.get("delete_file_threshold"),
            commit_key=self._key("compaction"),
            runner=self.runner,
            distributed=self.distributed,
        )
        summary = result.summary if result.committed else {}
        return {
            "committed": int(result.committed),
            "groups_rewritten": result.groups_rewritten,
            "data_files_removed": result.files_removed,
            "data_files_added": result.files_added,
            "bytes_removed": _int(summary, "removed-files-size"),
            "bytes_added": _int(summary, "added-files-size"),
            "delete_files_removed": _int(summary, "removed-delete-files"),
            "snapshot_id": result.snapshot_id if result.committed else None,
            "changed": result.committed,
        }

    def rewrite_manifests(self) -> dict[str, Any]:
        from icewright.actions.maintenance import rewrite_manifests

        result = rewrite_manifests(
            self.table,
            commit_key=self._key("manifests"),
            runner=self.runner,
            distributed=self.distributed,
        )
        return {
            "committed": int(result.committed),
            "manifests_replaced": result.manifests_replaced,
            "manifests_created": result.manifests_created,
            "entries": result.entries_processed,
            "snapshot_id": result.snapshot_id if result.committed else None,
            "changed": result.committed,
        }

    def expire(self) -> dict[str, Any]:
        from icewright.actions.maintenance import expire

        result = expire(self.table, runner=self.runner, distributed=self.distributed)
        return {
            "snapshots_expired": len(result.expired_snapshot_ids),
            "refs_removed": len(result.removed_refs),
            "manifest_lists_deleted": result.deleted_manifest_lists,
            "manifests_deleted": result.deleted_manifests,
            "data_files_deleted": result.deleted_data_files,
            "delete_files_deleted": result.deleted_delete_files,
            "statistics_files_deleted": result.deleted_statistics_files,
            "delete_errors": len(result.errors),
            "changed": result.commit is not None,
        }

    def remove_orphans(self) -> dict[str, Any]:
        from icewright.actions.maintenance import remove_orphan_files
        from icewright.commit.expire import gc_enabled
        from icewright.commit.orphans import remove_store_leftovers
        from icewright.commit.properties import UpdateProperties

        now = int(time.time() * 1000)
        changes: dict[str, Any]
        if gc_enabled(self.table.metadata):
            found = remove_orphan_files(
                self.table, runner=self.runner, distributed=self.distributed
            )
            changes = {
                "orphan_files_deleted": found.deleted,
                "dead_markers_deleted": len(found.dead_markers),
                "job_documents_deleted": len(found.job_documents),
                "files_listed": found.listed,
                "delete_errors": len(found.failed),
            }
        else:
            own = remove_store_leftovers(self.table)
            changes = {
                "orphan_files_deleted": 0,
                "dead_markers_deleted": len(own.dead_markers),
                "job_documents_deleted": len(own.job_documents),
                "delete_errors": len(own.failed),
            }
        UpdateProperties(self.table).set(ORPHANS_LAST_RUN, str(now)).commit()
        changes["recorded_at_ms"] = now
        deleted = ("orphan_files_deleted", "dead_markers_deleted", "job_documents_deleted")
        changes["changed"] = any(changes[k] for k in deleted)
        return changes


def _int(summary: Mapping[str, str], key: str) -> int:
    try:
        return int(summary.get(key, "0"))
    except ValueError:
        return 0
