"""The ``create`` verb: a table from a schema, or from a source (schema and data)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from icewright.actions._common import (
    CatalogLike,
    TableLike,
    Timer,
    identifier,
    resolve_catalog,
    resolve_source,
    runner_or_default,
)
from icewright.actions.append import append, commit_written, delete_paths, keyed
from icewright.actions.arguments import (
    check_commit_key,
    check_format_version,
    check_location,
    check_source_argument,
)
from icewright.actions.results import ActionResult
from icewright.commit import create_or_replace_table, create_table, drop_table
from icewright.commit.append import FastAppend
from icewright.commit.table_ops import order_of, spec_of
from icewright.commit.update import CommitResult
from icewright.errors import CommitStateUnknown, IcewrightError, TableAlreadyExists, ValidationError
from icewright.runners.store import JobSubmitted, forget_job, job_key

if TYPE_CHECKING:
    from icewright.catalog import Catalog, Identifier, Table
    from icewright.commit.table_ops import OrderLike, SpecLike
    from icewright.runners.base import Runner
    from icewright.spark.write import Source
    from icewright.spec.schema import Schema

__all__ = ["CreateStarted", "create", "drop_created", "finish_create", "start_create"]

log = logging.getLogger(__name__)


def create(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    schema: Schema | None = None,
    source: Source | None = None,
    partition_by: SpecLike = None,
    sort_by: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int = 2,
    if_not_exists: bool = False,
    or_replace: bool = False,
    commit_key: str | None = None,
    runner: Runner | None = None,
) -> ActionResult:
    """Create a table from ``schema``, or from ``source`` (schema derived from its
    DataFrame, every column optional, then its rows appended).

    ``partition_by`` and ``sort_by`` take a spec/order or ``build_partition_spec`` /
    ``build_sort_order`` entries (``[("day", "ts"), ("bucket", "id", 16)]``,
    ``["id", ("ts", "desc")]``). With ``if_not_exists`` an existing table is left as it
    is (``committed`` False, no data written); with ``or_replace`` it is replaced
    (keeping its history). From a source there are two commits: the creation (or
    replacement, :func:`start_create`), then an append of the source's rows
    (:func:`finish_create`; ``commit_key`` goes to that append and the result describes
    it). If that write fails, a table this call created is dropped again; a replaced
    table stays replaced and empty. A caller whose runner detaches the job calls the two
    steps itself and resumes with :func:`finish_create` (as the deferrable operator does).
    On a catalog that stages creates (REST), a new table from a source is one commit
    instead: staged, written, then created with its first snapshot, so a failed write
    leaves no table behind.
    """
    if schema is None and source is None:
        raise ValidationError("create needs a schema or a source to derive it from")
    if if_not_exists and or_replace:
        raise ValidationError("pass if_not_exists or or_replace, not both")
    identifier(table)
    if source is not None:
        check_source_argument(source)
    check_location(location)
    check_format_version(format_version)
    check_commit_key(commit_key)
    jobs = runner_or_default(runner) if source is not None else None
    plan = Timer()
    if source is not None:
        source = resolve_source(source, resolve_catalog(catalog))
    if schema is None:
        assert jobs is not None and source is not None
        with plan.phase("plan"):
            schema = jobs.source_schema(source)
    cat = resolve_catalog(catalog)
    ident = identifier(table)
    if (
        source is not None
        and jobs is not None
        and not or_replace
        and cat.supports_staged_create
        and not cat.table_exists(ident)
    ):
        # REST: stage the table, write, and create it with its first snapshot in one
        # commit, so a failed write leaves no empty table behind.
        spec_and_order = (spec_of(schema, partition_by), order_of(schema, sort_by))
        staged = cat.stage_create_table(
            ident, schema, *spec_and_order, location, properties, format_version
        )
        return _write_staged(staged, source, jobs, commit_key, plan)
    started = start_create(
        table,
        catalog=cat,
        schema=schema,
        partition_by=partition_by,
        sort_by=sort_by,
        properties=properties,
        location=location,
        format_version=format_version,
        if_not_exists=if_not_exists,
        or_replace=or_replace,
    )
    result = dataclasses.replace(started.result, timings={**plan.done(), **started.result.timings})
    if source is None or not result.committed:
        return result
    return finish_create(
        table,
        source,
        catalog=cat,
        made=started.made,
        commit_key=commit_key,
        runner=jobs,
        timings=result.timings,
    )


@dataclasses.dataclass(frozen=True)
class CreateStarted:
    """The first step of a creation: its result, and whether it made the table (a table
    that did not exist before), which a failed write drops again."""

    result: ActionResult
    made: bool


def start_create(
    table: TableLike,
    *,
    catalog: CatalogLike = None,
    schema: Schema,
    partition_by: SpecLike = None,
    sort_by: OrderLike = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
    format_version: int = 2,
    if_not_exists: bool = False,
    or_replace: bool = False,
) -> CreateStarted:
    """The creation commit of :func:`create` (no data): the new or replaced table, or with
    ``if_not_exists`` the existing one left as it is (``committed`` False)."""
    if if_not_exists and or_replace:
        raise ValidationError("pass if_not_exists or or_replace, not both")
    check_location(location)
    check_format_version(format_version)
    timer = Timer()
    cat = resolve_catalog(catalog)
    ident = identifier(table)
    existed = cat.table_exists(ident)
    if existed and if_not_exists:
        current = cat.load_table(ident)
        return CreateStarted(_result(current, committed=False, timer=timer), made=False)
    with timer.phase("commit"):
        created = _create(
            cat,
            ident,
            schema,
            spec=partition_by,
            order=sort_by,
            properties=properties,
            location=location,
            format_version=format_version,
            or_replace=or_replace,
        )
    return CreateStarted(_result(created, committed=True, timer=timer), made=not existed)


def finish_create(
    table: TableLike,
    source: Source,
    *,
    catalog: CatalogLike = None,
    made: bool,
    commit_key: str | None = None,
    runner: Runner | None = None,
    timings: Mapping[str, float] | None = None,
) -> ActionResult:
    """The second step of :func:`create`: append ``source``'s rows to the table
    :func:`start_create` made (``made``) or replaced. Resumable: called again with the
    same ``commit_key`` after the runner detached the job
    (:class:`~icewright.runners.store.JobSubmitted`, which leaves the table as it is), it
    reuses the job's stored result. Any other failure drops a table the creation made.
    """
    cat = resolve_catalog(catalog)
    try:
        appended = append(table, source, catalog=cat, commit_key=commit_key, runner=runner)
    except JobSubmitted:
        raise  # the job runs on; the caller resumes with the same commit key
    except Exception as e:
        if made:
            try:
                drop_created(table, catalog=cat)
            except Exception as drop_error:  # the write's failure matters more
                e.add_note(f"the table could not be dropped again: {drop_error}")
        raise
    merged = {**(timings or {}), **{f"append.{k}": v for k, v in appended.timings.items()}}
    return dataclasses.replace(appended, timings=merged)


def drop_created(table: TableLike, *, catalog: CatalogLike = None) -> None:
    """Drop (and purge) a table a creation made after its write failed or was lost."""
    ident = identifier(table)
    log.info("dropping %s, which this creation made, after its write failed", ident)
    drop_table(resolve_catalog(catalog), ident, purge=True)


def _create(
    cat: Catalog,
    ident: Identifier,
    schema: Schema,
    *,
    spec: SpecLike,
    order: OrderLike,
    properties: Mapping[str, str] | None,
    location: str | None,
    format_version: int,
    or_replace: bool,
) -> Table:
    if or_replace:
        return create_or_replace_table(
            cat, ident, schema, spec, order, properties, location, format_version
        )
    try:
        return create_table(cat, ident, schema, spec, order, properties, location, format_version)
    except TableAlreadyExists as e:
        raise TableAlreadyExists(
            f"{e}; pass if_not_exists=True to keep it or or_replace=True to replace it"
        ) from None


def _result(table: Table, *, committed: bool, timer: Timer) -> ActionResult:
    snapshot = table.metadata.current_snapshot()
    return ActionResult.describing(table, snapshot, committed=committed, timings=timer.done())


def _write_staged(
    staged: Table, source: Source, jobs: Runner, commit_key: str | None, plan: Timer
) -> ActionResult:
    """Write ``source`` on a staged table and create the table with its first snapshot
    (assert-create and every update that builds it, then add-snapshot) in one commit.

    A job the runner detaches creates the table first (empty, as :func:`start_create`
    would), so that :func:`finish_create` resumes it with the same commit key.
    """
    cat = staged.catalog
    key = job_key(commit_key, "append")
    try:
        with plan.phase("write"):
            written = jobs.write(staged.metadata, staged.io, source, **keyed(key))
    except JobSubmitted:
        cat.create_table_from_metadata(staged.identifier, staged.metadata)
        raise
    files = written.data_files

    def commit() -> CommitResult:
        update = FastAppend(staged, files, commit_key=commit_key)
        new = update.apply(staged.metadata)
        try:
            created = cat.create_table_from_metadata(staged.identifier, new)
        except CommitStateUnknown:
            raise
        except IcewrightError:
            delete_paths(staged.io, update.files_written())
            raise
        snapshot = update.result_snapshot(created.metadata)
        return CommitResult.for_snapshot(created, snapshot, committed=True)

    with plan.phase("commit"):
        result = commit_written(
            staged.io,
            files,
            commit,
            forget=lambda: forget_job(jobs, staged.metadata, staged.io, key),
        )
    return ActionResult.from_commit(result, plan.done())
