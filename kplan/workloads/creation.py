"""What creating one new pod does before the scheduler sees it: the API server's LimitRange
admission (limitrange.py), the parse into a typed Pod, and the claims the ephemeral volume
controller makes for its generic ephemeral volumes (ephemeral.py). Priority admission comes
later, when the run is built (kplan.scenario), because it needs the PriorityClasses.

Both ways pods are created share it: applying manifests (kplan.io.apply) and a what-if's new
nodes, which get their DaemonSets' pods (kplan.whatif.changes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kplan.model.objects import Pod
from kplan.model.parse import parse_pod
from kplan.workloads.common import Obj, sub
from kplan.workloads.ephemeral import ephemeral_claims
from kplan.workloads.limitrange import apply_limit_ranges


@dataclass(frozen=True)
class Created:
    pod: Pod
    #: the ephemeral volume controller's claims for the pod (dicts, each with a uid)
    claims: tuple[Obj, ...]
    #: (explicit spec.priority, explicit spec.preemptionPolicy): what priority admission respects
    explicit: tuple[bool, bool]


def create_pod_object(d: dict[str, Any], source: str, limit_ranges: Sequence[Mapping[str, Any]],
                      claim_uid: Callable[[], str]) -> Created:
    """One new pod ``d`` (changed in place by admission) with its namespace's LimitRanges;
    ``claim_uid`` gives each ephemeral claim its uid."""
    apply_limit_ranges(d, limit_ranges)
    pod = parse_pod(d, source, keep_raw=True)
    claims = []
    for claim in ephemeral_claims(d, pod.uid):
        claim["metadata"]["uid"] = claim_uid()
        claims.append(claim)
    spec = sub(d, "spec")
    return Created(pod, tuple(claims), (spec.get("priority") is not None, spec.get("preemptionPolicy") is not None))
