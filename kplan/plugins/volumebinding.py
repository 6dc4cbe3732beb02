"""VolumeBinding (plugins/volumebinding/volume_binding.go, v1.34.1).

Until kplan models storage, pods with PVC volumes are refused when loaded, so PreFilter Skips
(upstream: a pod without PVCs). Its scorer only exists with the alpha StorageCapacityScoring
gate, so PreScore always Skips with the 1.34 defaults (reference 1.2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import PreFilterResult
from kplan.framework.registry import ArgsError
from kplan.framework.status import OK, Status, skip
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase

NAME = "VolumeBinding"


@dataclass
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600


def decode_args(raw: Mapping[str, Any] | None) -> VolumeBindingArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("bindTimeoutSeconds", "shape"):
            raise ArgsError(f'unknown field "{k}"')
    out = VolumeBindingArgs()
    if raw.get("bindTimeoutSeconds") is not None:
        out.bind_timeout_seconds = int(raw["bindTimeoutSeconds"])
    if raw.get("shape") is not None:
        raise ArgsError('shape: Invalid value: "shape": only allowed when the StorageCapacityScoring gate is on')
    return out


def validate_args(args: VolumeBindingArgs) -> list[str]:
    if args.bind_timeout_seconds < 0:
        return [f"bindTimeoutSeconds: Invalid value: {args.bind_timeout_seconds}: invalid BindTimeoutSeconds, "
                "should not be a negative value"]
    return []


class VolumeBinding(PluginBase):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return None, skip(NAME)

    def filter(self, state: CycleState, pod: Pod, table: object, rows: object) -> object:
        raise AssertionError("unreachable: PreFilter always skips")

    def pre_score(self, state: CycleState, pod: Pod, table: object, rows: object) -> Status:
        return skip(NAME)

    def score(self, state: CycleState, pod: Pod, table: object, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64)

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return OK

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        return OK
