"""A NodeClaim being packed during one scheduling round: sigs.k8s.io/karpenter v1.15.0
pkg/controllers/provisioning/scheduling/nodeclaim.go (NewNodeClaim, CanAdd, Add,
filterInstanceTypesByRequirements and its InstanceTypeFilterError, addDaemonRequests) and
pkg/cloudprovider/types.go (SatisfiesMinValues).

Not modelled: volume attachment limits, DRA allocation and reserved-capacity offerings (the
ReservedCapacity feature gate's reservations), which a KWOK-format catalog does not describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kplan.autoscaler.karpenter import resources as res
from kplan.autoscaler.karpenter.catalogindex import CatalogIndex
from kplan.autoscaler.karpenter.hostportusage import HostPortUsage
from kplan.autoscaler.karpenter.instancetypes import instance_type_requirements, offering_requirements
from kplan.autoscaler.karpenter.nodeclaimtemplate import NodeClaimTemplate
from kplan.autoscaler.karpenter.requirements import Req, Requirements
from kplan.autoscaler.karpenter.taints import tolerates_pod
from kplan.autoscaler.karpenter.topology import Topology
from kplan.model.karpenter import HOSTNAME_LABEL, InstanceType
from kplan.model.objects import HostPort, Pod, Toleration


@dataclass
class DaemonOverheadGroup:
    """Instance types on which the same set of DaemonSet pods would run, with their requests and
    host ports."""

    instance_types: list[InstanceType]
    overhead: res.Resources
    host_ports: HostPortUsage
    _positions: npt.NDArray[np.int64] | None = None

    def positions(self, index: CatalogIndex) -> npt.NDArray[np.int64]:
        if self._positions is None or len(self._positions) != len(self.instance_types):
            self._positions = index.positions(self.instance_types)
        return self._positions


@dataclass
class PodData:
    """The pod's requests and requirements as the scheduler caches them (PodData)."""

    requests: res.Resources
    requirements: Requirements
    strict_requirements: Requirements


@dataclass
class InstanceTypeFilterError:
    """Why no instance type is left, in Karpenter's words."""

    requirements: Requirements
    pod_requests: res.Resources
    requirements_met: bool = False
    fits: bool = False
    has_offering: bool = False
    requirements_and_fits: bool = False
    requirements_and_offering: bool = False
    fits_and_offering: bool = False
    min_values_error: str | None = None
    min_daemon: res.Resources = field(default_factory=dict)
    max_daemon: res.Resources = field(default_factory=dict)

    def track_daemon_overhead(self, overhead: res.Resources) -> None:
        if not self.max_daemon:
            self.min_daemon = dict(overhead)
            self.max_daemon = dict(overhead)
            return
        self.min_daemon = res.min_resources(self.min_daemon, overhead)
        self.max_daemon = res.max_resources([self.max_daemon, overhead])

    def resources_string(self) -> str:
        if not self.min_daemon:
            return res.string(self.pod_requests)
        low = res.string(res.merge(self.min_daemon, self.pod_requests))
        high = res.string(res.merge(self.max_daemon, self.pod_requests))
        return low if low == high else f"min={low}, max={high}"

    def __str__(self) -> str:
        tail = f"requirements={self.requirements}, resources={self.resources_string()}"
        if self.min_values_error is not None:
            return f"{self.min_values_error}, {tail}"
        met, fit, offer = self.requirements_met, self.fits, self.has_offering
        if not met and not fit and not offer:
            return "no instance type met the scheduling requirements or had enough resources or had a required " \
                   f"offering, {tail}"
        if not met and not fit:
            return f"no instance type met the scheduling requirements or had enough resources, {tail}"
        if not met and not offer:
            return f"no instance type met the scheduling requirements or had a required offering, {tail}"
        if not fit and not offer:
            return f"no instance type had enough resources or had a required offering, {tail}"
        if not met:
            return f"no instance type met all requirements, {tail}"
        if not fit:
            msg = f"no instance type has enough resources, {tail}"
            if self.pod_requests.get("cpu", 0) >= 10**9:  # 1M cores in millicores
                msg += " (CPU request >= 1 Million, m vs M typo?)"
            return msg
        if not offer:
            return f"no instance type has the required offering, {tail}"
        if self.requirements_and_fits:
            return "no instance type which met the scheduling requirements and had enough resources, had a " \
                   f"required offering, {tail}"
        if self.fits_and_offering:
            return "no instance type which had enough resources and the required offering met the scheduling " \
                   f"requirements, {tail}"
        if self.requirements_and_offering:
            return "no instance type which met the scheduling requirements and the required offering had the " \
                   f"required resources, {tail}"
        return f"no instance type met the requirements/resources/offering tuple, {tail}"


def satisfies_min_values(types: Sequence[InstanceType], reqs: Requirements) -> tuple[int, dict[str, int], str | None]:
    """SatisfiesMinValues: how many of ``types`` (in order) it takes to offer ``minValues``
    distinct values of every key that asks for them; the keys short of it and the error."""
    if not reqs.has_min_values():
        return 0, {}, None
    wanted = [r for r in reqs.values() if r.min_values is not None]
    found: dict[str, set[str]] = {}
    short: dict[str, int] = {}
    for i, it in enumerate(types):
        it_reqs = instance_type_requirements(it)
        for r in wanted:
            found.setdefault(r.key, set()).update(v for v in it_reqs.get(r.key).values if r.has(v))
        for key, values in found.items():
            if len(values) < (reqs.get(key).min_values or 0):
                short[key] = len(values)
            else:
                short.pop(key, None)
        if not short:
            return i + 1, {}, None
    if short:
        keys = " ".join(short)
        return len(types), short, f"minValues requirement is not met for label(s) (label(s)=[{keys}])"
    return len(types), {}, None


def it_fits(it: InstanceType, requests: res.Resources, reqs: Requirements,
            well_known: frozenset[str]) -> tuple[bool, bool]:
    """fits: (the requests fit its allocatable, it has an available offering the requirements allow)."""
    has_offering = any(o.available and reqs.is_compatible(offering_requirements(o), well_known)
                       for o in it.offerings)
    return has_offering and res.fits(requests, it.allocatable), has_offering


def filter_instance_types_by_requirements(
        types: Sequence[InstanceType], reqs: Requirements, pod: Pod | None, pod_requests: res.Resources,
        groups: Sequence[DaemonOverheadGroup], total: res.Resources, relax_min_values: bool,
        well_known: frozenset[str], index: CatalogIndex | None = None,
) -> tuple[list[InstanceType], dict[str, int], InstanceTypeFilterError | None]:
    """filterInstanceTypesByRequirements: the types that meet the requirements, fit the requests
    with their daemons' overhead, and have an offering; minValues checked on what is left. With
    the catalog's ``index`` the per-type tests run as columns (the same answers)."""
    err = InstanceTypeFilterError(reqs, pod_requests)
    remaining: list[InstanceType] = []
    ports = pod.host_ports if pod is not None else ()
    if index is not None:
        remaining = _filter_columns(index, types, reqs, pod, ports, groups, total, err)
    else:
        remaining = _filter_loop(types, reqs, pod, ports, groups, total, err, well_known)
    short: dict[str, int] = {}
    if reqs.has_min_values():
        _, short, err.min_values_error = satisfies_min_values(remaining, reqs)
        if err.min_values_error is not None:
            if relax_min_values:
                err.min_values_error = None
            else:
                remaining = []
    if not remaining:
        return [], short, err
    return remaining, short, None


def _filter_columns(index: CatalogIndex, types: Sequence[InstanceType], reqs: Requirements, pod: Pod | None,
                    ports: Sequence[HostPort], groups: Sequence[DaemonOverheadGroup], total: res.Resources,
                    err: InstanceTypeFilterError) -> list[InstanceType]:
    eligible = np.zeros(index.n, dtype=bool)
    eligible[index.positions(types)] = True
    compat = index.compatible(reqs)
    offer = index.has_offering(reqs)
    remaining: list[InstanceType] = []
    for g in groups:
        if pod is not None and g.host_ports.conflicts(pod, ports) is not None:
            continue
        if g.overhead:
            err.track_daemon_overhead(g.overhead)
            need = res.merge(total, g.overhead)
        else:
            need = total
        idx = g.positions(index)
        idx = idx[eligible[idx]]
        if not len(idx):
            continue
        c, o = compat[idx], offer[idx]
        f = index.fits(need)[idx] & o  # fits: the resources fit and an offering is there
        err.requirements_met |= bool(c.any())
        err.fits |= bool(f.any())
        err.has_offering |= bool(o.any())
        err.requirements_and_fits |= bool((c & f & ~o).any())
        err.requirements_and_offering |= bool((c & o & ~f).any())
        err.fits_and_offering |= bool((f & o & ~c).any())
        ok = idx[c & f & o]
        remaining.extend(index.types[i] for i in ok)
    return remaining


def _filter_loop(types: Sequence[InstanceType], reqs: Requirements, pod: Pod | None, ports: Sequence[HostPort],
                 groups: Sequence[DaemonOverheadGroup], total: res.Resources, err: InstanceTypeFilterError,
                 well_known: frozenset[str]) -> list[InstanceType]:
    eligible = set(types)
    remaining: list[InstanceType] = []
    for g in groups:
        if pod is not None and g.host_ports.conflicts(pod, ports) is not None:
            continue
        if g.overhead:
            err.track_daemon_overhead(g.overhead)
            need = res.merge(total, g.overhead)
        else:
            need = total
        for it in g.instance_types:
            if it not in eligible:
                continue
            compat = instance_type_requirements(it).intersects(reqs) is None
            fit, offer = it_fits(it, need, reqs, well_known)
            err.requirements_met |= compat
            err.fits |= fit
            err.has_offering |= offer
            err.requirements_and_fits |= compat and fit and not offer
            err.requirements_and_offering |= compat and offer and not fit
            err.fits_and_offering |= fit and offer and not compat
            if compat and fit and offer:
                remaining.append(it)
    return remaining


class NodeClaim:
    """A new NodeClaim of one round, built from a template and filled pod by pod."""

    __slots__ = ("template", "requirements", "instance_type_options", "pods", "requests", "groups", "hostname",
                 "topology", "well_known", "index", "max_alloc")

    def __init__(self, template: NodeClaimTemplate, topology: Topology, groups: Sequence[DaemonOverheadGroup],
                 types: Sequence[InstanceType], hostname: str, well_known: frozenset[str],
                 index: CatalogIndex | None = None) -> None:
        self.template = template
        self.requirements = template.requirements.copy()
        self.requirements.add(Req(HOSTNAME_LABEL, False, frozenset({hostname})))
        self.instance_type_options = list(types)
        self.pods: list[Pod] = []
        self.requests: res.Resources = {}
        self.groups = [DaemonOverheadGroup(g.instance_types, g.overhead, g.host_ports.copy(), g._positions)
                       for g in groups]
        self.hostname = hostname
        self.topology = topology
        self.well_known = well_known
        self.index = index
        #: the largest allocatable among the options (None: not computed): what the claim holds at most
        self.max_alloc: dict[str, int] | None = None

    def cannot_fit(self, requests: res.Resources) -> bool:
        """A quick certain "no": the claim's requests plus ``requests`` exceed every option's
        allocatable (daemon overhead only adds), so CanAdd would find no instance type. Needs the
        index; without it nothing is ruled out."""
        if self.index is None:
            return False
        if self.max_alloc is None:
            self.max_alloc = self.index.max_allocatable(self.instance_type_options)
        for k, v in requests.items():
            if self.requests.get(k, 0) + v > self.max_alloc.get(k, 0):
                return True
        return False

    def can_add(self, pod: Pod, data: PodData, tolerations: Sequence[Toleration],
                relax_min_values: bool) -> tuple[Requirements, list[InstanceType]] | str:
        """CanAdd: the claim's requirements and instance types with the pod added, or why not."""
        taint_err = tolerates_pod(self.template.taints, tolerations)
        if taint_err is not None:
            return taint_err
        reqs = self.requirements.copy()
        err = reqs.compatible(data.requirements, self.well_known)
        if err is not None:
            return f"incompatible requirements, {err}"
        reqs.add(*data.requirements.values())
        topo = self.topology.add_requirements(pod, self.template.taints, data.strict_requirements, reqs,
                                              self.well_known)
        if isinstance(topo, str):
            return topo
        err = reqs.compatible(topo, self.well_known)
        if err is not None:
            return err
        reqs.add(*topo.values())
        total = res.merge(self.requests, data.requests)
        remaining, short, ferr = filter_instance_types_by_requirements(
            self.instance_type_options, reqs, pod, data.requests, self.groups, total, relax_min_values,
            self.well_known, self.index)
        if relax_min_values:
            for key, n in short.items():
                reqs.put(reqs.get(key).with_min_values(n))
        if ferr is not None:
            return str(ferr)
        return reqs, remaining

    def add(self, pod: Pod, data: PodData, reqs: Requirements, types: list[InstanceType]) -> None:
        self.pods.append(pod)
        if len(types) != len(self.instance_type_options):
            self.max_alloc = None
        self.instance_type_options = types
        self.requests = res.merge(self.requests, data.requests)
        self.requirements = reqs
        self.topology.register(HOSTNAME_LABEL, self.hostname)
        self.topology.record(pod, self.template.taints, reqs, self.well_known)
        for g in self.groups:
            g.host_ports.add(pod, pod.host_ports)

    def daemon_requests(self) -> res.Resources:
        """addDaemonRequests: the smallest overhead among the groups that still hold an option."""
        left = set(self.instance_type_options)
        low: res.Resources | None = None
        for g in self.groups:
            if not any(it in left for it in g.instance_types):
                continue
            low = dict(g.overhead) if low is None or not low else res.min_resources(low, g.overhead)
        return low or {}
