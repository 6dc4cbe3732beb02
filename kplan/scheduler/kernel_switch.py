"""Whether the compiled scheduling cycle (scheduler/compiled.py) may run in this process: a
module of its own, without imports, so that the CLI sets it before any engine module loads
(``kplan --help`` loads none)."""

from __future__ import annotations

#: False: every cycle through the per-plugin Python alone (the CLI's KPLAN_KERNEL=python)
enabled = True


def use_kernel(on: bool) -> None:
    """Turn the compiled cycle on or off for this process (the Python path gives the same
    results)."""
    global enabled
    enabled = on
