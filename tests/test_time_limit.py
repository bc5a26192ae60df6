"""The suite's time guard (``tests/conftest.py``): a test outside the ``slow`` mark that
takes longer than the limit, scaled by the machine's slowdown, fails with its name and
time; a slow one does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.speed import slowdown

REPO = Path(__file__).resolve().parents[1]

CONFTEST = "from tests.conftest import pytest_runtest_makereport  # noqa: F401\n"
TESTS = """
import time

import pytest


def test_quick():
    pass


def test_dawdles():
    time.sleep(0.6)


@pytest.mark.slow
def test_slow_and_marked():
    time.sleep(0.6)
"""


def _run_guarded(tmp_path: Path, slowdown: str) -> tuple[int, str]:
    """Run TESTS under the guard with a 0.3 s limit and a fixed machine slowdown."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_guard.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    env = {
        **os.environ,
        "ICEWRIGHT_TEST_TIME_LIMIT": "0.3",
        "ICEWRIGHT_TEST_SLOWDOWN": slowdown,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_test_over_the_limit_fails_unless_marked_slow(tmp_path: Path) -> None:
    returncode, out = _run_guarded(tmp_path, slowdown="1")
    assert returncode == 1, out
    assert "1 failed, 2 passed" in out, out
    assert "test_guard.py::test_dawdles took 0.6 s, over the 0.3 s a test outside the slow" in out
    assert "x1.00 for this machine's speed now: 0.3 s" in out


def test_on_a_slower_machine_the_limit_grows_with_it(tmp_path: Path) -> None:
    returncode, out = _run_guarded(tmp_path, slowdown="3")
    assert returncode == 0, out
    assert "3 passed" in out, out


def test_the_probe_measures_the_same_work_each_time() -> None:
    first, second = slowdown(rounds=3), slowdown(rounds=3)
    assert first >= 1.0 and second >= 1.0
    assert max(first, second) / min(first, second) < 3
