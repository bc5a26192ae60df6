"""What every verb gets from the global options: the catalog, the Spark runner, where to
print. Built lazily, so verbs that need no Spark never start a JVM.

* ``--home DIR`` (or ``ICEWRIGHT_HOME``): the embedded default's home.
* ``--catalog URI``: what :func:`icewright.catalog.load_catalog` takes (a SQLAlchemy URL,
  a warehouse path or ``s3://`` URI, ``glue://``, ``rest+https://host`` for a REST catalog).
* ``--config FILE``: catalog properties in TOML or JSON, either at the top level or in a
  ``[catalog]`` table; an optional ``[spark]`` table may give ``master`` and ``conf``.
* ``--master URL`` (or ``ICEWRIGHT_SPARK_MASTER``): run the Spark jobs through
  ``spark-submit`` on that master; without it they run in an in-process local session.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

from icewright.errors import NamespaceAlreadyExists, ValidationError
from icewright.runners.local import LocalRunner
from icewright.runners.submit import submit_runner
from icewright.text.config import IcewrightConfig, read_config

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icewright.catalog import Catalog, Identifier
    from icewright.runners.base import Runner

__all__ = ["MASTER_ENV", "Context", "read_config"]

MASTER_ENV = "ICEWRIGHT_SPARK_MASTER"


class Context:
    """The catalog, runner and output streams of one command invocation."""

    def __init__(
        self,
        *,
        catalog: str | None = None,
        config: str | None = None,
        master: str | None = None,
        deploy_mode: str | None = None,
        spark_conf: Mapping[str, str] | None = None,
        json_output: bool = False,
        debug: bool = False,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
    ) -> None:
        self.json = json_output
        self.debug = debug
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        for option, value, instead in (
            ("--catalog", catalog, "a catalog URI such as sqlite:///lake.db"),
            ("--config", config, "a TOML or JSON file"),
            ("--master", master, "a Spark master URL such as spark://host:7077"),
        ):
            if value is not None and not value.strip():
                raise ValidationError(
                    f"{option} is empty: give {instead}, or leave the option out for the default"
                )
        self._catalog_uri = catalog
        settings = IcewrightConfig.load(config) if config is not None else IcewrightConfig()
        self._catalog_props = dict(settings.catalog)
        self.spark_conf = {**settings.spark_conf, **(spark_conf or {})}
        self.master = master or os.environ.get(MASTER_ENV) or settings.spark_master or None
        self.deploy_mode = deploy_mode
        self._catalog: Catalog | None = None
        self._runner: Runner | None = None
        self._spark: SparkSession | None = None

    # --- catalog -------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        """The catalog the options name (the embedded default when none)."""
        if self._catalog is None:
            from icewright.catalog import load_catalog

            if self._catalog_uri is not None:
                self._catalog = load_catalog(self._catalog_uri, **self._catalog_props)
            elif self._catalog_props:
                self._catalog = load_catalog(self._catalog_props)
            else:
                self._catalog = load_catalog(None)
        return self._catalog

    def ensure_namespace(self, ident: Identifier) -> None:
        """Create ``ident``'s namespace (and its parents) when missing, so that a first
        ``create`` on a fresh home works."""
        cat = self.catalog
        levels = tuple(ident.namespace)
        for depth in range(1, len(levels) + 1):
            ns = levels[:depth]
            if not cat.namespace_exists(ns):
                with contextlib.suppress(NamespaceAlreadyExists):  # created concurrently
                    cat.create_namespace(ns)

    def close(self) -> None:
        """Release the catalog's connections."""
        if self._catalog is not None:
            self._catalog.close()

    # --- Spark ---------------------------------------------------------------------------

    @property
    def spark(self) -> SparkSession:
        """The in-process session (the active one, or a new local one, quiet)."""
        if self._spark is None:
            from pyspark.sql import SparkSession

            from icewright.spark.session import local_session

            active = SparkSession.getActiveSession()
            if active is not None:
                self._spark = local_session()
            else:
                conf = dict(self.spark_conf)
                if self.master:
                    conf["spark.master"] = self.master
                from icewright.catalog import icewright_home

                conf.setdefault(
                    "spark.sql.warehouse.dir", str(icewright_home() / "spark-warehouse")
                )
                self._spark = local_session(**conf)
        return self._spark

    def spark_if_started(self) -> SparkSession | None:
        """The session if this command started (or adopted) one yet, else None."""
        return self._spark

    @property
    def local(self) -> bool:
        """Whether the Spark jobs run in this process (no ``--master``)."""
        return not self.master

    @property
    def runner(self) -> Runner:
        """Where the actions' Spark jobs run: ``spark-submit`` to ``--master``, or the
        in-process local session."""
        if self._runner is None:
            if self.master:
                self._runner = self._submit_runner(self.master)
            else:
                self._runner = _LazyLocalRunner(self)
        return self._runner

    def _submit_runner(self, master: str) -> Runner:
        return submit_runner(
            master,
            log=self._log if self.debug else None,
            deploy_mode=self.deploy_mode or None,
            conf=dict(self.spark_conf) if self.spark_conf else None,
        )

    def _log(self, line: str) -> None:
        self.stderr.write(line.rstrip("\n") + "\n")
        self.stderr.flush()


class _LazyLocalRunner(LocalRunner):
    """The local runner, starting the command's quiet session only when a job runs (so a
    bad predicate or a missing table fails before any JVM starts)."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(None)
        self._ctx = ctx

    @property
    def spark(self) -> SparkSession:
        """The command's session."""
        return self._ctx.spark
