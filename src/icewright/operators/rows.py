"""Operators that change rows by key or predicate: merge (upsert, CDC) and delete.

Each calls one action (:func:`icewright.actions.merge`, :func:`icewright.actions.delete`)
with the task instance's commit key; see :mod:`icewright.operators.base`. Deferrable
like the others (``deferrable=True`` with ``spark-submit``): the job runs detached
while the task defers, and its stored result is committed on resume.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icewright.operators.base import IcebergBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["IcebergDeleteOperator", "IcebergMergeOperator"]


class IcebergMergeOperator(IcebergBaseOperator):
    """Merge a source into a table by key (:func:`icewright.actions.merge`): matched rows
    are updated (or deleted where ``delete_when`` holds), the others inserted.

    :param table: ``"ns.table"`` (templated).
    :param source: as for :class:`~icewright.operators.IcebergAppendOperator`, e.g.
        ``"parquet:s3://landing/cdc/{{ ds }}/"`` (templated).
    :param on: the key columns, ``"id"`` or ``"id, day"`` (templated). A NULL key
        matches nothing.
    :param delete_when: SQL on the source row that deletes the matched row instead,
        e.g. ``"op = 'D'"`` (templated).
    :param update_set: ``"amount = target.amount + amount"``: update only these columns
        (templated).
    :param only_insert: leave matched rows alone.
    :param only_update: drop source rows that match nothing.
    :param dedupe_by: for a key repeated in the source, keep the row with the greatest
        value of this SQL expression (templated); without it a repeated key that matches
        a row fails the task (nothing committed).
    :param write_mode: ``"copy-on-write"`` or ``"merge-on-read"`` (default: the table's
        ``write.merge.mode``).
    :param branch: the branch (templated).
    :param wap_id: stage the snapshot under this write-audit-publish id instead of moving
        ``branch`` (templated; the table needs ``write.wap.enabled=true``); publish it with
        :class:`~icewright.operators.IcebergPublishOperator`. A staged commit is announced
        to no ``iceberg://`` outlet: its rows are not on the branch yet.
    """

    template_fields: Sequence[str] = (
        "table",
        "source",
        "on",
        "delete_when",
        "update_set",
        "dedupe_by",
        "branch",
        "wap_id",
        "commit_key",
    )

    def __init__(
        self,
        *,
        table: str,
        source: Any,
        on: str | Sequence[str],
        delete_when: str | None = None,
        update_set: str | None = None,
        only_insert: bool = False,
        only_update: bool = False,
        dedupe_by: str | None = None,
        write_mode: str | None = None,
        branch: str = "main",
        wap_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.source = source
        self.on = on
        self.delete_when = delete_when
        self.update_set = update_set
        self.only_insert = only_insert
        self.only_update = only_update
        self.dedupe_by = dedupe_by
        self.write_mode = write_mode
        self.branch = branch
        self.wap_id = wap_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.merge`."""
        from icewright.actions import merge

        return merge(
            self.table,
            self.source,
            on=self.on,
            catalog=self.catalog,
            delete_when=self.delete_when,
            update_set=self.update_set,
            only_insert=self.only_insert,
            only_update=self.only_update,
            dedupe_by=self.dedupe_by,
            mode=self.write_mode,  # type: ignore[arg-type]
            branch=self.branch,
            wap_id=self.wap_id or None,
            commit_key=commit_key,
            runner=self.make_runner(),
        )


class IcebergDeleteOperator(IcebergBaseOperator):
    """Delete the rows for which ``where`` is true (:func:`icewright.actions.delete`).

    :param table: ``"ns.table"`` (templated).
    :param where: a Spark SQL predicate, e.g. ``"day < '{{ macros.ds_add(ds, -90) }}'"``
        (templated); a row where it is NULL stays.
    :param write_mode: ``"copy-on-write"`` or ``"merge-on-read"`` (default: the table's
        ``write.delete.mode``). Files whose rows all match are dropped from metadata
        without a Spark job either way.
    :param branch: the branch (templated).
    :param wap_id: stage the snapshot under this write-audit-publish id instead of moving
        ``branch`` (templated; the table needs ``write.wap.enabled=true``); publish it with
        :class:`~icewright.operators.IcebergPublishOperator`. A staged commit is announced
        to no ``iceberg://`` outlet: its rows are not on the branch yet.
    """

    template_fields: Sequence[str] = ("table", "where", "branch", "wap_id", "commit_key")

    def __init__(
        self,
        *,
        table: str,
        where: str,
        write_mode: str | None = None,
        branch: str = "main",
        wap_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.where = where
        self.write_mode = write_mode
        self.branch = branch
        self.wap_id = wap_id

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """:func:`icewright.actions.delete`."""
        from icewright.actions import delete

        return delete(
            self.table,
            self.where,
            catalog=self.catalog,
            mode=self.write_mode,  # type: ignore[arg-type]
            branch=self.branch,
            wap_id=self.wap_id or None,
            commit_key=commit_key,
            runner=self.make_runner(),
        )
