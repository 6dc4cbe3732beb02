"""Shared plugin helpers (pkg/scheduler/framework/plugins/helper)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kplan.framework.interfaces import MAX_NODE_SCORE, Handle


class PluginBase:
    """What every in-tree plugin holds: its args and the scheduler handle."""

    name = ""

    def __init__(self, args: Any, handle: Handle) -> None:
        self.args = args
        self.handle = handle


def default_normalize(scores: np.ndarray, reverse: bool) -> np.ndarray:
    """DefaultNormalizeScore(MaxNodeScore, reverse, scores) of helper/normalize_score.go."""
    if len(scores) == 0:
        return scores
    top = int(scores.max())
    if top == 0:
        if reverse:
            return np.full_like(scores, MAX_NODE_SCORE)
        return scores
    out = MAX_NODE_SCORE * scores // top  # scores are >= 0 here, so floor == Go's truncation
    if reverse:
        out = MAX_NODE_SCORE - out
    return out


def trunc_div(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Go's integer division (truncates toward zero) on int64 arrays."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.asarray(np.where((a < 0) != (b < 0), -q, q))


def go_round(x: np.ndarray) -> np.ndarray:
    """math.Round: half away from zero, exactly (floor(x + 0.5) would round 0.49999999999999994 up)."""
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(x)
    return np.asarray(np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t))
