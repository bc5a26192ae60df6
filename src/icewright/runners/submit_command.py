"""How :class:`~icewright.runners.submit.SparkSubmitRunner` invokes ``spark-submit``:
icewright shipped as a zip with a launcher, the command line from the settings, the
environment, and the error line of a failed job's log."""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from icewright.runners.job import IO_PROPERTIES_ENV
from icewright.runners.settings import SparkSubmitSettings

if TYPE_CHECKING:
    from icewright.io.base import FileIO

__all__ = ["last_error", "shipment", "spark_submit_command", "submit_environment"]

# --- shipping icewright ------------------------------------------------------------------

_SHIP_LOCK = threading.Lock()
_SHIPPED: dict[str, str] = {}
_NOT_SHIPPED = frozenset({".c", ".pyx", ".so", ".pyd"})
_LAUNCHER = "from icewright.runners.job import main\n\nraise SystemExit(main())\n"


def shipment() -> tuple[str, str]:
    """A zip of the icewright package and the launcher script (built once per process)."""
    with _SHIP_LOCK:
        if not _SHIPPED or not all(os.path.exists(p) for p in _SHIPPED.values()):
            import icewright

            root = Path(icewright.__file__).parent
            folder = Path(tempfile.mkdtemp(prefix="icewright-submit-"))
            archive = folder / "icewright.zip"
            with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
                for path in sorted(root.rglob("*")):
                    # a zip imports no compiled module: jobs decode manifests in Python
                    if path.suffix in _NOT_SHIPPED or "__pycache__" in path.parts:
                        continue
                    if path.is_file():
                        z.write(path, str(Path("icewright") / path.relative_to(root)))
            launcher = folder / "icewright_job.py"
            launcher.write_text(_LAUNCHER)
            _SHIPPED.update(zip=str(archive), launcher=str(launcher))
        return _SHIPPED["zip"], _SHIPPED["launcher"]


# --- the command -------------------------------------------------------------------------


def spark_submit_command(settings: SparkSubmitSettings, spec_path: str) -> list[str]:
    """The ``spark-submit`` command line that runs the job spec at ``spec_path``."""
    from icewright.spark.session import DEFAULT_CONF, JOB_SQL_CONF, quiet_java_options

    zip_path, launcher = shipment()
    s = settings
    conf: dict[str, str] = {
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.timeType.enabled": DEFAULT_CONF["spark.sql.timeType.enabled"],
        **JOB_SQL_CONF,
    }
    python = s.driver_python()
    if python:
        conf["spark.pyspark.python"] = python
        conf["spark.pyspark.driver.python"] = python
    if s.namespace:
        conf["spark.kubernetes.namespace"] = s.namespace
    conf.update(s.conf)
    if s.deploy_mode == "client":  # a cluster-mode driver cannot see this host's file
        options = quiet_java_options(conf.get("spark.driver.extraJavaOptions"))
        if options:
            conf["spark.driver.extraJavaOptions"] = options
    command = [s.binary(), "--master", s.master, "--deploy-mode", s.deploy_mode]
    command += ["--name", s.name]
    if s.queue:
        command += ["--queue", s.queue]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    if s.packages:
        command += ["--packages", ",".join(s.packages)]
    py_files = [*s.py_files, *([] if s.icewright_installed else [zip_path])]
    if py_files:
        command += ["--py-files", ",".join(py_files)]
    if s.driver_memory:
        command += ["--driver-memory", s.driver_memory]
    if s.executor_memory:
        command += ["--executor-memory", s.executor_memory]
    if s.num_executors is not None:
        command += ["--num-executors", str(s.num_executors)]
    return [*command, launcher, spec_path]


def submit_environment(settings: SparkSubmitSettings, io: FileIO | None) -> dict[str, str]:
    """The environment of ``spark-submit``: ours, with the driver's Python and the
    table's FileIO properties (:data:`~icewright.runners.job.IO_PROPERTIES_ENV`)."""

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYSPARK_GATEWAY_", "SPARK_CONNECT_"))
    }
    python = settings.driver_python()
    if python:
        env["PYSPARK_PYTHON"] = python
        env["PYSPARK_DRIVER_PYTHON"] = python
    if io is not None and io.properties:
        env[IO_PROPERTIES_ENV] = json.dumps(dict(io.properties))
    env.update(settings.env)
    return env


_ERROR_LINE = re.compile(r"\b(ERROR|Error|Exception|FATAL|Killed|error:)\b")


def last_error(tail: Sequence[str]) -> str:
    """The last line of a job's log that reports an error (else its last line), short."""
    lines = [line.strip() for line in tail if line.strip()]
    chosen = next((x for x in reversed(lines) if _ERROR_LINE.search(x)), None)
    chosen = chosen or (lines[-1] if lines else "no output")
    return f"last error line: {chosen[:300]}" if chosen != "no output" else "no output"
