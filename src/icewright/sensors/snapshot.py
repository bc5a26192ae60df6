"""``IcebergSnapshotSensor``: wait until an Iceberg table (or branch) has new snapshots.

"New" is one of:

* after a given snapshot id (``after_snapshot_id``, templated);
* after the branch head this sensor saw when it last succeeded (``since_previous_run``):
  kept as an XCom (key :data:`WATERMARK_XCOM_KEY`) of the sensor's task, read back from the
  latest earlier DAG run with ``include_prior_dates``. Airflow 3.3's task state store is
  scoped to one task instance (a run), so it cannot carry a value to the next run; the
  asset state store is per asset, shared by every sensor on the table. A first run (no
  earlier value) counts every snapshot of the branch;
* committed after the run's data interval end (``after_data_interval_end``, on the
  snapshot's ``timestamp-ms``), alone or with one of the above.

Filters: operations (default append, overwrite, delete: a compaction wakes no one),
summary key/values, minimum added records. The XCom return value is the list of new
snapshots passing them (:func:`icewright.actions.watch.snapshot_record`: id, parent,
sequence number, operation, timestamp-ms, added records, summary), oldest first.

Modes: ``poke`` keeps one :class:`~icewright.actions.watch.SnapshotWatch` across pokes
(one pointer read per poke while nothing changed); ``reschedule`` keeps the last metadata
location it examined in the task state store between pokes, for the same effect;
``deferrable=True`` pokes once, then hands the wait to
:class:`icewright.providers.triggers.IcebergSnapshotTrigger` and frees the worker slot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowFailException

from icewright.actions.arguments import check_seconds
from icewright.actions.watch import (
    DEFAULT_OPERATIONS,
    PollResult,
    SnapshotFilter,
    SnapshotWatch,
    Watermark,
)
from icewright.errors import BAD_INPUT, IcewrightError, ValidationError, one_line
from icewright.providers import DEFAULT_CONN_ID
from icewright.providers.hooks import catalog_for

if TYPE_CHECKING:
    from airflow.sdk import Context

    from icewright.catalog import Catalog

__all__ = ["LAST_LOCATION_KEY", "WATERMARK_XCOM_KEY", "IcebergSnapshotSensor"]

WATERMARK_XCOM_KEY = "icewright_snapshot_watermark"
"""XCom key of the branch head a sensor saw when it succeeded (``since_previous_run``)."""
LAST_LOCATION_KEY = "icewright.sensor.last-location"
"""Task state store key: the metadata location a rescheduled sensor already examined."""


def _optional_id(value: object) -> int | None:
    """A snapshot id from an argument or a rendered template (``""``/``"None"``: none)."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None", "null")):
        return None
    if isinstance(value, bool):
        raise ValidationError(f"after_snapshot_id must be a snapshot id, got {value!r}")
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        raise ValidationError(
            f"after_snapshot_id must be a snapshot id (an integer), got {value!r}"
        ) from None


def _epoch_ms(value: Any) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    raise ValidationError(
        "after_data_interval_end needs a run with a data interval (a scheduled run), "
        f"but data_interval_end is {value!r}"
    )


class IcebergSnapshotSensor(BaseSensorOperator):
    """Waits until ``table``'s ``branch`` has new snapshots passing the filters.

    :param table: the table, ``"namespace.table"`` (templated; keyword-only, as Airflow
        requires of operator arguments).
    :param iceberg_conn_id: the icewright connection (None: the embedded default catalog;
        the default id with no such connection also gives the embedded default). Not
        templated, as on the operators: it names the table's ``iceberg://`` asset, which
        Airflow needs when it parses the DAG.
    :param branch: the branch (or ``main``) whose ancestry is watched (templated).
    :param after_snapshot_id: wait for snapshots after this one (templated).
    :param since_previous_run: wait for snapshots after the head this sensor saw when it
        last succeeded (not together with ``after_snapshot_id``).
    :param after_data_interval_end: only snapshots committed after the run's data
        interval end count.
    :param operations: snapshot operations that count (None: any).
    :param summary_filters: summary key -> value that must all match (templated).
    :param min_added_records: a snapshot must add at least this many records.
    :param deferrable: wait in the triggerer instead of a worker slot.
    :param poll_interval: seconds between pointer reads (also the default
        ``poke_interval``).
    """

    template_fields: Sequence[str] = (
        "table",
        "branch",
        "after_snapshot_id",
        "summary_filters",
    )
    ui_color = "#cce5ff"

    def __init__(
        self,
        *,
        table: str,
        iceberg_conn_id: str | None = DEFAULT_CONN_ID,
        branch: str = "main",
        after_snapshot_id: int | str | None = None,
        since_previous_run: bool = False,
        after_data_interval_end: bool = False,
        operations: Sequence[str] | None = DEFAULT_OPERATIONS,
        summary_filters: Mapping[str, str] | None = None,
        min_added_records: int | None = None,
        deferrable: bool = False,
        poll_interval: float = 60.0,
        **kwargs: Any,
    ) -> None:
        # Not templated: a bad value fails when the DAG is parsed.
        seconds = check_seconds(poll_interval, "poll_interval")
        kwargs.setdefault("poke_interval", seconds)
        super().__init__(**kwargs)
        if since_previous_run and after_snapshot_id is not None:
            raise ValidationError(
                "give either after_snapshot_id or since_previous_run=True, not both"
            )
        # Checked now so a typo fails when the DAG is parsed, not after hours of waiting.
        SnapshotFilter.build(operations, None, min_added_records)
        self.table = table
        self.iceberg_conn_id = iceberg_conn_id
        self.branch = branch
        self.after_snapshot_id = after_snapshot_id
        self.since_previous_run = since_previous_run
        self.after_data_interval_end = after_data_interval_end
        self.operations = None if operations is None else list(operations)
        # Templated: anything but a mapping is refused when the sensor runs.
        self.summary_filters = (
            dict(summary_filters) if isinstance(summary_filters, Mapping) else summary_filters
        )
        self.min_added_records = min_added_records
        self.deferrable = deferrable
        self.poll_interval = seconds
        self._watch: SnapshotWatch | None = None
        self._lineage_catalog: Catalog | None = None
        self.lineage_snapshots: list[dict[str, Any]] | None = None
        """The new snapshots this try found (for OpenLineage)."""

    # --- the watch -----------------------------------------------------------------------

    def _filter(self, context: Context) -> SnapshotFilter:
        min_ts = None
        if self.after_data_interval_end:
            min_ts = _epoch_ms(context.get("data_interval_end"))
        return SnapshotFilter.build(
            self.operations, self.summary_filters, self.min_added_records, min_ts
        )

    def _previous_watermark(self, context: Context) -> Watermark | None:
        ti = context["ti"]
        value = ti.xcom_pull(
            task_ids=self.task_id, key=WATERMARK_XCOM_KEY, include_prior_dates=True
        )
        return Watermark.from_json(value)

    def watch(self, context: Context) -> SnapshotWatch:
        """This sensor's watch for the run (built on the first poke, then reused)."""
        if self._watch is not None:
            return self._watch
        watch = SnapshotWatch.open(
            catalog_for(self.iceberg_conn_id),
            self.table,
            branch=self.branch,
            filter=self._filter(context),
        )
        after_id = _optional_id(self.after_snapshot_id)
        known = watch.resolve_known(after_id)
        if known is not None:
            watch.after = known
        elif self.since_previous_run:
            watch.after = self._previous_watermark(context)
        self.log.info(
            "watching %s@%s for snapshots after %s (%s)",
            self.table,
            self.branch,
            None if watch.after is None else watch.after.snapshot_id,
            watch.filter,
        )
        self._watch = watch
        return watch

    # --- poke / reschedule ---------------------------------------------------------------

    def _restore_location(self, context: Context, watch: SnapshotWatch) -> None:
        store = context.get("task_state_store") if self.reschedule else None
        if store is None or watch.last_location is not None:
            return
        saved = store.get(LAST_LOCATION_KEY)
        after = None if watch.after is None else watch.after.to_json()
        if isinstance(saved, dict) and saved.get("after") == after:
            location = saved.get("location")
            watch.last_location = location if isinstance(location, str) else None

    def _save_location(self, context: Context, watch: SnapshotWatch) -> None:
        store = context.get("task_state_store") if self.reschedule else None
        if store is None or watch.last_location is None:
            return
        after: dict[str, Any] | None = None if watch.after is None else watch.after.to_json()
        store.set(LAST_LOCATION_KEY, {"location": watch.last_location, "after": after})

    # --- OpenLineage (the provider's listener calls these) ------------------------------

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        """Render the templates; with OpenLineage on, also read the catalog now (see
        :class:`icewright.operators.lineage.LineageMixin`)."""
        from icewright.providers.lineage import lineage_enabled

        super().render_template_fields(context, jinja_env)
        if lineage_enabled():
            try:
                self._lineage_catalog = catalog_for(self.iceberg_conn_id)
            except Exception as e:  # the sensor itself reports a bad connection
                self.log.debug("OpenLineage: the catalog is read later: %s", e)

    def get_openlineage_facets_on_start(self) -> Any:
        """The table as the input (no version yet)."""
        return self._lineage(None)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The table as the input, at the newest snapshot found (the range of the new
        snapshots as ``icewright_snapshotRange``)."""
        return self._lineage(self.lineage_snapshots)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """The table as the input (no version)."""
        return self._lineage(None)

    def _lineage(self, snapshots: Sequence[Mapping[str, Any]] | None) -> Any:
        from icewright.providers.lineage import operator_lineage, table_input

        span = None
        if snapshots:
            span = (snapshots[0].get("parent_snapshot_id"), int(snapshots[-1]["snapshot_id"]))
        try:
            catalog = self._lineage_catalog or catalog_for(self.iceberg_conn_id)
            inputs = [table_input(catalog, self.table, span=span)]
        except Exception as e:  # lineage never fails a task
            self.log.warning("OpenLineage: %s is left out: %s", self.table, e)
            inputs = []
        return operator_lineage(inputs)

    def _succeed(self, context: Context, result: PollResult) -> list[dict[str, Any]]:
        if result.head is not None:
            context["ti"].xcom_push(key=WATERMARK_XCOM_KEY, value=result.head.to_json())
        records = result.records()
        self.lineage_snapshots = records
        self.log.info(
            "%d new snapshot(s) on %s: %s",
            len(records),
            self.table,
            [r["snapshot_id"] for r in records],
        )
        return records

    def poke(self, context: Context) -> PokeReturnValue | bool:
        """One check: the pointer, and the metadata only when it moved. Bad input (an
        unknown table, branch or snapshot id, a bad filter) fails the task without
        retries, with a one-line reason."""
        try:
            return self._poke(context)
        except BAD_INPUT as e:
            raise AirflowFailException(one_line(e)) from None

    def _poke(self, context: Context) -> PokeReturnValue | bool:
        watch = self.watch(context)
        self._restore_location(context, watch)
        result = watch.poll()
        if result.found:
            return PokeReturnValue(is_done=True, xcom_value=self._succeed(context, result))
        if result.changed:
            self._save_location(context, watch)
        return False

    # --- deferrable ----------------------------------------------------------------------

    def execute(self, context: Context) -> Any:
        """Poke (or reschedule) as usual; deferrable: one poke, then the trigger."""
        if not self.deferrable:
            return super().execute(context)
        found = self.poke(context)
        if isinstance(found, PokeReturnValue) and found:
            return found.xcom_value
        from icewright.providers.triggers import IcebergSnapshotTrigger

        watch = self.watch(context)
        self.defer(
            trigger=IcebergSnapshotTrigger(
                self.table,
                iceberg_conn_id=self.iceberg_conn_id,
                branch=self.branch,
                after=None if watch.after is None else watch.after.to_json(),
                operations=self.operations,
                summary_filters=self.summary_filters,
                min_added_records=self.min_added_records,
                min_timestamp_ms=watch.filter.min_timestamp_ms,
                poll_interval=self.poll_interval,
                last_location=watch.last_location,
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Resume after the trigger fired: its snapshots, or its error."""
        if event.get("status") != "success":
            raise IcewrightError(
                f"waiting for snapshots on {event.get('table', self.table)} failed: "
                f"{event.get('message', event)}"
            )
        head = Watermark.from_json(event.get("head"))
        if head is not None:
            context["ti"].xcom_push(key=WATERMARK_XCOM_KEY, value=head.to_json())
        snapshots: list[dict[str, Any]] = list(event.get("snapshots") or [])
        self.lineage_snapshots = snapshots
        self.log.info(
            "%d new snapshot(s) on %s: %s",
            len(snapshots),
            self.table,
            [s.get("snapshot_id") for s in snapshots],
        )
        return snapshots
