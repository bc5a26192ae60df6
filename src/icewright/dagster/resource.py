"""``IcebergResource``: which catalog the assets work on and where their Spark jobs run.

It holds the same configuration as the Airflow ``icewright`` connection and the
command's ``--config`` file (which ``config_file`` reads, the fields on top): catalog
properties (what
:func:`icewright.catalog.load_catalog` takes) and ``spark-submit`` settings
(:class:`icewright.runners.settings.SparkSubmitSettings`)::

    IcebergResource(
        catalog_uri=dg.EnvVar("ICEBERG_CATALOG_URI"),     # postgresql+psycopg://...
        warehouse="s3://lake/warehouse",
        s3_endpoint="https://s3.eu-west-1.amazonaws.com",
        s3_access_key_id=dg.EnvVar("AWS_ACCESS_KEY_ID"),
        s3_secret_access_key=dg.EnvVar("AWS_SECRET_ACCESS_KEY"),
        spark=SparkConfig(master="spark://spark-master:7077", conf={...}),
    )

Secrets come from the environment through ``dg.EnvVar``: Dagster resolves them in the
step process, and neither the run config nor the UI shows their values. With nothing
set, the resource is the embedded default (SQLite in ``$ICEWRIGHT_HOME``, local Spark).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field, PrivateAttr

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Catalog
    from icewright.runners.base import Runner
    from icewright.text.config import IcewrightConfig

__all__ = ["IcebergResource", "SparkConfig"]

_SECRET_FIELDS = ("s3_secret_access_key", "s3_session_token")


class SparkConfig(dg.Config):
    """Where the Spark jobs run. No ``master``: in-process local Spark (the embedded
    default); a master (``spark://host:7077``, ``yarn``, ``k8s://...``, ``local[2]``):
    ``spark-submit`` with these settings."""

    master: str | None = Field(default=None, description="spark-submit master; none: local")
    deploy_mode: str = Field(default="client", description="client or cluster")
    conf: dict[str, str] = Field(default_factory=dict, description="Spark configuration")
    packages: list[str] = Field(default_factory=list, description="Maven coordinates")
    driver_memory: str | None = None
    executor_memory: str | None = None
    num_executors: int | None = None
    python: str | None = Field(default=None, description="the driver's and executors' Python")
    icewright_installed: bool = Field(
        default=False, description="the cluster's Python has icewright (not shipped as zip)"
    )


class IcebergResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """An icewright catalog and Spark runner for Dagster assets (see the module
    docstring). ``properties`` takes any further catalog property (``s3.*``, ``glue.*``,
    ``client.*``); the named fields override them."""

    config_file: str | None = Field(
        default=None, description="an icewright config file ([catalog], [spark]), as --config"
    )
    catalog_uri: str | None = Field(
        default=None,
        description="sqlite:///..., postgresql+psycopg://..., a warehouse path, s3://, glue://, "
        "or a REST catalog's URL (with catalog_type rest, or as rest+https://...)",
    )
    catalog_type: str | None = Field(default=None, description="sql, filesystem, glue or rest")
    warehouse: str | None = Field(default=None, description="where table files go")
    catalog_name: str | None = None
    properties: dict[str, str] = Field(default_factory=dict, description="catalog properties")
    s3_endpoint: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = Field(default=None, description="use dg.EnvVar")
    s3_session_token: str | None = Field(default=None, description="use dg.EnvVar")
    rest_credential: str | None = Field(
        default=None, description="REST catalog OAuth2 client_id:client_secret; use dg.EnvVar"
    )
    rest_token: str | None = Field(
        default=None, description="REST catalog static bearer token; use dg.EnvVar"
    )
    spark: SparkConfig = Field(default_factory=SparkConfig)

    _catalog: Catalog | None = PrivateAttr(default=None)

    def catalog_properties(self) -> dict[str, str]:
        """The catalog configuration as :func:`icewright.catalog.load_catalog` takes it
        (empty: the embedded default)."""
        props = dict(self._file().catalog)
        props.update({str(k): str(v) for k, v in self.properties.items()})
        named = {
            "type": self.catalog_type,
            "uri": self.catalog_uri,
            "warehouse": self.warehouse,
            "name": self.catalog_name,
            "s3.endpoint": self.s3_endpoint,
            "credential": self.rest_credential,
            "token": self.rest_token,
        }
        props.update({k: v for k, v in named.items() if v})
        credentials = {
            "access-key-id": self.s3_access_key_id,
            "secret-access-key": self.s3_secret_access_key,
            "session-token": self.s3_session_token,
            "region": self.s3_region,
        }
        for key, value in credentials.items():
            if value:
                # s3.* for the FileIO, client.* for Glue (as the Airflow hook sets them)
                props.setdefault(f"s3.{key}", value)
                props.setdefault(f"client.{key}", value)
        return props

    def get_catalog(self) -> Catalog:
        """The catalog (built once per resource instance, i.e. per step)."""
        if self._catalog is None:
            from icewright.catalog import load_catalog

            props = self.catalog_properties()
            uri = props.pop("uri", None) if "type" not in props else None
            if uri is not None:
                self._catalog = load_catalog(uri, **props)
            else:
                self._catalog = load_catalog(props or None)
        return self._catalog

    def get_runner(self, log: Callable[[str], None] | None = None) -> Runner:
        """Where the Spark jobs run: in-process local Spark, or ``spark-submit`` to
        ``spark.master`` (its output lines go to ``log``)."""
        spark = self.spark
        file = self._file()
        master = spark.master or file.spark_master
        if not master:
            from icewright.runners.local import LocalRunner

            return LocalRunner()
        from icewright.runners.submit import submit_runner

        settings: dict[str, Any] = {
            "deploy_mode": spark.deploy_mode,
            "conf": {**file.spark_conf, **spark.conf} or None,
            "packages": tuple(spark.packages) or None,
            "driver_memory": spark.driver_memory,
            "executor_memory": spark.executor_memory,
            "num_executors": spark.num_executors,
            "python": spark.python,
            "icewright_installed": spark.icewright_installed or None,
        }
        try:
            return submit_runner(master, log=log, **settings)
        except TypeError as e:  # a setting the runner does not take
            raise ValidationError(f"spark settings: {e}") from None

    def _file(self) -> IcewrightConfig:
        from icewright.text.config import IcewrightConfig

        return IcewrightConfig.load(self.config_file) if self.config_file else IcewrightConfig()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """Close the catalog's connections at the end of the step."""
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None

    def __repr__(self) -> str:
        # pydantic's repr would print the secrets
        shown = {
            k: ("***" if k in _SECRET_FIELDS and v else _without_password(v))
            for k, v in self.__dict__.items()
            if not k.startswith("_")
        }
        inner = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v not in (None, {}, []))
        return f"IcebergResource({inner})"

    __str__ = __repr__


def _without_password(value: object) -> object:
    """A URL's password replaced by ``***`` (other values as they are)."""
    if isinstance(value, str):
        return re.sub(r"(://[^/:@]*:)[^@/]*@", r"\1***@", value)
    return value
