"""``iceberg_snapshot_sensor``: start Dagster work when Iceberg tables get new snapshots.

Each tick polls every watched table through :class:`icewright.actions.SnapshotWatch`: a
table whose catalog pointer has not moved costs that one pointer read. New snapshots
(after the cursor's watermark, passing the filter: operations, branch, minimum added
records) each give

* a ``RunRequest`` of the sensor's target (a job or an asset selection) with the
  ``run_key`` ``<table>@<snapshot id>``, so that a tick evaluated twice (a daemon
  restart between evaluation and cursor update) starts no second run; the run's tags
  name the table, snapshot id, sequence number and operation, and ``icewright/source``
  the ``iceberg:`` range of the rows the run's snapshots added, which the write assets'
  source templates name ``{snapshot_source}`` (a downstream aggregate merges only the new
  rows);
* for snapshots not committed by a Dagster asset of icewright (an Airflow task, the
  ``icewright`` command, Spark, any other engine), a runless ``AssetMaterialization`` of
  the table's asset, so that downstream assets with automation conditions see the
  table change.

The cursor is JSON: per table, the watermark (snapshot id, sequence number, time) and
the metadata location last read. Watermarks survive snapshot expiry (a watermark
that left the branch orders by sequence number, see :mod:`icewright.actions.watch`)
and daemon restarts (the cursor is stored by Dagster). A table seen for the first time
starts at its current snapshot: its history is not announced (a table that does not
exist yet when first polled has every snapshot announced once it appears).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.commit.summary import COMMIT_KEY
from icewright.dagster.assets import DEFAULT_RESOURCE_KEY, SOURCE_TAG, table_asset_key
from icewright.dagster.execution import with_resource
from icewright.errors import NoSuchTable, ValidationError

if TYPE_CHECKING:
    from icewright.actions.watch import SnapshotFilter
    from icewright.catalog import Catalog
    from icewright.dagster.resource import IcebergResource
    from icewright.spec.snapshots import Snapshot

__all__ = ["iceberg_snapshot_sensor"]

DAGSTER_KEY_PREFIX = "dagster:"


def iceberg_snapshot_sensor(
    tables: Sequence[str] | Mapping[str, dg.AssetKey],
    *,
    name: str = "iceberg_snapshot_sensor",
    target: Any = None,
    operations: Iterable[str] | None = ("append", "overwrite", "delete"),
    branch: str = "main",
    min_added_records: int | None = None,
    report_external: bool = True,
    one_run_per_poll: bool = False,
    minimum_interval_seconds: int = 30,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
    description: str | None = None,
) -> dg.SensorDefinition:
    """A sensor over ``tables`` (names, or names mapped to their asset keys; default key:
    the name's parts) that requests runs of ``target`` (a job, an asset selection or
    assets; None: only report asset events) per new snapshot (see the module docstring).

    ``operations`` (None: any), ``min_added_records`` and ``branch`` filter the
    snapshots; ``report_external`` reports snapshots made outside Dagster as runless
    materializations of the tables' assets. With ``one_run_per_poll`` the new snapshots
    a tick finds in one table give one run (run key ``<table>@<newest snapshot id>``, tag
    ``icewright/snapshot_ids`` listing them all), for targets that refresh from the whole
    table (an aggregate) rather than per change.
    """
    from icewright.actions.watch import SnapshotFilter

    keys = (
        {str(t): k for t, k in tables.items()}
        if isinstance(tables, Mapping)
        else {str(t): table_asset_key(str(t)) for t in tables}
    )
    if not keys:
        raise ValidationError("iceberg_snapshot_sensor needs at least one table")
    snapshot_filter = SnapshotFilter.build(operations, None, min_added_records)
    if not isinstance(branch, str) or not branch:
        raise ValidationError(f"branch must be a non-empty ref name, got {branch!r}")

    def evaluate(context: dg.SensorEvaluationContext, resource: IcebergResource) -> dg.SensorResult:
        catalog = resource.get_catalog()
        cursor = _load_cursor(context.cursor)
        runs: list[dg.RunRequest] = []
        events: list[dg.AssetMaterialization] = []
        for table, asset_key in keys.items():
            try:
                found = _poll(catalog, table, branch, snapshot_filter, cursor)
            except NoSuchTable:
                # Watched before it exists: its first snapshots will all be new.
                context.log.info(f"{table}: no such table yet")
                cursor.setdefault(table, {"watermark": None, "location": None})
                continue
            if target is not None and found:
                if one_run_per_poll:
                    runs.append(_run_request(table, found[-1], found))
                else:
                    runs.extend(_run_request(table, s, (s,)) for s in found)
            for snapshot in found:
                if report_external and not _made_by_dagster(snapshot):
                    events.append(_materialization(table, asset_key, snapshot))
        return dg.SensorResult(
            run_requests=runs,
            asset_events=events,
            cursor=json.dumps(cursor, sort_keys=True),
            skip_reason=None if runs or events else "no new snapshots",
        )

    return dg.sensor(
        name=name,
        target=target,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        description=description
        or f"New snapshots of {', '.join(keys)} start runs and report asset events.",
    )(
        with_resource(
            evaluate,
            resource_key=resource_key,
            context=dg.SensorEvaluationContext,
            returns=dg.SensorResult,
            name=name,
        )
    )


def _load_cursor(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _poll(
    catalog: Catalog,
    table: str,
    branch: str,
    snapshot_filter: SnapshotFilter,
    cursor: dict[str, Any],
) -> tuple[Snapshot, ...]:
    """The new snapshots of ``table`` since the cursor; the cursor moves past them."""
    from icewright.actions.watch import SnapshotWatch, Watermark

    saved = cursor.get(table)
    state: dict[str, Any] | None = saved if isinstance(saved, dict) else None
    if state is None:
        watch = SnapshotWatch.open(catalog, table, branch=branch, filter=snapshot_filter)
        head = watch.head()
        cursor[table] = {
            "watermark": None if head is None else head.to_json(),
            "location": None,
        }
        return ()
    watch = SnapshotWatch.open(
        catalog,
        table,
        branch=branch,
        after=Watermark.from_json(state.get("watermark")),
        filter=snapshot_filter,
        last_location=state.get("location"),
    )
    result = watch.poll()
    if result.changed:
        watch.advance(result)
    cursor[table] = {
        "watermark": None if watch.after is None else watch.after.to_json(),
        "location": watch.last_location,
    }
    return result.snapshots


def _made_by_dagster(snapshot: Snapshot) -> bool:
    summary: Mapping[str, str] = snapshot.summary or {}
    key = summary.get(COMMIT_KEY, "")
    return key.startswith(DAGSTER_KEY_PREFIX)


def _snapshot_tags(table: str, snapshot: Snapshot) -> dict[str, str]:
    return {
        "icewright/table": table,
        "icewright/snapshot_id": str(snapshot.snapshot_id),
        "icewright/sequence_number": str(snapshot.sequence_number),
        "icewright/operation": str(snapshot.operation),
    }


def _run_request(table: str, snapshot: Snapshot, covered: Sequence[Snapshot]) -> dg.RunRequest:
    from icewright.actions.announce import range_source

    tags = _snapshot_tags(table, snapshot)
    tags["icewright/snapshot_ids"] = ",".join(str(s.snapshot_id) for s in covered)
    tags[SOURCE_TAG] = range_source(table, covered[0].parent_snapshot_id, snapshot.snapshot_id)
    return dg.RunRequest(run_key=f"{table}@{snapshot.snapshot_id}", tags=tags)


def _materialization(
    table: str, asset_key: dg.AssetKey, snapshot: Snapshot
) -> dg.AssetMaterialization:
    summary: Mapping[str, str] = snapshot.summary or {}
    meta: dict[str, Any] = {
        "dagster/table_name": table,
        "icewright/snapshot_id": dg.MetadataValue.text(str(snapshot.snapshot_id)),
        "icewright/sequence_number": snapshot.sequence_number,
        "icewright/operation": str(snapshot.operation),
        "icewright/added_records": _int(summary.get("added-records")),
        "icewright/deleted_records": _int(summary.get("deleted-records")),
    }
    total = summary.get("total-records")
    if total is not None and total.isdigit():
        meta["dagster/row_count"] = int(total)
    return dg.AssetMaterialization(
        asset_key=asset_key,
        description=f"snapshot {snapshot.snapshot_id} committed outside Dagster",
        metadata=meta,
        tags={"dagster/data_version": str(snapshot.snapshot_id)},
    )


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0
