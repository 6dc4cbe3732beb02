"""Karpenter's provisioning round (scheduling/scheduler.go Solve and what it calls), on small clusters."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.autoscaler.karpenter import KarpenterCluster, launch, solve
from kplan.model.karpenter import NodePool
from kplan.model.objects import Node, Pod
from kplan.model.parse_karpenter import parse_catalog, parse_node_pool
from tests.builders import expr, make_node, make_pod, term


def offering(price: float, capacity_type: str, zone: str) -> dict[str, Any]:
    return {"Price": price, "Available": True,
            "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity_type]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}


def itype(name: str, cpu: int, mem_gi: int, price: float, arch: str = "amd64") -> dict[str, Any]:
    return {"name": name, "architecture": arch, "operatingSystems": ["linux"],
            "resources": {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": "110"},
            "offerings": [offering(price, "on-demand", "zone-a"), offering(price, "on-demand", "zone-b"),
                          offering(price * 0.4, "spot", "zone-a"), offering(price * 0.4, "spot", "zone-b")]}


CATALOG = parse_catalog([itype("c.large", 2, 4, 0.08), itype("c.xlarge", 4, 8, 0.16), itype("c.2xlarge", 8, 16, 0.32),
                         itype("g.xlarge", 4, 16, 0.5, arch="arm64")], "types.json")


def pool(name: str = "default", weight: int | None = None, limits: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, reqs: list[dict[str, Any]] | None = None,
         labels: dict[str, str] | None = None) -> NodePool:
    spec: dict[str, Any] = {"template": {"metadata": {"labels": labels or {}}, "spec": {
        "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
        "requirements": reqs if reqs is not None else [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
        "taints": taints or []}}}
    if weight is not None:
        spec["weight"] = weight
    if limits is not None:
        spec["limits"] = limits
    return parse_node_pool({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
                            "spec": spec})


def cluster(pools: list[NodePool], nodes: tuple[Node, ...] = (), bound: tuple[Pod, ...] = (),
            daemons: tuple[Pod, ...] = ()) -> KarpenterCluster:
    return KarpenterCluster(nodes, bound, tuple(pools), (), daemons, CATALOG)


def pods(n: int, cpu: str = "1", prefix: str = "p", **kw: Any) -> list[Pod]:
    return [make_pod(f"{prefix}{i}").req(cpu=cpu, memory="1Gi").build() for i in range(n)]


def test_pending_pods_are_packed_into_one_claim_of_the_cheapest_types_that_fit() -> None:
    result = solve(cluster([pool()]), pods(3))
    assert not result.pod_errors
    [claim] = result.new_node_claims
    assert claim.node_pool == "default"
    assert [p.name for p in claim.pods] == ["p0", "p1", "p2"]
    # 3 cpu (+ kube-reserved 100m) no longer fits c.large; g.xlarge is dearer than c.2xlarge only by price
    assert [t.name for t in claim.instance_types] == ["c.xlarge", "c.2xlarge", "g.xlarge"]
    assert claim.requests == {"cpu": 3000, "memory": 3 * 2**30, "pods": 3}
    node = launch(claim, CATALOG, "default-abcde")
    assert node is not None and node.instance_type.name == "c.xlarge" and node.capacity_type == "on-demand"


def test_a_pod_no_instance_type_can_hold_gets_karpenters_reason() -> None:
    result = solve(cluster([pool()]), [make_pod("huge").req(cpu="64").build()])
    assert not result.new_node_claims
    msg = result.pod_errors["default/huge"]
    assert msg.startswith("no instance type has enough resources, requirements=")
    assert 'resources={"cpu":"64","pods":"1"}' in msg


def test_an_existing_node_with_room_is_used_before_a_new_claim() -> None:
    node = make_node("n1").alloc(cpu="4", memory="8Gi", pods="110").labels(
        **{"kubernetes.io/hostname": "n1"}).build()
    result = solve(cluster([pool()], nodes=(node,)), pods(2))
    assert not result.new_node_claims
    assert [(e.name, [p.name for p in e.pods]) for e in result.existing_nodes] == [("n1", ["p0", "p1"])]


def test_node_pools_are_tried_by_weight_and_taints_must_be_tolerated() -> None:
    heavy = pool("heavy", weight=50, taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    light = pool("light", weight=10)
    result = solve(cluster([light, heavy]), pods(1))
    assert [c.node_pool for c in result.new_node_claims] == ["light"]
    tolerant = make_pod("t").req(cpu="1").toleration("dedicated", "gpu", "NoSchedule").build()
    result = solve(cluster([light, heavy]), [tolerant])
    assert [c.node_pool for c in result.new_node_claims] == ["heavy"]


def test_limits_keep_a_pool_from_growing_past_them() -> None:
    result = solve(cluster([pool(limits={"cpu": "1"})]), pods(1))
    assert result.pod_errors == {"default/p0": "all available instance types exceed limits for nodepool "
                                               "(NodePool=default)"}


def test_a_requirement_the_pool_contradicts_is_incompatible_requirements() -> None:
    amd = pool(reqs=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}])
    p = make_pod("arm").req(cpu="1").node_selector(**{"kubernetes.io/arch": "arm64"}).build()
    result = solve(cluster([amd]), [p])
    assert result.pod_errors["default/arm"] == ("incompatible requirements, key kubernetes.io/arch, "
                                                "kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]")


def test_a_requirement_no_instance_type_meets_is_no_instance_type_met_all_requirements() -> None:
    p = make_pod("s390").req(cpu="1").node_selector(**{"kubernetes.io/arch": "s390x"}).build()
    result = solve(cluster([pool()]), [p])
    assert result.pod_errors["default/s390"].startswith("no instance type met all requirements, requirements=")


def test_a_label_no_pool_or_type_defines_does_not_have_known_values() -> None:
    p = make_pod("team").req(cpu="1").node_selector(team="a").build()
    result = solve(cluster([pool()]), [p])
    assert result.pod_errors["default/team"] == 'incompatible requirements, label "team" does not have known values'


def test_a_preferred_node_affinity_is_relaxed_when_it_cannot_be_met() -> None:
    p = make_pod("pref").req(cpu="1").preferred(10, term(expr("kubernetes.io/arch", "In", "s390x"))).build()
    result = solve(cluster([pool()]), [p])
    assert not result.pod_errors
    assert len(result.new_node_claims) == 1


def test_daemonset_overhead_is_added_to_the_claim() -> None:
    daemon = make_pod("ds").req(cpu="1500m").owner("DaemonSet", "agent").build()
    result = solve(cluster([pool()], daemons=(daemon,)), pods(1))
    [claim] = result.new_node_claims
    assert claim.requests["cpu"] == 2500
    assert claim.instance_types[0].name == "c.xlarge"


def test_hostname_anti_affinity_spreads_pods_over_claims() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    ps = [make_pod(f"w{i}").labels(app="web").req(cpu="1").spec(affinity=anti).build() for i in range(3)]
    result = solve(cluster([pool()]), ps)
    assert not result.pod_errors
    assert sorted(len(c.pods) for c in result.new_node_claims) == [1, 1, 1]


def test_zone_spread_puts_claims_in_different_zones() -> None:
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    ps = [make_pod(f"w{i}").labels(app="web").req(cpu="1").spec(topologySpreadConstraints=spread).build()
          for i in range(2)]
    result = solve(cluster([pool()]), ps)
    assert not result.pod_errors
    zones = sorted(dict((r.key, r.values) for r in c.requirements)["topology.kubernetes.io/zone"]
                   for c in result.new_node_claims)
    assert zones == [("zone-a",), ("zone-b",)]


@pytest.mark.parametrize("min_values, ok", [
    pytest.param(3, True, id="minValues the types that fit can meet keeps the pod"),
    pytest.param(4, False, id="minValues the types that fit cannot meet is Karpenter's minValues error"),
])
def test_min_values(min_values: int, ok: bool) -> None:
    reqs = [{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": min_values}]
    result = solve(cluster([pool(reqs=reqs)]), pods(1, cpu="2"))
    if ok:
        assert not result.pod_errors
    else:
        assert not result.new_node_claims
        assert "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])" in \
            result.pod_errors["default/p0"]


def test_a_consolidation_simulation_keeps_moved_pods_off_a_node_under_consolidate_after() -> None:
    from kplan.model.parse_karpenter import parse_node_claim
    np = parse_node_pool({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
                          "spec": {"disruption": {"consolidateAfter": "10m"}, "template": {"spec": {
                              "nodeClassRef": {"group": "g", "kind": "K", "name": "n"}, "requirements": []}}}})
    node = make_node("n1").alloc(cpu="4", memory="8Gi", pods="110").labels(**{
        "karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true"}).build()
    claim = parse_node_claim({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                              "metadata": {"name": "c1", "labels": {"karpenter.sh/nodepool": "default"}},
                              "spec": {"requirements": []},
                              "status": {"nodeName": "n1", "lastPodEventTime": "2026-01-01T00:00:00Z",
                                         "conditions": [{"type": "Initialized", "status": "True",
                                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    from kplan.model.objects import evolve_pod
    moved = evolve_pod(make_pod("moved").req(cpu="1").build(), node_name="candidate", phase="Running")
    c = KarpenterCluster((node,), (), (np,), (claim,), (), CATALOG)
    t0 = claim.last_pod_event_time
    assert t0 is not None
    recent = solve(c, [moved], consolidation_now=t0 + 60)
    assert not recent.existing_nodes and len(recent.new_node_claims) == 1
    later = solve(c, [moved], consolidation_now=t0 + 3600)
    assert [e.name for e in later.existing_nodes] == ["n1"]
    pending = solve(c, pods(1), consolidation_now=t0 + 60)
    assert [e.name for e in pending.existing_nodes] == ["n1"]


def test_min_values_best_effort_launches_with_what_is_left_and_says_it_relaxed() -> None:
    reqs = [{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 4}]
    result = solve(cluster([pool(reqs=reqs)]), pods(1, cpu="2"), min_values_policy="BestEffort")
    assert not result.pod_errors
    [claim] = result.new_node_claims
    assert claim.min_values_relaxed
    assert [r.min_values for r in claim.requirements if r.key == "node.kubernetes.io/instance-type"] == [3]


def test_ignored_preferences_do_not_steer_the_claim() -> None:
    p = make_pod("pref").req(cpu="1").preferred(10, term(expr("kubernetes.io/arch", "In", "arm64"))).build()
    respected = solve(cluster([pool()]), [p])
    ignored = solve(cluster([pool()]), [p], preference_policy="Ignore")
    assert [t.name for t in respected.new_node_claims[0].instance_types] == ["g.xlarge"]
    assert [t.name for t in ignored.new_node_claims[0].instance_types][0] == "c.large"


def test_pods_without_uid_or_creation_time_are_taken_in_input_order_among_equals() -> None:
    ps = [make_pod(n).req(cpu="500m", memory="1Gi").build() for n in ("db-0", "db-1", "api-0")]
    [claim] = solve(cluster([pool()]), ps).new_node_claims
    assert [p.name for p in claim.pods] == ["db-0", "db-1", "api-0"]


def test_an_unsatisfiable_spread_prints_the_counts_as_karpenter_does() -> None:
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    zone_a = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
              {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]
    ps = [make_pod(f"w{i}").labels(app="web").req(cpu="1").spec(topologySpreadConstraints=spread).build()
          for i in range(2)]
    pools = [pool(reqs=zone_a)]
    node_b = make_node("nb").alloc(cpu="500m", memory="1Gi", pods="110").labels(**{
        "kubernetes.io/hostname": "nb", "topology.kubernetes.io/zone": "zone-b"}).build()
    result = solve(cluster(pools, nodes=(node_b,)), ps)
    msg = result.pod_errors["default/w1"]
    assert "(counts = zone-a: 1, zone-b: 0, podDomains" in msg, msg


def test_a_node_whose_requirements_a_pod_narrowed_is_judged_by_them_as_upstream() -> None:
    # Karpenter narrows an existing node's requirements with each pod it places there: after a pod
    # with "team NotIn [a]" the node has a requirement on team, so a later pod asking "team In [b]"
    # is compatible with it although the node has no team label (the column prefilter must not
    # rule that node out)
    node = make_node("n1").alloc(cpu="4", memory="8Gi", pods="110").labels(**{"kubernetes.io/hostname": "n1"}).build()
    first = make_pod("first").req(cpu="1").required(term(expr("team", "NotIn", "a"))).build()
    second = make_pod("second").req(cpu="500m").required(term(expr("team", "In", "b"))).build()
    result = solve(cluster([pool()], nodes=(node,)), [first, second])
    assert [(e.name, [p.name for p in e.pods]) for e in result.existing_nodes] == [("n1", ["first", "second"])]


def test_an_in_flight_node_claim_takes_pods_before_a_new_one() -> None:
    from kplan.model.parse_karpenter import parse_node_claim
    claim = parse_node_claim({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                              "metadata": {"name": "default-x", "labels": {
                                  "karpenter.sh/nodepool": "default", "kubernetes.io/arch": "amd64",
                                  "node.kubernetes.io/instance-type": "c.xlarge"}},
                              "spec": {"requirements": []},
                              "status": {"providerID": "kwok://default-x", "capacity": {"cpu": "4", "pods": "110"},
                                         "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"}}})
    c = KarpenterCluster((), (), (pool(),), (claim,), (), CATALOG)
    result = solve(c, pods(2))
    assert not result.new_node_claims
    assert [(e.name, e.node_claim, e.initialized) for e in result.existing_nodes] == [("default-x", "default-x", False)]
    # without a providerID the claim is not launched yet: Karpenter's state does not hold it
    from dataclasses import replace
    result = solve(KarpenterCluster((), (), (pool(),), (replace(claim, provider_id=""),), (), CATALOG), pods(2))
    assert not result.existing_nodes and len(result.new_node_claims) == 1


def test_a_karpenter_node_without_state_labels_counts_as_initialized_as_the_oracle_takes_it() -> None:
    # existing nodes are tried initialized first, then by name; a hand-written Karpenter node
    # without karpenter.sh/initialized is taken as initialized, so "a" comes before "b"
    from kplan.model.parse_karpenter import parse_node_claim
    a = make_node("a").alloc(cpu="4", memory="8Gi", pods="110").labels(**{"karpenter.sh/nodepool": "default"}).build()
    b = make_node("b").alloc(cpu="4", memory="8Gi", pods="110").build()
    claim = parse_node_claim({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                              "metadata": {"name": "a", "labels": {"karpenter.sh/nodepool": "default"}},
                              "spec": {"requirements": []}, "status": {"nodeName": "a"}})
    result = solve(KarpenterCluster((a, b), (), (pool(),), (claim,), (), CATALOG), pods(1))
    assert [e.name for e in result.existing_nodes] == ["a"]
