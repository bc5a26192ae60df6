"""The Dagster half of the main job: the example project (``example_dagster/``) on the
same embedded default as the Airflow DAGs.

* :meth:`DagsterStage.tick` evaluates the project's ``orders_sensor`` once, as the
  daemon would, keeping its cursor under ``$ICEWRIGHT_HOME/dagster``: before the
  pipelines it remembers where ``sales.orders`` stands; after them it requests a run of
  ``refresh_revenue`` for the new snapshots (whoever committed them) and reports the
  Airflow commits as runless materializations of the table's asset.
* :meth:`DagsterStage.materialize` runs ``dagster asset materialize --select group:sales
  --partition <day>``: the day's orders (a replace of exactly that day), the daily
  aggregate, the view and the checks.
* :meth:`DagsterStage.launch` executes the runs the sensor requested.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFINITIONS = REPO / "example_dagster" / "definitions.py"


@dataclass
class SensorTick:
    """What one evaluation of the sensor found."""

    run_keys: list[str] = field(default_factory=list)
    requests: list[Any] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


class DagsterStage:
    """The example Dagster project, run against ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.dagster_home = home / "dagster"
        self.dagster_home.mkdir(parents=True, exist_ok=True)
        config = self.dagster_home / "dagster.yaml"
        if not config.exists():
            config.write_text("telemetry:\n  enabled: false\n")
        self.cursor_file = self.dagster_home / "orders_sensor.cursor"
        os.environ["DAGSTER_HOME"] = str(self.dagster_home)
        self._defs: Any = None

    @property
    def defs(self) -> Any:
        """The project's ``Definitions``, loaded from its file."""
        if self._defs is None:
            spec = importlib.util.spec_from_file_location("example_definitions", DEFINITIONS)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._defs = module.defs
        return self._defs

    def tick(self) -> SensorTick:
        """One evaluation of ``orders_sensor`` from the stored cursor."""
        import dagster as dg

        sensor = self.defs.resolve_sensor_def("orders_sensor")
        cursor = self.cursor_file.read_text() if self.cursor_file.exists() else None
        with dg.build_sensor_context(
            instance=dg.DagsterInstance.get(),
            cursor=cursor,
            resources={"iceberg": self.defs.resources["iceberg"]},
            definitions=self.defs,
        ) as context:
            result = sensor.evaluate_tick(context)
        if result.cursor is not None:
            self.cursor_file.write_text(result.cursor)
        instance = dg.DagsterInstance.get()
        for event in result.asset_events:
            instance.report_runless_asset_event(event)
        return SensorTick(
            run_keys=[r.run_key for r in result.run_requests],
            requests=list(result.run_requests),
            external=[str(e.metadata["icewright/snapshot_id"].value) for e in result.asset_events],
        )

    def materialize(self, day: str, log: Path) -> float:
        """``dagster asset materialize --select group:sales --partition <day>``; seconds taken."""
        args = ["asset", "materialize", "-f", str(DEFINITIONS), "--select", "group:sales"]
        args += ["--partition", day]
        print(
            f"  dagster {' '.join(args[:2])} --select group:sales --partition {day}  (log: {log})"
        )
        start = time.monotonic()
        env = {**os.environ, "ICEWRIGHT_HOME": str(self.home), "PYSPARK_PYTHON": sys.executable}
        with log.open("w") as out:
            done = subprocess.run(
                [str(Path(sys.executable).with_name("dagster")), *args],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        seconds = time.monotonic() - start
        if done.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
            raise SystemExit(f"dagster asset materialize failed after {seconds:.0f}s:\n{tail}")
        print(f"    done in {seconds:.1f}s", flush=True)
        return seconds

    def launch(self, tick: SensorTick) -> list[tuple[str, str]]:
        """Execute the runs ``tick`` requested (in this process); (run key, status) each."""
        import dagster as dg

        job = self.defs.resolve_job_def("refresh_revenue")
        done = []
        for request in tick.requests:
            tags = {**request.tags, "dagster/run_key": request.run_key}
            result = job.execute_in_process(
                instance=dg.DagsterInstance.get(),
                tags=tags,
                raise_on_error=False,
                run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
            )
            done.append((request.run_key, "success" if result.success else "failure"))
        return done
