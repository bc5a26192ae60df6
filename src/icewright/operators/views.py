"""``IcebergPublishViewOperator``: a view version from SQL (``actions.publish_view``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.arguments import check_column_aliases
from icewright.operators.base import IcebergBaseOperator, to_jsonable

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["IcebergPublishViewOperator"]


class IcebergPublishViewOperator(IcebergBaseOperator):
    """Create a view, or give it a new version, with the schema Spark derives for ``sql``.

    :param view: ``"ns.view"`` (templated).
    :param sql: the query (templated; rendered as SQL in the UI), or the path of a
        ``.sql`` file, relative to the DAG's folder or ``template_searchpath``, whose
        rendered text is the query.
    :param comment: the view's comment (templated).
    :param column_comments: docs by final column name (templated).
    :param column_aliases: one name per query column.
    :param properties: view properties (templated).

    The XCom value is the view result (``view``, ``metadata_location``, ``version_id``,
    ``schema`` as Iceberg JSON, ``referenced_tables``); the outlet events carry
    ``view``, ``version_id`` and ``metadata_location``.
    """

    template_fields: Sequence[str] = ("view", "sql", "comment", "column_comments", "properties")
    template_fields_renderers = {"sql": "sql"}
    template_ext: Sequence[str] = (".sql",)
    commits_snapshot = False

    def __init__(
        self,
        *,
        view: str,
        sql: str,
        comment: str | None = None,
        column_comments: Mapping[str, str] | None = None,
        column_aliases: Sequence[str] | None = None,
        properties: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_column_aliases(column_aliases)  # not templated: refused when the DAG is parsed
        self.view = view
        self.sql = sql
        self.comment = comment
        self.column_comments = column_comments
        self.column_aliases = column_aliases
        self.properties = properties

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.publish_view`."""
        from icewright.actions import publish_view

        return publish_view(
            self.view,
            self.sql,
            catalog=self.catalog,
            comment=self.comment or None,
            column_comments=self.column_comments,
            column_aliases=self.column_aliases,
            properties=self.properties,
            runner=self.make_runner(),
        )

    def result_payload(self, result: Any) -> dict[str, Any]:
        """The view result, with ``committed`` True (a new version was written)."""
        payload = to_jsonable(result)
        return {**payload, "table": payload.get("view"), "committed": True}

    @property
    def target(self) -> str | None:
        """The view this operator publishes (its ``iceberg://`` outlets must name it)."""
        return str(self.view)

    def lineage(self, phase: Any) -> Any:
        """The view as the output (its schema, no storage) and the tables it reads as
        inputs (known when it was published), with its SQL as the ``sql`` job facet."""
        from icewright.actions.lineage import table_identity
        from icewright.providers.lineage import (
            operator_lineage,
            output_dataset,
            table_facets,
            table_input,
        )

        payload = self.lineage_payload if phase == "complete" else None
        outputs, inputs = [], []
        try:
            view = self.catalog.load_view(self.view)
            identity = table_identity(self.catalog, view.identifier, view.metadata.location)
            version = None if payload is None else payload.get("version_id")
            facets = table_facets(identity, schema=view.metadata.schema(), version=version)
            outputs.append(output_dataset(identity.dataset, facets))
        except Exception as e:  # not there yet (before its first version) or unreadable
            self.log.info("OpenLineage: the view %s is left out: %s", self.view, e)
        for table in (payload or {}).get("referenced_tables") or ():
            try:
                inputs.append(table_input(self.catalog, str(table)))
            except Exception as e:
                self.log.warning("OpenLineage: the input %s is left out: %s", table, e)
        return operator_lineage(inputs, outputs, sql=str(self.sql))

    def extras_of(self, payload: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """View events carry the view's name, version id and metadata location."""
        return {
            "view": payload.get("view"),
            "version_id": payload.get("version_id"),
            "metadata_location": payload.get("metadata_location"),
            "committed": True,
        }
