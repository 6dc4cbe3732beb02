"""What every controller does the same way: read its object, build pods from a pod template.

pkg/controller/controller_utils.go ``GetPodFromTemplate`` (labels, annotations and finalizers of
the template, ``generateName`` ``<controller>-``, the controller's namespace, one controller
owner reference) and ``metav1.NewControllerRef`` (``controller: true``,
``blockOwnerDeletion: true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.errors import InputError
from kplan.model.json_tree import copy_tree
from kplan.model.parse import Where
from kplan.workloads.names import NameGenerator

Obj = dict[str, Any]
Count = int  # the builtin, which Reader.int hides inside the class
#: the most pods kplan creates for one workload: the API server allows int32 replica counts, but
#: simulating two billion pods would not end; real workloads stay far below this
MAX_PODS_PER_WORKLOAD = 100_000


def sub(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``d[key]`` when it is an object, else an empty one."""
    v = d.get(key)
    return v if isinstance(v, Mapping) else {}


class Reader:
    """Typed access to one workload object, with one-line errors naming file, object and field."""

    def __init__(self, obj: Mapping[str, Any], source: str) -> None:
        self.obj = obj
        self.kind = str(obj.get("kind") or "")
        md = obj.get("metadata")
        self.meta: Mapping[str, Any] = md if isinstance(md, Mapping) else {}
        self.name = str(self.meta.get("name") or "")
        self.namespace = str(self.meta.get("namespace") or "default")
        self.where = Where(source, self.kind, f"{self.namespace}/{self.name or '?'}")
        if not self.name:
            raise self.where.fail("metadata.name", "Required value")

    def fail(self, path: str, problem: str) -> InputError:
        return self.where.fail(path, problem)

    def map(self, v: Any, path: str) -> Mapping[str, Any]:
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            raise self.fail(path, f"expected an object, got {type(v).__name__}")
        return v

    def list(self, v: Any, path: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(path, f"expected a list, got {type(v).__name__}")
        return v

    def int(self, v: Any, path: str, default: int | None) -> int | None:
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, str) and v.lstrip("-").isdigit():
                return int(v)
            raise self.fail(path, f"expected an integer, got {v!r}")
        return v

    def count(self, v: Any, path: str) -> Count:
        """A replica count (default 1): what the controller creates, bounded by what kplan simulates.
        A negative count is the validation's to refuse (kplan/validation); here it creates nothing."""
        n = self.int(v, path, 1) or 0
        if n > MAX_PODS_PER_WORKLOAD:
            from kplan.errors import UnsupportedError

            raise UnsupportedError(f"{self.where.source + ': ' if self.where.source else ''}{self.kind} "
                                   f"{self.where.name}: {path}: {n}: kplan simulates at most "
                                   f"{MAX_PODS_PER_WORKLOAD:,} pods of one workload")
        return max(n, 0)

    def spec(self) -> Mapping[str, Any]:
        return self.map(self.obj.get("spec"), "spec")

    def template(self, path: str = "spec.template") -> Obj:
        """The pod template (a deep copy, so the caller may change it)."""
        spec: Any = self.obj
        for part in path.split("."):
            spec = self.map(spec, path).get(part) if isinstance(spec, Mapping) else None
        t = self.map(spec, path)
        if not t:
            raise self.fail(path, "Required value")
        if not isinstance(t.get("spec"), Mapping):
            raise self.fail(f"{path}.spec", "Required value")
        return copy_tree(dict(t))

    def uid(self, names: NameGenerator) -> str:
        return str(self.meta.get("uid") or names.uid())


def template_labels(template: Mapping[str, Any]) -> dict[str, str]:
    md = template.get("metadata")
    labels = md.get("labels") if isinstance(md, Mapping) else None
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def controller_ref(api_version: str, kind: str, name: str, uid: str) -> Obj:
    """metav1.NewControllerRef."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def pod_from_template(template: Mapping[str, Any], namespace: str, owner: Obj | None) -> Obj:
    """GetPodFromTemplate: the pod a controller asks the API server to create (no name yet)."""
    md = sub(template, "metadata")
    meta: Obj = {"namespace": namespace}
    for key in ("labels", "annotations"):
        if isinstance(md.get(key), Mapping) and md[key]:
            meta[key] = dict(md[key])
    if isinstance(md.get("finalizers"), list) and md["finalizers"]:
        meta["finalizers"] = list(md["finalizers"])
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy_tree(dict(template["spec"]))}


def create_pod(pod: Obj, names: NameGenerator, *, name: str | None = None, generate_name: str | None = None) -> Obj:
    """What the API server adds on create: the name (from generateName), a uid."""
    if name is None:
        assert generate_name is not None
        name = names.generate(generate_name)
    return named_pod(pod, name, names.uid(), generate_name)


def named_pod(pod: Obj, name: str, uid: str, generate_name: str | None = None) -> Obj:
    """create_pod with the name and uid drawn already."""
    meta = pod["metadata"]
    if generate_name is not None:
        meta["generateName"] = generate_name
    meta["name"] = name
    meta["uid"] = uid
    return pod


def selector_matches_labels(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels), for validation."""
    from kplan.model.parse import parse_label_selector

    sel = parse_label_selector(selector, Where("", "", ""), "selector")
    return sel is not None and sel.matches(labels)


def check_selector(r: Reader, selector: Any, labels: Mapping[str, str], path: str = "spec.selector") -> Mapping[str, Any]:
    """API validation of apps/v1 workloads: a non-empty selector that selects the template's labels."""
    if selector is None:
        raise r.fail(path, "Required value")
    sel = r.map(selector, path)
    if not sel.get("matchLabels") and not sel.get("matchExpressions"):
        raise r.fail(path, f"Invalid value: empty selector is invalid for {r.kind.lower()}")
    if not selector_matches_labels(sel, labels):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
        raise r.fail("spec.template.metadata.labels", f"Invalid value: {{{shown}}}: `selector` does not match "
                     "template `labels`")
    return sel
