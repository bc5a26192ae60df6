"""Asset checks of an Iceberg table, from one measurement
(:func:`icewright.actions.table_health`) per check run:

* ``iceberg_freshness``: the newest snapshot is younger than ``max_age_seconds``
  (superseded by Dagster's ``FreshnessPolicy`` on the asset, ``freshness_policy=`` of the
  factories, which Dagster evaluates itself; this check measures the table's own newest
  snapshot, whoever committed it, and stays for tables no sensor reports);
* ``iceberg_small_files``: at most ``max_small_file_share`` of the live data files are
  smaller than ``small_file_bytes`` (else: run a rewrite);
* ``iceberg_delete_files``: at most ``max_delete_file_ratio`` live delete files per live
  data file (a table written merge-on-read; else: run a rewrite, which applies them);
* ``iceberg_snapshot_count``: the history holds at most ``max_snapshots`` snapshots
  (else: expire);
* ``iceberg_schema``: the table's schema has the declared columns with their types and
  nullability (extra columns are allowed);
* ``iceberg_row_count_change``: the row count moved by at most ``max_row_change``
  (relative) from the previous snapshot.

:func:`iceberg_table_checks` returns the checks asked for, each with its severity
(``ERROR`` for the schema and freshness, ``WARN`` for the maintenance hints by
default) and a description saying what it measures and what to do when it fails. Each
check's metadata also carries every figure of the measurement
(:func:`icewright.actions.health_figures`, as ``icewright/<name>``: the numbers ``icewright
health`` prints and maintain decides from).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.dagster.assets import DEFAULT_RESOURCE_KEY, table_asset_key
from icewright.dagster.execution import with_resource
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.actions.health import TableHealth
    from icewright.dagster.resource import IcebergResource
    from icewright.spec.schema import Schema

__all__ = ["iceberg_table_checks"]

Evaluate = Callable[["TableHealth"], tuple[bool, dict[str, Any], str]]


def iceberg_table_checks(
    table: str,
    *,
    asset_key: dg.AssetKey | None = None,
    max_age_seconds: float | None = None,
    max_small_file_share: float | None = None,
    small_file_bytes: int | None = None,
    max_snapshots: int | None = None,
    schema: Schema | Mapping[str, Any] | str | None = None,
    max_row_change: float | None = None,
    max_delete_file_ratio: float | None = None,
    severities: Mapping[str, dg.AssetCheckSeverity] | None = None,
    resource_key: str = DEFAULT_RESOURCE_KEY,
    blocking: bool = False,
) -> list[dg.AssetChecksDefinition]:
    """The checks of ``table``'s asset (default key: the table name's parts) for every
    bound given (see the module docstring). ``severities`` overrides a check's severity
    by name; ``blocking`` makes failed ``ERROR`` checks stop downstream materializations."""
    from icewright.actions.health import DEFAULT_SMALL_FILE_BYTES

    _check_bounds(
        max_age_seconds=max_age_seconds,
        max_small_file_share=max_small_file_share,
        small_file_bytes=small_file_bytes,
        max_snapshots=max_snapshots,
        max_row_change=max_row_change,
        max_delete_file_ratio=max_delete_file_ratio,
        schema=schema,
    )
    key = asset_key or table_asset_key(table)
    small_bytes = small_file_bytes or DEFAULT_SMALL_FILE_BYTES
    wanted: list[tuple[str, str, dg.AssetCheckSeverity, Evaluate]] = []
    if max_age_seconds is not None:
        wanted.append(
            (
                "iceberg_freshness",
                f"The newest snapshot of {table} is at most {max_age_seconds:g} s old; "
                "when it fails, the table's writers have not committed in time.",
                dg.AssetCheckSeverity.ERROR,
                _freshness(max_age_seconds),
            )
        )
    if max_small_file_share is not None:
        wanted.append(
            (
                "iceberg_small_files",
                f"At most {max_small_file_share:.0%} of {table}'s live data files are under "
                f"{small_bytes} bytes; when it fails, run a rewrite (compaction).",
                dg.AssetCheckSeverity.WARN,
                _small_files(max_small_file_share),
            )
        )
    if max_delete_file_ratio is not None:
        wanted.append(
            (
                "iceberg_delete_files",
                f"{table} has at most {max_delete_file_ratio:g} live delete files per data "
                "file; when it fails, run a rewrite (it applies and drops them).",
                dg.AssetCheckSeverity.WARN,
                _delete_files(max_delete_file_ratio),
            )
        )
    if max_snapshots is not None:
        wanted.append(
            (
                "iceberg_snapshot_count",
                f"{table} keeps at most {max_snapshots} snapshots; when it fails, expire "
                "old snapshots.",
                dg.AssetCheckSeverity.WARN,
                _snapshot_count(max_snapshots),
            )
        )
    if schema is not None:
        from icewright.text.declaration import parse_schema

        declared = parse_schema(schema)
        wanted.append(
            (
                "iceberg_schema",
                f"{table} has the declared columns, types and nullability (more columns "
                "are allowed); when it fails, a writer changed the schema.",
                dg.AssetCheckSeverity.ERROR,
                _schema_matches(declared),
            )
        )
    if max_row_change is not None:
        wanted.append(
            (
                "iceberg_row_count_change",
                f"{table}'s row count changed by at most {max_row_change:.0%} from the "
                "previous snapshot; when it fails, look at the last commit's input.",
                dg.AssetCheckSeverity.WARN,
                _row_change(max_row_change),
            )
        )
    overrides = dict(severities or {})
    unknown = sorted(set(overrides) - {name for name, *_ in wanted})
    if unknown:
        raise ValidationError(
            f"severities names checks {unknown} that are not defined; the defined ones are "
            f"{[name for name, *_ in wanted]}"
        )
    return [
        _check(
            key,
            table,
            name,
            text,
            severity=overrides.get(name, sev),
            evaluate=ev,
            resource_key=resource_key,
            small_bytes=small_bytes,
            blocking=blocking,
        )
        for name, text, sev, ev in wanted
    ]


def _check_bounds(*, schema: object, **bounds: float | None) -> None:
    """Every bound is a number in its range, and at least one check is asked for."""
    if schema is None and all(v is None for v in bounds.values()):
        raise ValidationError(
            "iceberg_table_checks needs at least one bound (max_age_seconds, "
            "max_small_file_share, max_snapshots, schema, max_row_change or "
            "max_delete_file_ratio)"
        )
    limits = {
        "max_age_seconds": (0.0, None),
        "max_small_file_share": (0.0, 1.0),
        "small_file_bytes": (1.0, None),
        "max_snapshots": (1.0, None),
        "max_row_change": (0.0, None),
        "max_delete_file_ratio": (0.0, None),
    }
    for name, value in bounds.items():
        if value is None:
            continue
        low, high = limits[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or value < low
            or (high is not None and value > high)
        ):
            where = f">= {low:g}" + ("" if high is None else f" and <= {high:g}")
            raise ValidationError(f"{name} must be a number {where}, got {value!r}")


def _check(
    key: dg.AssetKey,
    table: str,
    name: str,
    description: str,
    *,
    severity: dg.AssetCheckSeverity,
    evaluate: Evaluate,
    resource_key: str,
    small_bytes: int,
    blocking: bool,
) -> dg.AssetChecksDefinition:
    def run(
        context: dg.AssetCheckExecutionContext, resource: IcebergResource
    ) -> dg.AssetCheckResult:
        from icewright.actions.health import health_figures, table_health

        health = table_health(table, catalog=resource.get_catalog(), small_file_bytes=small_bytes)
        passed, metadata, verdict = evaluate(health)
        # every check carries the whole measurement, under icewright health's names
        for figure, value in health_figures(health).items():
            if value is not None and figure != "snapshot_id":
                metadata[f"icewright/{figure}"] = value
        metadata["icewright/snapshot_id"] = dg.MetadataValue.text(str(health.snapshot_id))
        return dg.AssetCheckResult(
            passed=passed, severity=severity, metadata=metadata, description=verdict
        )

    return dg.asset_check(
        asset=key,
        name=name,
        description=description,
        blocking=blocking,
    )(
        with_resource(
            run,
            resource_key=resource_key,
            context=dg.AssetCheckExecutionContext,
            returns=dg.AssetCheckResult,
            name=name,
        )
    )


def _freshness(max_age: float) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        if h.snapshot_age_seconds is None:
            return False, {}, f"{h.table} has no snapshot yet"
        age = round(h.snapshot_age_seconds, 1)
        ok = age <= max_age
        return ok, {"age_seconds": age}, f"newest snapshot {age:g} s old (limit {max_age:g} s)"

    return evaluate


def _small_files(max_share: float) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        share = h.small_file_share
        meta = {"small_files": h.small_files, "data_files": h.data_files, "share": share}
        verdict = f"{h.small_files} of {h.data_files} data files are small ({share:.0%})"
        if share > max_share:
            verdict += ": run a rewrite"
        return share <= max_share, meta, verdict

    return evaluate


def _delete_files(max_ratio: float) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        ratio = h.delete_file_ratio
        meta = {"delete_files": h.delete_files, "data_files": h.data_files, "ratio": ratio}
        verdict = f"{h.delete_files} delete files over {h.data_files} data files ({ratio:.2f})"
        if ratio > max_ratio:
            verdict += ": run a rewrite"
        return ratio <= max_ratio, meta, verdict

    return evaluate


def _snapshot_count(limit: int) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        verdict = f"{h.snapshot_count} snapshots (limit {limit})"
        if h.snapshot_count > limit:
            verdict += ": expire old snapshots"
        return h.snapshot_count <= limit, {"snapshots": h.snapshot_count}, verdict

    return evaluate


def _schema_matches(declared: Schema) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        problems = _schema_problems(declared, h.schema)
        meta: dict[str, Any] = {"problems": len(problems)}
        if problems:
            return False, meta, "; ".join(problems)
        return True, meta, "the schema has every declared column"

    return evaluate


def _schema_problems(declared: Schema, actual: Schema) -> Sequence[str]:
    problems = []
    have = {f.name: f for f in actual.fields}
    for f in declared.fields:
        got = have.get(f.name)
        if got is None:
            problems.append(f"column {f.name!r} is missing")
        elif str(got.field_type) != str(f.field_type):
            problems.append(f"column {f.name!r} is {got.field_type}, declared {f.field_type}")
        elif got.required != f.required:
            want = "required" if f.required else "optional"
            problems.append(f"column {f.name!r} is not {want}")
    return problems


def _row_change(limit: float) -> Evaluate:
    def evaluate(h: TableHealth) -> tuple[bool, dict[str, Any], str]:
        change = h.record_change
        meta: dict[str, Any] = {
            "total_records": h.total_records,
            "previous_records": h.previous_records,
        }
        if change is None:
            return True, meta, "no previous row count to compare with"
        meta["change"] = change
        ok = abs(change) <= limit
        return ok, meta, f"row count changed by {change:+.1%} (limit {limit:.0%})"

    return evaluate
