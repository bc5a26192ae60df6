"""The maintain operator: :func:`icewright.actions.maintain` from Airflow.

::

    IcebergMaintainOperator(task_id="maintain", table="sales.orders")
    IcebergMaintainOperator(task_id="maintain_sales", namespace="sales")
    IcebergMaintainOperator(task_id="maintain_all", all_tables=True, dry_run=True)

The XCom value holds, per table, the decisions with the figures they came from (the
same figures ``icewright health`` prints: :func:`icewright.actions.health_figures`),
what each step changed, and the figures before and after; see the class docstring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.errors import IcewrightError, ValidationError
from icewright.operators.base import IcebergBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["IcebergMaintainOperator"]


class IcebergMaintainOperator(IcebergBaseOperator):
    """Do the maintenance each table's policy says is due (compaction, manifest
    rewriting, expiry, orphan removal at most once per interval;
    :func:`icewright.actions.maintain`).

    :param table: ``"ns.table"`` (templated); or
    :param namespace: every table of this namespace (templated); or
    :param all_tables: every table of the catalog.
    :param dry_run: decide and report, change nothing.
    :param distributed: plan and run the steps' walks in Spark (True), in the task
        (False), or by each table's size (None).

    The XCom value is ``{"tables": [...]}``, one document per table
    (:meth:`icewright.actions.maintain.MaintainResult.to_document`: ``steps`` with
    ``due``, ``reason``, ``figures``, ``changes``; ``before`` and ``after`` figures);
    with ``table=`` its fields are also at the top level. The commit key of the try
    sequence makes the compaction and the manifest rewrite exactly-once (a retry finds
    them). A table that fails (or a failed step) fails the task after every table was
    maintained; bad input (an invalid ``icewright.maintain.*`` property of a single
    table, an unknown namespace) fails it without retries.
    """

    template_fields: Sequence[str] = ("table", "namespace", "commit_key")

    def __init__(
        self,
        *,
        table: str | None = None,
        namespace: str | None = None,
        all_tables: bool = False,
        dry_run: bool = False,
        distributed: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        chosen = [table is not None, namespace is not None, bool(all_tables)]
        if sum(chosen) != 1:
            raise ValidationError(
                "IcebergMaintainOperator needs exactly one of table=, namespace= or all_tables=True"
            )
        self.table = table
        self.namespace = namespace
        self.all_tables = bool(all_tables)
        self.is_dry_run = dry_run  # BaseOperator has a dry_run() method
        self.distributed = distributed

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.maintain` (or ``maintain_tables``)."""
        from icewright.actions.maintain import maintain, maintain_tables

        options: dict[str, Any] = {
            "catalog": self.catalog,
            "dry_run": self.is_dry_run,
            "commit_key": commit_key,
            "runner": self.make_runner(),
            "distributed": self.distributed,
        }
        if self.table is not None:
            return (maintain(self.table, **options),)
        return maintain_tables(namespace=self.namespace, **options)

    def result_payload(self, result: Any) -> dict[str, Any]:
        """``{"tables": [document, ...]}`` (see the class docstring); a failed table
        fails the task once every table is done."""
        documents = [r.to_document() for r in result]
        for doc in documents:
            self.log.info("%s: %s", doc["table"], _summary(doc))
        failed = [d for d in documents if d["failed"]]
        if failed:
            raise IcewrightError(
                f"maintenance failed for {', '.join(d['table'] for d in failed)}: "
                f"{_first_error(failed[0])}"
            )
        payload: dict[str, Any] = {"tables": documents}
        if self.table is not None and documents:
            payload.update(documents[0])
        return payload

    def extras_of(self, payload: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """The announcement of the snapshots the compaction and manifest rewrite of
        ``table`` committed (none for a namespace or the catalog)."""
        from icewright.actions.announce import commit_announcement

        if self.table is None or key is None:
            return {}
        ids = [
            s["changes"].get("snapshot_id")
            for s in payload.get("steps", ())
            if s.get("changed") and isinstance(s.get("changes"), Mapping)
        ]
        return {"payload": commit_announcement(self.table, ids, key, catalog=self.catalog)}


def _summary(doc: Mapping[str, Any]) -> str:
    if doc.get("error"):
        return f"failed: {doc['error']}"
    ran = [s["name"] for s in doc["steps"] if s["ran"]]
    due = [s["name"] for s in doc["steps"] if s["due"]]
    if doc["dry_run"]:
        return f"due: {', '.join(due) or 'nothing'}"
    return f"ran: {', '.join(ran) or 'nothing'}"


def _first_error(doc: Mapping[str, Any]) -> str:
    if doc.get("error"):
        return str(doc["error"])
    step = next(s for s in doc["steps"] if s["error"])
    return f"{step['name']}: {step['error']}"
