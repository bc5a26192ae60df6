"""Asset factories: one per verb, each returning an ``AssetsDefinition`` to place in
``dg.Definitions``. Every asset step calls one :mod:`icewright.actions` function with
the resource's catalog and Spark runner (:class:`~icewright.dagster.IcebergResource`,
resource key ``"iceberg"`` unless told otherwise), and reports the snapshot as
materialization metadata (:func:`~icewright.dagster.execution.materialization_metadata`)
with the snapshot id as data version.

* :func:`iceberg_table_asset`: the table exists with the declared schema, partitioning,
  sort order and properties (created, or evolved toward them).
* :func:`iceberg_append_asset` and :func:`iceberg_replace_asset`: write a source with
  Spark. Unpartitioned, an append appends and a replace replaces (the whole table, the
  rows matching ``where``, or the partitions present in the new data). Partitioned
  (``partitions_def`` with ``partition_column``, or ``partition_columns`` per dimension of
  a multi-partitions definition), either replaces exactly the run's
  partitions (:mod:`icewright.dagster.partitions`), and a range run (a single-run
  backfill, the default backfill policy) is one commit over the range. Write assets may
  declare the table too (``schema=`` ...): it is ensured before the write.
* maintenance assets (rewrite, expire, remove orphans): :mod:`icewright.dagster.maintenance_assets`.
* :func:`iceberg_view_asset`: publish a view version; ``deps`` names the tables it reads.

Sources are as for the operators (``"<format>:<path>"``, ``"sql:<query>"``, a path,
``"pkg.module:function"``), with ``{partition_key}``-style placeholders filled per run.
Exactly-once and failures: :mod:`icewright.dagster.execution`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import (
    Declaration,
    check_branch,
    check_declaration,
    check_replace,
    check_source,
    check_view_sql,
)
from icewright.dagster.execution import (
    data_version,
    definition_metadata,
    materialization_metadata,
    run_commit_key,
    run_step,
    schema_of,
    with_resource,
)
from icewright.dagster.partitions import PartitionMapping, fill_template, keys_of
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.actions.results import ActionResult
    from icewright.catalog import Catalog
    from icewright.commit.table_ops import OrderLike, SpecLike
    from icewright.dagster.resource import IcebergResource
    from icewright.runners.base import Runner
    from icewright.spec.schema import Schema

__all__ = [
    "DEFAULT_RESOURCE_KEY",
    "iceberg_append_asset",
    "iceberg_replace_asset",
    "iceberg_table_asset",
    "iceberg_view_asset",
    "table_asset_key",
]

DEFAULT_RESOURCE_KEY = "iceberg"
"""The resource key the assets look their :class:`IcebergResource` up under."""

SOURCE_TAG = "icewright/source"
"""The run tag an :func:`~icewright.dagster.iceberg_snapshot_sensor` puts on the runs it
requests: the rows the announced snapshots added, as an ``iceberg:`` source
(``iceberg:ns.table@A..B``); source templates name it ``{snapshot_source}``."""

KINDS = frozenset({"iceberg", "spark"})

OnResult = Callable[[dg.AssetExecutionContext, Any], None]
"""Called after the action with its result (a notification, an audit); an exception
fails the step after the commit, and a retry then finds the commit key."""

DepsLike = Iterable[dg.AssetKey | str | Sequence[str] | dg.AssetsDefinition | dg.AssetSpec]


def table_asset_key(table: str) -> dg.AssetKey:
    """The default asset key of a table or view: its name's parts (``sales/orders``)."""
    from icewright.catalog import Identifier

    ident = Identifier.parse(table)
    return dg.AssetKey([*ident.namespace, ident.name])


def asset_key_of(
    key: dg.AssetKey | str | Sequence[str] | None, default: dg.AssetKey
) -> dg.AssetKey:
    if key is None:
        return default
    if isinstance(key, dg.AssetKey):
        return key
    if isinstance(key, str):
        return dg.AssetKey.from_user_string(key)
    return dg.AssetKey(list(key))


class AssetStep:
    """The parts one asset step uses: resource, catalog, runner, commit key."""

    def __init__(
        self,
        context: dg.AssetExecutionContext,
        resource: IcebergResource,
        *,
        partitions: PartitionMapping | None = None,
    ) -> None:
        self.context = context
        self.resource = resource
        self.catalog: Catalog = resource.get_catalog()
        self.runner: Runner = resource.get_runner(log=context.log.info)
        # A run's partition applies to the partitioned assets only (an unpartitioned one
        # selected into a partition run ignores it).
        self.scope = None if partitions is None else partitions.scope(context)

    def template_values(self) -> dict[str, str] | None:
        """What the step's source template may name: the partition's values
        (:meth:`PartitionScope.template_values`) and, in a run that an
        :func:`~icewright.dagster.iceberg_snapshot_sensor` started, ``snapshot_source``:
        the ``iceberg:`` source of the rows the announced snapshots added
        (``iceberg:ns.table@A..B``), and ``snapshot_changelog``, the same range's changelog
        (``iceberg-changelog:...``: inserted and deleted rows, for ranges with overwrites).
        None when there is nothing to fill (the source is used as it is written)."""
        values = {} if self.scope is None else self.scope.template_values()
        announced = self.context.run.tags.get(SOURCE_TAG)
        if announced:
            values["snapshot_source"] = announced
            values["snapshot_changelog"] = announced.replace("iceberg:", "iceberg-changelog:", 1)
        return values or None

    def commit_key(self) -> str:
        key = run_commit_key(self.context, keys_of(self.scope))
        self.context.log.info(f"commit key {key}")
        return key

    def run(self, act: Callable[[], Any]) -> Any:
        return run_step(self.context, self.runner, act)

    def materialized(
        self, result: ActionResult, table: str, on_result: OnResult | None
    ) -> dg.MaterializeResult[Any]:
        verb = "committed" if result.committed else "found already committed"
        self.context.log.info(
            f"{result.table}: {verb} snapshot {result.snapshot_id} ({result.operation}, "
            f"+{result.records_added} / -{result.records_removed} rows)"
        )
        if result.timings:
            phases = ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items())
            self.context.log.info(f"{result.table}: {phases}")
        if on_result is not None:
            on_result(self.context, result)
        loaded = self.catalog.load_table(table)
        return dg.MaterializeResult(
            metadata=materialization_metadata(result, loaded, partitioned=self.scope is not None),
            data_version=data_version(result),
        )


def check_freshness_policy(policy: object) -> None:
    """A freshness policy is Dagster's current one (evaluated by Dagster from the asset's
    materializations), not the legacy kind."""
    if policy is not None and not isinstance(policy, dg.FreshnessPolicy):
        raise ValidationError(
            "freshness_policy takes dg.FreshnessPolicy.time_window(...) or "
            f"dg.FreshnessPolicy.cron(...), got {type(policy).__name__}"
        )


def make_asset(
    *,
    key: dg.AssetKey,
    fn: Callable[[dg.AssetExecutionContext, IcebergResource], Any],
    resource_key: str,
    default_description: str,
    deps: DepsLike | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    table_metadata: Mapping[str, Any] | None = None,
    **options: Any,
) -> dg.AssetsDefinition:
    if partitions_def is not None and backfill_policy is None:
        backfill_policy = dg.BackfillPolicy.single_run()
    check_freshness_policy(options.get("freshness_policy"))
    if table_metadata:
        # shown on the asset before any run; the user's own metadata wins
        options["metadata"] = {**table_metadata, **(options.get("metadata") or {})}
    with warnings.catch_warnings():
        # backfill_policy is beta in Dagster 1.13; icewright chooses it (one commit per
        # backfill), so the warning would only tell the user about our choice
        warnings.simplefilter("ignore", dg.BetaWarning)
        decorate = dg.asset(
            key=key,
            deps=list(deps or ()),
            # the user's description (an asset option) wins over the factory's
            description=options.pop("description", None) or default_description,
            partitions_def=partitions_def,
            backfill_policy=backfill_policy,
            kinds=set(options.pop("kinds", None) or KINDS),
            **{k: v for k, v in options.items() if v is not None},
        )
        definition: dg.AssetsDefinition = decorate(
            with_resource(
                fn,
                resource_key=resource_key,
                context=dg.AssetExecutionContext,
                returns=dg.MaterializeResult,
                name=key.to_python_identifier(),
            )
        )
    return definition


def iceberg_table_asset(
    table: str,
    schema: Schema | Mapping[str, Any] | str,
    *,
    partition_by: SpecLike | str = None,
    sort_by: OrderLike | str = None,
    properties: Mapping[str, str] | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that ensures ``table`` exists with the declared shape
    (:func:`icewright.actions.ensure_table`); for tables other jobs write.

    ``schema``: a Schema, Iceberg schema JSON or a column list (``"id long not null, ts
    timestamptz"``); ``partition_by``: ``"day(ts), bucket(16, id)"`` or tuples;
    ``sort_by``: ``"id, ts desc"`` or entries. ``asset_options`` go to ``dg.asset``
    (``group_name``, ``deps``, ``owners``, ``tags``, ``description``, ...).
    """
    declared = check_declaration(schema, partition_by, sort_by, properties)
    if declared is None:
        raise ValidationError("iceberg_table_asset needs the table's schema")

    def ensure(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import ensure_table

        step = AssetStep(context, resource)
        result = step.run(lambda: ensure_table(table, catalog=step.catalog, **declared.as_kwargs()))
        if result.changes or result.created:
            what = "created" if result.created else "evolved: " + ", ".join(result.changes)
            context.log.info(f"{result.table}: {what}")
        return step.materialized(result, table, None)

    return make_asset(
        key=asset_key_of(key, table_asset_key(table)),
        fn=ensure,
        resource_key=resource_key,
        default_description=(
            f"The Iceberg table {table} (schema, partitioning and properties ensured)."
        ),
        table_metadata=definition_metadata(table, declared.schema),
        **asset_options,
    )


def iceberg_append_asset(
    table: str,
    source: str,
    *,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    partition_column: str | None = None,
    partition_columns: Mapping[str, str] | None = None,
    allow_schema_evolution: bool = False,
    branch: str = "main",
    reset_branch: bool = False,
    schema: Schema | Mapping[str, Any] | str | None = None,
    partition_by: SpecLike | str = None,
    sort_by: OrderLike | str = None,
    properties: Mapping[str, str] | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    on_result: OnResult | None = None,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that appends ``source``'s rows to ``table`` in one snapshot per run
    (:func:`icewright.actions.append`); partitioned, it replaces the run's partitions
    instead (see the module docstring), so that a re-materialized day is not doubled.

    ``partition_column`` names the column a one-dimensional ``partitions_def`` cuts;
    ``partition_columns`` maps each dimension of a ``dg.MultiPartitionsDefinition`` to its
    column (``{"date": "ts", "region": "region"}``). A run replaces the rows of its own
    partitions only (:mod:`icewright.dagster.partitions`).

    ``schema`` (with ``partition_by``, ``sort_by``, ``properties``) declares the table,
    which is then created or evolved before the write. ``allow_schema_evolution`` adds
    the source's extra columns in the append's commit. ``on_result`` is called with the
    :class:`~icewright.actions.ActionResult`.

    ``branch`` other than ``main`` writes there (write-audit-publish: checks read the
    branch, :func:`~icewright.dagster.iceberg_publish_asset` publishes it); with
    ``reset_branch`` each run first moves the branch to ``main``'s current snapshot, so it
    holds ``main`` and this run's rows only (a branch left by a failed audit is started
    again).
    """
    return _write_asset(
        "append",
        table,
        source,
        partitions_def=partitions_def,
        partition_column=partition_column,
        partition_columns=partition_columns,
        branch=branch,
        reset_branch=reset_branch,
        declared=check_declaration(schema, partition_by, sort_by, properties),
        key=key,
        resource_key=resource_key,
        on_result=on_result,
        action_options={"allow_schema_evolution": allow_schema_evolution},
        asset_options=asset_options,
    )


def iceberg_replace_asset(
    table: str,
    source: str,
    *,
    where: str | None = None,
    dynamic_partitions: bool = False,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    partition_column: str | None = None,
    partition_columns: Mapping[str, str] | None = None,
    branch: str = "main",
    reset_branch: bool = False,
    schema: Schema | Mapping[str, Any] | str | None = None,
    partition_by: SpecLike | str = None,
    sort_by: OrderLike | str = None,
    properties: Mapping[str, str] | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    on_result: OnResult | None = None,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that replaces rows of ``table`` with ``source``'s rows in one snapshot
    (:func:`icewright.actions.replace`): the whole table, the rows matching ``where`` (SQL
    with Spark SQL's meaning; may use the source placeholders), the partitions present in
    the new data (``dynamic_partitions``), or, partitioned, exactly the run's partitions.
    Other arguments as for :func:`iceberg_append_asset`."""
    if partitions_def is not None and (where is not None or dynamic_partitions):
        raise ValidationError(
            "a partitioned replace asset replaces its partitions: leave out where and "
            "dynamic_partitions"
        )
    check_replace(where, dynamic_partitions)
    return _write_asset(
        "replace",
        table,
        source,
        partitions_def=partitions_def,
        partition_column=partition_column,
        partition_columns=partition_columns,
        branch=branch,
        reset_branch=reset_branch,
        declared=check_declaration(schema, partition_by, sort_by, properties),
        key=key,
        resource_key=resource_key,
        on_result=on_result,
        action_options={"where": where, "dynamic_partitions": dynamic_partitions},
        asset_options=asset_options,
    )


def _write_asset(
    verb: str,
    table: str,
    source: str,
    *,
    partitions_def: dg.PartitionsDefinition[str] | None,
    partition_column: str | None,
    partition_columns: Mapping[str, str] | None,
    branch: str,
    reset_branch: bool,
    declared: Declaration | None,
    key: dg.AssetKey | str | Sequence[str] | None,
    resource_key: str,
    on_result: OnResult | None,
    action_options: dict[str, Any],
    asset_options: dict[str, Any],
) -> dg.AssetsDefinition:
    partitions = PartitionMapping.of(
        partitions_def,
        partition_column,
        partition_columns,
        schema=None if declared is None else declared.schema,
    )
    check_source(source, paths_exist=False)  # an upstream step may write the path
    check_branch(branch)
    if reset_branch and branch == "main":
        raise ValidationError("reset_branch moves a branch other than main to main: name one")

    def write(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import append, ensure_table, replace
        from icewright.actions import branch as start_branch

        step = AssetStep(context, resource, partitions=partitions)
        commit_key = step.commit_key()

        def act() -> ActionResult:
            if declared is not None:
                ensure_table(table, catalog=step.catalog, **declared.as_kwargs())
            if reset_branch:
                start_branch(table, branch, replace=True, catalog=step.catalog)
            values = step.template_values()
            filled = str(fill_template(source, values))
            common: dict[str, Any] = {
                "catalog": step.catalog,
                "branch": branch,
                "commit_key": commit_key,
                "runner": step.runner,
            }
            if step.scope is not None:
                schema = step.catalog.load_table(table).metadata.schema()
                where = step.scope.where(schema)
                context.log.info(f"replacing partition rows: {where}")
                return replace(table, filled, where=where, rows_must_match=True, **common)
            if verb == "append":
                return append(table, filled, **action_options, **common)
            options = dict(action_options)
            if options.get("where") is not None:
                options["where"] = fill_template(options["where"], values)
            return replace(table, filled, **options, **common)

        result = step.run(act)
        return step.materialized(result, table, on_result)

    return make_asset(
        key=asset_key_of(key, table_asset_key(table)),
        fn=write,
        resource_key=resource_key,
        default_description=f"The Iceberg table {table}, written by Spark ({verb} of {source}).",
        partitions_def=partitions_def,
        table_metadata=definition_metadata(table, None if declared is None else declared.schema),
        **asset_options,
    )


def iceberg_view_asset(
    view: str,
    sql: str,
    *,
    deps: DepsLike | None = None,
    comment: str | None = None,
    column_comments: Mapping[str, str] | None = None,
    properties: Mapping[str, str] | None = None,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    **asset_options: Any,
) -> dg.AssetsDefinition:
    """An asset that publishes ``sql`` as a new version of the Iceberg view ``view``
    (:func:`icewright.actions.publish_view`); ``deps`` names the tables' assets it reads
    (names like ``"sales.orders"`` are turned into their table asset keys)."""
    check_view_sql(sql)
    dep_keys = [
        table_asset_key(d) if isinstance(d, str) and "/" not in d else d for d in deps or ()
    ]

    def publish(
        context: dg.AssetExecutionContext, resource: IcebergResource
    ) -> dg.MaterializeResult[Any]:
        from icewright.actions import publish_view

        step = AssetStep(context, resource)
        result = step.run(
            lambda: publish_view(
                view,
                sql,
                catalog=step.catalog,
                comment=comment,
                column_comments=column_comments,
                properties=properties,
                runner=step.runner,
            )
        )
        context.log.info(f"{result.view}: version {result.version_id}")
        return dg.MaterializeResult(
            metadata={
                "dagster/table_name": result.view,
                "dagster/column_schema": schema_of(result.schema),
                "icewright/version_id": result.version_id,
                "icewright/metadata_location": dg.MetadataValue.path(result.metadata_location),
                "icewright/referenced_tables": ", ".join(result.referenced_tables),
            },
            data_version=dg.DataVersion(f"{result.metadata_location}"),
        )

    return make_asset(
        key=asset_key_of(key, table_asset_key(view)),
        fn=publish,
        resource_key=resource_key,
        default_description=f"The Iceberg view {view}.",
        deps=dep_keys,
        table_metadata=definition_metadata(view),
        **asset_options,
    )
