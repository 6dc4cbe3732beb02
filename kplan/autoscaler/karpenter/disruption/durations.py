"""Go's time.ParseDuration, in seconds (the annotations and fields Karpenter reads as durations)."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)")


def go_duration_seconds(text: str) -> float | None:
    """time.ParseDuration's value in seconds ("1m30s", "-2.5h", "0"); None when it is not one."""
    sign, rest = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.removeprefix("+"))
    if rest == "0":
        return 0.0
    parts = _PART.findall(rest)
    if not rest or "".join(n + u for n, u in parts) != rest or any(n in ("", ".") for n, _ in parts):
        return None
    return sign * sum(float(n) * _UNITS[u] for n, u in parts)
