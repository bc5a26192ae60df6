"""Suite-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check, because the
suite runs on a shared 2-core machine where a slow example says nothing about
correctness; every property still runs its full number of examples.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("icewright", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("icewright")
