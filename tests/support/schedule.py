"""The order in which the suite's modules run: the longest first, by measured time.

``bash scripts/test`` hands whole modules to two pytest-xdist workers in collection order
(``--dist loadfile --no-loadscope-reorder``; without the second option xdist would order
them by their number of tests, which put the single-test end-to-end modules, the longest,
last). Longest first is the classic rule for two machines and jobs of known length: the
last modules to start are short, so both workers finish within seconds of each other.

The lengths are what a full run measured, per module (setup, call and teardown of every
test, summed), kept in ``tests/module_seconds.json``. A module the file does not know yet
counts :data:`UNKNOWN_TEST_SECONDS` per test. ``ICEWRIGHT_TEST_RECORD_SECONDS=1 bash
scripts/test`` rewrites the file from that run's own figures.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest

SECONDS_FILE = Path(__file__).resolve().parents[1] / "module_seconds.json"
UNKNOWN_TEST_SECONDS = 0.5
RECORD_ENV = "ICEWRIGHT_TEST_RECORD_SECONDS"


def module_seconds() -> dict[str, float]:
    """The recorded seconds per module (by path from the repository root)."""
    try:
        return {str(k): float(v) for k, v in json.loads(SECONDS_FILE.read_text()).items()}
    except (OSError, ValueError):
        return {}


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules by recorded length, longest first; tests keep their order inside one."""
    known = module_seconds()
    counts = collections.Counter(_module(i.nodeid) for i in items)

    def length(module: str) -> float:
        return known.get(module, counts[module] * UNKNOWN_TEST_SECONDS)

    first = {module: n for n, module in enumerate(dict.fromkeys(_module(i.nodeid) for i in items))}
    items.sort(key=lambda i: (-length(_module(i.nodeid)), first[_module(i.nodeid)]))


SPENT: collections.Counter[str] = collections.Counter()
"""Seconds per module of this process's run (the controller's: every worker reports to it)."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each module's time when asked to record."""
    if os.environ.get(RECORD_ENV) == "1":
        SPENT[_module(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the figures of the modules this run measured over their old ones (the
    controller only: a worker's reports reach it)."""
    if os.environ.get(RECORD_ENV) != "1" or hasattr(session.config, "workerinput") or not SPENT:
        return
    figures = {**module_seconds(), **{m: round(s, 1) for m, s in SPENT.items()}}
    SECONDS_FILE.write_text(json.dumps(dict(sorted(figures.items())), indent=1) + "\n")
