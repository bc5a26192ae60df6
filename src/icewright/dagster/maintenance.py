"""Table maintenance the way a platform team runs it: one job over a list of tables,
on a schedule.

:func:`iceberg_maintenance_job` builds a job with one op per table
(:func:`iceberg_maintenance_op`, which a job of one's own may use too); each op compacts
small files (:func:`icewright.actions.rewrite`), rewrites the manifests when the plan
asks (:func:`icewright.actions.rewrite_manifests`), expires old snapshots
(:func:`icewright.actions.expire`) and removes orphan files
(:func:`icewright.actions.remove_orphan_files`), in that order, and reports each step's
figures as the op's output metadata. The tables run independently: one table's
failure fails its op only. :func:`iceberg_maintenance_schedule` runs the job on a cron.

The rewrites' commit keys are the table and the run's root run id, so re-executing a
failed maintenance run does not compact or rewrite manifests twice.

:func:`iceberg_maintain_job` is the policy-driven form: each table's op (or one op over
a namespace or the catalog) runs :func:`icewright.actions.maintain`, which decides from
the table's own ``icewright.maintain.*`` properties what is due; its output metadata
are the decisions, what each step changed and the health figures before and after.
:func:`iceberg_maintenance_schedule` schedules either kind of job. The fixed plans of
:func:`iceberg_maintenance_job` stay for teams that want the same steps every night.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import (
    check_expire,
    check_orphans,
    check_rewrite,
    check_rewrite_manifests,
)
from icewright.dagster.assets import DEFAULT_RESOURCE_KEY
from icewright.dagster.execution import commit_key_for, run_step, with_resource
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.dagster.resource import IcebergResource

__all__ = [
    "MaintenancePlan",
    "iceberg_maintain_job",
    "iceberg_maintenance_job",
    "iceberg_maintenance_op",
    "iceberg_maintenance_schedule",
]


@dataclass(frozen=True, slots=True)
class MaintenancePlan:
    """What maintenance does to a table. ``rewrite_min_input_files`` None skips the
    rewrite; ``rewrite_deletes`` True then compacts the position delete files and
    removes dangling delete files (:func:`icewright.actions.rewrite_position_delete_files`);
    ``rewrite_manifests`` True rewrites the manifests after it (of at most
    ``manifest_target_size_bytes``, default the table's
    ``commit.manifest.target-size-bytes``); ``expire_older_than`` / ``expire_retain_last``
    None use the table's ``history.expire.*`` properties; ``remove_orphans`` False skips
    orphan removal (``orphans_older_than`` defaults to three days ago)."""

    rewrite_min_input_files: int | None = 5
    rewrite_target_file_size: int | None = None
    rewrite_deletes: bool = False
    rewrite_manifests: bool = False
    manifest_target_size_bytes: int | None = None
    expire: bool = True
    expire_older_than: str | int | None = None
    expire_retain_last: int | None = None
    remove_orphans: bool = True
    orphans_older_than: str | int | None = None

    def __post_init__(self) -> None:
        if self.rewrite_min_input_files is not None:
            check_rewrite(self.rewrite_min_input_files, self.rewrite_target_file_size)
        check_rewrite_manifests(None, self.manifest_target_size_bytes)
        check_expire(self.expire_older_than, self.expire_retain_last)
        check_orphans(self.orphans_older_than)


def _op_name(table: str) -> str:
    return "maintain_" + re.sub(r"\W", "_", table)


def iceberg_maintenance_op(
    table: str,
    *,
    plan: MaintenancePlan | None = None,
    name: str | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
) -> dg.OpDefinition:
    """The op that maintains ``table`` by ``plan`` (compaction, manifest rewrite, expiry,
    orphan removal, each when the plan asks), for a job of one's own; its output and
    metadata say what each step did. One verb alone is a plan with the others off::

        expire = iceberg_maintenance_op(
            "sales.orders",
            plan=MaintenancePlan(rewrite_min_input_files=None, remove_orphans=False),
            name="expire_orders",
        )

        @dg.job
        def nightly() -> None:
            expire()
    """
    plan = plan or MaintenancePlan()

    def maintain(
        context: dg.OpExecutionContext, resource: IcebergResource
    ) -> dg.Output[dict[str, Any]]:
        from icewright.actions import expire, remove_orphan_files, rewrite, rewrite_manifests
        from icewright.actions.results import to_jsonable

        catalog = resource.get_catalog()
        runner = resource.get_runner(log=context.log.info)
        done: dict[str, Any] = {"table": table}
        meta: dict[str, Any] = {"dagster/table_name": table}
        if plan.rewrite_min_input_files is not None:
            run = context.run
            key = commit_key_for(
                dg.AssetKey(["maintenance", table]), (), run.root_run_id or run.run_id
            )
            result = run_step(
                context,
                runner,
                lambda: rewrite(
                    table,
                    catalog=catalog,
                    min_input_files=plan.rewrite_min_input_files or 5,
                    target_file_size=plan.rewrite_target_file_size,
                    commit_key=key,
                    runner=runner,
                ),
            )
            done["rewrite"] = to_jsonable(result)
            meta["rewrite/groups_rewritten"] = result.groups_rewritten
            meta["rewrite/files_removed"] = result.files_removed
            meta["rewrite/files_added"] = result.files_added
        if plan.rewrite_deletes:
            run = context.run
            key = commit_key_for(
                dg.AssetKey(["maintenance", table, "deletes"]), (), run.root_run_id or run.run_id
            )
            deletes = run_step(
                context,
                runner,
                lambda: rewrite(
                    table, catalog=catalog, commit_key=key, runner=runner, deletes_only=True
                ),
            )
            done["rewrite_deletes"] = to_jsonable(deletes)
            meta["rewrite_deletes/groups_rewritten"] = deletes.groups_rewritten
            meta["rewrite_deletes/delete_files_removed"] = _count(
                deletes.summary, "removed-delete-files"
            )
            meta["rewrite_deletes/delete_files_added"] = _count(
                deletes.summary, "added-delete-files"
            )
        if plan.rewrite_manifests:
            run = context.run
            key = commit_key_for(
                dg.AssetKey(["maintenance", table, "manifests"]), (), run.root_run_id or run.run_id
            )
            manifests = run_step(
                context,
                runner,
                lambda: rewrite_manifests(
                    table,
                    catalog=catalog,
                    target_size_bytes=plan.manifest_target_size_bytes,
                    commit_key=key,
                    runner=runner,
                ),
            )
            done["rewrite_manifests"] = to_jsonable(manifests)
            meta["manifests/replaced"] = manifests.manifests_replaced
            meta["manifests/created"] = manifests.manifests_created
        if plan.expire:
            expired = run_step(
                context,
                runner,
                lambda: expire(
                    table,
                    catalog=catalog,
                    older_than=plan.expire_older_than,
                    retain_last=plan.expire_retain_last,
                    runner=runner,
                ),
            )
            done["expire"] = _flat(to_jsonable(expired))
            meta.update({f"expire/{k}": v for k, v in done["expire"].items()})
        if plan.remove_orphans:
            orphans = run_step(
                context,
                runner,
                lambda: remove_orphan_files(
                    table, catalog=catalog, older_than=plan.orphans_older_than, runner=runner
                ),
            )
            done["remove_orphans"] = _flat(to_jsonable(orphans))
            meta.update({f"orphans/{k}": v for k, v in done["remove_orphans"].items()})
        context.log.info(f"{table}: {meta}")
        return dg.Output(done, metadata=meta)

    return dg.op(
        name=name or _op_name(table),
        description=f"Maintenance of {table}: {_steps(plan)}.",
        tags={"icewright/table": table},
    )(
        with_resource(
            maintain, resource_key=resource_key, context=dg.OpExecutionContext, returns=dg.Output
        )
    )


def _steps(plan: MaintenancePlan) -> str:
    steps = [
        ("compaction", plan.rewrite_min_input_files is not None),
        ("delete file rewrite", plan.rewrite_deletes),
        ("manifest rewrite", plan.rewrite_manifests),
        ("snapshot expiry", plan.expire),
        ("orphan removal", plan.remove_orphans),
    ]
    return ", ".join(step for step, wanted in steps if wanted) or "nothing (every step off)"


def _flat(payload: Any) -> dict[str, Any]:
    """The scalar fields of a result, and the length of its list fields."""
    out: dict[str, Any] = {}
    if not isinstance(payload, Mapping):
        return out
    for key, value in payload.items():
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, list):
            out[f"{key}_count"] = len(value)
    return out


def iceberg_maintenance_job(
    tables: Sequence[str] | Mapping[str, MaintenancePlan],
    *,
    name: str = "iceberg_maintenance",
    plan: MaintenancePlan | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    description: str | None = None,
) -> dg.JobDefinition:
    """A job maintaining ``tables`` (names with the same ``plan``, or names mapped to
    their own plans); see the module docstring."""
    plans = (
        dict(tables)
        if isinstance(tables, Mapping)
        else {str(t): plan or MaintenancePlan() for t in tables}
    )
    if not plans:
        raise ValidationError("iceberg_maintenance_job needs at least one table")
    ops = [iceberg_maintenance_op(t, plan=p, resource_key=resource_key) for t, p in plans.items()]

    @dg.job(
        name=name,
        description=description or f"Maintenance of {', '.join(plans)}.",
        tags={"icewright/kind": "maintenance"},
    )
    def maintenance() -> None:
        for op in ops:
            op()

    return maintenance


def _maintain_policy_op(
    table: str | None, namespace: str | None, dry_run: bool, resource_key: str
) -> dg.OpDefinition:
    target = table or namespace or "catalog"

    def maintain(
        context: dg.OpExecutionContext, resource: IcebergResource
    ) -> dg.Output[dict[str, Any]]:
        from icewright.actions.maintain import maintain as maintain_one
        from icewright.actions.maintain import maintain_tables

        catalog = resource.get_catalog()
        runner = resource.get_runner(log=context.log.info)
        run = context.run
        key = commit_key_for(dg.AssetKey(["maintain", target]), (), run.root_run_id or run.run_id)

        def act() -> tuple[Any, ...]:
            if table is not None:
                return (
                    maintain_one(
                        table, catalog=catalog, dry_run=dry_run, commit_key=key, runner=runner
                    ),
                )
            return maintain_tables(
                namespace=namespace, catalog=catalog, dry_run=dry_run, commit_key=key, runner=runner
            )

        results = run_step(context, runner, act)
        documents = [r.to_document() for r in results]
        meta: dict[str, Any] = {}
        for doc in documents:
            prefix = "" if table is not None else f"{doc['table']}/"
            meta[f"{prefix}failed"] = doc["failed"]
            for step in doc["steps"]:
                meta[f"{prefix}{step['name']}"] = ("ran: " if step["ran"] else "") + step["reason"]
                for k, v in step["changes"].items():
                    if isinstance(v, int | float) and not isinstance(v, bool) and v is not None:
                        meta[f"{prefix}{step['name']}/{k}"] = v
            for side in ("before", "after"):
                for k, v in doc[side].items():
                    if v is not None:
                        meta[f"{prefix}{side}/{k}"] = v
        context.log.info(f"{target}: {[(d['table'], d['failed']) for d in documents]}")
        failed = [d for d in documents if d["failed"]]
        if failed:
            first = failed[0]
            raise dg.Failure(
                f"maintenance failed for {', '.join(d['table'] for d in failed)}: "
                f"{first['error'] or next(s['error'] for s in first['steps'] if s['error'])}",
                metadata=meta,
            )
        return dg.Output({"tables": documents}, metadata=meta)

    return dg.op(
        name="maintain_" + re.sub(r"\W", "_", target),
        description=f"Do the maintenance that {target}'s policy says is due.",
        tags={"icewright/table": target},
    )(
        with_resource(
            maintain, resource_key=resource_key, context=dg.OpExecutionContext, returns=dg.Output
        )
    )


def iceberg_maintain_job(
    tables: Sequence[str] | None = None,
    *,
    namespace: str | None = None,
    name: str = "iceberg_maintain",
    dry_run: bool = False,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    description: str | None = None,
) -> dg.JobDefinition:
    """A job running :func:`icewright.actions.maintain` on each of ``tables`` (one op
    each), or one op over every table of ``namespace``, or of the catalog when both are
    None; see the module docstring. Schedule it with :func:`iceberg_maintenance_schedule`::

        job = iceberg_maintain_job(["sales.orders", "sales.customers"])
        defs = dg.Definitions(jobs=[job], schedules=[iceberg_maintenance_schedule(job)])
    """
    if tables is not None and namespace is not None:
        raise ValidationError("iceberg_maintain_job takes tables or a namespace, not both")
    if tables is not None and not list(tables):
        raise ValidationError("iceberg_maintain_job needs at least one table")
    if tables is not None:
        ops = [_maintain_policy_op(str(t), None, dry_run, resource_key) for t in tables]
    else:
        ops = [_maintain_policy_op(None, namespace, dry_run, resource_key)]
    what = ", ".join(tables) if tables is not None else (namespace or "every table")

    @dg.job(
        name=name,
        description=description or f"Policy-driven maintenance of {what}.",
        tags={"icewright/kind": "maintain"},
    )
    def maintain_job() -> None:
        for op in ops:
            op()

    return maintain_job


def iceberg_maintenance_schedule(
    job: dg.JobDefinition,
    *,
    cron_schedule: str = "0 3 * * *",
    execution_timezone: str = "UTC",
    name: str | None = None,
    default_status: dg.DefaultScheduleStatus = dg.DefaultScheduleStatus.STOPPED,
) -> dg.ScheduleDefinition:
    """Run the maintenance ``job`` on ``cron_schedule`` (default: daily at 03:00 UTC)."""
    return dg.ScheduleDefinition(
        name=name or f"{job.name}_schedule",
        job=job,
        cron_schedule=cron_schedule,
        execution_timezone=execution_timezone,
        default_status=default_status,
    )


def _count(summary: Mapping[str, str], key: str) -> int:
    try:
        return int(summary.get(key, "0"))
    except ValueError:
        return 0
