"""Shared pytest settings: hypothesis profiles.

The default profile is fast and derandomized so CI is reproducible; HYPOTHESIS_PROFILE=thorough
explores much further by hand.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=200, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
