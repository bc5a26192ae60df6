"""The torture harness (bench/torture.py) in its small configuration, on every catalog
kind: 4 writers x 10 commits with compaction, expire and orphan removal running, three
SIGKILLs with re-runs, PostgreSQL connections terminated, S3 refusing PUTs. No row may be
lost or duplicated, no referenced file missing, no unreferenced file and no dead writer's
in-flight marker left."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = "--writers 4 --commits 10 --kills 3"


@pytest.mark.slow
def test_small_torture_run_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "torture.py"), *SMALL.split()],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert lines[-1].startswith(
        "torture: lost=0 duplicated=0 dangling=0 unreferenced=0 kinds=4 commits=160"
    ), lines
    assert lines[-1].endswith(" markers_left=0"), lines  # no killed writer's marker stays
    per_kind = [x for x in lines if x.startswith("torture[")]
    assert len(per_kind) == 4
    # Kills happen while writers run: a fast kind may finish before all three.
    assert all(" kills=0 " not in x for x in per_kind), per_kind
