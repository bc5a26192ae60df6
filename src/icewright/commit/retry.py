"""Commit retry policy: table properties ``commit.retry.*`` (spec: "Table Properties").

Only :class:`~icewright.errors.CommitFailed` is retried: it means another writer
moved the pointer first. Validation errors and unknown outcomes end the loop.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from icewright.errors import CommitFailed
from icewright.spec.properties import read_property

T = TypeVar("T")

NUM_RETRIES = "commit.retry.num-retries"
MIN_WAIT_MS = "commit.retry.min-wait-ms"
MAX_WAIT_MS = "commit.retry.max-wait-ms"
TOTAL_TIMEOUT_MS = "commit.retry.total-timeout-ms"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded by attempts and total time."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> RetryPolicy:
        """The table's policy; an invalid value (another engine wrote it) is replaced by
        the default with a warning, so that the table can still be committed to, and
        repaired (:mod:`icewright.spec.properties`)."""
        return cls(
            num_retries=read_property(properties, NUM_RETRIES),
            min_wait_ms=read_property(properties, MIN_WAIT_MS),
            max_wait_ms=read_property(properties, MAX_WAIT_MS),
            total_timeout_ms=read_property(properties, TOTAL_TIMEOUT_MS),
        )

    def backoff_ms(self, attempt: int) -> float:
        """How long to wait before retry number ``attempt`` (1-based)."""
        ceiling = min(self.max_wait_ms, self.min_wait_ms * (2 ** (attempt - 1)))
        # Full jitter keeps racing writers from retrying in lock step.
        return random.uniform(self.min_wait_ms, max(self.min_wait_ms, ceiling))

    def run(
        self,
        attempt: Callable[[int], T],
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> T:
        """Call ``attempt(n)`` until it returns, retrying only :class:`CommitFailed`.

        The last ``CommitFailed`` propagates once retries or time run out.
        """
        start = clock()
        n = 0
        while True:
            n += 1
            try:
                return attempt(n)
            except CommitFailed:
                elapsed_ms = (clock() - start) * 1000
                if n > self.num_retries or elapsed_ms >= self.total_timeout_ms:
                    raise
                wait = min(self.backoff_ms(n), max(0.0, self.total_timeout_ms - elapsed_ms))
                sleep(wait / 1000)


DEFAULT = RetryPolicy()
"""The defaults of the ``commit.retry.*`` table properties."""
