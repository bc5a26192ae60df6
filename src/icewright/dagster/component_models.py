"""The typed blocks of :class:`~icewright.dagster.IcewrightComponent`'s ``defs.yaml``:
the catalog, a table, its partitions, freshness and checks, and maintenance. Each block
turns into what the factories take (:meth:`CatalogModel.resource`,
:meth:`PartitionsModel.definition`, :meth:`FreshnessModel.policy`); a block the factories
cannot use fails when the definitions load, with one line
(:class:`~icewright.errors.ValidationError`). Unknown fields and wrong types are refused
by Dagster when it reads the file (with the line of the YAML)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

import dagster as dg
from pydantic import ConfigDict, Field

from icewright.dagster.resource import IcebergResource, SparkConfig
from icewright.errors import ValidationError

__all__ = [
    "CatalogModel",
    "ChecksModel",
    "DimensionModel",
    "FreshnessModel",
    "MaintenanceModel",
    "PartitionsModel",
    "RestModel",
    "S3Model",
    "TableModel",
    "duration",
]

_REST_PREFIXES = ("http://", "https://", "rest+")


class S3Model(dg.Model):
    """Object storage of the table files (S3 or an S3-compatible store); secrets through
    ``{{ env.NAME }}``."""

    endpoint: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None


class RestModel(dg.Model):
    """How a REST catalog authenticates: an OAuth2 ``client_id:client_secret`` or a
    static bearer token (secrets through ``{{ env.NAME }}``)."""

    credential: str | None = None
    token: str | None = None


class CatalogModel(dg.Model):
    """The catalog: its ``kind`` (``sql``, ``filesystem``, ``glue``, ``rest``; omitted:
    from the ``uri``), where it is and where table files go, storage and REST settings in
    blocks of their own, any further catalog property in ``properties``. An empty block
    (``catalog: {}``) is the embedded default (SQLite in ``$ICEWRIGHT_HOME``)."""

    kind: Literal["sql", "filesystem", "glue", "rest"] | None = None
    uri: str | None = Field(
        default=None,
        description="sqlite:///..., postgresql+psycopg://..., a warehouse path, glue://, or "
        "a REST catalog's URL",
    )
    warehouse: str | None = None
    name: str | None = None
    config_file: str | None = Field(default=None, description="an icewright config file")
    s3: S3Model | None = None
    rest: RestModel | None = None
    properties: dict[str, str] = Field(default_factory=dict)

    def check(self) -> None:
        """What a kind needs and takes, in one line each."""
        kind = self.kind or ("rest" if (self.uri or "").startswith(_REST_PREFIXES) else None)
        if kind in ("sql", "rest") and not self.uri and not self.config_file:
            example = "sqlite:///..." if kind == "sql" else "https://catalog.example.com"
            raise ValidationError(f"catalog kind {kind} needs a uri ({example})")
        if kind == "filesystem" and not (self.uri or self.warehouse or self.config_file):
            raise ValidationError("catalog kind filesystem needs a warehouse (or a uri)")
        if self.rest is not None and kind != "rest":
            raise ValidationError(
                "catalog.rest configures a REST catalog: set kind: rest (or a uri of http(s)://)"
            )

    def resource(self, spark: SparkConfig) -> IcebergResource:
        """The :class:`~icewright.dagster.IcebergResource` this block describes."""
        self.check()
        s3 = self.s3 or S3Model()
        rest = self.rest or RestModel()
        return IcebergResource(
            config_file=self.config_file,
            catalog_uri=self.uri,
            catalog_type=self.kind,
            warehouse=self.warehouse,
            catalog_name=self.name,
            properties=dict(self.properties),
            s3_endpoint=s3.endpoint,
            s3_region=s3.region,
            s3_access_key_id=s3.access_key_id,
            s3_secret_access_key=s3.secret_access_key,
            s3_session_token=s3.session_token,
            rest_credential=rest.credential,
            rest_token=rest.token,
            spark=spark,
        )


_TIME_KINDS = {
    "hourly": dg.HourlyPartitionsDefinition,
    "daily": dg.DailyPartitionsDefinition,
    "weekly": dg.WeeklyPartitionsDefinition,
    "monthly": dg.MonthlyPartitionsDefinition,
}


class DimensionModel(dg.Model):
    """One dimension of partitions: ``type`` ``hourly``/``daily``/``weekly``/``monthly``
    (from ``start_date``, optional ``end_date`` and ``timezone``), ``static`` (``keys``)
    or ``dynamic`` (``name``: keys added at run time)."""

    type: Literal["hourly", "daily", "weekly", "monthly", "static", "dynamic"]
    start_date: str | None = None
    end_date: str | None = None
    timezone: str | None = None
    keys: list[str] | None = None
    name: str | None = None

    def definition(self, where: str) -> dg.PartitionsDefinition[str]:
        """The Dagster partitions definition (``where`` names the block in errors)."""
        if self.type == "static":
            if not self.keys:
                raise ValidationError(f"{where}: static partitions need keys (a list)")
            return dg.StaticPartitionsDefinition(list(self.keys))
        if self.type == "dynamic":
            if not self.name:
                raise ValidationError(f"{where}: dynamic partitions need a name")
            return dg.DynamicPartitionsDefinition(name=self.name)
        if not self.start_date:
            raise ValidationError(f"{where}: {self.type} partitions need a start_date")
        options = {"end_date": self.end_date, "timezone": self.timezone}
        try:
            made: dg.PartitionsDefinition[str] = _TIME_KINDS[self.type](
                start_date=self.start_date, **{k: v for k, v in options.items() if v}
            )
        except Exception as e:  # Dagster's own check of the dates
            raise ValidationError(f"{where}: {str(e).splitlines()[0]}") from None
        return made


class PartitionsModel(dg.Model):
    """A table's partitions: one dimension (``type`` and its fields as
    :class:`DimensionModel`), or ``type: multi`` with two named ``dimensions`` (mapped to
    columns by the table's ``partition_columns``)."""

    type: Literal["hourly", "daily", "weekly", "monthly", "static", "dynamic", "multi"]
    start_date: str | None = None
    end_date: str | None = None
    timezone: str | None = None
    keys: list[str] | None = None
    name: str | None = None
    dimensions: dict[str, DimensionModel] | None = None

    def definition(self, where: str) -> dg.PartitionsDefinition[str]:
        """The Dagster partitions definition (``where`` names the block in errors)."""
        if self.type != "multi":
            if self.dimensions is not None:
                raise ValidationError(f"{where}: dimensions are for type multi")
            one = self.model_dump(exclude={"dimensions"})
            return DimensionModel(**one).definition(where)
        dims = self.dimensions or {}
        if len(dims) != 2:
            raise ValidationError(
                f"{where}: multi partitions take two dimensions (name: partitions block), "
                f"got {sorted(dims)}"
            )
        return dg.MultiPartitionsDefinition(
            {name: d.definition(f"{where}.dimensions.{name}") for name, d in dims.items()}
        )


def duration(text: str | float, where: str) -> dt.timedelta:
    """``"26h"``, ``"90m"``, ``"2d"``, ``"30s"`` or a number of seconds."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return dt.timedelta(seconds=float(text))
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", str(text))
    if found is None:
        raise ValidationError(
            f"{where}: give a duration like 30m, 26h or 2d (or seconds), got {text!r}"
        )
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[found.group(2)]
    return dt.timedelta(**{unit: float(found.group(1))})


class FreshnessModel(dg.Model):
    """Dagster's freshness policy of a table's asset: a time window (``fail_window``,
    optional ``warn_window``: the asset fails freshness when its last materialization is
    older) or a cron deadline (``deadline_cron`` with ``lower_bound_delta``: a
    materialization in that window before each deadline). Durations: ``26h``, ``90m``,
    ``2d`` or seconds."""

    fail_window: str | float | None = None
    warn_window: str | float | None = None
    deadline_cron: str | None = None
    lower_bound_delta: str | float | None = None
    timezone: str = "UTC"

    def policy(self, where: str) -> dg.FreshnessPolicy:
        """The ``dg.FreshnessPolicy`` (``where`` names the block in errors)."""
        try:
            if self.fail_window is not None and self.deadline_cron is None:
                warn = self.warn_window
                return dg.FreshnessPolicy.time_window(
                    fail_window=duration(self.fail_window, f"{where}.fail_window"),
                    warn_window=None if warn is None else duration(warn, f"{where}.warn_window"),
                )
            if self.deadline_cron is not None and self.fail_window is None:
                if self.lower_bound_delta is None:
                    raise ValidationError(f"{where}: deadline_cron needs lower_bound_delta")
                return dg.FreshnessPolicy.cron(
                    deadline_cron=self.deadline_cron,
                    lower_bound_delta=duration(
                        self.lower_bound_delta, f"{where}.lower_bound_delta"
                    ),
                    timezone=self.timezone,
                )
        except ValidationError:
            raise
        except Exception as e:  # Dagster's own checks (a window under a minute, a cron)
            raise ValidationError(f"{where}: {str(e).splitlines()[0]}") from None
        raise ValidationError(
            f"{where}: give fail_window (and warn_window), or deadline_cron with lower_bound_delta"
        )


class ChecksModel(dg.Model):
    """Bounds of a table's asset checks (each check only when its bound is given).
    ``max_age_seconds`` is the superseded freshness check: prefer the table's
    ``freshness_policy``."""

    max_age_seconds: float | None = None
    max_small_file_share: float | None = None
    small_file_bytes: int | None = None
    max_snapshots: int | None = None
    max_row_change: float | None = None
    max_delete_file_ratio: float | None = None
    schema_matches: bool = Field(default=False, description="check the declared schema")


class TableModel(dg.Resolvable, dg.Model):
    """One table: its declaration, where its rows come from, its partitions, its asset's
    key, dependencies, owners, tags, automation condition and freshness, and its
    checks."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str
    table_schema: str | None = Field(default=None, alias="schema")
    partition_by: str | None = None
    sort_by: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    source: str | None = None
    mode: Literal["append", "replace", "table"] = "append"
    where: str | None = None
    partitions: PartitionsModel | None = None
    daily_partitions_start: str | None = Field(
        default=None, description="shorthand for partitions: {type: daily, start_date: ...}"
    )
    partition_column: str | None = None
    partition_columns: dict[str, str] | None = None
    key: str | None = Field(default=None, description="the asset key (default: a/b of a.b)")
    deps: list[str] = Field(
        default_factory=list, description="asset keys (a/b) or table names (a.b) it reads"
    )
    group_name: str | None = None
    description: str | None = None
    owners: list[str] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)
    automation_condition: Annotated[
        dg.AutomationCondition[Any] | None,
        dg.Resolver.default(
            model_field_type=str | None,
            description="a template: {{ dg.AutomationCondition.eager() }}",
        ),
    ] = None
    freshness_policy: FreshnessModel | None = None
    checks: ChecksModel | None = None


class MaintenanceModel(dg.Model):
    """The maintenance job over every declared table, and its schedule."""

    cron_schedule: str = "0 3 * * *"
    rewrite_min_input_files: int | None = 5
    expire_retain_last: int | None = None
    expire_older_than: str | None = None
    remove_orphans: bool = True
    running: bool = Field(default=False, description="start the schedule running")
    name: str | None = Field(default=None, description="the job's name (default per key)")
