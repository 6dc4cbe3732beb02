"""What the API server's admission does to a pod before the scheduler sees it: priority.

plugin/pkg/admission/priority/admission.go (reference 8).
"""

from __future__ import annotations

from kplan.errors import InputError
from kplan.model.objects import PREEMPT_LOWER_PRIORITY, Pod, PriorityClass, evolve_pod

SYSTEM_CLUSTER_CRITICAL = PriorityClass("system-cluster-critical", 2_000_000_000)
SYSTEM_NODE_CRITICAL = PriorityClass("system-node-critical", 2_000_001_000)


def with_builtin_classes(classes: dict[str, PriorityClass]) -> dict[str, PriorityClass]:
    out = dict(classes)
    for pc in (SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL):
        out.setdefault(pc.name, pc)
    return out


def default_class(classes: dict[str, PriorityClass]) -> PriorityClass | None:
    """The globalDefault class; with several, the one with the lowest value."""
    defaults = [pc for pc in classes.values() if pc.global_default]
    return min(defaults, key=lambda pc: (pc.value, pc.name)) if defaults else None


def admit_priority(pod: Pod, classes: dict[str, PriorityClass], explicit_priority: bool,
                   explicit_policy: bool) -> Pod:
    """The pod as priority admission leaves it: its priority, preemption policy and (for the
    global default) class name set; the pod itself when admission changes nothing.

    ``explicit_*`` say whether the input object carried spec.priority / spec.preemptionPolicy,
    which admission rejects when they differ from what the class gives.
    """
    where = f"{pod.source}: " if pod.source else ""
    if pod.priority_class_name:
        pc = classes.get(pod.priority_class_name)
        if pc is None:
            raise InputError(f"{where}Pod {pod.key}: spec.priorityClassName: no PriorityClass with name "
                             f"{pod.priority_class_name} was found")
    else:
        pc = default_class(classes)
    value = pc.value if pc is not None else 0
    if explicit_priority and pod.priority != value:
        raise InputError(f"{where}Pod {pod.key}: spec.priority: the integer value of priority ({pod.priority}) must "
                         f"not be provided in pod spec; priority admission controller computed {value} from the "
                         "given PriorityClass name")
    class_name = pc.name if pc is not None else pod.priority_class_name
    # without any class, admission still computes PreemptLowerPriority (getDefaultPriority), so an
    # explicit "Never" is rejected there too
    policy = (pc.preemption_policy if pc is not None else "") or PREEMPT_LOWER_PRIORITY
    if explicit_policy and pod.preemption_policy != policy:
        raise InputError(f"{where}Pod {pod.key}: spec.preemptionPolicy: the string value of PreemptionPolicy "
                         f"({pod.preemption_policy}) must not be provided in pod spec; priority admission "
                         f"controller computed {policy} from the given PriorityClass name")
    if (pod.priority, pod.priority_class_name, pod.preemption_policy) == (value, class_name, policy):
        return pod
    return evolve_pod(pod, priority=value, priority_class_name=class_name, preemption_policy=policy)
