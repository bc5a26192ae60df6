"""What each icewright operator reports to OpenLineage (Airflow's OpenLineage provider).

The provider's listener calls an operator's ``get_openlineage_facets_on_start``, then
``get_openlineage_facets_on_complete`` or ``get_openlineage_facets_on_failure``
(Airflow's operator guide); :class:`LineageMixin` implements the three for every
icewright operator:

* outputs: the table (or view) the operator writes, named by
  :func:`icewright.actions.lineage.table_identity`, with its schema, storage, symlink
  and lifecycle change (``CREATE``: a created table; ``OVERWRITE``: a replace, or
  a create ``or_replace``); on completion the snapshot the task left on its branch as
  the dataset version and, for a write, the rows, files and bytes it added
  (``outputStatistics``); the failure event carries what was known before the task
  ran (no version);
* inputs: the ``source`` (:func:`icewright.providers.lineage.source_inputs`); a view's
  referenced tables, and its SQL as the ``sql`` job facet;
* a maintain run over a namespace or the catalog reports the tables it maintained.

Everything of OpenLineage is imported when a method is called (by the provider's
listener, so never without the provider); a table that cannot be read is left out with a
warning: lineage never fails a task.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from icewright.catalog import Catalog

__all__ = ["LineageMixin"]

log = logging.getLogger(__name__)

Phase = Literal["start", "complete", "failure"]


class LineageMixin:
    """The OpenLineage methods of :class:`~icewright.operators.base.IcebergBaseOperator`
    (module docstring). An operator says what it changes with :attr:`lineage_lifecycle`
    (``"CREATE"``, ``"OVERWRITE"`` or None); :attr:`lineage_payload` is the XCom value of
    the finished action."""

    lineage_lifecycle: str | None = None
    """The ``lifecycleStateChange`` of the table this operator writes."""
    lineage_payload: Mapping[str, Any] | None = None
    """The XCom value of this try's action (set when it finished)."""

    commits_snapshot: bool = True

    if TYPE_CHECKING:  # provided by the operator

        @property
        def catalog(self) -> Catalog: ...

        @property
        def target(self) -> str | None: ...

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        """Render the templates; with OpenLineage on, also read the catalog now, in the
        task process: the provider builds the START event in a forked child by default,
        where reading the connection hangs (docs/operations.md, "Lineage")."""
        from icewright.providers.lineage import lineage_enabled

        super().render_template_fields(context, jinja_env)  # type: ignore[misc]
        if lineage_enabled():
            try:
                self.catalog  # noqa: B018 (cached by the operator's hook)
            except Exception as e:  # the task itself reports a bad connection
                log.debug("OpenLineage: the catalog is read later: %s", e)

    def get_openlineage_facets_on_start(self) -> Any:
        """The datasets this task will read and write (no versions yet)."""
        return self.lineage("start")

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The datasets read and written, with the snapshot committed and what it added."""
        return self.lineage("complete")

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """The datasets as known before the task ran (no output version)."""
        return self.lineage("failure")

    # --- what to report ------------------------------------------------------------

    def lineage(self, phase: Phase) -> Any:
        """The ``OperatorLineage`` of ``phase``."""
        from icewright.providers.lineage import operator_lineage, source_inputs

        payload = self.lineage_payload if phase == "complete" else None
        inputs: list[Any] = []
        sql: str | None = None
        source = getattr(self, "source", None)
        if source is not None:
            try:
                inputs, sql = source_inputs(source, self.catalog)
            except Exception as e:
                log.warning("OpenLineage: the inputs of %r are left out: %s", source, e)
        outputs = [
            d for d in (self.output_for(t, payload) for t in self.lineage_tables(payload)) if d
        ]
        return operator_lineage(inputs, outputs, sql=sql)

    def lineage_tables(self, payload: Mapping[str, Any] | None) -> list[str]:
        """The tables this operator writes: its target; a maintain run's tables."""
        if payload is not None and payload.get("tables") and not payload.get("table"):
            return [str(doc["table"]) for doc in payload["tables"]]
        return [] if self.target is None else [self.target]

    def lineage_change(self, payload: Mapping[str, Any] | None) -> str | None:
        """The ``lifecycleStateChange`` to report (:attr:`lineage_lifecycle`)."""
        return self.lineage_lifecycle

    def lineage_version(self, payload: Mapping[str, Any] | None, current: int | None) -> Any:
        """The output's dataset version: the snapshot the action committed (or found),
        else the table's current one; none before the action finished."""
        if payload is None:
            return None
        snapshot = payload.get("snapshot_id")
        return current if snapshot is None else snapshot

    def lineage_statistics(self, payload: Mapping[str, Any] | None) -> dict[str, int] | None:
        """``outputStatistics`` of a snapshot-committing action's result."""
        if payload is None or not self.commits_snapshot or payload.get("snapshot_id") is None:
            return None
        if "records_added" not in payload:
            return None
        stats = {
            "rowCount": int(payload.get("records_added") or 0),
            "fileCount": int(payload.get("files_added") or 0),
        }
        size = (payload.get("summary") or {}).get("added-files-size")
        if size is not None and str(size).isdigit():
            stats["size"] = int(size)
        return stats

    def output_for(self, table: str, payload: Mapping[str, Any] | None) -> Any:
        """The output dataset of ``table`` (None, with a warning, when it cannot be read;
        before a create, a table that does not exist yet is named by its catalog's
        default location)."""
        from icewright.actions.lineage import table_identity
        from icewright.errors import NoSuchTable
        from icewright.providers.lineage import file_format_of, output_dataset, table_facets

        catalog = self.catalog
        try:
            loaded = catalog.load_table(table)
        except NoSuchTable:
            loaded = None
        except Exception as e:
            log.warning("OpenLineage: %s is left out: %s", table, e)
            return None
        if loaded is None:
            try:
                location = getattr(self, "location", None) or catalog.default_table_location(table)
            except Exception as e:
                log.warning("OpenLineage: %s is left out: %s", table, e)
                return None
            identity = table_identity(catalog, table, location)
            lifecycle = self.lineage_change(payload)
            facets = table_facets(identity, file_format="parquet", lifecycle=lifecycle)
            return output_dataset(identity.dataset, facets)
        metadata = loaded.metadata
        current = metadata.current_snapshot()
        identity = table_identity(catalog, loaded.identifier, metadata.location)
        facets = table_facets(
            identity,
            schema=metadata.schema(),
            file_format=file_format_of(metadata.properties),
            version=self.lineage_version(payload, None if current is None else current.snapshot_id),
            lifecycle=self.lineage_change(payload),
        )
        return output_dataset(identity.dataset, facets, self.lineage_statistics(payload))
