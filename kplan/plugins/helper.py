"""Shared plugin helpers (pkg/scheduler/framework/plugins/helper)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from kplan.framework.interfaces import MAX_NODE_SCORE, Handle
from kplan.framework.registry import ArgsError

#: config.MaxCustomPriorityScore: the top score of a utilization shape's points
MAX_CUSTOM_PRIORITY_SCORE = 10


R = TypeVar("R")


def decode_rules(kind: type[R], handle: Handle, plugin: str) -> R:
    """The plugin's named rules at the handle's release (``release.plugin_rules``, stated in
    framework/release_tables.py), decoded into ``kind``, a frozen value with the same field names.
    A plugin does this once, in its constructor, and picks its strategy functions by the value."""
    return kind(**handle.release.plugin_rules[plugin])


class PluginBase:
    """What every in-tree plugin holds: its args and the scheduler handle."""

    name = ""
    #: extension points the plugin implements only where one of its release rules is on: point ->
    #: the rule's name (framework/registry.py points_of)
    ruled_points: ClassVar[Mapping[str, str]] = {}

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


# ------------------------------------------------------------------------------ utilization shapes

@dataclass(frozen=True)
class ShapePoint:
    """config.UtilizationShapePoint: a score (0..10) at a utilization (0..100)."""

    utilization: int
    score: int


def decode_shape(raw: Any, path: str) -> tuple[ShapePoint, ...]:
    """A shape's points from their v1 form (``[{utilization, score}]``), strictly."""
    points = []
    for i, p in enumerate(raw or []):
        if not isinstance(p, Mapping):
            raise ArgsError(f"{path}[{i}]: expected an object")
        for k in p:
            if k not in ("utilization", "score"):
                raise ArgsError(f'unknown field "{path}[{i}].{k}"')
        points.append(ShapePoint(_integer(p.get("utilization") or 0, "utilization"),
                                 _integer(p.get("score") or 0, "score")))
    return tuple(points)


def _integer(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ArgsError(f"{path}: expected an integer, got {v!r}")
    return int(v)


def shape_problems(shape: Sequence[ShapePoint], path: str) -> list[str]:
    """validateFunctionShape (validation_pluginargs.go): the problems of a shape at ``path``."""
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i].utilization <= shape[i - 1].utilization:
            errs.append(f"{path}[{i}].utilization: Invalid value: {shape[i].utilization}: "
                        "values must be sorted in increasing order")
            break
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= 100:
            errs.append(f"{path}[{i}].utilization: Invalid value: {p.utilization}: not in valid range [0, 100]")
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(f"{path}[{i}].score: Invalid value: {p.score}: "
                        f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
    return errs


def shape_json(shape: Sequence[ShapePoint]) -> str:
    """A shape as field.Invalid prints it (json.Marshal of the internal points, untagged)."""
    return "[" + ",".join(f'{{"Utilization":{p.utilization},"Score":{p.score}}}' for p in shape) + "]"


def broken_linear(shape: Sequence[ShapePoint], p: np.ndarray) -> np.ndarray:
    """helper.BuildBrokenLinearFunction with scores already scaled to 0..100."""
    pts = [(s.utilization, s.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for s in shape]
    out = np.full(p.shape, pts[-1][1], dtype=np.int64)
    done = np.zeros(p.shape, dtype=bool)
    for i, (u, s) in enumerate(pts):
        hit = ~done & (p <= u)
        if i == 0:
            out[hit] = s
        else:
            pu, ps = pts[i - 1]
            out[hit] = ps + trunc_div((s - ps) * (p[hit] - pu), u - pu)
        done |= hit
    return out
