"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go, v1.34.1).

PreScore: Skip for pods that request none of the resources (best-effort pods).
Score (reference 4.2): ``int((1 - std) * 100)`` of the requested fractions (capped at 1) of the
configured resources, float64 as upstream; real requests, pod-level resources honoured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.cluster.resources import gather
from kplan.framework.cycle_state import CycleState
from kplan.framework.status import OK, Status, skip
from kplan.model.objects import Pod
from kplan.model.parse import is_scalar_resource
from kplan.plugins.helper import MAX_NODE_SCORE, PluginBase
from kplan.plugins.noderesources.fit import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    _check_fields,
    decode_resource_specs,
)

NAME = "NodeResourcesBalancedAllocation"


@dataclass
class BalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def decode_args(raw: Mapping[str, Any] | None) -> BalancedAllocationArgs:
    raw = raw or {}
    _check_fields(raw, {"resources"}, "")
    resources = decode_resource_specs(raw.get("resources"), "resources") or DEFAULT_RESOURCES
    return BalancedAllocationArgs(tuple(ResourceSpec(r.name, r.weight or 1) for r in resources))


def validate_args(args: BalancedAllocationArgs) -> list[str]:
    errs = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        # upstream reports a duplicate name before a wrong weight of the same entry
        if r.name in seen:
            errs.append(f'resources[{i}].name: Duplicate value: "{r.name}"')
        seen.add(r.name)
        if r.weight != 1:
            errs.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
    return errs


class NodeResourcesBalancedAllocation(PluginBase):
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        if all(pod.requests.get(r.name, 0) == 0 for r in self.args.resources):
            return skip(NAME)
        return OK

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        cols, wanted = [], []
        for spec in self.args.resources:
            q = pod.requests.get(spec.name, 0)
            if q == 0 and is_scalar_resource(spec.name):
                continue
            col = table.res.get(spec.name)
            if col is None:
                continue
            cols.append(col)
            wanted.append(q)
        n = len(rows)
        if not cols:
            return np.full(n, MAX_NODE_SCORE, dtype=np.int64)
        alloc = gather(table.alloc_t, cols, rows)      # resources × nodes
        req = gather(table.requested_t, cols, rows) + np.array(wanted, dtype=np.int64)[:, None]
        live = alloc != 0
        all_live = bool(live.all())
        fractions = np.minimum(req / (alloc if all_live else np.where(live, alloc, 1)), 1.0)
        if len(cols) == 2 and all_live:
            # the usual cpu + memory case: std of two values is half their distance
            std = np.abs((fractions[0] - fractions[1]) / 2)
        else:
            std = np.zeros(n, dtype=np.float64)
            for k in range(n):
                fs = fractions[live[:, k], k]
                if len(fs) == 2:
                    std[k] = abs((fs[0] - fs[1]) / 2)
                elif len(fs) > 2:
                    # float64 sums in upstream's order, so the last bit matches
                    total = 0.0
                    for x in fs:
                        total += x
                    mean = total / len(fs)
                    acc = 0.0
                    for x in fs:
                        acc = acc + (x - mean) * (x - mean)
                    std[k] = float(np.sqrt(acc / len(fs)))
        return np.asarray(((1 - std) * MAX_NODE_SCORE).astype(np.int64))
