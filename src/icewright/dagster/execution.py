"""What every icewright asset step does around its one action: the commit key, the
runner, failures the Dagster way, and the materialization's metadata.

Exactly-once: the commit key is a stable hash of the asset key, the run's partition
keys and the run's *root* run id (:func:`commit_key_for`). A step retry
(``RetryPolicy``) keeps the run id, and a re-execution of a failed run keeps its root
run id, so both find the key on the table (kept past snapshot expiry, see
:mod:`icewright.commit.commit_keys`) and commit nothing again; a Spark job that had
finished is reused, not run again. A new launch has a new root run id and commits.

Failures: bad input (:data:`icewright.errors.BAD_INPUT`: an unknown table, a malformed
predicate, a source that does not exist) fails the step at once with one line
(``dg.Failure(allow_retries=False)``); a lost commit race and an unknown commit state
are raised as they are, so that the asset's retry policy applies and the files of an
unknown commit are kept for the retry. A cancelled run stops its Spark job.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import keyword
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import dagster as dg

from icewright.errors import BAD_INPUT, IcewrightError, ValidationError, one_line
from icewright.runners.local import LocalRunner
from icewright.runners.progress import logged_stage_progress

if TYPE_CHECKING:
    from icewright.actions.results import ActionResult
    from icewright.catalog import Table
    from icewright.runners.base import Runner
    from icewright.spec.schema import Schema

__all__ = [
    "check_resource_key",
    "commit_key_for",
    "definition_metadata",
    "materialization_metadata",
    "run_commit_key",
    "run_step",
    "schema_of",
    "table_schema",
    "with_resource",
]

T = TypeVar("T")


def commit_key_for(asset_key: dg.AssetKey, partition_keys: Sequence[str], root_run_id: str) -> str:
    """The commit key of one asset's run: ``dagster:`` and a stable hash of the asset key,
    the sorted partition keys and the root run id."""
    identity = json.dumps(
        [list(asset_key.path), sorted(partition_keys), root_run_id], separators=(",", ":")
    )
    return "dagster:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:40]


def run_commit_key(context: dg.AssetExecutionContext, partition_keys: Sequence[str]) -> str:
    """:func:`commit_key_for` the asset of ``context`` in its run."""
    run = context.run
    return commit_key_for(context.asset_key, partition_keys, run.root_run_id or run.run_id)


def run_step(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    runner: Runner | None,
    act: Callable[[], T],
) -> T:
    """Call ``act`` (one action), mapping failures as the module docstring says. While it
    runs on in-process Spark, the active stages' progress goes to the step's log every ten
    seconds (``spark-submit`` jobs stream their own log lines there)."""
    try:
        if isinstance(runner, LocalRunner):
            with logged_stage_progress(runner.spark_if_started, context.log.info, "spark"):
                return act()
        return act()
    except BAD_INPUT as e:
        raise dg.Failure(description=one_line(e), allow_retries=False) from None
    except IcewrightError as e:
        context.log.error(one_line(e))
        raise
    except dg.DagsterExecutionInterruptedError:
        cancel = getattr(runner, "cancel", None)
        if callable(cancel):
            context.log.info("run cancelled: stopping the Spark job")
            cancel()
        raise


def with_resource(
    fn: Callable[..., T],
    *,
    resource_key: str,
    context: type,
    returns: Any,
    name: str | None = None,
    config: type | None = None,
) -> Callable[..., T]:
    """``fn(context, resource[, config])`` as the function Dagster decorates: its
    parameters are ``context``, ``config`` when given, and the resource as a typed
    parameter named ``resource_key`` (``iceberg: IcebergResource``, Dagster's Pythonic
    resources), with every annotation an object (this package's postponed annotations
    would leave them as text, and the parameter's name is only known here)."""
    from icewright.dagster.resource import IcebergResource

    check_resource_key(resource_key)
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter("context", kind, annotation=context)]
    if config is not None:
        params.append(inspect.Parameter("config", kind, annotation=config))
    params.append(inspect.Parameter(resource_key, kind, annotation=IcebergResource))
    signature = inspect.Signature(params, return_annotation=returns)

    def step(*args: Any, **kwargs: Any) -> T:
        given = signature.bind(*args, **kwargs).arguments
        if config is None:
            return fn(given["context"], given[resource_key])
        return fn(given["context"], given[resource_key], given["config"])

    step.__signature__ = signature  # type: ignore[attr-defined]
    step.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    step.__name__ = step.__qualname__ = name or fn.__name__
    return step


def check_resource_key(resource_key: str) -> None:
    """The resource key names a step's parameter: a Python identifier."""
    if (
        not isinstance(resource_key, str)
        or not resource_key.isidentifier()
        or keyword.iskeyword(resource_key)
        or resource_key in ("context", "config")
    ):
        raise ValidationError(
            f"resource_key names the steps' resource parameter: give a Python identifier "
            f"other than context and config, got {resource_key!r}"
        )


def table_schema(table: Table) -> dg.TableSchema:
    """The table's current schema as Dagster's ``TableSchema`` (shown natively in the UI)."""
    return schema_of(table.metadata.schema())


def schema_of(schema: Schema) -> dg.TableSchema:
    """An Iceberg schema's top-level columns as Dagster's ``TableSchema``."""
    columns = [
        dg.TableColumn(
            name=f.name,
            type=str(f.field_type),
            description=f.doc,
            constraints=dg.TableColumnConstraints(nullable=not f.required),
        )
        for f in schema.fields
    ]
    return dg.TableSchema(columns=columns)


def definition_metadata(name: str, schema: Schema | None = None) -> dict[str, Any]:
    """What an asset says about its table before any run (Dagster's definition
    metadata): ``dagster/table_name``, and with a declared schema
    ``dagster/column_schema``."""
    meta: dict[str, Any] = {"dagster/table_name": name}
    if schema is not None:
        meta["dagster/column_schema"] = schema_of(schema)
    return meta


def materialization_metadata(
    result: ActionResult, table: Table | None = None, *, partitioned: bool = False
) -> dict[str, Any]:
    """A result's materialization metadata: Dagster's standard table keys
    (``dagster/table_name``, ``dagster/storage_kind``, ``dagster/row_count``,
    ``dagster/partition_row_count`` for a partition run, ``dagster/column_schema``,
    ``dagster/uri``) and the snapshot's own (``icewright/*``)."""
    summary: Mapping[str, str] = result.summary or {}
    meta: dict[str, Any] = {
        "dagster/table_name": result.table,
        "dagster/storage_kind": "iceberg",
        "icewright/committed": result.committed,
        "icewright/metadata_location": dg.MetadataValue.path(result.metadata_location),
        "icewright/added_records": result.records_added,
        "icewright/deleted_records": result.records_removed,
        "icewright/added_files": result.files_added,
        "icewright/deleted_files": result.files_removed,
    }
    if result.snapshot_id is not None:
        meta["icewright/snapshot_id"] = dg.MetadataValue.text(str(result.snapshot_id))
        meta["icewright/sequence_number"] = result.sequence_number
        meta["icewright/operation"] = result.operation
    total = summary.get("total-records")
    if total is not None and total.isdigit():
        meta["dagster/row_count"] = int(total)
    if partitioned:
        meta["dagster/partition_row_count"] = result.records_added
    if table is not None:
        meta["dagster/column_schema"] = table_schema(table)
        meta["dagster/uri"] = table.metadata.location
        meta["icewright/lineage"] = dg.MetadataValue.json(lineage_metadata(table))
    return meta


def lineage_metadata(table: Table) -> dict[str, Any]:
    """The table as OpenLineage names it (the Airflow operators' datasets name it the
    same way: :func:`icewright.actions.lineage.table_identity`): ``namespace`` and
    ``name`` from its location, ``symlink`` naming it in its catalog."""
    from icewright.actions.lineage import table_identity

    identity = table_identity(table.catalog, table.identifier, table.metadata.location)
    link = identity.symlink
    return {
        "namespace": identity.dataset.namespace,
        "name": identity.dataset.name,
        "symlink": {"namespace": link.namespace, "name": link.name, "type": "TABLE"},
    }


def data_version(result: ActionResult) -> dg.DataVersion | None:
    """The asset's data version: the snapshot id the step left the table at."""
    return None if result.snapshot_id is None else dg.DataVersion(str(result.snapshot_id))
