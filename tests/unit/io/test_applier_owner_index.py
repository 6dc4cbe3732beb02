"""Applier.controlled narrows the search for a workload's pods with an index by owner; it must find
exactly the pods a scan of every pod with ``controls`` finds, in the same order."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.io.apply import Applier
from kplan.model.raw import RawObject
from kplan.scenario import classify

NAMESPACES = ("a", "b")
WORKLOADS = [(k, n) for k in ("Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob", "DaemonSet")
             for n in ("web", "web-1", "db")]


def pod_doc(i: int, rng: random.Random) -> dict[str, object]:
    ns = rng.choice(NAMESPACES)
    md: dict[str, object] = {"name": f"p{i}", "namespace": ns, "labels": {}}
    shape = rng.randrange(6)
    if shape == 0:  # bare
        pass
    elif shape == 1:  # a ReplicaSet named like a Deployment's, with the template hash label
        h = rng.choice(("abc12", "x9"))
        md["labels"] = {"pod-template-hash": rng.choice((h, "other"))}
        md["ownerReferences"] = [{"kind": "ReplicaSet", "name": f"{rng.choice(('web', 'web-1', 'db'))}-{h}",
                                  "controller": True, "apiVersion": "apps/v1", "uid": "u"}]
    elif shape == 2:  # a Job of a CronJob, or not
        md["ownerReferences"] = [{"kind": "Job", "name": f"{rng.choice(('web', 'db'))}-{rng.choice(('123', 'x'))}",
                                  "controller": True, "apiVersion": "batch/v1", "uid": "u"}]
    elif shape == 3:  # a ReplicaSet that the cluster holds (owned by a Deployment, or not)
        md["ownerReferences"] = [{"kind": "ReplicaSet", "name": rng.choice(("rs-web", "rs-orphan")),
                                  "controller": True, "apiVersion": "apps/v1", "uid": "u"}]
    else:  # a direct controller
        kind, name = rng.choice(WORKLOADS)
        md["ownerReferences"] = [{"kind": kind, "name": name, "controller": rng.random() < 0.9,
                                  "apiVersion": "apps/v1", "uid": "u"}]
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "i"}]}
    if rng.random() < 0.7:
        spec["nodeName"] = "n1"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def cluster_objects(rng: random.Random, pods: int) -> list[RawObject]:
    docs: list[dict[str, object]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"}}}]
    for ns in NAMESPACES:
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": "rs-web", "namespace": ns, "ownerReferences": [
                {"kind": "Deployment", "name": "web", "controller": True, "apiVersion": "apps/v1", "uid": "d"}]},
            "spec": {"selector": {"matchLabels": {"x": "y"}}, "template": {"metadata": {"labels": {"x": "y"}}}}})
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs-orphan", "namespace": ns},
                     "spec": {"selector": {"matchLabels": {"x": "z"}},
                              "template": {"metadata": {"labels": {"x": "z"}}}}})
    docs += [pod_doc(i, rng) for i in range(pods)]
    return [RawObject(d, f"cluster.yaml: document {i + 1}") for i, d in enumerate(docs)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pods=st.integers(0, 60))
def test_controlled_is_the_scan_with_controls(seed: int, pods: int) -> None:
    rng = random.Random(seed)
    inputs = classify(cluster_objects(rng, pods))
    applier = Applier(inputs, keep_existing=False, seed=0)
    for ns in NAMESPACES:
        for kind, name in WORKLOADS:
            scan = [p for p in inputs.running + inputs.pending if applier.controls(kind, ns, name, p)]
            assert applier.controlled(kind, ns, name) == scan, (kind, ns, name)
    # the index follows the running list when it is replaced
    inputs.running = inputs.running[::2]
    for kind, name in WORKLOADS:
        scan = [p for p in inputs.running + inputs.pending if applier.controls(kind, "a", name, p)]
        assert applier.controlled(kind, "a", name) == scan
