"""Cluster changes as pure deltas on the parsed inputs (``kplan whatif``).

A change never edits a file or an input object: ``apply_changes`` returns a copy of the inputs
(kplan.scenario.Inputs) with new lists, and every object it alters is a new object.

What each change means:
* add nodes (from a Node manifest or as clones of a node): clones are named ``<node>-whatif-<i>``,
  get ``kubernetes.io/hostname`` (and any other label whose value was the template's name) set to
  the new name, are not cordoned, carry the template's taints except the node-lifecycle ones
  (``node.kubernetes.io/*``), and start empty: no pods and no cached images. A clone's DRA drivers
  publish what they publish on the template: each ResourceSlice local to the template (its
  ``spec.nodeName``, or a ``spec.nodeSelector`` that selects the template and not the clone,
  such as one on the hostname label) is copied for the clone, with the template's name replaced
  by the clone's in the slice name, the pool name (drivers name a node's pool after the node)
  and the node name or selector values. Slices for ``allNodes`` or selecting nodes by labels
  the clone shares (a zone, a rack) are not copied: they already reach the clone, and their
  devices are shared with the nodes they already reach. Devices start free: no claim holds them.
  Every added node (a clone or a manifest's) gets the pods its DaemonSets would start there
  (kplan.whatif.daemons), which each run schedules before the pending pods.
* cordon: ``spec.unschedulable: true``; the node's pods stay.
* drain, as ``kubectl drain --ignore-daemonsets --delete-emptydir-data --force`` would through
  the eviction API: the node is cordoned; DaemonSet pods and mirror pods stay; a pod matched by
  a PodDisruptionBudget with no disruption left (or by more than one budget, which the eviction
  API refuses) stays; every other pod is evicted, one at a time in namespace/name order, and
  each eviction uses up one disruption of its budget. An evicted pod owned by a controller comes
  back as a pending replacement (same namespace and name, same priority, no node); a bare pod is
  gone.
* scale a workload: the pods its controller would create or delete, resolved against the inputs
  by ``kplan.io.scale`` (the workload expansion), are added as pending pods or removed.
* remove a node: the node disappears with all its pods, budgets or not; pods owned by a
  controller other than a DaemonSet come back as pending replacements, the others are gone.
Budgets whose pods were evicted or lost keep ``disruptionsAllowed`` lowered by that number, as
the disruption controller would report before the replacements run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kplan.cluster.disruption import disruptions_allowed, pdb_key
from kplan.errors import InputError, KplanError
from kplan.model.admission import admit_priority, with_builtin_classes
from kplan.model.dra import DraObject, ResourceSlice
from kplan.model.objects import Node, Pod, PodDisruptionBudget, PriorityClass
from kplan.model.parse import parse_persistent_volume_claim
from kplan.model.selectors import NodeSelector, NodeSelectorTerm, Requirement, selector_matches
from kplan.model.storage import PersistentVolumeClaim
from kplan.scenario import Inputs
from kplan.whatif.daemons import daemon_pods, missing_daemonsets

HOSTNAME = "kubernetes.io/hostname"
CLONE_INFIX = "-whatif-"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


# ------------------------------------------------------------------------------------ changes

@dataclass(frozen=True)
class AddNodes:
    """Nodes given as manifests, added as they are."""

    nodes: tuple[Node, ...]

    def describe(self) -> str:
        return "add node" + ("s " if len(self.nodes) != 1 else " ") + ", ".join(n.name for n in self.nodes)


@dataclass(frozen=True)
class CloneNode:
    """``count`` empty nodes like ``template`` (a node of the inputs, or a Node object)."""

    template: str | Node
    count: int = 1

    @property
    def template_name(self) -> str:
        return self.template if isinstance(self.template, str) else self.template.name

    def describe(self) -> str:
        return f"add {self.count} node{'s' if self.count != 1 else ''} like {self.template_name}"


@dataclass(frozen=True)
class RemoveNode:
    name: str

    def describe(self) -> str:
        return f"remove node {self.name}"


@dataclass(frozen=True)
class CordonNode:
    name: str

    def describe(self) -> str:
        return f"cordon node {self.name}"


@dataclass(frozen=True)
class DrainNode:
    name: str

    def describe(self) -> str:
        return f"drain node {self.name}"


@dataclass(frozen=True)
class AutoscaledBy:
    """The HorizontalPodAutoscaler (namespace/name) whose bound gave a scale change its count (--hpa)."""

    hpa: str
    #: max, min or current
    bound: str
    #: where the count comes from, in words: "maxReplicas", "status.currentReplicas", …
    field: str

    def describe(self) -> str:
        return f"HorizontalPodAutoscaler {self.hpa}: {self.field}"


@dataclass(frozen=True)
class ScaleWorkload:
    """A workload scaled to ``replicas``, resolved against the inputs (``kplan.io.scale``): the
    pods its controller creates, with their claims, and the pods it deletes."""

    label: str
    replicas: int
    current: int
    add: tuple[Pod, ...] = ()
    delete: tuple[Pod, ...] = ()
    #: PersistentVolumeClaims the controller creates with the new pods (StatefulSet claim templates)
    claims: tuple[PersistentVolumeClaim, ...] = ()
    #: new pod uid → the pod that must run first (StatefulSet OrderedReady)
    created_after: tuple[tuple[str, str], ...] = ()
    #: new pod uid → (explicit spec.priority, explicit spec.preemptionPolicy), for admission
    explicit: tuple[tuple[str, tuple[bool, bool]], ...] = ()
    #: the HorizontalPodAutoscaler whose bound asked for the count (--hpa); None for --scale
    autoscaler: AutoscaledBy | None = None

    def describe(self) -> str:
        by = f" ({self.autoscaler.describe()})" if self.autoscaler is not None else ""
        return f"scale {self.label} from {self.current} to {self.replicas} replicas{by}"


Change = AddNodes | CloneNode | RemoveNode | CordonNode | DrainNode | ScaleWorkload


# ------------------------------------------------------------------------------------ report

@dataclass(frozen=True)
class PodFate:
    """What a change did to one running pod."""

    pod: Pod
    node: str
    #: "replaced" (a pending replacement was created), "deleted", or "kept"
    fate: str
    reason: str


@dataclass
class Applied:
    """What ``apply_changes`` did, for the report."""

    changes: list[str] = field(default_factory=list)
    added_nodes: list[str] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    cordoned_nodes: list[str] = field(default_factory=list)
    pods: list[PodFate] = field(default_factory=list)
    #: uid of each DaemonSet pod created for an added node → that node
    daemon_pods: dict[str, str] = field(default_factory=dict)
    #: what the report should say about those pods (DaemonSets kplan could not use)
    notes: list[str] = field(default_factory=list)
    #: the scale changes a HorizontalPodAutoscaler's bound asked for (--hpa), in order
    autoscaled: list[ScaleWorkload] = field(default_factory=list)

    def merged(self, more: Applied) -> Applied:
        """This and, after it, ``more``: what two rounds of changes did."""
        return Applied(self.changes + more.changes, self.added_nodes + more.added_nodes,
                       self.removed_nodes + more.removed_nodes, self.cordoned_nodes + more.cordoned_nodes,
                       self.pods + more.pods, {**self.daemon_pods, **more.daemon_pods},
                       self.notes + [n for n in more.notes if n not in self.notes],
                       self.autoscaled + more.autoscaled)

    @property
    def replaced(self) -> list[PodFate]:
        return [f for f in self.pods if f.fate == "replaced"]

    @property
    def deleted(self) -> list[PodFate]:
        return [f for f in self.pods if f.fate == "deleted"]

    @property
    def kept(self) -> list[PodFate]:
        return [f for f in self.pods if f.fate == "kept"]


# ------------------------------------------------------------------------------------ helpers

def clone_name(template: str, taken: set[str]) -> str:
    i = 1
    while f"{template}{CLONE_INFIX}{i}" in taken:
        i += 1
    return f"{template}{CLONE_INFIX}{i}"


def clone_node(template: Node, name: str) -> Node:
    """An empty node shaped like ``template`` (see the module docstring)."""
    labels = {k: (name if (k == HOSTNAME or v == template.name) else v) for k, v in template.labels.items()}
    if HOSTNAME not in labels:
        labels[HOSTNAME] = name
    taints = tuple(t for t in template.taints if not t.key.startswith("node.kubernetes.io/"))
    return dataclasses.replace(template, name=name, labels=labels, taints=taints, unschedulable=False,
                               images=(), source=f"{template.name} (cloned)", raw=None)


def _renamed(text: str, template: str, clone: str) -> str:
    """``text`` with the template's name replaced by the clone's, or the clone's name prepended
    when the template's does not occur in it (the result must not collide with the template's)."""
    return text.replace(template, clone) if template in text else f"{clone}-{text}"


def _selector_for(sel: NodeSelector, template: str, clone: str) -> NodeSelector:
    """A node selector with every value naming the template renamed to the clone."""
    def req(r: Requirement) -> Requirement:
        return dataclasses.replace(r, values=tuple(clone if v == template else v for v in r.values))

    return NodeSelector(tuple(NodeSelectorTerm(tuple(map(req, t.match_expressions)), tuple(map(req, t.match_fields)),
                                               t.valid) for t in sel.terms))


def clone_slices(slices: Iterable[DraObject], template: Node, clone: Node) -> list[ResourceSlice]:
    """The ResourceSlices the template's DRA drivers would publish for ``clone`` (module docstring)."""
    out = []
    for s in slices:
        if not isinstance(s, ResourceSlice):
            continue
        if s.node_name == template.name:
            out.append(dataclasses.replace(s, name=_renamed(s.name, template.name, clone.name),
                                           pool=_renamed(s.pool, template.name, clone.name), node_name=clone.name,
                                           source=f"{s.source or s.name} (cloned for {clone.name})"))
        elif (s.node_selector is not None and s.node_selector.matches(template.name, template.labels)
              and not s.node_selector.matches(clone.name, clone.labels)):
            sel = _selector_for(s.node_selector, template.name, clone.name)
            if sel.matches(clone.name, clone.labels):
                out.append(dataclasses.replace(s, name=_renamed(s.name, template.name, clone.name),
                                               pool=_renamed(s.pool, template.name, clone.name), node_selector=sel,
                                               source=f"{s.source or s.name} (cloned for {clone.name})"))
    return out


def daemon_target(pod: Pod) -> str:
    """The node a DaemonSet pod is made for (GetTargetNodeName): its nodeName, else the value of the
    ``metadata.name In [...]`` field requirement of its required node affinity; "" if none."""
    if pod.node_name:
        return pod.node_name
    if pod.required_node_affinity is None:
        return ""
    for term in pod.required_node_affinity.terms:
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return ""


def is_daemon_pod(pod: Pod) -> bool:
    c = pod.controller()
    return c is not None and c.kind == "DaemonSet"


def is_mirror_pod(pod: Pod) -> bool:
    c = pod.controller()
    return MIRROR_ANNOTATION in pod.annotations or (c is not None and c.kind == "Node")


def matching_pdbs(pod: Pod, pdbs: Iterable[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    """The budgets the eviction API checks: same namespace, non-empty selector matching the pod."""
    return [b for b in pdbs if b.namespace == pod.namespace and b.selector is not None
            and not b.selector.is_empty and selector_matches(b.selector, pod.labels)]


def replacement(pod: Pod, classes: dict[str, PriorityClass]) -> tuple[Pod, str]:
    """The pending pod a controller creates for an evicted one; (pod, note).

    Its priority comes from admission, as for any new pod; when its PriorityClass no longer
    exists (admission would refuse the pod) the running pod's priority is kept and noted.
    """
    new = dataclasses.replace(pod, uid=f"{pod.uid}{CLONE_INFIX}replacement", node_name="", nominated_node="",
                              start_time=None, deletion_time=None, phase="Pending")
    note = ""
    try:
        new = admit_priority(new, with_builtin_classes(classes), False, False)
    except KplanError:
        new = dataclasses.replace(new, priority=pod.priority)
        note = f"; PriorityClass {pod.priority_class_name} not found, priority {pod.priority} kept"
    return new, note


# ------------------------------------------------------------------------------------ apply

def similar_names(name: str, names: Sequence[str], most: int = 3) -> list[str]:
    """The names ``name`` most likely meant: those it begins (a name cut short, ip-10-0-10-170 of
    ip-10-0-10-170.ec2.internal), else the closest by difflib's ratio."""
    started = sorted(n for n in names if n.startswith(name))
    if started:
        return started[:most]
    import difflib

    return difflib.get_close_matches(name, names, n=most, cutoff=0.75)


def unknown_node(option: str, name: str, names: Sequence[str]) -> InputError:
    """The error of an option naming a node the cluster lacks: the names meant, when some are
    close ("did you mean …"), else the cluster's nodes when they are few, else how many there are."""
    given = f"{option}{name}" if option.endswith("=") else option
    close = similar_names(name, names)
    if close:
        hint = f"; did you mean {' or '.join(close)}?"
    elif len(names) <= 10:
        hint = f" (nodes: {', '.join(sorted(names))})"
    else:
        hint = f" (none of its {len(names):,} nodes has a similar name)"
    return InputError(f"{given}: no node named {name!r} in the cluster{hint}")


class _Work:
    def __init__(self, inputs: Inputs, seed: int) -> None:
        self.inputs = inputs
        self.seed = seed
        self.nodes: list[Node] = list(inputs.nodes)
        self._running: list[Pod] = list(inputs.running)
        #: ids of the pods of ``_running`` lost since it was last compacted (a list's remove is
        #: linear: removing the nodes of a shrink's answer, a pod at a time, was quadratic)
        self._lost: set[int] = set()
        #: the running pods by node name, in ``_running``'s order, made on first use
        self._by_node: dict[str, list[Pod]] | None = None
        self.pending: list[Pod] = list(inputs.pending)
        self.pdbs: list[PodDisruptionBudget] = list(inputs.pdbs)
        self.classes = dict(inputs.priority_classes)
        self.admitted = set(inputs.admitted)
        names = {n.name for n in self.nodes}
        placed = [p for p in self.running if p.node_name in names]
        #: disruptions left per budget, computed once as build_scenario does, then spent
        self.allowed: dict[tuple[str, str], int] = {pdb_key(b): disruptions_allowed(b, placed) for b in self.pdbs}
        self.spent: dict[tuple[str, str], int] = {}
        self.applied = Applied()
        self.claims: list[PersistentVolumeClaim] = []
        #: the resource.k8s.io objects; clones add ResourceSlices
        self.dra: list[DraObject] = list(inputs.dra)
        self.dra_changed = False
        self.explicit: dict[str, tuple[bool, bool]] = dict(inputs.explicit)
        self.created_after: dict[str, str] = dict(inputs.created_after)
        self.node_daemons: list[Pod] = list(inputs.node_daemons)

    def node(self, name: str, option: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise unknown_node(option, name, [n.name for n in self.nodes])

    def replace_node(self, old: Node, new: Node) -> None:
        self.nodes = [new if n is old else n for n in self.nodes]

    @property
    def running(self) -> list[Pod]:
        if self._lost:
            self._running = [p for p in self._running if id(p) not in self._lost]
            self._lost.clear()
        return self._running

    @running.setter
    def running(self, pods: list[Pod]) -> None:
        self._running, self._by_node = pods, None
        self._lost.clear()

    def _index(self) -> dict[str, list[Pod]]:
        if self._by_node is None:
            self._by_node = {}
            for p in self.running:
                self._by_node.setdefault(p.node_name, []).append(p)
        return self._by_node

    def pods_on(self, name: str) -> list[Pod]:
        return sorted(self._index().get(name, ()), key=lambda p: (p.namespace, p.name))

    def spend(self, pod: Pod) -> None:
        for b in matching_pdbs(pod, self.pdbs):
            key = pdb_key(b)
            self.allowed[key] -= 1
            self.spent[key] = self.spent.get(key, 0) + 1

    def lose(self, pod: Pod, node: str, why: str) -> None:
        """The pod stops running: replaced if a controller (not a DaemonSet) owns it, else gone."""
        self._index()[pod.node_name].remove(pod)  # by identity: pods compare as objects
        self._lost.add(id(pod))
        c = pod.controller()
        if c is not None and c.kind not in ("DaemonSet", "Node"):
            new, note = replacement(pod, self.classes)
            self.pending.append(new)
            self.admitted.add(new.uid)
            self.applied.pods.append(PodFate(pod, node, "replaced", f"{why}; {c.kind} {c.name} recreates it{note}"))
        else:
            self.applied.pods.append(PodFate(pod, node, "deleted", f"{why}; no controller recreates it"))

    # -------------------------------------------------------------------------------- changes

    def add_nodes(self, nodes: Sequence[Node]) -> None:
        """The nodes join the cluster; the DaemonSet controller creates their pods."""
        taken = {n.name for n in self.nodes}
        for n in nodes:
            if n.name in taken:
                raise InputError(f"--add-node: node {n.name} already exists in the cluster")
            taken.add(n.name)
            self.nodes.append(n)
            self.applied.added_nodes.append(n.name)
        if not nodes:
            return
        made = daemon_pods(self.inputs, nodes, self.seed, self.running + self.pending + self.node_daemons)
        for c in made.created:
            self.node_daemons.append(c.pod)
            self.explicit[c.pod.uid] = c.explicit
            self.claims += [parse_persistent_volume_claim(d, c.pod.source) for d in c.claims]
            target = daemon_target(c.pod)
            if target:
                self.applied.daemon_pods[c.pod.uid] = target
        missing = missing_daemonsets(self.inputs)
        if missing:
            made.notes.append(f"the cluster runs pods of DaemonSet{'s' if len(missing) != 1 else ''} "
                              f"{', '.join(missing)}, but the input holds no such DaemonSet: the added nodes get "
                              "none of their pods (list the DaemonSets in the cluster input; kplan snapshot does)")
        self.applied.notes += [n for n in made.notes if n not in self.applied.notes]

    def clone(self, c: CloneNode) -> None:
        template = self.node(c.template, "--add-node like=") if isinstance(c.template, str) else c.template
        if c.count < 0:
            raise InputError(f"--add-node like={template.name}: the count must be 0 or more")
        taken = {n.name for n in self.nodes}
        new = []
        for _ in range(c.count):
            name = clone_name(template.name, taken)
            taken.add(name)
            new.append(clone_node(template, name))
        self.add_nodes(new)
        if self.dra and new:
            local = [s for s in self.dra if isinstance(s, ResourceSlice)
                     and (s.node_name == template.name or s.node_selector is not None)]
            for node in new:
                copies = clone_slices(local, template, node)
                if copies:
                    self.dra += copies
                    self.dra_changed = True

    def cordon(self, name: str, option: str) -> None:
        node = self.node(name, option)
        if not node.unschedulable:
            self.replace_node(node, dataclasses.replace(node, unschedulable=True))
        self.applied.cordoned_nodes.append(name)

    def drain(self, name: str) -> None:
        self.cordon(name, "--drain")
        for pod in self.pods_on(name):
            if is_daemon_pod(pod):
                self.applied.pods.append(PodFate(pod, name, "kept", "DaemonSet pod (drain ignores DaemonSets)"))
                continue
            if is_mirror_pod(pod):
                self.applied.pods.append(PodFate(pod, name, "kept", "mirror (static) pod: the eviction API "
                                                                      "cannot remove it"))
                continue
            budgets = matching_pdbs(pod, self.pdbs)
            if len(budgets) > 1:
                names = ", ".join(f"{b.namespace}/{b.name}" for b in budgets)
                self.applied.pods.append(PodFate(pod, name, "kept", f"eviction refused: the pod has more than one "
                                                                      f"PodDisruptionBudget ({names})"))
                continue
            blocked = [b for b in budgets if self.allowed[pdb_key(b)] <= 0]
            if blocked:
                b = blocked[0]
                self.applied.pods.append(PodFate(pod, name, "kept", f"eviction would violate PodDisruptionBudget "
                                                                      f"{b.namespace}/{b.name}"))
                continue
            self.spend(pod)
            self.lose(pod, name, "evicted by the drain")

    def scale(self, c: ScaleWorkload) -> None:
        gone = {p.uid for p in c.delete}
        for pod in c.delete:
            if pod.node_name:
                self.applied.pods.append(PodFate(pod, pod.node_name, "deleted", f"{c.label} scaled down"))
        self.running = [p for p in self.running if p.uid not in gone]
        self.pending = [p for p in self.pending if p.uid not in gone] + list(c.add)
        self.claims += list(c.claims)
        self.created_after.update(dict(c.created_after))
        self.explicit.update(dict(c.explicit))

    def remove(self, name: str) -> None:
        node = self.node(name, "--remove-node")
        for pod in self.pods_on(name):
            self.spend(pod)
            self.lose(pod, name, "its node was removed")
        self.nodes = [n for n in self.nodes if n is not node]
        self.applied.removed_nodes.append(name)

    def pinned_pdbs(self) -> list[PodDisruptionBudget]:
        out = []
        for b in self.pdbs:
            if pdb_key(b) in self.spent:
                b = dataclasses.replace(b, disruptions_allowed=max(0, self.allowed[pdb_key(b)]))
            out.append(b)
        return out


def apply_changes(inputs: Inputs, changes: Sequence[Change], *, seed: int = 0) -> tuple[Inputs, Applied]:
    """A copy of ``inputs`` with the changes applied in order, and what they did. ``seed``: the
    run's, from which the names of the pods the changes create are drawn."""
    w = _Work(inputs, seed)
    for c in changes:
        w.applied.changes.append(c.describe())
        if isinstance(c, AddNodes):
            w.add_nodes(c.nodes)
        elif isinstance(c, CloneNode):
            w.clone(c)
        elif isinstance(c, RemoveNode):
            w.remove(c.name)
        elif isinstance(c, CordonNode):
            w.cordon(c.name, "--cordon")
        elif isinstance(c, DrainNode):
            w.drain(c.name)
        elif isinstance(c, ScaleWorkload):
            w.scale(c)
            if c.autoscaler is not None:
                w.applied.autoscaled.append(c)
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"unknown change {c!r}")
    out = dataclasses.replace(inputs, nodes=w.nodes, running=w.running, pending=w.pending, pdbs=w.pinned_pdbs(),
                              admitted=w.admitted, created_after=w.created_after, explicit=w.explicit,
                              node_daemons=w.node_daemons)
    if w.claims:
        out.storage = [*inputs.storage, *w.claims]
    if w.dra_changed:
        out.dra = w.dra
    return out, w.applied
