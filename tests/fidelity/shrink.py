"""Shrink a scenario while a property holds (for the differential runner: "kplan and the oracle
still differ the same way").

Greedy delta debugging in passes, each keeping a reduction only when ``holds`` still says yes:
the pending pods, whole nodes (with what is tied to them: their running pods, CSINode, resource
slices, attachments), running pods (with the claims they own), the other cluster objects, then
single fields — optional parts of pod specs, containers, node labels, taints, images,
unschedulable, the scheduler profile's settings. Chunks halve down to single items, and the
passes repeat until one changes nothing or the budget of ``holds`` calls is spent. The result
is 1-minimal for each pass's items (no single item of it can go) when the budget allows.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from tests.fidelity.scenario import Doc, Scenario

T = TypeVar("T")

#: pod spec keys a reproduction can usually do without
POD_FIELDS = ("affinity", "tolerations", "topologySpreadConstraints", "nodeSelector", "initContainers", "overhead",
              "priorityClassName", "resourceClaims", "volumes")
#: node labels a scenario always keeps (kubelet sets them; zone and hostname are topology keys)
KEEP_LABELS = ("kubernetes.io/hostname",)
#: cluster kinds that are never dropped on their own (others refer to them by name)
KEEP_KINDS = ("Namespace", "Node", "Pod")


class Budget:
    """How many property checks, and how much time, a shrink may spend."""

    def __init__(self, runs: int, seconds: float) -> None:
        self.runs, self.deadline = runs, time.monotonic() + seconds
        self.used = 0

    def left(self) -> bool:
        return self.used < self.runs and time.monotonic() < self.deadline


class Shrinker:
    def __init__(self, holds: Callable[[Scenario], bool], budget: Budget, focus: frozenset[str] = frozenset()) -> None:
        self._holds = holds
        self.budget = budget
        self.focus = focus
        self._seen: dict[str, bool] = {}

    def holds(self, sc: Scenario) -> bool:
        k = json.dumps([sc.cluster, sc.pods, sc.config], sort_keys=True)
        if k in self._seen:
            return self._seen[k]
        if not self.budget.left():
            return False
        self.budget.used += 1
        ok = self._holds(sc)
        self._seen[k] = ok
        return ok

    def reduce(self, items: list[T], build: Callable[[list[T]], Scenario]) -> list[T]:
        """The shortest sublist found (chunks halving down to one) for which ``build`` still holds."""
        chunk = max(1, len(items) // 2)
        while items and self.budget.left():
            i = 0
            while i < len(items) and self.budget.left():
                candidate = items[:i] + items[i + chunk:]
                if self.holds(build(candidate)):
                    items = candidate
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
        return items

    def shrink(self, sc: Scenario) -> Scenario:
        best = self.after_focus(sc.copy())
        while self.budget.left():
            before = best.size()
            # nodes first: every later run is cheaper on fewer nodes
            best = self.node_pass(best)
            best = self.pending_pass(best)
            best = self.running_pass(best)
            best = self.object_pass(best)
            best = self.field_pass(best)
            if best.size() >= before:
                break
        return best

    # -- passes ------------------------------------------------------------------------------

    def after_focus(self, sc: Scenario) -> Scenario:
        """Without the pending pods created after the last one the property is about, when it still
        holds (they often do not matter, and they make every run longer)."""
        last = max((i for i, p in enumerate(sc.pods) if _ref(p) in self.focus), default=-1)
        if last < 0 or last == len(sc.pods) - 1:
            return sc
        shorter = _with(sc, pods=sc.pods[: last + 1])
        return shorter if self.holds(shorter) else sc

    def pending_pass(self, sc: Scenario) -> Scenario:
        kept = self.reduce(list(range(len(sc.pods))), lambda keep: _with(sc, pods=[sc.pods[i] for i in keep]))
        return _with(sc, pods=[sc.pods[i] for i in kept])

    def node_pass(self, sc: Scenario) -> Scenario:
        names = [d["metadata"]["name"] for d in sc.cluster if d["kind"] == "Node"]
        kept = self.reduce(names, lambda keep: without_nodes(sc, set(names) - set(keep)))
        return without_nodes(sc, set(names) - set(kept))

    def running_pass(self, sc: Scenario) -> Scenario:
        pods = [_ref(d) for d in sc.cluster if d["kind"] == "Pod"]
        kept = self.reduce(pods, lambda keep: without_running(sc, set(pods) - set(keep)))
        return without_running(sc, set(pods) - set(kept))

    def object_pass(self, sc: Scenario) -> Scenario:
        idx = [i for i, d in enumerate(sc.cluster) if d["kind"] not in KEEP_KINDS]
        fixed = [i for i, d in enumerate(sc.cluster) if d["kind"] in KEEP_KINDS]

        def build(keep: list[int]) -> Scenario:
            chosen = set(fixed + keep)
            # what the kept documents name stays: a reproduction keeps the API's references whole
            wanted = references(sc.pods + [sc.cluster[i] for i in chosen])
            while True:
                more = {i for i in idx if i not in chosen and _key(sc.cluster[i]) in wanted}
                if not more:
                    break
                chosen |= more
                wanted |= references([sc.cluster[i] for i in more])
            return _with(sc, cluster=[sc.cluster[i] for i in sorted(chosen)])
        return build(self.reduce(idx, build))

    def field_pass(self, sc: Scenario) -> Scenario:
        best = sc
        for edit in list(field_edits(best)):
            if not self.budget.left():
                break
            candidate = edit(best)
            if candidate is not None and self.holds(candidate):
                best = candidate
        return best


def shrink(sc: Scenario, holds: Callable[[Scenario], bool], runs: int = 400, seconds: float = 900,
           focus: frozenset[str] = frozenset()) -> tuple[Scenario, int]:
    """The smallest scenario found for which ``holds`` is true, and how many checks it took.
    ``holds(sc)`` must be true of ``sc`` itself; ``focus`` names the pending pods
    (namespace/name) it is about, whose successors the shrink tries to drop first."""
    s = Shrinker(holds, Budget(runs, seconds), focus)
    return s.shrink(sc), s.budget.used


# -- scenario edits --------------------------------------------------------------------------

def _with(sc: Scenario, *, cluster: list[Doc] | None = None, pods: list[Doc] | None = None,
          config: Doc | None = None) -> Scenario:
    return Scenario(sc.name, sc.cluster if cluster is None else cluster, sc.pods if pods is None else pods,
                    sc.config if config is None else config, dict(sc.notes))


def _ref(d: Doc) -> str:
    meta = d["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _key(d: Doc) -> tuple[str, str]:
    return d["kind"], d["metadata"]["name"]


def references(docs: list[Doc]) -> set[tuple[str, str]]:
    """(kind, name) of the objects these documents name: claims, classes, volumes, templates."""
    out: set[tuple[str, str]] = set()
    for d in docs:
        kind, spec = d["kind"], d.get("spec") or {}
        if kind == "Pod":
            if spec.get("priorityClassName"):
                out.add(("PriorityClass", spec["priorityClassName"]))
            for v in spec.get("volumes", []):
                if "persistentVolumeClaim" in v:
                    out.add(("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"]))
                tmpl = (v.get("ephemeral") or {}).get("volumeClaimTemplate")
                if tmpl and tmpl.get("spec", {}).get("storageClassName"):
                    out.add(("StorageClass", tmpl["spec"]["storageClassName"]))
            for rc in spec.get("resourceClaims", []):
                if rc.get("resourceClaimName"):
                    out.add(("ResourceClaim", rc["resourceClaimName"]))
                if rc.get("resourceClaimTemplateName"):
                    out.add(("ResourceClaimTemplate", rc["resourceClaimTemplateName"]))
            for st in (d.get("status") or {}).get("resourceClaimStatuses", []):
                if st.get("resourceClaimName"):
                    out.add(("ResourceClaim", st["resourceClaimName"]))
        elif kind in ("PersistentVolumeClaim", "PersistentVolume"):
            if spec.get("storageClassName"):
                out.add(("StorageClass", spec["storageClassName"]))
            if spec.get("volumeName"):
                out.add(("PersistentVolume", spec["volumeName"]))
            if (spec.get("csi") or {}).get("driver"):
                out.add(("CSIDriver", spec["csi"]["driver"]))
        elif kind == "StorageClass":
            out.add(("CSIDriver", d.get("provisioner", "")))
        elif kind == "VolumeAttachment":
            out.add(("PersistentVolume", spec.get("source", {}).get("persistentVolumeName", "")))
        elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
            inner = spec.get("spec", spec)
            for r in inner.get("devices", {}).get("requests", []):
                for sub in [r.get("exactly") or {}] + list(r.get("firstAvailable") or []):
                    if sub.get("deviceClassName"):
                        out.add(("DeviceClass", sub["deviceClassName"]))
    return out


def _node_of(d: Doc) -> str | None:
    kind = d["kind"]
    if kind == "Pod":
        return d["spec"].get("nodeName")
    if kind == "CSINode":
        return d["metadata"]["name"]
    if kind in ("ResourceSlice", "VolumeAttachment"):
        return d["spec"].get("nodeName")
    return None


def without_nodes(sc: Scenario, gone: set[str]) -> Scenario:
    """The scenario without these nodes and the objects that exist for them."""
    if not gone:
        return sc
    pods = {_ref(d) for d in sc.cluster if d["kind"] == "Pod" and d["spec"].get("nodeName") in gone}
    kept = [d for d in sc.cluster
            if not (d["kind"] == "Node" and d["metadata"]["name"] in gone) and _node_of(d) not in gone]
    return without_running(_with(sc, cluster=kept), pods)


def without_running(sc: Scenario, gone: set[str]) -> Scenario:
    """The scenario without these running pods (namespace/name), the claims they own, and their
    entries in shared claims' reservedFor."""
    if not gone:
        return sc
    out: list[Doc] = []
    for d in sc.cluster:
        kind = d["kind"]
        if kind == "Pod" and _ref(d) in gone:
            continue
        if kind == "ResourceClaim":
            ns = d["metadata"].get("namespace") or "default"
            owners = d["metadata"].get("ownerReferences") or []
            if any(o.get("kind") == "Pod" and f"{ns}/{o['name']}" in gone for o in owners):
                continue
            reserved = (d.get("status") or {}).get("reservedFor")
            if reserved and any(f"{ns}/{r['name']}" in gone for r in reserved):
                d = copy.deepcopy(d)
                d["status"]["reservedFor"] = [r for r in reserved if f"{ns}/{r['name']}" not in gone]
                if not d["status"]["reservedFor"]:
                    del d["status"]["reservedFor"]
        out.append(d)
    return _with(sc, cluster=out)


Edit = Callable[[Scenario], "Scenario | None"]


def field_edits(sc: Scenario) -> Iterator[Edit]:
    """Single-field deletions, each found again by name and position in the scenario it is applied to."""
    for where, docs in (("pods", sc.pods), ("cluster", sc.cluster)):
        for i, d in enumerate(docs):
            kind = d["kind"]
            if kind == "Pod":
                for f in POD_FIELDS:
                    if f in d["spec"]:
                        yield _del_spec(where, i, (f,))
                if len(d["spec"].get("containers", [])) > 1:
                    yield _drop_extra_containers(where, i)
                for k, c in enumerate(d["spec"].get("containers", [])):
                    for f in ("ports", "resources"):
                        if f in c:
                            yield _del_container_field(where, i, k, f)
            elif kind == "Node":
                for label in d["metadata"].get("labels", {}):
                    if label not in KEEP_LABELS:
                        yield _del_label(i, label)
                for f in ("taints", "unschedulable"):
                    if f in d.get("spec", {}):
                        yield _del_spec("cluster", i, (f,))
                if d.get("status", {}).get("images"):
                    yield _del_images(i)
    profiles = sc.config.get("profiles") or []
    if profiles and any(k != "schedulerName" for k in profiles[0]):
        yield _plain_profile


def _doc(sc: Scenario, where: str, i: int) -> tuple[Scenario, Doc] | None:
    docs = sc.pods if where == "pods" else sc.cluster
    if i >= len(docs):
        return None
    new_docs = list(docs)
    new_docs[i] = copy.deepcopy(docs[i])
    new = _with(sc, pods=new_docs) if where == "pods" else _with(sc, cluster=new_docs)
    return new, new_docs[i]


def _del_spec(where: str, i: int, path: tuple[str, ...]) -> Edit:
    def edit(sc: Scenario) -> Scenario | None:
        got = _doc(sc, where, i)
        if got is None or path[0] not in got[1].get("spec", {}):
            return None
        del got[1]["spec"][path[0]]
        return got[0]
    return edit


def _drop_extra_containers(where: str, i: int) -> Edit:
    def edit(sc: Scenario) -> Scenario | None:
        got = _doc(sc, where, i)
        if got is None or len(got[1]["spec"].get("containers", [])) < 2:
            return None
        got[1]["spec"]["containers"] = got[1]["spec"]["containers"][:1]
        return got[0]
    return edit


def _del_container_field(where: str, i: int, k: int, f: str) -> Edit:
    def edit(sc: Scenario) -> Scenario | None:
        got = _doc(sc, where, i)
        if got is None:
            return None
        cs = got[1]["spec"].get("containers", [])
        if k >= len(cs) or f not in cs[k]:
            return None
        del cs[k][f]
        return got[0]
    return edit


def _del_label(i: int, label: str) -> Edit:
    def edit(sc: Scenario) -> Scenario | None:
        got = _doc(sc, "cluster", i)
        if got is None or label not in got[1]["metadata"].get("labels", {}):
            return None
        del got[1]["metadata"]["labels"][label]
        return got[0]
    return edit


def _del_images(i: int) -> Edit:
    def edit(sc: Scenario) -> Scenario | None:
        got = _doc(sc, "cluster", i)
        if got is None or not got[1].get("status", {}).get("images"):
            return None
        del got[1]["status"]["images"]
        return got[0]
    return edit


def _plain_profile(sc: Scenario) -> Scenario | None:
    config = copy.deepcopy(sc.config)
    config["profiles"] = [{"schedulerName": config["profiles"][0].get("schedulerName", "default-scheduler")}]
    return _with(sc, config=config)
