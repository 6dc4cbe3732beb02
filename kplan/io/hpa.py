"""``--hpa max|min|current``: each HorizontalPodAutoscaler of the inputs scales its target to that
bound, resolved against the parsed inputs into scale changes (kplan.io.scale), as ``--scale``
would with the same count.

* ``max``: ``spec.maxReplicas``; ``min``: ``spec.minReplicas`` (1 when unset, as the API
  defaults it); ``current``: ``status.currentReplicas``, or the target's declared replicas,
  with a note, when the object has no status; ``none``: no scaling (the declared replicas, the
  default).
* Targets are Deployments, StatefulSets, ReplicaSets and ReplicationControllers, by kind and
  name in the autoscaler's namespace. A target that is not among the cluster's objects and the
  manifests, or of another kind (a custom resource with a scale subresource), is a warning
  naming the autoscaler; nothing is scaled for it.
* Two autoscalers of one target: the HPA controller refuses to scale it (AmbiguousSelector); so
  does kplan, with a warning.
* A workload that ``--scale`` scales keeps that count: the explicit option wins, with a note.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kplan.errors import InputError
from kplan.model.autoscaling import HorizontalPodAutoscaler
from kplan.model.raw import RawObject
from kplan.scenario import Inputs
from kplan.whatif.changes import AutoscaledBy, ScaleWorkload

#: the values --hpa takes, in the order help texts list them
BOUNDS = ("max", "min", "current", "none")
#: the kinds an autoscaler's target may be that kplan scales
SCALABLE = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


def parse_bound(value: str, option: str = "--hpa") -> str:
    v = value.strip().lower()
    if v not in BOUNDS:
        raise InputError(f"{option} {value}: expected one of {', '.join(BOUNDS)}")
    return v


@dataclass(frozen=True)
class HpaTarget:
    """One autoscaler's target at a bound: the ``--scale`` value that scales it, and why."""

    #: KIND/NAMESPACE/NAME=REPLICAS, as --scale takes it
    spec: str
    #: "Deployment shop/web"
    workload: str
    by: AutoscaledBy


def _declared(obj: RawObject) -> int:
    spec = obj.doc.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, Mapping) else None
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1


def hpa_targets(inputs: Inputs, workloads: Mapping[tuple[str, str, str], RawObject], bound: str,
                scaled: Collection[str] = ()) -> tuple[list[HpaTarget], list[str]]:
    """The targets each autoscaler scales at ``bound`` (none for ``none``), in namespace/name
    order, and the warnings and notes about the others. ``scaled``: the workloads ("Deployment
    shop/web") that --scale already scales."""
    from kplan.workloads.common import MAX_PODS_PER_WORKLOAD

    if bound == "none":
        return [], []
    if not inputs.hpas:
        return [], [f"--hpa {bound}: the cluster and the manifests hold no HorizontalPodAutoscaler; nothing is scaled"]
    notes: list[str] = []
    by_target: dict[tuple[str, str, str], list[HorizontalPodAutoscaler]] = {}
    for key in sorted(inputs.hpas):
        hpa = inputs.hpas[key]
        by_target.setdefault((hpa.target.kind, hpa.namespace, hpa.target.name), []).append(hpa)
    out: list[HpaTarget] = []
    for (kind, ns, name), hpas in sorted(by_target.items(), key=lambda kv: (kv[0][1], kv[1][0].name)):
        hpa = hpas[0]
        where = f"{hpa.source + ': ' if hpa.source else ''}HorizontalPodAutoscaler {hpa.key}"
        workload = f"{kind} {ns}/{name}"
        if len(hpas) > 1:
            others = ", ".join(h.key for h in hpas)
            notes.append(f"HorizontalPodAutoscalers {others} all scale {workload}: the HPA controller scales "
                         "none of them (AmbiguousSelector); --hpa leaves it at its declared replicas")
            continue
        if kind not in SCALABLE:
            notes.append(f"{where}: spec.scaleTargetRef: kplan scales {', '.join(SCALABLE)}, not {kind}; "
                         f"--hpa {bound} leaves {kind} {ns}/{name} as it is")
            continue
        obj = workloads.get((kind, ns, name))
        if obj is None:
            notes.append(f"{where}: spec.scaleTargetRef: no {kind} named {name} in namespace {ns} in the cluster "
                         f"or the manifests; --hpa {bound} scales nothing for it")
            continue
        if workload in scaled:
            notes.append(f"{where}: {workload} is scaled by --scale, which wins over --hpa {bound}")
            continue
        if bound == "max":
            n, field = hpa.max_replicas, "maxReplicas"
        elif bound == "min":
            n, field = hpa.min_replicas, "minReplicas"
        elif hpa.current_replicas is not None:
            n, field = hpa.current_replicas, "status.currentReplicas"
        else:
            n, field = _declared(obj), "no status: the declared replicas"
            notes.append(f"{where}: has no status (status.currentReplicas); --hpa current keeps {workload} at its "
                         f"declared {n} replica{'s' if n != 1 else ''}")
        if n > MAX_PODS_PER_WORKLOAD:
            raise InputError(f"{where}: spec.{'maxReplicas' if bound == 'max' else 'minReplicas'}: Invalid value: "
                             f"{n}: kplan simulates at most {MAX_PODS_PER_WORKLOAD} pods of one workload")
        out.append(HpaTarget(f"{kind.lower()}/{ns}/{name}={n}", workload, AutoscaledBy(hpa.key, bound, field)))
    return out, notes


def hpa_changes(inputs: Inputs, workloads: Mapping[tuple[str, str, str], RawObject], targets: Sequence[HpaTarget],
                *, seed: int) -> list[ScaleWorkload]:
    """The scale change of each target, resolved as ``--scale`` resolves it with ``seed``."""
    from kplan.io.scale import resolve_scale

    return [dataclasses.replace(resolve_scale(inputs, workloads, t.spec, seed=seed), autoscaler=t.by)
            for t in targets]
