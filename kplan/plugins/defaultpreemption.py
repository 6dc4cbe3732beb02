"""DefaultPreemption (plugins/defaultpreemption/default_preemption.go, v1.34.1).

PostFilter: when no node fits, find the node where evicting the fewest, least important pods
lets the pod fit (see framework/preemption.py) and nominate it. PreEnqueue: a pod whose
preemption is still in progress is held back; the simulator tracks that state itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kplan.framework.cycle_state import CycleState
from kplan.framework.diagnosis import Diagnosis
from kplan.framework.events import ASSIGNED_POD_DELETE, ClusterEvent
from kplan.framework.interfaces import (
    EnqueueExtensions,
    Handle,
    PostFilterPlugin,
    PreEnqueuePlugin,
    QueueingHint,
)
from kplan.framework.preemption import DryRunSizing, Evaluator, PreemptionOutcome, PreemptionRules
from kplan.framework.registry import ArgsError
from kplan.framework.status import OK, Code, Status
from kplan.model.objects import Pod
from kplan.plugins.helper import PluginBase, decode_rules

NAME = "DefaultPreemption"


@dataclass
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


def decode_args(raw: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
    raw = raw or {}
    for k in raw:
        if k not in ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"):
            raise ArgsError(f'unknown field "{k}"')
    out = DefaultPreemptionArgs()
    if raw.get("minCandidateNodesPercentage") is not None:
        out.min_candidate_nodes_percentage = int(raw["minCandidateNodesPercentage"])
    if raw.get("minCandidateNodesAbsolute") is not None:
        out.min_candidate_nodes_absolute = int(raw["minCandidateNodesAbsolute"])
    return out


def validate_args(args: DefaultPreemptionArgs) -> list[str]:
    errs = []
    p, a = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if not 0 <= p <= 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {p}: not in valid range [0, 100]")
    if a < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {a}: not in valid range [0, inf)")
    if p == 0 and a == 0:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {p}: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute")
    return errs


class DefaultPreemption(PluginBase, PreEnqueuePlugin, PostFilterPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        # how the last dry run went, kept between cycles for the next one's chunking only
        self._sizing = DryRunSizing()
        #: victim order, PDB matching and the no-victim node, as the release has them
        self.rules = decode_rules(PreemptionRules, handle, NAME)

    def pre_enqueue(self, pod: Pod) -> Status:
        if self.handle.preemption_in_progress(pod):
            return Status(Code.UNSCHEDULABLE, ("waiting for the preemption for this pod to be finished",), NAME)
        return OK

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> tuple[PreemptionOutcome | None, Status]:
        evaluator = Evaluator(self.handle.framework_for(pod), self.args, self.handle, self.rules, self._sizing)
        outcome = evaluator.preempt(state, pod, diagnosis)
        s = outcome.status
        if s.reasons:
            s = Status(s.code, (f"preemption: {s.message}",), NAME)
        elif s.ok and outcome.nominated_node is not None:
            nominated = self.handle.release.messages.preemption_nominated
            if nominated is not None:
                text = nominated.format(node=outcome.nominated_node, victims=len(outcome.victims))
                s = Status(s.code, (f"preemption: {text}",), NAME)
        return outcome, s

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        return [(ASSIGNED_POD_DELETE, _never)]


def _never(pod: Pod, event: ClusterEvent) -> bool:
    return False
