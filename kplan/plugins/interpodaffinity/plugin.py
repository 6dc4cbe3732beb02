"""InterPodAffinity args (plugins/interpodaffinity/plugin.go, v1.34.1) and, for now, a guard.

The filter and score are not modelled yet: a pod with pod (anti-)affinity is refused as
unsupported rather than placed as if the terms did not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.errors import UnsupportedError
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.registry import ArgsError
from kplan.framework.status import Status, skip
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "InterPodAffinity"


@dataclass
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def decode_args(raw: Mapping[str, Any] | None) -> InterPodAffinityArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"):
            raise ArgsError(f'unknown field "{k}"')
    out = InterPodAffinityArgs()
    if raw.get("hardPodAffinityWeight") is not None:
        out.hard_pod_affinity_weight = int(raw["hardPodAffinityWeight"])
    out.ignore_preferred_terms_of_existing_pods = bool(raw.get("ignorePreferredTermsOfExistingPods"))
    return out


def validate_args(args: InterPodAffinityArgs) -> list[str]:
    w = args.hard_pod_affinity_weight
    if not 0 <= w <= 100:
        return [f"hardPodAffinityWeight: Invalid value: {w}: not in valid range [0, 100]"]
    return []


class InterPodAffinity(PluginBase):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if pod.has_affinity:
            raise UnsupportedError(f"pod {pod.key}: pod affinity and anti-affinity are not modelled yet")
        return None, skip(NAME)

    def filter(self, state: CycleState, pod: Pod, table: object, rows: object) -> object:
        raise AssertionError("unreachable")

    def pre_score(self, state: CycleState, pod: Pod, table: object, rows: object) -> Status:
        return skip(NAME)

    def score(self, state: CycleState, pod: Pod, table: object, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64)
