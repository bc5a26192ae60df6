"""Write-audit-publish in Dagster: checks that read a branch, and the asset that publishes it.

>>> # staged = iceberg_append_asset("sales.orders", SOURCE, branch="audit",
>>> #                                reset_branch=True, key="sales/orders_staged")
>>> # audit = iceberg_branch_checks("sales.orders", "audit", asset=staged, min_rows=1,
>>> #                               no_rows_where={"positive_amounts": "amount <= 0"})
>>> # orders = iceberg_publish_asset("sales.orders", branch="audit", deps=[staged])

:func:`iceberg_refs_job` is the rest of the reference verbs as a job launched with run
config (roll back a bad load from the UI, tag a snapshot, ...).

The write goes to a branch (readers of ``main`` see nothing of it); the checks count rows
of the branch (:func:`icewright.actions.count_rows`, Spark SQL's meaning of each
predicate) and are blocking, so a failed audit stops the run before the publish; the
publish fast-forwards ``main`` to the branch (:func:`icewright.actions.publish`) and then
drops it. A failed audit leaves ``main`` as it was and the branch as it is, for
inspection; the next run's write (``reset_branch``) starts it again from ``main``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import check_branch
from icewright.dagster.assets import (
    DEFAULT_RESOURCE_KEY,
    AssetStep,
    asset_key_of,
    make_asset,
    table_asset_key,
)
from icewright.dagster.execution import with_resource
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.dagster.resource import IcebergResource

__all__ = ["ReferenceChange", "iceberg_branch_checks", "iceberg_publish_asset", "iceberg_refs_job"]


def iceberg_publish_asset(
    table: str,
    *,
    branch: str,
    drop_branch: bool = True,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """The asset of ``table``'s ``main`` (default key: the table name's parts), materialized
    by publishing ``branch``: a fast-forward of ``main`` to the branch's head, which fails
    when ``main`` moved on meanwhile (nothing is changed then), followed by dropping the
    branch (unless ``drop_branch`` is False). Safe to re-execute: a branch already
    published (or already dropped after its publish) changes nothing. Give the writing
    asset in ``deps`` so the publish runs after it and after its blocking checks."""
    check_branch(branch)
    if branch == "main":
        raise ValidationError("iceberg_publish_asset publishes a branch other than main")

    def publish_branch(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import drop_branch as drop
        from icewright.actions import publish

        step = AssetStep(context, resource)

        def act() -> Any:
            current = step.catalog.load_table(table)
            if branch not in current.metadata.refs:
                context.log.info(f"{table}: branch {branch} is gone: published before")
                return None
            published = publish(current, branch=branch)
            if drop_branch:
                drop(table, branch, catalog=step.catalog)
            return published

        result = step.run(act)
        head = step.catalog.load_table(table).metadata.current_snapshot()
        meta: dict[str, Any] = {"dagster/table_name": table, "icewright/branch": branch}
        meta["icewright/published"] = bool(result is not None and result.committed)
        if head is not None:
            meta["icewright/snapshot_id"] = dg.MetadataValue.text(str(head.snapshot_id))
        context.log.info(f"{table}: main at {None if head is None else head.snapshot_id}")
        return dg.MaterializeResult(
            metadata=meta,
            data_version=None if head is None else dg.DataVersion(str(head.snapshot_id)),
        )

    return make_asset(
        key=asset_key_of(key, table_asset_key(table)),
        fn=publish_branch,
        resource_key=resource_key,
        default_description=f"The Iceberg table {table}: branch {branch}, published once audited.",
        **asset_options,
    )


def iceberg_branch_checks(
    table: str,
    branch: str,
    *,
    asset: dg.AssetsDefinition | dg.AssetKey,
    min_rows: int | None = None,
    no_rows_where: Mapping[str, str] | None = None,
    blocking: bool = True,
    resource_key: str = DEFAULT_RESOURCE_KEY,
) -> list[dg.AssetChecksDefinition]:
    """Audit checks of ``asset`` (the asset that writes ``branch``) that read the branch:
    ``branch_row_count`` (at least ``min_rows`` rows) and, per name in
    ``no_rows_where``, a check that no row of the branch matches that Spark SQL predicate
    (e.g. ``{"positive_amounts": "amount IS NULL OR amount <= 0"}``). ERROR severity and
    ``blocking`` by default: a failed audit stops the run before the publish."""
    from icewright.expressions.sql import sql_filter

    check_branch(branch)
    predicates = dict(no_rows_where or {})
    if min_rows is None and not predicates:
        raise ValidationError("iceberg_branch_checks needs min_rows or no_rows_where")
    if min_rows is not None and (isinstance(min_rows, bool) or not isinstance(min_rows, int)):
        raise ValidationError(f"min_rows must be a whole number, got {min_rows!r}")
    for predicate in predicates.values():
        sql_filter(predicate)  # a predicate that does not parse fails when defined
    key = asset.key if isinstance(asset, dg.AssetsDefinition) else asset
    checks = []
    if min_rows is not None:
        checks.append(
            _branch_check(
                key,
                table,
                branch,
                "branch_row_count",
                predicate=None,
                min_rows=min_rows,
                resource_key=resource_key,
                blocking=blocking,
            )
        )
    for name, predicate in predicates.items():
        checks.append(
            _branch_check(
                key,
                table,
                branch,
                name,
                predicate=predicate,
                min_rows=None,
                resource_key=resource_key,
                blocking=blocking,
            )
        )
    return checks


def _branch_check(
    key: dg.AssetKey,
    table: str,
    branch: str,
    name: str,
    *,
    predicate: str | None,
    min_rows: int | None,
    resource_key: str,
    blocking: bool,
) -> dg.AssetChecksDefinition:
    def run(
        context: dg.AssetCheckExecutionContext, resource: IcebergResource
    ) -> dg.AssetCheckResult:
        from icewright.actions import count_rows
        from icewright.runners.local import LocalRunner

        runner = resource.get_runner(log=context.log.info)
        # the rows are counted on an in-process session (the embedded one when the
        # resource's Spark runs elsewhere)
        local = runner if isinstance(runner, LocalRunner) else None
        rows = count_rows(
            table, ref=branch, where=predicate, catalog=resource.get_catalog(), runner=local
        )
        if predicate is None:
            passed = rows >= (min_rows or 0)
            verdict = f"{rows} row(s) on {table}@{branch} (at least {min_rows})"
        else:
            passed = rows == 0
            verdict = f"{rows} row(s) of {table}@{branch} where {predicate}"
        if not passed:
            verdict += ": not published; main is unchanged and the branch kept for inspection"
        return dg.AssetCheckResult(
            passed=passed,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={"rows": rows, "branch": branch},
            description=verdict,
        )

    what = f"no row where {predicate}" if predicate else f"at least {min_rows} row(s)"
    return dg.asset_check(
        asset=key,
        name=name,
        description=f"Audit of {table}@{branch} before it is published: {what}.",
        blocking=blocking,
    )(
        with_resource(
            run,
            resource_key=resource_key,
            context=dg.AssetCheckExecutionContext,
            returns=dg.AssetCheckResult,
            name=name,
        )
    )


class ReferenceChange(dg.Config):
    """What a run of :func:`iceberg_refs_job` does: ``verb`` (``publish``, ``rollback``,
    ``set_current``, ``tag``, ``untag``, ``branch``, ``drop_branch``) and its arguments,
    as the actions of :mod:`icewright.actions.references` take them."""

    verb: str
    name: str | None = None
    branch: str | None = None
    wap_id: str | None = None
    snapshot_id: int | None = None
    to_timestamp: str | None = None
    retain: str | None = None


_VERBS = ("publish", "rollback", "set_current", "tag", "untag", "branch", "drop_branch")


def iceberg_refs_job(
    table: str,
    *,
    name: str | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
) -> dg.JobDefinition:
    """A job of one op that changes ``table``'s references as its run config says
    (:class:`ReferenceChange`), for the changes people make by hand: roll ``main`` back
    after a bad load, make a snapshot current again, tag one, publish a branch, create or
    drop a branch or tag. Bad config fails the run with one line and changes nothing::

        ops: {<job name>: {config: {verb: rollback, snapshot_id: 123}}}
    """
    job_name = name or f"{table.replace('.', '_')}_refs"

    def change(
        context: dg.OpExecutionContext, resource: IcebergResource, config: ReferenceChange
    ) -> dg.Output[Any]:
        from icewright.actions import references as refs
        from icewright.actions.results import to_jsonable

        if config.verb not in _VERBS:
            raise ValidationError(f"verb must be one of {', '.join(_VERBS)}, got {config.verb!r}")
        catalog = resource.get_catalog()
        c = config
        if c.verb == "publish":
            cherry = c.snapshot_id if c.branch is None and c.wap_id is None else None
            result = refs.publish(
                table, catalog=catalog, branch=c.branch, cherry_pick=cherry, wap_id=c.wap_id
            )
        elif c.verb == "rollback":
            result = refs.rollback(
                table, catalog=catalog, to_snapshot=c.snapshot_id, to_timestamp=c.to_timestamp
            )
        elif c.verb == "set_current":
            result = refs.set_current(
                table, _required(c.snapshot_id, "snapshot_id"), catalog=catalog
            )
        elif c.verb in ("tag", "branch"):
            make = refs.tag if c.verb == "tag" else refs.branch
            result = make(
                table,
                _required(c.name, "name"),
                snapshot_id=c.snapshot_id,
                retain=c.retain,
                catalog=catalog,
            )
        else:
            drop = refs.untag if c.verb == "untag" else refs.drop_branch
            result = drop(table, _required(c.name, "name"), catalog=catalog)
        payload = to_jsonable(result)
        context.log.info(f"{table}: {c.verb}: {payload}")
        meta = {k: v for k, v in payload.items() if isinstance(v, int | str | bool)}
        return dg.Output(payload, metadata=meta)

    op = dg.op(
        name=job_name,
        description=f"Change the references of {table} (run config: verb and arguments).",
        tags={"icewright/table": table},
    )(
        with_resource(
            change,
            resource_key=resource_key,
            context=dg.OpExecutionContext,
            returns=dg.Output,
            config=ReferenceChange,
        )
    )

    @dg.job(name=job_name, tags={"icewright/kind": "references"})
    def refs_job() -> None:
        op()

    return refs_job


def _required(value: Any, what: str) -> Any:
    if value is None:
        raise ValidationError(f"this verb needs {what} in the run config")
    return value
