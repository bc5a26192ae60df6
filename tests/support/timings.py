"""Where a test run's time went, printed at its end: by test folder and by module.

pytest's ``--durations`` names the slowest single tests; the suite's total is mostly many
tests of a few kinds (Airflow runs, Spark jobs, Java peers), so the terminal summary also
adds every test's setup, call and teardown up by folder (``tests/operators``) and names
the ten most expensive modules, with the machine's slowdown at the end of the run
(``tests.support.speed``): a total is comparable between runs only beside it. With
pytest-xdist the controller receives every worker's reports, so the figures cover the whole
run; summed over two workers they exceed the wall-clock total.

Every module's seconds and test count also go to pytest's cache
(``.pytest_cache/v/icewright/module-seconds``, a JSON object), so two runs can be compared
module by module: ``python -m tests.support.timings OLD.json NEW.json``.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.speed import slowdown

TOP_MODULES = 10
CACHE_KEY = "icewright/module-seconds"

SECONDS: collections.Counter[str] = collections.Counter()
"""Seconds per module node id (``tests/operators/test_clear.py``), this process's reports."""

TESTS: collections.Counter[str] = collections.Counter()
"""Tests run per module node id."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add a phase's duration to its module (on the controller, every worker's too); a
    subtest's report is left out: its time is inside its test's call."""
    if isinstance(report, pytest.SubtestReport):
        return
    module = report.nodeid.split("::", 1)[0]
    SECONDS[module] += report.duration
    if report.when == "call" or (report.when == "setup" and not report.passed):
        TESTS[module] += 1


def folder(module: str) -> str:
    """The test folder a module's node id belongs to (``tests/operators``; ``tests`` for
    a module at the top)."""
    parts = module.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Seconds by folder, the most expensive modules, and the machine's slowdown."""
    if getattr(config, "workerinput", None) is not None:
        return  # a worker: the controller prints the whole run's figures
    if not SECONDS:
        return
    by_folder: collections.Counter[str] = collections.Counter()
    tests: collections.Counter[str] = collections.Counter()
    for module, seconds in SECONDS.items():
        by_folder[folder(module)] += seconds
        tests[folder(module)] += TESTS[module]
    write = terminalreporter.write_line
    terminalreporter.section("test time by folder (setup + call + teardown, summed)")
    for name, seconds in by_folder.most_common():
        write(f"{seconds:9.1f} s {tests[name]:6d} tests  {name}")
    write(f"{sum(by_folder.values()):9.1f} s {sum(tests.values()):6d} tests  in all")
    terminalreporter.section(f"the {TOP_MODULES} most expensive modules")
    for name, seconds in SECONDS.most_common(TOP_MODULES):
        write(f"{seconds:9.1f} s {TESTS[name]:6d} tests  {name}")
    write(f"machine slowdown at the end of the run: x{slowdown():.2f} (1 = the reference)")
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    if cache is not None:
        cache.set(CACHE_KEY, {m: [round(s, 2), TESTS[m]] for m, s in sorted(SECONDS.items())})


def compare(old: dict[str, list[float]], new: dict[str, list[float]]) -> list[str]:
    """Lines naming every module whose seconds changed, the largest change first."""
    names = set(old) | set(new)
    before = {m: old[m][0] if m in old else 0.0 for m in names}
    after = {m: new[m][0] if m in new else 0.0 for m in names}
    changed = sorted(names, key=lambda m: (-abs(after[m] - before[m]), m))
    return [
        f"{before[m]:8.1f} -> {after[m]:8.1f} s ({after[m] - before[m]:+7.1f})  {m}"
        for m in changed
        if abs(after[m] - before[m]) >= 0.05
    ]


if __name__ == "__main__":
    before, after = (json.loads(Path(arg).read_text()) for arg in sys.argv[1:3])
    print("\n".join(compare(before, after)))
