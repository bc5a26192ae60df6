"""How to run ``spark-submit``: :class:`SparkSubmitSettings`, shaped like Airflow's
``spark`` connection (:meth:`SparkSubmitSettings.from_connection`: host is the master,
extras ``deploy-mode``, ``queue``, ``namespace``, ``spark-binary``, ``spark-home``,
``history-url``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icewright import LOCAL_SPARK_MASTER
from icewright.errors import ValidationError

__all__ = ["SPARK_BINARIES", "SparkSubmitSettings"]

SPARK_BINARIES = ("spark-submit", "spark2-submit", "spark3-submit")
"""The only ``spark-binary`` values a connection's extras may name (as Airflow allows:
whoever edits a connection must not choose the command that runs)."""

_DEPLOY_MODES = ("client", "cluster")


def _frozen(mapping: Mapping[str, Any] | None, what: str) -> Mapping[str, str]:
    if mapping is None:
        return types.MappingProxyType({})
    if not isinstance(mapping, Mapping):
        raise ValidationError(f"{what} must be a mapping of strings, got {mapping!r}")
    return types.MappingProxyType({str(k): str(v) for k, v in mapping.items()})


def _names(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class SparkSubmitSettings:
    """How to run ``spark-submit``.

    ``master``: ``local[2]``, ``spark://host:7077``, ``yarn``, ``k8s://https://...``.
    ``python``: the interpreter of the driver and the executors
    (``spark.pyspark.python``); default: this interpreter in client mode, the cluster's
    default in cluster mode. ``icewright_installed``: the cluster's Python has icewright,
    so it is not shipped as a zip. ``conf`` entries override icewright's defaults.
    ``detach``: keyed table jobs are started detached and the call raises
    :class:`~icewright.runners.store.JobSubmitted` (see the module docstring).
    ``history_url``: the Spark history server (``http://history:18080``) the operators'
    link to an application's page points at; without it the link is the driver's UI.
    """

    master: str = LOCAL_SPARK_MASTER
    deploy_mode: str = "client"
    queue: str | None = None
    namespace: str | None = None
    spark_binary: str = "spark-submit"
    conf: Mapping[str, str] = field(default_factory=dict, hash=False)
    packages: tuple[str, ...] = ()
    py_files: tuple[str, ...] = ()
    driver_memory: str | None = None
    executor_memory: str | None = None
    num_executors: int | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    python: str | None = None
    name: str = "icewright"
    icewright_installed: bool = False
    kill_timeout: float = 20.0
    detach: bool = False
    history_url: str | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.master, str) or not self.master.strip():
            raise ValidationError("SparkSubmitSettings needs a master (e.g. 'local[2]', 'yarn')")
        if self.deploy_mode not in _DEPLOY_MODES:
            raise ValidationError(
                f"deploy_mode must be 'client' or 'cluster', got {self.deploy_mode!r}"
            )
        if not isinstance(self.spark_binary, str) or not self.spark_binary:
            raise ValidationError("spark_binary must be a command name or a path")
        if self.num_executors is not None and (
            isinstance(self.num_executors, bool)
            or not isinstance(self.num_executors, int)
            or self.num_executors < 1
        ):
            raise ValidationError(f"num_executors must be a positive integer: {self.num_executors}")
        if self.history_url is not None and not str(self.history_url).startswith(
            ("http://", "https://")
        ):
            raise ValidationError(
                f"history_url must be an http(s) URL of a Spark history server, got "
                f"{self.history_url!r}"
            )
        set_(self, "conf", _frozen(self.conf, "conf"))
        set_(self, "env", _frozen(self.env, "env"))
        set_(self, "packages", _names(self.packages))
        set_(self, "py_files", _names(self.py_files))

    @classmethod
    def from_connection(
        cls,
        host: str | None,
        port: int | None,
        extra: Mapping[str, Any] | None,
        **overrides: Any,
    ) -> SparkSubmitSettings:
        """Settings from an Airflow ``spark`` connection's fields.

        The master is the host, with ``:<port>`` when a port is given (``spark://h`` and
        7077 give ``spark://h:7077``; a bare host name is a standalone master,
        ``spark://<host>``); ``yarn``, ``local[...]`` and ``k8s://...`` pass through. Extras
        (as Airflow reads them): ``deploy-mode``, ``queue``, ``namespace`` (sets
        ``spark.kubernetes.namespace``), ``spark-binary`` (one of :data:`SPARK_BINARIES`),
        ``spark-home`` (the binary is ``<spark-home>/bin/<spark-binary>``), ``history-url``
        (a Spark history server, for the operators' link to the application). ``overrides``
        set any field and win over the connection.
        """
        extra = dict(extra or {})
        values: dict[str, Any] = {"master": _master(host, port)}
        deploy_mode = extra.get("deploy-mode", extra.get("deploy_mode"))
        if deploy_mode:
            values["deploy_mode"] = str(deploy_mode)
        for key in ("queue", "namespace"):
            if extra.get(key):
                values[key] = str(extra[key])
        history = extra.get("history-url", extra.get("history_url"))
        if history:
            values["history_url"] = str(history)
        binary = extra.get("spark-binary", extra.get("spark_binary"))
        if binary:
            if binary not in SPARK_BINARIES:
                raise ValidationError(
                    f"the connection's spark-binary {binary!r} is not allowed: use one of "
                    f"{', '.join(SPARK_BINARIES)} (or pass spark_binary= in code)"
                )
            values["spark_binary"] = binary
        home = extra.get("spark-home", extra.get("spark_home"))
        if home:
            values["spark_binary"] = str(
                Path(str(home)) / "bin" / values.get("spark_binary", "spark-submit")
            )
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValidationError(
                f"unknown SparkSubmitSettings fields {unknown}: use {', '.join(sorted(known))}"
            )
        return cls(**{**values, **overrides})

    @property
    def is_standalone(self) -> bool:
        """Whether the master is a Spark standalone master (``spark://``)."""
        return self.master.startswith("spark://")

    def binary(self) -> str:
        """The ``spark-submit`` executable: a path as given, else found on PATH, else
        PySpark's own ``bin/spark-submit``."""
        if os.sep in self.spark_binary:
            return self.spark_binary
        found = shutil.which(self.spark_binary)
        if found:
            return found
        import pyspark

        own = Path(pyspark.__file__).parent / "bin" / self.spark_binary
        if own.exists():
            return str(own)
        raise ValidationError(
            f"cannot find {self.spark_binary!r} on PATH nor in PySpark's bin directory; "
            "install Spark or pass spark_binary='/path/to/spark-submit'"
        )

    def driver_python(self) -> str | None:
        """The Python of the driver and executors, or None for the cluster's default."""
        if self.python:
            return self.python
        return sys.executable if self.deploy_mode == "client" else None


def _master(host: str | None, port: int | None) -> str:
    if host is None or not str(host).strip():
        return LOCAL_SPARK_MASTER
    host = str(host).strip()
    bare = "://" not in host and not host.startswith(("local", "yarn"))
    if bare:
        host = f"spark://{host}"
    if port:
        authority = host.split("://", 1)[1] if "://" in host else host
        if not re.search(r":\d+$", authority):
            host = f"{host}:{int(port)}"
    return host
