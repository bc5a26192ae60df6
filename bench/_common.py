"""What the benchmarks share: the synthetic table's schema and files, and timing.

The files are what a Spark job would report for a table partitioned by ``day(ts)``:
file ``i`` of a batch lies in day ``FIRST_DAY + i % 30`` and holds ids
``i * 10_000 .. i * 10_000 + 9_999``, with full column metrics and bounds.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from icewright.manifest.data_file import DataFile, FileFormat
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType, TimestamptzType
from icewright.spec.values import to_bytes

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestamptzType()),
    NestedField(3, "region", StringType()),
    NestedField(4, "amount", DoubleType()),
)
DAY_US = 86_400_000_000
FIRST_DAY = 20_400  # days since the epoch (2025-11-08)
DAYS = 30
REPO = Path(__file__).resolve().parents[1]


def prepared_files(location: str, count: int, tag: str) -> list[DataFile]:
    """DataFiles as a Spark job would report them: partition, metrics, bounds."""
    files = []
    for i in range(count):
        day = FIRST_DAY + i % DAYS
        files.append(
            DataFile(
                file_path=f"{location}/data/ts_day={day}/{tag}-{i:05d}.parquet",
                file_format=FileFormat.PARQUET,
                partition=(day,),
                record_count=10_000 + i,
                file_size_in_bytes=1_000_000 + i,
                column_sizes={1: 80_000, 2: 80_000, 3: 20_000, 4: 80_000},
                value_counts={1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000},
                null_value_counts={1: 0, 2: 0, 3: 12, 4: 3},
                nan_value_counts={4: 0},
                lower_bounds={
                    1: to_bytes(LongType(), i * 10_000),
                    2: to_bytes(TimestamptzType(), day * DAY_US),
                    3: to_bytes(StringType(), "ap-south"),
                    4: to_bytes(DoubleType(), 0.5),
                },
                upper_bounds={
                    1: to_bytes(LongType(), i * 10_000 + 9_999),
                    2: to_bytes(TimestamptzType(), day * DAY_US + DAY_US - 1),
                    3: to_bytes(StringType(), "us-west"),
                    4: to_bytes(DoubleType(), 999.5),
                },
                split_offsets=(4,),
            )
        )
    return files


def median_seconds(
    prepare: Callable[[int], object], run: Callable[[int, object], None], repeat: int
) -> float:
    """Median wall time of ``run``; what ``prepare`` builds is not timed."""
    return interleaved_medians({"run": (prepare, run)}, repeat)["run"]


def interleaved_medians(
    cases: Mapping[str, tuple[Callable[[int], object], Callable[[int, object], float | None]]],
    repeat: int,
) -> dict[str, float]:
    """Median wall time of each case's ``run`` (what its ``prepare`` builds is not timed;
    a ``run`` that returns seconds measured itself, e.g. in another process, gives those),
    the cases taking turns: round ``i`` runs every case once. A machine whose speed drifts
    over minutes then slows every case alike, and their ratios stay readable."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for i in range(repeat):
        for name, (prepare, run) in cases.items():
            prepared = prepare(i)
            start = time.perf_counter()
            measured = run(i, prepared)
            elapsed = time.perf_counter() - start
            times[name].append(elapsed if measured is None else measured)
    return {name: statistics.median(values) for name, values in times.items()}


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def run_java(requests: list[dict[str, Any]], workdir: str) -> dict[str, Any]:
    """Answers of Iceberg Java (bench/_java_peer.py in ``.venv-java``) to ``requests``."""
    venv = Path(os.environ.get("ICEWRIGHT_JAVA_VENV") or REPO / ".venv-java")
    jar = subprocess.run(
        ["bash", str(REPO / "scripts" / "java-env")],
        env={**os.environ, "ICEWRIGHT_JAVA_VENV": str(venv)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]
    Path(workdir).mkdir(parents=True, exist_ok=True)
    request = Path(workdir) / "java-request.json"
    request.write_text(json.dumps({"jar": jar, "workdir": workdir, "requests": requests}))
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(REPO / "bench" / "_java_peer.py"), str(request)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"Iceberg Java failed ({done.returncode}):\n{done.stderr[-4000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
