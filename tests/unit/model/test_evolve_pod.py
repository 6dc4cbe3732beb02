"""evolve_pod is dataclasses.replace for Pod, only faster: every field, changed or not, comes out the same."""

from __future__ import annotations

import dataclasses

import pytest

from kplan.model.objects import Pod, evolve_pod
from kplan.model.parse import parse_pod

DOC = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}, "uid": "u-1",
                    "creationTimestamp": "2025-01-02T03:04:05Z",
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "web-abc", "controller": True,
                                         "apiVersion": "apps/v1", "uid": "rs"}]},
       "spec": {"priority": 7, "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "c", "image": "web:1", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}]}}


def fields(pod: Pod) -> dict[str, object]:
    return {f.name: getattr(pod, f.name) for f in dataclasses.fields(Pod)}


def test_every_field_is_a_slot() -> None:
    """evolve_pod copies the slots: a field that were not one would be lost."""
    assert [f.name for f in dataclasses.fields(Pod)] == list(Pod.__slots__)


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Pod)])
def test_evolve_pod_is_replace(name: str) -> None:
    pod = parse_pod(DOC, "pods.yaml")
    before = fields(pod)
    value = object()
    got, want = evolve_pod(pod, **{name: value}), dataclasses.replace(pod, **{name: value})
    assert fields(got) == fields(want)
    assert got is not pod and fields(pod) == before  # the input pod is left as it was


def test_evolve_pod_is_frozen() -> None:
    pod = evolve_pod(parse_pod(DOC, "pods.yaml"), node_name="n1")
    assert pod.node_name == "n1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pod.node_name = "n2"  # type: ignore[misc]


def test_evolve_pod_sets_several_fields_at_once_as_replace_does() -> None:
    """A bind changes three fields in one copy (each set of names has a copier of its own)."""
    pod = parse_pod(DOC, "pods.yaml")
    changes = {"node_name": "n1", "start_time": 1.0, "nominated_node": ""}
    assert fields(evolve_pod(pod, **changes)) == fields(dataclasses.replace(pod, **changes))
    reordered = {"nominated_node": "n2", "node_name": "n1"}
    assert fields(evolve_pod(pod, **reordered)) == fields(dataclasses.replace(pod, **reordered))


def test_evolve_pod_refuses_a_field_pod_does_not_have() -> None:
    pod = parse_pod(DOC, "pods.yaml")
    with pytest.raises(TypeError):
        dataclasses.replace(pod, no_such_field=1)
    with pytest.raises(TypeError):
        evolve_pod(pod, no_such_field=1)
