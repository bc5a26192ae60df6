"""How fast this machine runs right now, against the 2-core machine the time limit is set on.

The same clean-clone suite has taken 1558 s and 3422 s of pytest on machines of the same
kind: in a slow hour every process burns two to three times the CPU seconds for the same
work (CPU time, not only waiting for a core). A fixed wall-clock limit per test then fails
tests that did not change. ``slowdown()`` times a fixed piece of CPU work in this process's
own CPU time (so the other worker's load barely moves it) and says how many times slower
than the reference it ran; the per-test limit is scaled by it.
"""

from __future__ import annotations

import hashlib
import random
import time

# The probe's CPU time on the reference machine (2 cores, the suite running beside it):
# 0.083 s idle, 0.10 s with both cores busy; the busy figure is the reference, so a
# normally loaded run scales by 1.
REFERENCE_SECONDS = 0.10


def _work() -> int:
    """A fixed mix of interpreter, allocation and hashing work (about 0.1 CPU-s)."""
    rng = random.Random(27)
    values = sorted(rng.random() for _ in range(200_000))
    digest = hashlib.sha256()
    block = bytes(range(256)) * 4096
    for _ in range(24):
        digest.update(block)
    total = 0
    for i in range(300_000):
        total += i * i % 7
    return total + len(values) + digest.digest()[0]


def slowdown(rounds: int = 5) -> float:
    """How many times slower than the reference this machine runs now (at least 1).

    The best of ``rounds`` timings after one warm-up: a slow machine is slow in every round,
    while one unlucky round is not a slow machine.
    """
    _work()
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        _work()
        best = min(best, time.process_time() - start)
    return max(1.0, best / REFERENCE_SECONDS)
