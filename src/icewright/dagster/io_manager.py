"""``IcebergIOManager``: assets that return data, committed to Iceberg tables by icewright,
and inputs loaded from them.

>>> # import dagster as dg, pyarrow as pa
>>> # from icewright.dagster import IcebergIOManager, IcebergResource
>>> # @dg.asset(key_prefix="sales", partitions_def=daily,
>>> #           metadata={"icewright/partition_column": "ts", "icewright/partition_by": "day(ts)"})
>>> # def orders(context: dg.AssetExecutionContext) -> pa.Table: ...
>>> # @dg.asset(ins={"orders": dg.AssetIn(key_prefix="sales", metadata={"columns": ["id"]})})
>>> # def order_ids(orders: pa.Table) -> None: ...
>>> # iceberg = IcebergResource()
>>> # defs = dg.Definitions(assets=[orders, order_ids], resources={
>>> #     "iceberg": iceberg, "io_manager": IcebergIOManager(iceberg=iceberg)})

The table of an asset: ``icewright/table`` in its metadata (``"sales.orders"``), else its
key: the prefix is the namespace, the last part the table (``sales/orders`` is
``sales.orders``); a key of one part goes to the manager's ``namespace``. A table that
does not exist is created on the first write, from ``icewright/schema`` when the asset
declares one (then it is also evolved toward the declaration before each write, as
:func:`icewright.actions.ensure_table` does), else from the output's columns (all
optional); either way with ``icewright/partition_by``, ``icewright/sort_by`` and
``icewright/properties``.

What a step commits (:mod:`icewright.dagster.io_tables` for the metadata keys and types):

* an unpartitioned asset appends its output in one snapshot, or with
  ``icewright/write: replace`` replaces the table's rows;
* a partitioned asset replaces exactly its run's partitions
  (``icewright/partition_column``, or ``icewright/partition_columns`` per dimension of a
  multi-partitions definition: the mapping of :mod:`icewright.dagster.partitions`); rows
  outside them fail the step and commit nothing;
* the commit key is the factories' (:func:`~icewright.dagster.execution.commit_key_for`:
  asset key, partition keys, root run id), so a step retry or a re-execution commits
  once.

A Spark DataFrame is written by Spark (the resource's in-process runner, or a local one
on the DataFrame's own session when the resource submits jobs); a pyarrow Table, pandas
or polars DataFrame is converted to Arrow and its files written in this process, without
Spark (:class:`~icewright.runners.arrow.ArrowRunner`). Spark starts only when a replace
must rewrite files that its predicate partly matches (a partitioned asset whose table
is not partitioned by the partition column: declare ``icewright/partition_by`` so that
each run's partition is whole files).

Loading: an input is read at the table's current snapshot, only the partitions the
downstream run depends on (Dagster's partition mapping, translated into the upstream
mapping's predicate) and only the input metadata's ``columns``. The input's annotation
chooses the type: ``pyarrow.Table`` (read by in-process Spark, then collected to this
process: for data that fits in memory) or a Spark DataFrame (also without annotation).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import dagster as dg
from pydantic import Field

from icewright.dagster.execution import (
    commit_key_for,
    definition_metadata,
    materialization_metadata,
    run_step,
)
from icewright.dagster.io_tables import (
    COLUMNS,
    PARTITION_BY,
    PARTITION_COLUMN,
    PARTITION_COLUMNS,
    PROPERTIES,
    SCHEMA,
    SORT_BY,
    TABLE,
    WRITE,
    IoTable,
    check_output_annotation,
    input_kind,
    writable,
)
from icewright.dagster.partitions import PartitionScope
from icewright.dagster.resource import IcebergResource
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icewright.actions.results import ActionResult
    from icewright.runners.base import Runner
    from icewright.spec.schema import Schema

__all__ = ["IcebergIOManager", "iceberg_io_asset"]


class IcebergIOManager(dg.ConfigurableIOManager):
    """Stores asset outputs as Iceberg tables committed by icewright and loads inputs
    from them (see the module docstring). ``iceberg`` is the same
    :class:`~icewright.dagster.IcebergResource` the factories use."""

    iceberg: IcebergResource = Field(
        default_factory=IcebergResource, description="the catalog and Spark runner"
    )
    namespace: str = Field(
        default="default", description="the namespace of assets whose key has one part"
    )

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        """Commit ``obj`` to the asset's table (append, or replace of the run's
        partitions) and report the snapshot as the materialization's metadata. An op's
        output (no asset: the maintenance ops' reports) is not stored; no op loads it
        from here."""
        from icewright.actions import append, ensure_table, replace

        if not context.has_asset_key:
            context.log.debug(f"IcebergIOManager stores assets only: {context.name} not stored")
            return

        # bad metadata or output: one line, no retry (run_step reads only the context's
        # log, which an OutputContext has too)
        step = cast(Any, context)
        target = run_step(step, None, lambda: self._target(context))
        data = run_step(step, None, lambda: writable(obj, context.asset_key))
        catalog = self.iceberg.get_catalog()
        runner = self._runner(context, data)
        scope = None
        if target.partitions is not None and context.has_asset_partitions:
            scope = PartitionScope(target.partitions, tuple(context.asset_partition_keys))
        run = context.step_context.dagster_run
        commit_key = commit_key_for(
            context.asset_key, () if scope is None else scope.keys, run.root_run_id or run.run_id
        )
        context.log.info(f"{target.name}: commit key {commit_key}")

        def act() -> ActionResult:
            if target.declared is not None:
                ensure_table(target.name, catalog=catalog, **target.declared.as_kwargs())
            elif not catalog.table_exists(target.name):
                new = target.declaration_for(_schema_of(data))
                ensure_table(target.name, catalog=catalog, **new.as_kwargs())
            common: dict[str, Any] = {
                "catalog": catalog,
                "commit_key": commit_key,
                "runner": runner,
            }
            if scope is not None:
                where = scope.where(catalog.load_table(target.name).metadata.schema())
                context.log.info(f"{target.name}: replacing partition rows: {where}")
                return replace(target.name, data, where=where, rows_must_match=True, **common)
            if target.write == "replace":
                return replace(target.name, data, **common)
            return append(target.name, data, **common)

        result = run_step(step, getattr(runner, "jobs", runner), act)
        verb = "committed" if result.committed else "found already committed"
        context.log.info(
            f"{result.table}: {verb} snapshot {result.snapshot_id} ({result.operation}, "
            f"+{result.records_added} / -{result.records_removed} rows)"
        )
        loaded = catalog.load_table(target.name)
        context.add_output_metadata(
            materialization_metadata(result, loaded, partitioned=scope is not None)
        )

    def load_input(self, context: dg.InputContext) -> object:
        """The upstream asset's table: the partitions this run depends on, the input
        metadata's ``columns``, as a pyarrow Table or a Spark DataFrame by the input's
        annotation. Bad input (an annotation, a table, a column) fails the step at once
        with one line."""
        return run_step(cast(Any, context), None, lambda: self._load(context))

    def _load(self, context: dg.InputContext) -> object:
        from icewright.spark.read import read_table
        from icewright.spark.session import local_session

        upstream = context.upstream_output
        if upstream is None or not context.has_asset_key:
            raise ValidationError(
                "IcebergIOManager loads the inputs of assets from their upstream assets' "
                "tables: give the op an asset input"
            )
        kind = input_kind(context.dagster_type.typing_type, context.name)
        try:  # the upstream asset's, whether or not this run selects its partitions
            partitions_def: dg.PartitionsDefinition[str] | None = context.asset_partitions_def
        except dg.DagsterInvariantViolationError:  # not partitioned
            partitions_def = None
        target = IoTable.of(
            upstream.definition_metadata,
            context.asset_key,
            self.namespace,
            partitions_def,
            strict=False,
        )
        catalog = self.iceberg.get_catalog()
        table = catalog.load_table(target.name)
        where = None
        if target.partitions is not None and context.has_asset_partitions:
            keys = tuple(context.asset_partition_keys)
            if not _all_keys(target.partitions.definition, keys):
                where = PartitionScope(target.partitions, keys).where(table.metadata.schema())
        columns = _columns(context.definition_metadata.get(COLUMNS))
        context.log.info(
            f"{target.name}: loading {', '.join(columns) if columns else 'every column'}"
            f"{'' if where is None else ' where ' + where} as {kind}"
        )
        frame: DataFrame = read_table(local_session(), table, filter=where, columns=columns)
        if kind == "arrow":
            return frame.toArrow()
        return frame

    def _target(self, context: dg.OutputContext) -> IoTable:
        partitions_def = context.asset_partitions_def if context.has_asset_partitions else None
        if partitions_def is None and context.has_asset_key:
            partitions_def = context.asset_spec.partitions_def
        return IoTable.of(
            context.definition_metadata, context.asset_key, self.namespace, partitions_def
        )

    def _runner(self, context: dg.OutputContext, data: object) -> Runner:
        """Arrow tables are written here; a Spark DataFrame by the resource's in-process
        runner, or a local one on its own session when the resource submits jobs (a
        DataFrame cannot leave its session)."""
        from icewright.runners.arrow import ArrowRunner, is_arrow_table
        from icewright.runners.local import LocalRunner

        runner = self.iceberg.get_runner(log=context.log.info)
        if not is_arrow_table(data) and not isinstance(runner, LocalRunner):
            context.log.info("writing the Spark DataFrame on its own session")
            runner = LocalRunner(cast("DataFrame", data).sparkSession)
        return cast("Runner", ArrowRunner(runner))


def _schema_of(data: object) -> Schema:
    """The schema of a new table for ``data``: the output's columns, all optional."""
    from icewright.runners.arrow import is_arrow_table

    if is_arrow_table(data):
        from icewright.arrow import schema_from_arrow

        return schema_from_arrow(cast(Any, data).schema)
    from icewright.spark.types import schema_from_spark

    return schema_from_spark(cast("DataFrame", data).schema, required_as_nullable=True)


def _all_keys(definition: dg.PartitionsDefinition[str], keys: Sequence[str]) -> bool:
    """Whether ``keys`` are every partition of ``definition`` (then no filter is needed;
    a dynamic definition's keys are not known here: False)."""
    if isinstance(definition, dg.DynamicPartitionsDefinition):
        return False
    try:
        every = definition.get_partition_keys()
    except Exception:  # a dimension that needs the instance to list its keys
        return False
    return set(keys) >= set(every)


def _columns(value: object) -> list[str] | None:
    """The ``columns`` input metadata: a list of column names, or None for all."""
    if isinstance(value, dg.MetadataValue):
        value = value.value
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(c, str) for c in value):
        return list(value)
    raise ValidationError(
        f"the input metadata 'columns' must be a list of column names, got {value!r}"
    )


def iceberg_io_asset(
    *,
    table: str | None = None,
    schema: Schema | Mapping[str, Any] | str | None = None,
    partition_by: str | None = None,
    sort_by: str | None = None,
    properties: Mapping[str, str] | None = None,
    partition_column: str | None = None,
    partition_columns: Mapping[str, str] | None = None,
    write: str = "append",
    **asset_options: Any,
) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """``dg.asset`` for an asset stored by :class:`IcebergIOManager`, with its table's
    settings as arguments (written as the ``icewright/*`` metadata the manager reads) and
    checked when the definitions load: the declaration, the partition mapping, and the
    function's return annotation (a type the manager cannot commit is refused at
    ``dagster definitions validate``, not at the first run). The table's name and
    declared schema are shown on the asset before any run. ``asset_options`` go to
    ``dg.asset`` (``key_prefix``, ``partitions_def``, ``io_manager_key``, ...).

    >>> # @iceberg_io_asset(key_prefix="sales", schema="id long, ts timestamptz",
    >>> #                   partitions_def=daily, partition_column="ts", partition_by="day(ts)")
    >>> # def orders(context: dg.AssetExecutionContext) -> pa.Table: ...
    """
    given = {
        TABLE: table,
        SCHEMA: schema if schema is None or isinstance(schema, str | Mapping) else schema.to_json(),
        PARTITION_BY: partition_by,
        SORT_BY: sort_by,
        PROPERTIES: None if properties is None else dict(properties),
        PARTITION_COLUMN: partition_column,
        PARTITION_COLUMNS: None if partition_columns is None else dict(partition_columns),
        WRITE: write,
    }
    metadata = {k: v for k, v in given.items() if v is not None}

    def decorate(fn: Callable[..., Any]) -> dg.AssetsDefinition:
        key = _key_of(fn, asset_options)
        own = {**metadata, **(asset_options.get("metadata") or {})}
        target = IoTable.of(own, key, None, asset_options.get("partitions_def"))
        hints = _type_hints(fn)
        if hints is not None:
            # as objects: Dagster reads the context parameter's annotation as written,
            # which a module with postponed annotations leaves as text
            fn.__annotations__ = hints
        returns = (hints or {}).get("return", inspect.Parameter.empty)
        check_output_annotation(returns, f"the asset {key.to_user_string()}")
        shown: dict[str, Any] = {}
        if target.name.count(".") or table is not None:
            shown = definition_metadata(
                target.name, None if target.declared is None else target.declared.schema
            )
        options = dict(asset_options)
        options["metadata"] = {**shown, **own}
        options["kinds"] = set(options.get("kinds") or {"iceberg"})
        definition: dg.AssetsDefinition = dg.asset(**options)(fn)
        return definition

    return decorate


def _key_of(fn: Callable[..., Any], options: Mapping[str, Any]) -> dg.AssetKey:
    """The key ``dg.asset`` gives the asset of ``fn`` with ``options``."""
    key = options.get("key")
    if key is not None:
        return dg.AssetKey.from_coercible(key)
    prefix = options.get("key_prefix") or []
    prefix = [prefix] if isinstance(prefix, str) else list(prefix)
    return dg.AssetKey([*prefix, options.get("name") or fn.__name__])


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """``fn``'s annotations as objects; None when a name does not resolve here (the run
    then checks what the function returns)."""
    try:
        return typing.get_type_hints(fn)
    except Exception:  # a forward reference to a name this module cannot see
        return None
