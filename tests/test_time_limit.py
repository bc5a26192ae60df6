"""The suite's time guard (``tests/conftest.py``): a test outside the ``slow`` mark that
takes longer than the limit fails with its name and time; a slow one does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_test_over_the_limit_fails_unless_marked_slow(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_guard.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    env = {
        **os.environ,
        "ICEWRIGHT_TEST_TIME_LIMIT": "0.3",
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
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 2 passed" in out, out
    assert "test_guard.py::test_dawdles took 0.6 s, over the 0.3 s a test outside the slow" in out
