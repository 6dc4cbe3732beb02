"""Workload expansion against what the controllers create: names, labels, owners, counts."""

from __future__ import annotations

import re

import pytest
from workload_builders import Workload, container, node

from kplan.errors import InputError
from kplan.workloads import apply_limit_ranges, ephemeral_claims, expand
from kplan.workloads.names import ALPHANUMS, compute_hash, fnv32, fnv32a, revision_hash, safe_encode_string

SUFFIX = f"[{ALPHANUMS}]{{5}}"
HASH = f"[{ALPHANUMS}]+"


def names(exp) -> list[str]:
    return [p["metadata"]["name"] for p in exp.pods]


def controller(obj) -> dict:
    refs = [o for o in obj["metadata"]["ownerReferences"] if o.get("controller")]
    assert len(refs) == 1
    return refs[0]


# ----------------------------------------------------------------------------- hashing and names

@pytest.mark.parametrize("data, a, plain", [
    (b"", 0x811C9DC5, 0x811C9DC5),
    (b"a", 0xE40C292C, 0x050C5D7E),
    (b"foobar", 0xBF9CF968, 0x31F0B262),
], ids=["the empty input hashes to the offset basis", "one byte", "a word"])
def test_fnv_matches_the_published_vectors(data, a, plain):
    assert fnv32a(data) == a
    assert fnv32(data) == plain


def test_safe_encode_maps_each_digit_into_the_vowel_free_alphabet():
    assert safe_encode_string("0123456789") == "456789bcdf"


def test_pod_template_hash_changes_with_the_template_and_the_collision_count():
    t1 = Workload("Deployment", "web").template()
    t2 = Workload("Deployment", "web").pod(containers=[container(cpu="1")]).template()
    assert compute_hash(t1, None) == compute_hash(dict(t1), None)
    assert compute_hash(t1, None) != compute_hash(t2, None)
    assert compute_hash(t1, None) != compute_hash(t1, 1)
    assert re.fullmatch(HASH, compute_hash(t1, None))
    assert revision_hash(t1, 0) != revision_hash(t1, 1)


# ----------------------------------------------------------------------------- Deployment

def test_deployment_creates_one_replicaset_named_after_the_template_hash():
    d = Workload("Deployment", "web").replicas(3).build()
    exp = expand(d, "app.yaml", seed=0)
    (rs,) = exp.created
    h = compute_hash(d["spec"]["template"], None)
    assert rs["kind"] == "ReplicaSet" and rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
    assert controller(rs) == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": exp.uid,
                              "controller": True, "blockOwnerDeletion": True}
    assert len(exp.pods) == 3
    for p in exp.pods:
        assert re.fullmatch(f"web-{h}-{SUFFIX}", p["metadata"]["name"])
        assert p["metadata"]["generateName"] == f"web-{h}-"
        assert p["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
        assert controller(p)["kind"] == "ReplicaSet" and controller(p)["name"] == f"web-{h}"
        assert controller(p)["uid"] == rs["metadata"]["uid"]
        assert p["metadata"]["namespace"] == "default"


@pytest.mark.parametrize("replicas, count", [(None, 1), (0, 0), (5, 5)],
                         ids=["no replicas means one", "zero replicas create no pods", "five replicas"])
def test_deployment_replicas(replicas, count):
    w = Workload("Deployment", "web")
    if replicas is not None:
        w.replicas(replicas)
    assert len(expand(w.build(), "x", seed=0).pods) == count


def test_deployment_reuses_an_existing_replicaset_with_an_equal_template():
    d = Workload("Deployment", "web").replicas(2).build()
    old_template = {"metadata": {"labels": {"app": "web", "pod-template-hash": "abc12"}},
                    "spec": d["spec"]["template"]["spec"]}
    existing_rs = {"kind": "ReplicaSet", "metadata": {"name": "web-abc12", "namespace": "default", "uid": "rs-uid",
                                                     "ownerReferences": [{"kind": "Deployment", "name": "web",
                                                                          "controller": True}]},
                   "spec": {"template": old_template}}
    exp = expand(d, "x", seed=0, existing_replicasets=[existing_rs])
    assert exp.created[0]["metadata"]["name"] == "web-abc12"
    assert all(p["metadata"]["labels"]["pod-template-hash"] == "abc12" for p in exp.pods)


def test_a_paused_deployment_creates_nothing():
    exp = expand(Workload("Deployment", "web").spec(paused=True).build(), "x", seed=0)
    assert exp.pods == [] and exp.created == [] and "paused" in exp.warnings[0]


@pytest.mark.parametrize("selector, problem", [
    ({"matchLabels": {"app": "other"}}, "`selector` does not match template `labels`"),
    ({}, "Invalid value: empty selector is invalid for deployment"),
    (None, "spec.selector: Required value"),
], ids=["a selector that misses the template's labels", "an empty selector", "no selector"])
def test_deployment_selector_is_validated(selector, problem):
    d = Workload("Deployment", "web").build()
    d["spec"]["selector"] = selector
    with pytest.raises(InputError, match=re.escape(problem)):
        expand(d, "app.yaml", seed=0)


# ----------------------------------------------------------------------------- ReplicaSet, RC

@pytest.mark.parametrize("kind, api", [("ReplicaSet", "apps/v1"), ("ReplicationController", "v1")],
                         ids=["a ReplicaSet", "a ReplicationController"])
def test_replicaset_pods_are_generated_from_its_name(kind, api):
    exp = expand(Workload(kind, "front").replicas(2).build(), "x", seed=0)
    assert [re.fullmatch(f"front-{SUFFIX}", n) is not None for n in names(exp)] == [True, True]
    assert controller(exp.pods[0])["kind"] == kind and controller(exp.pods[0])["apiVersion"] == api


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "ReplicationController"])
@pytest.mark.parametrize("skipped, max_pods", [((), None), ((0, 3, 4), None), ((), 2), ((1, 2), 3), ((0, 1, 2, 3, 4, 5), 1)],
                         ids=["neither", "skipped names", "a limit", "both", "every name skipped"])
def test_skipped_names_and_a_limit_leave_out_pods_without_changing_the_others(kind, skipped, max_pods):
    # kplan.io.scale skips the pods in use and builds no more than it wants: the pods it keeps
    # must be, field for field, the ones the whole expansion gives
    w = Workload(kind, "front").replicas(6).build()
    whole = expand(w, "x", seed=3).pods
    skip = {whole[i]["metadata"]["name"] for i in skipped}
    kept = [p for p in whole if p["metadata"]["name"] not in skip][:max_pods]
    assert expand(w, "x", seed=3, skip_pod_names=skip, max_pods=max_pods).pods == kept


# ----------------------------------------------------------------------------- StatefulSet

def test_statefulset_pods_are_ordinals_with_identity_labels_and_claims():
    claim_template = {"metadata": {"name": "data", "labels": {"tier": "db"}},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    s = (Workload("StatefulSet", "db").replicas(3).spec(serviceName="db-headless", volumeClaimTemplates=[claim_template])
         .pod(volumes=[{"name": "data", "emptyDir": {}}, {"name": "config", "configMap": {"name": "c"}}]).build())
    exp = expand(s, "x", seed=0)
    assert names(exp) == ["db-0", "db-1", "db-2"]
    assert exp.ordered
    revision = f"db-{revision_hash(s['spec']['template'], 0)}"
    for i, p in enumerate(exp.pods):
        assert p["metadata"]["labels"] == {"app": "db", "statefulset.kubernetes.io/pod-name": f"db-{i}",
                                           "apps.kubernetes.io/pod-index": str(i), "controller-revision-hash": revision}
        assert p["spec"]["hostname"] == f"db-{i}" and p["spec"]["subdomain"] == "db-headless"
        # the template's volume of the claim's name is replaced by the claim
        assert p["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{i}"}},
                                        {"name": "config", "configMap": {"name": "c"}}]
        assert controller(p)["kind"] == "StatefulSet" and controller(p)["uid"] == exp.uid
    assert [c["metadata"]["name"] for c in exp.claims] == ["data-db-0", "data-db-1", "data-db-2"]
    assert exp.claims[0]["metadata"]["labels"] == {"tier": "db", "app": "db"}
    assert exp.claims[0]["spec"] == claim_template["spec"]


@pytest.mark.parametrize("fields, expected, ordered", [
    ({"ordinals": {"start": 5}}, ["db-5", "db-6"], True),
    ({"podManagementPolicy": "Parallel"}, ["db-0", "db-1"], False),
], ids=["ordinals start where spec.ordinals.start says", "the Parallel policy creates all pods at once"])
def test_statefulset_ordinals_and_policy(fields, expected, ordered):
    exp = expand(Workload("StatefulSet", "db").replicas(2).spec(**fields).build(), "x", seed=0)
    assert names(exp) == expected and exp.ordered == ordered


# ----------------------------------------------------------------------------- DaemonSet

DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def test_daemonset_pod_is_pinned_to_its_node_with_the_daemon_tolerations():
    ds = Workload("DaemonSet", "agent").pod(tolerations=[{"key": "gpu", "operator": "Exists"}]).build()
    exp = expand(ds, "x", seed=0, nodes=[node("b"), node("a")])
    assert [p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            for p in exp.pods] == [
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}
        for n in ("a", "b")]
    p = exp.pods[0]
    assert p["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}] + DAEMON_TOLERATIONS
    assert re.fullmatch(f"agent-{SUFFIX}", p["metadata"]["name"])
    assert p["metadata"]["labels"] == {"app": "agent", "pod-template-generation": "1",
                                       "controller-revision-hash": compute_hash(ds["spec"]["template"], None)}
    assert controller(p)["kind"] == "DaemonSet"


def test_daemonset_with_host_network_also_tolerates_network_unavailable():
    exp = expand(Workload("DaemonSet", "cni").pod(hostNetwork=True).build(), "x", seed=0, nodes=[node("a")])
    assert exp.pods[0]["spec"]["tolerations"][-1] == {
        "key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


def test_daemonset_replaces_an_identical_toleration_instead_of_adding_one():
    mine = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]
    exp = expand(Workload("DaemonSet", "agent").pod(tolerations=mine).build(), "x", seed=0, nodes=[node("a")])
    assert exp.pods[0]["spec"]["tolerations"] == DAEMON_TOLERATIONS


@pytest.mark.parametrize("the_node, pod_fields, runs", [
    (node("n", taints=[("node.kubernetes.io/unschedulable", "", "NoSchedule")]), {}, True),
    (node("n", taints=[("node.kubernetes.io/not-ready", "", "NoExecute")]), {}, True),
    (node("n", taints=[("node.kubernetes.io/not-ready", "", "NoSchedule"),
                       ("node.kubernetes.io/not-ready", "", "NoExecute")]), {}, False),
    (node("n", taints=[("node.kubernetes.io/memory-pressure", "", "NoSchedule")]), {}, True),
    (node("n", taints=[("dedicated", "db", "NoSchedule")]), {}, False),
    (node("n", taints=[("dedicated", "db", "PreferNoSchedule")]), {}, True),
    (node("n", taints=[("dedicated", "db", "NoSchedule")]), {"tolerations": [{"key": "dedicated", "value": "db"}]}, True),
    (node("n", labels={"disk": "ssd"}), {"nodeSelector": {"disk": "hdd"}}, False),
    (node("n", labels={"disk": "ssd"}), {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}}, True),
    (node("n"), {"nodeName": "other"}, False),
], ids=[
    "a cordoned node gets a daemon pod",
    "a node tainted not-ready NoExecute only gets a daemon pod",
    "a NotReady node (NoSchedule taint too) gets none",
    "a node under memory pressure gets a daemon pod",
    "an untolerated NoSchedule taint keeps the daemon away",
    "PreferNoSchedule taints do not matter",
    "the template's own toleration lets it run",
    "a nodeSelector that does not match keeps it away",
    "required node affinity that matches lets it run",
    "a template nodeName picks that node only",
])
def test_daemonset_eligibility(the_node, pod_fields, runs):
    exp = expand(Workload("DaemonSet", "agent").pod(**pod_fields).build(), "x", seed=0, nodes=[the_node])
    assert len(exp.pods) == (1 if runs else 0)


def test_daemonset_keeps_preferred_affinity_and_replaces_the_required_terms():
    affinity = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [
            {"key": "fast", "operator": "Exists"}]}}]}}
    exp = expand(Workload("DaemonSet", "agent").pod(affinity=affinity).build(), "x", seed=0,
                 nodes=[node("a", labels={"kubernetes.io/os": "linux"})])
    na = exp.pods[0]["spec"]["affinity"]["nodeAffinity"]
    assert na["preferredDuringSchedulingIgnoredDuringExecution"] == \
        affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]


# ----------------------------------------------------------------------------- Job, CronJob

@pytest.mark.parametrize("fields, count", [
    ({}, 1),
    ({"parallelism": 3}, 3),
    ({"parallelism": 5, "completions": 2}, 2),
    ({"parallelism": 2, "completions": 10}, 2),
    ({"parallelism": 0}, 0),
    ({"parallelism": 3, "suspend": True}, 0),
], ids=["one pod by default", "parallelism without completions (a work queue)",
        "no more pods than completions", "no more pods than parallelism", "parallelism zero", "a suspended job"])
def test_job_starts_parallelism_pods(fields, count):
    assert len(expand(Workload("Job", "batch").spec(**fields).build(), "x", seed=0).pods) == count


def test_job_pods_carry_the_labels_the_api_server_adds():
    exp = expand(Workload("Job", "batch").meta(uid="job-uid").build(), "x", seed=0)
    p = exp.pods[0]
    assert p["metadata"]["labels"] == {"app": "batch", "job-name": "batch", "batch.kubernetes.io/job-name": "batch",
                                       "controller-uid": "job-uid", "batch.kubernetes.io/controller-uid": "job-uid"}
    assert re.fullmatch(f"batch-{SUFFIX}", p["metadata"]["name"])
    assert p["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert controller(p) == {"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": "job-uid",
                             "controller": True, "blockOwnerDeletion": True}


def test_indexed_job_pods_carry_their_index():
    exp = expand(Workload("Job", "idx").spec(completionMode="Indexed", completions=3, parallelism=2).build(), "x", seed=0)
    for i, p in enumerate(exp.pods):
        assert p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == str(i)
        assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == str(i)
        assert p["spec"]["hostname"] == f"idx-{i}"
        assert re.fullmatch(f"idx-{i}-{SUFFIX}", p["metadata"]["name"])


def test_cronjob_creates_one_job_named_after_the_scheduled_minute():
    exp = expand(Workload("CronJob", "report").build(), "x", seed=0)
    (job,) = exp.created
    assert job["metadata"]["name"] == "report-28942560"
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2025-01-11T00:00:00Z"
    assert controller(job)["kind"] == "CronJob"
    assert len(exp.pods) == 1
    assert controller(exp.pods[0])["name"] == "report-28942560"
    assert exp.pods[0]["metadata"]["labels"]["job-name"] == "report-28942560"


# ----------------------------------------------------------------------------- seeds

def test_the_seed_alone_decides_the_random_suffixes():
    d = Workload("Deployment", "web").replicas(3).build()
    assert names(expand(d, "x", seed=7)) == names(expand(d, "other.yaml", seed=7))
    assert names(expand(d, "x", seed=7)) != names(expand(d, "x", seed=8))
    assert names(expand(d, "x", seed=7)) != names(expand(Workload("Deployment", "api").replicas(3).build(), "x", seed=7))


# ----------------------------------------------------------------------------- admission

@pytest.mark.parametrize("item, before, after", [
    ({"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}},
     {}, {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}),
    ({"type": "Container", "default": {"memory": "1Gi"}},
     {}, {"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}}),
    ({"type": "Container", "max": {"cpu": "2"}},
     {}, {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}}),
    ({"type": "Container", "min": {"cpu": "50m"}},
     {}, {"requests": {"cpu": "50m"}}),
    ({"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}},
     {"limits": {"cpu": "1"}}, {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}),
    ({"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}},
     {"requests": {"cpu": "200m"}}, {"limits": {"cpu": "500m"}, "requests": {"cpu": "200m"}}),
    ({"type": "Pod", "max": {"cpu": "2"}}, {}, {}),
], ids=["default limit and request", "the request defaults to the default limit", "the limit defaults to max",
        "the request defaults to min", "a container's own limit is its request before defaults apply",
        "a container's own request is kept", "Pod-type items set no defaults"])
def test_limit_range_defaults(item, before, after):
    pod = {"metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "app", "resources": before} if before else {"name": "app"}]}}
    apply_limit_ranges(pod, [{"metadata": {"name": "lr"}, "spec": {"limits": [item]}}])
    assert pod["spec"]["containers"][0].get("resources", {}) == after


def test_limit_range_annotates_the_pod_like_the_limitranger():
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}], "initContainers": [{"name": "init"}]}}
    apply_limit_ranges(pod, [{"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "Container", "default": {"cpu": "1", "memory": "1Gi"}}]}}])
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "cpu, memory request for init container init; cpu, memory limit for init container init")


def test_generic_ephemeral_volumes_get_claims_owned_by_the_pod():
    pod = {"metadata": {"name": "p", "namespace": "ns"},
           "spec": {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
               "metadata": {"labels": {"a": "b"}}, "spec": {"accessModes": ["ReadWriteOnce"]}}}}]}}
    (claim,) = ephemeral_claims(pod, "u1")
    assert claim["metadata"]["name"] == "p-scratch" and claim["metadata"]["namespace"] == "ns"
    assert claim["metadata"]["labels"] == {"a": "b"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert claim["spec"] == {"accessModes": ["ReadWriteOnce"]}


def test_a_long_indexed_job_name_keeps_its_index_in_the_generated_name():
    name = "j" * 60
    exp = expand(Workload("Job", name).spec(completionMode="Indexed", completions=1).build(), "x", seed=0)
    assert exp.pods[0]["metadata"]["generateName"] == "j" * 55 + "-0-"


@pytest.mark.parametrize("changed, generation", [(False, "3"), (True, "4")],
                         ids=["an unchanged template keeps the generation", "a changed template is the next one"])
def test_daemonset_generation_follows_the_cluster_object(changed, generation):
    old = Workload("DaemonSet", "agent").meta(annotations={"deprecated.daemonset.template.generation": "3"}).build()
    new = Workload("DaemonSet", "agent")
    if changed:
        new.pod(containers=[container(cpu="1")])
    exp = expand(new.build(), "x", seed=0, nodes=[node("a")], existing=old)
    assert exp.pods[0]["metadata"]["labels"]["pod-template-generation"] == generation


def test_generated_names_never_repeat_even_when_the_random_suffix_does() -> None:
    # 5,000 replicas draw a repeated 5-character suffix more often than not; the controller's
    # retry after AlreadyExists gives the second pod another name
    from kplan.workloads.names import NameGenerator

    names = NameGenerator(0, "Pod/default/web")
    generated = [names.generate("web-") for _ in range(20_000)]
    assert len(set(generated)) == len(generated)
    assert NameGenerator(0, "Pod/default/web").generate("web-") == generated[0]  # still seeded


@pytest.mark.parametrize("seed, scope", [(0, "Pod/default/web"), (1, "Deployment/bench/app"), (20250101, "Job/x/y")])
def test_suffixes_and_uids_are_the_draws_of_randrange_and_uuid4(seed, scope) -> None:
    # NameGenerator writes randrange and uuid.UUID(version=4) out for speed: the draws, and so
    # every generated name and uid, must stay the ones those give
    import random
    import uuid

    from kplan.workloads.names import RANDOM_LENGTH, NameGenerator

    names = NameGenerator(seed, scope)
    rng = random.Random(f"kplan/{seed}/{scope}")
    for _ in range(2_000):
        assert names.suffix() == "".join(ALPHANUMS[rng.randrange(len(ALPHANUMS))] for _ in range(RANDOM_LENGTH))
        assert names.suffix(1) == ALPHANUMS[rng.randrange(len(ALPHANUMS))]
        assert names.uid() == str(uuid.UUID(int=rng.getrandbits(128), version=4))
