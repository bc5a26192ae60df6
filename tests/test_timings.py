"""The run's time report (``tests/support/timings.py``): every test's time, workers'
included, added up by folder and by module at the end of the run, and each module's
seconds kept in pytest's cache for a comparison with another run. One run of a small
suite serves both tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.timings import compare

REPO = Path(__file__).resolve().parents[1]

SLEEPS = """
import time


def test_one():
    time.sleep({seconds})


def test_two(subtests):
    for _ in range(2):
        with subtests.test():
            time.sleep({seconds} / 2)
"""


@pytest.fixture(scope="module")
def sleeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One pytest run on two workers over a fast and a slow folder of sleeping tests:
    its directory and its output."""
    root = tmp_path_factory.mktemp("sleeps")
    tests = root / "tests"
    for name, seconds in (("fast", 0.05), ("slow", 0.4)):
        (tests / name).mkdir(parents=True)
        (tests / name / f"test_{name}.py").write_text(SLEEPS.format(seconds=seconds))
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    pytest_run = [sys.executable, "-m", "pytest", "-p", "tests.support.timings"]
    done = subprocess.run(
        [*pytest_run, "-n", "2", "--dist", "loadfile", "-q", "tests"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    return root, out


def test_the_report_adds_up_every_workers_tests_by_folder_and_module(
    sleeps: tuple[Path, str],
) -> None:
    _, out = sleeps
    rows = re.findall(r"^\s*([\d.]+) s\s+(\d+) tests  (tests/\w+|in all)$", out, re.M)
    folders = {name: float(seconds) for seconds, _, name in rows}
    assert {name: int(count) for _, count, name in rows} == {
        "tests/slow": 2,
        "tests/fast": 2,
        "in all": 4,
    }, out
    # two tests of 0.4 s (one in two subtests, counted once), both workers' own
    assert 0.8 <= folders["tests/slow"] < 0.8 + 0.35, out
    assert folders["tests/fast"] < folders["tests/slow"], out
    assert abs(folders["in all"] - folders["tests/slow"] - folders["tests/fast"]) < 0.2, out
    assert re.search(r"^\s*[\d.]+ s\s+2 tests  tests/slow/test_slow\.py$", out, re.M), out
    assert re.search(r"machine slowdown at the end of the run: x\d+\.\d\d", out), out


def test_module_seconds_are_cached_for_a_comparison_of_two_runs(
    sleeps: tuple[Path, str],
) -> None:
    root, _ = sleeps
    cached = root / ".pytest_cache" / "v" / "icewright" / "module-seconds"
    modules = json.loads(cached.read_text())
    assert set(modules) == {"tests/fast/test_fast.py", "tests/slow/test_slow.py"}
    assert [count for _, count in modules.values()] == [2, 2]
    assert modules["tests/fast/test_fast.py"][0] < modules["tests/slow/test_slow.py"][0]
    slower = {**modules, "tests/fast/test_fast.py": [modules["tests/fast/test_fast.py"][0] + 5, 2]}
    (line,) = compare(modules, slower)
    assert line.endswith("(   +5.0)  tests/fast/test_fast.py"), line
    assert compare(modules, {})[0].endswith("tests/slow/test_slow.py")  # a module gone
