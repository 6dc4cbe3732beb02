"""ResourceQuota admission of the pods kplan creates, as the API server admits them.

Mirrors kubernetes v1.37.2: the pod evaluator pkg/quota/v1/evaluator/core/pods.go (which resources
of a quota a pod is charged for, its usage, its scopes, and the "must specify" constraint on
cpu and memory) and CheckRequest of staging k8s.io/apiserver/pkg/admission/plugin/resourcequota/
controller.go (every quota of the namespace that matches the pod must hold its usage, or the
create is forbidden). The pod's requests and limits are component-helpers' PodRequests and
PodLimits (init containers, sidecars, pod-level resources, overhead); quantities keep their
format, so the messages print them as the API server does.

A pod the API server refuses is never created: its controller (or kubectl) gets the error
``pods "web-0" is forbidden: exceeded quota: compute, requested: requests.cpu=2, used:
requests.cpu=9, limited: requests.cpu=10`` and the scheduler never sees the pod.

Deviations, each where the API server's answer depends on what an offline plan cannot know:
- quotas of a namespace are tried in name order (the API server lists them from its cache, in no
  fixed order, so when two quotas would refuse a pod either may be named);
- a quota without ``status.used`` (one the manifests create) is charged what its namespace's
  pods use, as the quota controller computes it; the pods of the cluster are counted from their
  aggregated requests and limits, so such a "used" is printed in canonical units;
- limitedResources of an AdmissionConfiguration (none by default) are not modelled;
- the pods of a StatefulSet with OrderedReady are admitted in their order among the others, not
  when the previous one runs; one after a refused pod is never created (it waits for it);
- a pod a what-if recreates (a drained node's) is checked against what it requested, without its
  containers (its scopes Terminating and NotTerminating see no activeDeadlineSeconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kplan.model.objects import Pod
from kplan.model.parse import is_dra_extended_resource_name, parse_quota_pod
from kplan.model.quantity import BINARY_SI, DECIMAL_SI, Quantity
from kplan.model.quota import QuotaContainer, QuotaList, QuotaPod, ResourceQuota, ScopeRequirement
from kplan.model.resize import supported_pod_level

POD_OBJECT_COUNT = "count/pods"
#: podResources: the resources a quota tracks for pods
POD_RESOURCES = frozenset({
    POD_OBJECT_COUNT, "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
})
#: podResourcePrefixes: hugepages, by their names and as requests
POD_RESOURCE_PREFIXES = ("hugepages-", "requests.hugepages-")
#: validationSet: a quota on these makes every container state them ("it was a mistake", upstream)
VALIDATION_SET = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
DEVICE_CLASS_REQUESTS_PREFIX = "requests.deviceclass.resource.kubernetes.io/"
ONE = Quantity.parse("1")

Usage = dict[str, Quantity]


# ------------------------------------------------------------------ the pod's usage (pods.go)

def is_native_resource(name: str) -> bool:
    """helper.IsNativeResource: no domain, or a kubernetes.io one."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name_for_quota(name: str) -> bool:
    """isExtendedResourceNameForQuota: ``requests.<extended resource>`` (or a device class's)."""
    return ((not is_native_resource(name) or name.startswith(DEVICE_CLASS_REQUESTS_PREFIX))
            and name.startswith("requests."))


def matching_resources(names: Iterable[str]) -> set[str]:
    """MatchingResources: the quota's resources a pod can be charged for."""
    return {n for n in names if n in POD_RESOURCES or n.startswith(POD_RESOURCE_PREFIXES)
            or is_extended_resource_name_for_quota(n)}


def _add_into(total: Usage, more: QuotaList) -> None:
    """addResourceList: a resource seen first is copied, later ones are added to it."""
    for k, q in more.items():
        total[k] = total[k].add(q) if k in total else q


def _max_into(total: Usage, other: QuotaList) -> None:
    """maxResourceList: the larger of each, the larger one's format with it."""
    for k, q in other.items():
        if k not in total or q.nanos > total[k].nanos:
            total[k] = q


def aggregate(pod: QuotaPod, limits: bool) -> Usage:
    """aggregateContainerResourcesByFn: the containers' sum, sidecars added, and each init
    container's need (with the sidecars started before it) as a floor."""
    def of(c: QuotaContainer) -> QuotaList:
        return c.limits if limits else c.requests

    result: Usage = {}
    for c in pod.containers:
        _add_into(result, of(c))
    sidecars: Usage = {}
    inits: Usage = {}
    for c in pod.init_containers:
        if c.restartable:
            _add_into(result, of(c))
            _add_into(sidecars, of(c))
            need: QuotaList = sidecars
        else:
            combined: Usage = {}
            _add_into(combined, of(c))
            _add_into(combined, sidecars)
            need = combined
        _max_into(inits, need)
    _max_into(result, inits)
    return result


def _pod_level_set(values: QuotaList | None) -> bool:
    return bool(values) and any(supported_pod_level(k) for k in values or {})


def pod_level_resources_set(pod: QuotaPod) -> bool:
    """IsPodLevelResourcesSet: spec.resources names cpu, memory or hugepages."""
    return _pod_level_set(pod.pod_requests) or _pod_level_set(pod.pod_limits)


def pod_level_requests(pod: QuotaPod) -> Usage:
    """spec.resources.requests as API defaulting leaves them (defaultPodRequests): with pod-level
    limits, a resource the pod level does not request takes the containers' requests, else the
    pod-level limit."""
    reqs: Usage = dict(pod.pod_requests or {})
    if pod.pod_limits:
        for k, q in aggregate(pod, limits=False).items():
            if k not in reqs and supported_pod_level(k):
                reqs[k] = q
        for k, q in pod.pod_limits.items():
            if k not in reqs and supported_pod_level(k):
                reqs[k] = q
    return reqs


def pod_requests(pod: QuotaPod) -> Usage:
    """PodRequests: the containers', then the pod-level values, then the overhead."""
    reqs = aggregate(pod, limits=False)
    level = pod_level_requests(pod)
    if _pod_level_set(level):
        for k, q in level.items():
            if supported_pod_level(k):
                reqs[k] = q
    _add_into(reqs, pod.overhead or {})
    return reqs


def pod_limits(pod: QuotaPod) -> Usage:
    """PodLimits: the containers', then the pod-level values; the overhead only on a limit set."""
    limits = aggregate(pod, limits=True)
    if pod_level_resources_set(pod):
        for k, q in (pod.pod_limits or {}).items():
            if supported_pod_level(k):
                limits[k] = q
    for k, q in (pod.overhead or {}).items():
        if k in limits and limits[k].nanos:
            limits[k] = limits[k].add(q)
    return limits


def compute_usage(requests: QuotaList, limits: QuotaList) -> Usage:
    """podComputeUsageHelper: a pod, and its requests and limits under the quota's names."""
    result: Usage = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = requests[name]
            result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            result[name] = q
            result[f"requests.{name}"] = q
        if is_dra_extended_resource_name(name):
            result[f"requests.{name}"] = q
    return result


def pod_usage(pod: QuotaPod) -> Usage:
    """PodUsageFunc: every pod counts in count/pods; one not finished also in pods and its compute
    resources."""
    usage: Usage = {POD_OBJECT_COUNT: ONE}
    if pod.phase in ("Succeeded", "Failed"):
        return usage
    for k, q in compute_usage(pod_requests(pod), pod_limits(pod)).items():
        usage[k] = usage[k].add(q) if k in usage else q
    return usage


def constraints(required: Iterable[str], pod: QuotaPod) -> str | None:
    """Constraints: when a quota tracks cpu or memory, every container (init containers too)
    must request (or limit) it, unless the pod sets pod-level resources; the error, or None."""
    if pod_level_resources_set(pod):
        return None
    wanted = set(required) & VALIDATION_SET
    missing: dict[str, set[str]] = {}
    for c in (*pod.containers, *pod.init_containers):
        has = set(compute_usage(c.requests, c.limits))
        for name in wanted - has:
            missing.setdefault(name, set()).add(c.name)
    if not missing:
        return None
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


# ------------------------------------------------------------------ scopes

def is_terminating(pod: QuotaPod) -> bool:
    return pod.active_deadline_seconds is not None and pod.active_deadline_seconds >= 0


def _requirements_best_effort(requests: QuotaList, limits: QuotaList) -> bool:
    """requirementsQOS is BestEffort: neither cpu nor memory is requested or limited."""
    return not any(q.nanos > 0 for rl in (requests, limits) for k, q in rl.items() if k in ("cpu", "memory"))


def is_best_effort(pod: QuotaPod) -> bool:
    """GetPodQOS == BestEffort (a pod being created has no status.qosClass): pod-level resources
    when set, else every container's."""
    if pod_level_resources_set(pod):
        return _requirements_best_effort(pod.pod_requests or {}, pod.pod_limits or {})
    return all(_requirements_best_effort(c.requests, c.limits) for c in (*pod.init_containers, *pod.containers))


def uses_cross_namespace_pod_affinity(pod: Pod) -> bool:
    """usesCrossNamespacePodAffinity: a pod (anti-)affinity term, required or preferred, with
    namespaces or a namespaceSelector."""
    terms = [*pod.affinity_required, *pod.anti_affinity_required,
             *(w.term for w in pod.affinity_preferred), *(w.term for w in pod.anti_affinity_preferred)]
    return any(t.namespaces or t.namespace_selector is not None for t in terms)


def _priority_class_matches(req: ScopeRequirement, class_name: str) -> bool:
    """podMatchesSelector: the requirement as a label selector on {PriorityClass: <name>} (no
    label when the pod names no class)."""
    present = bool(class_name)
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    if req.operator == "In":
        return present and class_name in req.values
    if req.operator == "NotIn":
        return not present or class_name not in req.values
    return False


def pod_matches_scope(req: ScopeRequirement, pod: Pod, spec: QuotaPod) -> bool:
    """podMatchesScopeFunc: whether the pod is in the scope (a scope pods do not have: never)."""
    scope = req.scope_name
    if scope == "Terminating":
        return is_terminating(spec)
    if scope == "NotTerminating":
        return not is_terminating(spec)
    if scope == "BestEffort":
        return is_best_effort(spec)
    if scope == "NotBestEffort":
        return not is_best_effort(spec)
    if scope == "PriorityClass":
        return _priority_class_matches(req, pod.priority_class_name)
    if scope == "CrossNamespacePodAffinity":
        return uses_cross_namespace_pod_affinity(pod)
    return False


def matches(quota: ResourceQuota, pod: Pod, spec: QuotaPod) -> bool:
    """generic.Matches: the quota tracks a pod resource and the pod is in all its scopes."""
    return bool(matching_resources(quota.hard)) and all(pod_matches_scope(s, pod, spec) for s in quota.scopes)


# ------------------------------------------------------------------ admission (controller.go)

def _mask(usage: Mapping[str, Quantity], names: Iterable[str]) -> Usage:
    keep = set(names)
    return {k: q for k, q in usage.items() if k in keep}


def _add(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> Usage:
    """quota.Add: a's quantities plus b's (a's format first), b's alone copied."""
    out = dict(a)
    for k, q in b.items():
        out[k] = out[k].add(q) if k in out else q
    return out


def _pretty(usage: Mapping[str, Quantity]) -> str:
    """prettyPrint: ``name=quantity`` sorted by name, joined by commas."""
    return ",".join(f"{k}={usage[k].string()}" for k in sorted(usage))


def check_request(quotas: Sequence[ResourceQuota], used: Mapping[tuple[str, str], Usage], pod: Pod,
                  spec: QuotaPod) -> tuple[str | None, dict[tuple[str, str], Usage]]:
    """CheckRequest for the create of ``pod``: (the reason it is forbidden, None if admitted;
    the quotas' new usage if admitted). ``quotas``: its namespace's, in the order tried."""
    interesting = []
    for quota in quotas:
        if not matches(quota, pod, spec):
            continue
        restricted = matching_resources(quota.hard)
        problem = constraints(restricted, spec)
        if problem is not None:
            return f"failed quota: {quota.name}: {problem}", {}
        have = used[(quota.namespace, quota.name)]
        unknown = [r for r in quota.hard if r in restricted and r not in have]
        if unknown:
            return f"status unknown for quota: {quota.name}, resources: {','.join(sorted(restricted))}", {}
        interesting.append(quota)
    if not interesting:
        return None, {}
    delta = {k: q for k, q in pod_usage(spec).items() if q.nanos != 0}  # RemoveZeros
    updated: dict[tuple[str, str], Usage] = {}
    for quota in interesting:
        key = (quota.namespace, quota.name)
        requested = _mask(delta, quota.hard)
        new_usage = _add(used[key], requested)
        masked = _mask(new_usage, requested)
        exceeded = [k for k, hard in quota.hard.items() if k in masked and masked[k].nanos > hard.nanos]
        if exceeded:
            return (f"exceeded quota: {quota.name}, requested: {_pretty(_mask(requested, exceeded))}, used: "
                    f"{_pretty(_mask(used[key], exceeded))}, limited: {_pretty(_mask(quota.hard, exceeded))}"), {}
        updated[key] = new_usage
    return None, updated


def forbidden(pod: Pod, reason: str) -> str:
    """The API server's Forbidden error for the create (admission.NewForbidden)."""
    return f'pods "{pod.name}" is forbidden: {reason}'


# ------------------------------------------------------------------ a run's pods

def quota_pod(pod: Pod) -> QuotaPod:
    """What quota admission reads of a pod: its object when kplan kept it (the pods it creates),
    else its aggregated requests and limits as one container (a pod of the cluster)."""
    if pod.raw is not None:
        return parse_quota_pod(pod.raw, pod.source)

    def amounts(values: Mapping[str, int]) -> dict[str, Quantity]:
        out = {}
        for k, v in values.items():
            if k == "cpu":
                out[k] = Quantity(v * 10**6, DECIMAL_SI)
            elif k in ("memory", "ephemeral-storage") or k.startswith("hugepages-"):
                out[k] = Quantity(v * 10**9, BINARY_SI)
            else:
                out[k] = Quantity(v * 10**9, DECIMAL_SI)
        return out

    return QuotaPod((QuotaContainer("", amounts(pod.requests), amounts(pod.limits)),), phase=pod.phase)


def charged(quota: ResourceQuota, pod: Pod, spec: QuotaPod) -> Usage:
    """What a pod of the quota's namespace adds to the quota's usage (the quota controller's
    CalculateUsageStats, one pod): its usage under the quota's names, if the quota matches it."""
    if pod.namespace != quota.namespace or not all(pod_matches_scope(s, pod, spec) for s in quota.scopes):
        return {}
    return _mask(pod_usage(spec), quota.hard)


def refusals(quotas: Iterable[ResourceQuota], existing: Sequence[Pod], gone: Sequence[Pod],
             created: Sequence[Pod], created_after: Mapping[str, str] | None = None) -> dict[str, str]:
    """Quota admission of the pods a run creates, in order: pod uid → the API server's error, for
    each pod it refuses. ``existing``: the cluster's pods before any change (what a quota
    without status.used is charged); ``gone``: those of them a change deletes (their usage is
    released); ``created``: the new pods, in the order they are created. A refused pod charges
    nothing; an admitted one charges every quota that matched it. ``created_after`` (a
    StatefulSet's OrderedReady order): a pod whose predecessor was refused is never created, so
    never admitted or refused itself (its controller waits for the predecessor)."""
    by_ns: dict[str, list[ResourceQuota]] = {}
    for q in quotas:
        by_ns.setdefault(q.namespace, []).append(q)
    if not by_ns or not created:
        return {}
    for qs in by_ns.values():
        qs.sort(key=lambda q: q.name)
    specs: dict[str, QuotaPod] = {}

    def spec_of(pod: Pod) -> QuotaPod:
        s = specs.get(pod.uid)
        if s is None:
            s = specs[pod.uid] = quota_pod(pod)
        return s

    used: dict[tuple[str, str], Usage] = {}
    for qs in by_ns.values():
        for q in qs:
            key = (q.namespace, q.name)
            if q.used is not None:
                used[key] = dict(q.used)
            else:
                total: Usage = {r: Quantity(0, h.format) for r, h in q.hard.items()}
                for pod in existing:
                    if pod.namespace == q.namespace:
                        total = _add(total, charged(q, pod, spec_of(pod)))
                used[key] = total
            for pod in gone:
                if pod.namespace == q.namespace:
                    for k, amount in charged(q, pod, spec_of(pod)).items():
                        if k in used[key]:
                            left = used[key][k].sub(amount)
                            used[key][k] = left if left.nanos > 0 else Quantity(0, left.format)
    out: dict[str, str] = {}
    after = created_after or {}
    for pod in created:
        if after.get(pod.uid) in out:
            out[pod.uid] = ""  # the rest of the chain is never created: marked, dropped below
            continue
        ns_quotas = by_ns.get(pod.namespace)
        if not ns_quotas:
            continue
        reason, updated = check_request(ns_quotas, used, pod, spec_of(pod))
        if reason is not None:
            out[pod.uid] = forbidden(pod, reason)
        else:
            used.update(updated)
    return {uid: message for uid, message in out.items() if message}
