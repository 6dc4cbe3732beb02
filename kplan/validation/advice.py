"""What kube-apiserver v1.34 accepts but kube-scheduler can never honour, said as warnings at
apply time (beside the unknown fields): the run goes on as the real cluster's would, and the
warning names why the pod does not go where its manifest seems to ask.

- A node affinity ``Gt``/``Lt`` requirement whose value is not an integer: the API server checks
  only that there is one value; kube-scheduler cannot build the selector
  (``for 'Gt', 'Lt' operators, the value must be an integer``), so a required term matches no
  node and a preferred one never adds to a score.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kplan.model.selectors import parse_int64

#: the kinds whose pod template kplan turns into pods, and where the template's spec is
TEMPLATE_SPECS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"), "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def pod_spec_of(d: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The pod spec of a Pod or of a workload's template, with its path; None for other kinds."""
    kind = d.get("kind")
    fields = ("spec",) if kind == "Pod" else TEMPLATE_SPECS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return None
    node: Any = d
    for f in fields:
        node = node.get(f) if isinstance(node, Mapping) else None
    return (".".join(fields), node) if isinstance(node, Mapping) else None


def _terms(spec: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any, bool]]:
    """(path, term, required) for each node selector term of the pod's node affinity."""
    affinity = spec.get("affinity")
    na = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    if not isinstance(na, Mapping):
        return
    base = f"{path}.affinity.nodeAffinity"
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    for i, t in enumerate(terms if isinstance(terms, list) else []):
        yield f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]", t, True
    preferred = na.get("preferredDuringSchedulingIgnoredDuringExecution")
    for i, p in enumerate(preferred if isinstance(preferred, list) else []):
        if isinstance(p, Mapping):
            yield f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference", p.get("preference"), False


def never_matching(d: Mapping[str, Any]) -> list[str]:
    """``path: why``, one per node affinity requirement kube-scheduler cannot evaluate."""
    found = pod_spec_of(d)
    if found is None:
        return []
    out = []
    for path, term, required in _terms(found[1], found[0]):
        exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for j, r in enumerate(exprs if isinstance(exprs, list) else []):
            if not isinstance(r, Mapping) or r.get("operator") not in ("Gt", "Lt"):
                continue
            values = r.get("values")
            if not isinstance(values, list) or len(values) != 1 or not isinstance(values[0], str):
                continue  # the validation's error, not a warning
            if parse_int64(values[0]) is None:
                effect = "this term matches no node" if required else "this preference adds to no node's score"
                out.append(f'{path}.matchExpressions[{j}].values[0]: "{values[0]}" is not an integer, which '
                           f"{r['operator']} compares: kube-scheduler cannot evaluate it, so {effect}")
    return out
