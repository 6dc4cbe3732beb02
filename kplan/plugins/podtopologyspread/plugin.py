"""PodTopologySpread args (plugins/podtopologyspread/plugin.go, v1.34.1) and, for now, a guard.

The filter and score are not modelled yet: a pod with topologySpreadConstraints is refused as
unsupported rather than placed as if the constraints did not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.errors import UnsupportedError
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.registry import ArgsError
from kplan.framework.status import Status, skip
from kplan.model.objects import SCHEDULE_ANYWAY, Pod, SpreadConstraint
from kplan.model.parse import Where, parse_spread_constraints
from kplan.plugins.helper import PluginBase

NAME = "PodTopologySpread"
SYSTEM, LIST = "System", "List"
SYSTEM_DEFAULT_CONSTRAINTS = (
    SpreadConstraint(3, "kubernetes.io/hostname", SCHEDULE_ANYWAY, None),
    SpreadConstraint(5, "topology.kubernetes.io/zone", SCHEDULE_ANYWAY, None),
)


@dataclass
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM
    default_constraints: tuple[SpreadConstraint, ...] = ()
    raw_constraints: list[Any] = field(default_factory=list)

    def effective_defaults(self) -> tuple[SpreadConstraint, ...]:
        return SYSTEM_DEFAULT_CONSTRAINTS if self.defaulting_type == SYSTEM else self.default_constraints


def decode_args(raw: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("defaultConstraints", "defaultingType"):
            raise ArgsError(f'unknown field "{k}"')
    constraints = raw.get("defaultConstraints") or []
    if not isinstance(constraints, list):
        raise ArgsError("defaultConstraints: expected a list")
    return PodTopologySpreadArgs(str(raw.get("defaultingType") or SYSTEM), (), list(constraints))


def validate_args(args: PodTopologySpreadArgs) -> list[str]:
    """validation_pluginargs.go ValidatePodTopologySpreadArgs."""
    errs: list[str] = []
    if args.defaulting_type not in (SYSTEM, LIST):
        errs.append(f'defaultingType: Unsupported value: "{args.defaulting_type}": supported values: "List", "System"')
    if args.raw_constraints and args.defaulting_type != LIST:
        errs.append(f'defaultingType: Invalid value: "{args.defaulting_type}": when .defaultConstraints are not empty')
    seen: set[tuple[str, str]] = set()
    parsed = []
    for i, c in enumerate(args.raw_constraints):
        p = f"defaultConstraints[{i}]"
        if not isinstance(c, Mapping):
            errs.append(f"{p}: Invalid value: expected an object")
            continue
        if c.get("labelSelector") is not None:
            errs.append(f"{p}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod")
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            errs.append(f"{p}.maxSkew: Invalid value: {skew}: not in valid range (0, inf)")
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(f"{p}.topologyKey: Required value: can not be empty")
        when = c.get("whenUnsatisfiable") or ""
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(f'{p}.whenUnsatisfiable: Unsupported value: "{when}": supported values: '
                        '"DoNotSchedule", "ScheduleAnyway"')
        if (key, when) in seen:
            errs.append(f'{p}: Duplicate value: "{{{key}, {when}}}"')
        seen.add((key, when))
        if isinstance(skew, int) and skew > 0 and key and when in ("DoNotSchedule", "ScheduleAnyway"):
            parsed.append({k: v for k, v in c.items() if k != "labelSelector"})
    if not errs and parsed:
        args.default_constraints = parse_spread_constraints(parsed, Where("", "PodTopologySpreadArgs", ""),
                                                            "defaultConstraints", {})
    return errs


class PodTopologySpread(PluginBase):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if pod.spread_constraints:
            raise UnsupportedError(f"pod {pod.key}: topologySpreadConstraints are not modelled yet")
        return None, skip(NAME)

    def filter(self, state: CycleState, pod: Pod, table: object, rows: object) -> object:
        raise AssertionError("unreachable")

    def pre_score(self, state: CycleState, pod: Pod, table: object, rows: object) -> Status:
        return skip(NAME)

    def score(self, state: CycleState, pod: Pod, table: object, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64)
