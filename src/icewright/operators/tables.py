"""Operators that write table data: create, append, replace.

Each calls one action (:func:`icewright.actions.create`, ``append``, ``replace``) with
the task instance's commit key; see :mod:`icewright.operators.base`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.arguments import check_format_version
from icewright.operators.base import IcebergBaseOperator
from icewright.text.declaration import (
    parse_order,
    parse_partitioning,
    parse_properties,
    parse_schema,
)

if TYPE_CHECKING:
    from airflow.sdk import Context


__all__ = [
    "IcebergAppendOperator",
    "IcebergCreateTableOperator",
    "IcebergReplaceOperator",
    "as_schema",
]

# The declaration parsers are shared with the Dagster assets (icewright.text.declaration).
as_schema = parse_schema
_partition_spec = parse_partitioning
_sort_order = parse_order
_properties = parse_properties


class IcebergCreateTableOperator(IcebergBaseOperator):
    """Create a table (:func:`icewright.actions.create`) from ``schema`` or ``source``.

    :param table: ``"ns.table"`` (templated).
    :param schema: a ``Schema``, Iceberg schema JSON, or a column list (templated).
    :param source: create from a source's schema and rows instead (templated).
    :param partition_by: ``[("day", "ts"), ("bucket", "id", 16)]`` or
        ``"day(ts), bucket(16, id)"`` (templated).
    :param sort_by: ``["id", ("ts", "desc")]`` or ``"id, ts desc"`` (templated).
    :param properties: table properties (templated).
    :param if_not_exists: leave an existing table as it is (the result describes it).
    :param or_replace: replace an existing table (keeping its history).
    :param create_namespace: create the table's namespace first when it is missing.

    Deferrable from a source (``deferrable=True`` with ``spark-submit``): the table is
    created first (its schema from ``schema``, else from the source, which runs a short
    attached job), then the append's job runs detached and the task defers; on resume
    the append is committed. A job that fails, is lost or times out drops a table this
    task created (as :func:`~icewright.actions.create` does when its write fails).
    """

    template_fields: Sequence[str] = (
        "table",
        "schema",
        "source",
        "partition_by",
        "sort_by",
        "properties",
        "location",
        "commit_key",
    )

    def __init__(
        self,
        *,
        table: str,
        schema: Any = None,
        source: Any = None,
        partition_by: Any = None,
        sort_by: Any = None,
        properties: Mapping[str, str] | str | None = None,
        location: str | None = None,
        format_version: int = 2,
        if_not_exists: bool = False,
        or_replace: bool = False,
        create_namespace: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_format_version(format_version)  # not templated: refused when the DAG is parsed
        self.table = table
        self.create_namespace = create_namespace
        self.schema = schema
        self.source = source
        self.partition_by = partition_by
        self.sort_by = sort_by
        self.properties = properties
        self.location = location
        self.format_version = format_version
        self.if_not_exists = if_not_exists
        self.or_replace = or_replace

    def _ensure_namespace(self) -> None:
        from icewright.catalog import Identifier
        from icewright.errors import NamespaceAlreadyExists

        namespace = Identifier.parse(self.table).namespace
        catalog = self.catalog
        if self.create_namespace and not catalog.namespace_exists(namespace):
            try:
                catalog.create_namespace(namespace)
                self.log.info("created namespace %s", ".".join(namespace))
            except NamespaceAlreadyExists:  # created concurrently: what we wanted
                pass

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.create` (deferrable from a source: creation, then
        :func:`icewright.actions.append`; see the class docstring)."""
        from icewright.actions import create

        if self.deferrable and self.source and self.uses_spark_submit:
            return self._create_then_append(commit_key)
        schema = None if self.schema is None else as_schema(self.schema)
        self._ensure_namespace()
        return create(
            self.table,
            catalog=self.catalog,
            schema=schema,
            source=self.source,
            partition_by=_partition_spec(self.partition_by),
            sort_by=_sort_order(self.sort_by),
            properties=_properties(self.properties),
            location=self.location,
            format_version=self.format_version,
            if_not_exists=self.if_not_exists,
            or_replace=self.or_replace,
            commit_key=commit_key,
            runner=self.make_runner() if self.source else None,
        )

    def _create_then_append(self, commit_key: str | None) -> Any:
        """The deferrable form of a creation from a source: the two steps of
        :func:`icewright.actions.create` (``start_create``, then ``finish_create``, which
        the resumed task calls again), with the append's job detached."""
        from icewright.actions.create import finish_create, start_create

        runner = self.make_runner()
        timings: dict[str, float] = {}
        if self.resumed is None:  # the first call of this try: create the table
            schema = as_schema(self.schema) if self.schema is not None else None
            if schema is None:
                schema = runner.source_schema(self.source)
            self._ensure_namespace()
            started = start_create(
                self.table,
                catalog=self.catalog,
                schema=schema,
                partition_by=_partition_spec(self.partition_by),
                sort_by=_sort_order(self.sort_by),
                properties=_properties(self.properties),
                location=self.location,
                format_version=self.format_version,
                if_not_exists=self.if_not_exists,
                or_replace=self.or_replace,
            )
            if not started.result.committed:  # if_not_exists on an existing table
                return started.result
            made = started.made
            timings = dict(started.result.timings)
        else:
            made = bool(self.resumed.get("created"))
        self.defer_extra = {"created": made}
        return finish_create(
            self.table,
            self.source,
            catalog=self.catalog,
            made=made,
            commit_key=commit_key,
            runner=runner,
            timings=timings,
        )

    def lineage_change(self, payload: Mapping[str, Any] | None) -> str | None:
        """``CREATE`` (``OVERWRITE`` with ``or_replace``); none when an existing table is
        left as it is (``if_not_exists``)."""
        if payload is not None and not payload.get("committed"):
            return None
        if payload is None and self.if_not_exists and self.catalog.table_exists(self.table):
            return None
        return "OVERWRITE" if self.or_replace else "CREATE"

    def on_job_abandoned(self, context: Context) -> None:
        """Drop the table this task created when its deferred write was lost."""
        from icewright.actions.create import drop_created

        if self.resumed and self.resumed.get("created"):
            try:
                drop_created(self.table, catalog=self.catalog)
            except Exception as e:  # the lost job is the failure to report
                self.log.warning("could not drop %s: %s", self.table, e)


class IcebergAppendOperator(IcebergBaseOperator):
    """Append a source's rows in one snapshot (:func:`icewright.actions.append`).

    :param table: ``"ns.table"`` (templated).
    :param source: ``"sql:<query>"``, ``"<format>:<path>"``, a path or
        ``"pkg.module:function"`` (templated).
    :param allow_schema_evolution: add the source's extra columns to the schema.
    :param branch: the branch to append to (templated).
    :param wap_id: stage the snapshot under this write-audit-publish id instead of moving
        ``branch`` (templated; the table needs ``write.wap.enabled=true``); publish it with
        :class:`~icewright.operators.IcebergPublishOperator`. A staged commit is announced
        to no ``iceberg://`` outlet: its rows are not on the branch yet.
    """

    template_fields: Sequence[str] = ("table", "source", "branch", "wap_id", "commit_key")

    def __init__(
        self,
        *,
        table: str,
        source: Any,
        allow_schema_evolution: bool = False,
        branch: str = "main",
        wap_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.source = source
        self.allow_schema_evolution = allow_schema_evolution
        self.branch = branch
        self.wap_id = wap_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.append`."""
        from icewright.actions import append

        return append(
            self.table,
            self.source,
            catalog=self.catalog,
            allow_schema_evolution=self.allow_schema_evolution,
            branch=self.branch,
            wap_id=self.wap_id or None,
            commit_key=commit_key,
            runner=self.make_runner(),
        )


class IcebergReplaceOperator(IcebergBaseOperator):
    """Replace rows with a source's (:func:`icewright.actions.replace`): the whole table,
    the rows where ``where`` holds, or (``dynamic_partitions``) the partitions the source
    writes to.

    :param table: ``"ns.table"`` (templated).
    :param source: as for :class:`IcebergAppendOperator` (templated).
    :param where: a Spark SQL predicate such as ``"ts >= '{{ ds }}T00:00:00Z'"``
        (templated). The rows where it is TRUE are replaced, as ``DELETE ... WHERE`` in
        Spark SQL would: ``"region != 'emea'"`` leaves rows with a NULL region alone (write
        ``"region != 'emea' OR region IS NULL"`` to replace those too).
    :param dynamic_partitions: replace the partitions the source's rows fall into.
    :param branch: the branch (templated).
    :param wap_id: stage the snapshot under this write-audit-publish id instead of moving
        ``branch`` (templated; the table needs ``write.wap.enabled=true``); publish it with
        :class:`~icewright.operators.IcebergPublishOperator`. A staged commit is announced
        to no ``iceberg://`` outlet: its rows are not on the branch yet.

    Deferrable (``deferrable=True`` with ``spark-submit``): the write job runs detached
    while the task defers; with ``where``, files that match only in part are rewritten by
    a second job (a second deferral); the first job's stored result is reused then.
    """

    template_fields: Sequence[str] = ("table", "source", "where", "branch", "wap_id", "commit_key")
    lineage_lifecycle = "OVERWRITE"

    def __init__(
        self,
        *,
        table: str,
        source: Any,
        where: str | None = None,
        dynamic_partitions: bool = False,
        branch: str = "main",
        wap_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.source = source
        self.where = where
        self.dynamic_partitions = dynamic_partitions
        self.branch = branch
        self.wap_id = wap_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.replace`."""
        from icewright.actions import replace

        return replace(
            self.table,
            self.source,
            catalog=self.catalog,
            where=self.where,
            dynamic_partitions=self.dynamic_partitions,
            branch=self.branch,
            wap_id=self.wap_id or None,
            commit_key=commit_key,
            runner=self.make_runner(),
        )
