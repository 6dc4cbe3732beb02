"""The public family of Karpenter provisioning scenarios, written out as folders under
``scenarios/`` (one per scenario: ``cluster.yaml``, ``nodepools.yaml``, ``pending.yaml``,
``catalog.json``, optionally ``options.json``, and ``expected.json``: the oracle's result).

    python -m tests.fidelity.karpenter.family --write            # (re)write the input files
    python -m tests.fidelity.karpenter.family --expected [NAME]   # expected.json from the oracle

The scenarios are small and each shows one rule of Karpenter's provisioning; their names say
which. ``expected.json`` is only ever written by the oracle (oracle/karpenter), never by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.fidelity.karpenter import builders as b
from tests.fidelity.karpenter.oracle import EXPECTED, OracleError, oracle_path, run_oracle

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"

CAT = {it["name"]: it for it in b.standard_catalog()}
Doc = b.Doc


@dataclass
class Scenario:
    name: str
    what: str
    pending: list[Doc]
    pools: list[Doc] = field(default_factory=lambda: [b.node_pool("default")])
    cluster: list[Doc] = field(default_factory=list)
    catalog: list[Doc] = field(default_factory=b.standard_catalog)
    options: dict[str, str] = field(default_factory=dict)

    def files(self) -> dict[str, str]:
        out = {"pending.yaml": b.yaml_text(self.pending), "catalog.json": b.catalog_text(self.catalog),
               "README.md": f"# {self.name}\n\n{self.what}\n"}
        if self.pools:
            out["nodepools.yaml"] = b.yaml_text(self.pools)
        if self.cluster:
            out["cluster.yaml"] = b.yaml_text(self.cluster)
        if self.options:
            out["options.json"] = json.dumps(self.options, sort_keys=True) + "\n"
        return out


def replicas(prefix: str, n: int, **kw: object) -> list[Doc]:
    return [b.pod(f"{prefix}-{i}", **kw) for i in range(n)]  # type: ignore[arg-type]


def od_only() -> Doc:
    return b.req(b.CT_KEY, "In", "on-demand")


def scenarios() -> list[Scenario]:
    m4 = CAT["m-4x-amd64-linux"]
    c2 = CAT["c-2x-amd64-linux"]
    full_node = [b.managed_node("node-full", "default", c2, "test-zone-a"),
                 b.pod("filler", "1800m", "1Gi", node="node-full")]
    roomy = [b.managed_node("node-roomy", "default", m4, "test-zone-a")]
    ds = b.daemon_set("agent", "500m", "512Mi")
    gt = b.req("karpenter.kwok.sh/instance-cpu", "Gt", "3")
    out = [
        Scenario("existing-node-takes-the-pods", "Pending pods fit a Karpenter node with room: no new NodeClaim.",
                 replicas("web", 3, cpu="500m", memory="1Gi"), cluster=roomy),
        Scenario("existing-node-full-needs-new", "The only node is full: the pods need a new NodeClaim.",
                 replicas("web", 2, cpu="500m", memory="512Mi"), cluster=full_node),
        Scenario("existing-and-new", "Some pods fit the existing node, the others get a new NodeClaim.",
                 replicas("big", 5, cpu="1500m", memory="2Gi"), cluster=roomy, pools=[b.node_pool("default", [od_only()])]),
        Scenario("unmanaged-node-fits", "A node Karpenter does not manage takes the pod first.",
                 [b.pod("web-0", "1", "1Gi")], cluster=[b.plain_node("static-1", "4", "8Gi", "test-zone-b")]),
        Scenario("on-demand-cheapest", "An on-demand NodePool: the cheapest instance types first, the launch takes "
                 "the cheapest offering.", replicas("web", 3, cpu="1", memory="1Gi"),
                 pools=[b.node_pool("default", [od_only(), b.req(b.ARCH_KEY, "In", "amd64")])]),
        Scenario("spot-launch-ec2-chooses", "Spot and on-demand allowed: the launch is spot, EC2 picks among the "
                 "options (spot dearer than the cheapest on-demand left out).", replicas("web", 2, cpu="1"),
                 pools=[b.node_pool("default", [b.req(b.CT_KEY, "In", "spot", "on-demand")])]),
        Scenario("weights-heavier-first", "Two NodePools: the heavier one is tried first.",
                 replicas("web", 2, cpu="1"),
                 pools=[b.node_pool("default", [od_only()]),
                        b.node_pool("arm", [od_only(), b.req(b.ARCH_KEY, "In", "arm64")], weight=10)]),
        Scenario("weights-fallback", "The heavier NodePool cannot take the pod (amd64 only): the lighter one does.",
                 [b.pod("web-0", "1", node_selector={b.ARCH_KEY: "amd64"})],
                 pools=[b.node_pool("default", [od_only()]),
                        b.node_pool("arm", [od_only(), b.req(b.ARCH_KEY, "In", "arm64")], weight=10)]),
        Scenario("equal-weights-name-order", "Equal weights: NodePools by name, descending (zeta before alpha).",
                 [b.pod("web-0", "1")],
                 pools=[b.node_pool("alpha", [od_only(), b.req(b.FAMILY_KEY, "In", "c")]),
                        b.node_pool("zeta", [od_only(), b.req(b.FAMILY_KEY, "In", "r")])]),
        Scenario("requirements-zone-arch-capacity", "Node selectors on zone, arch and capacity type narrow the "
                 "NodeClaim.", [b.pod("web-0", "1", node_selector={b.ZONE_KEY: "test-zone-b", b.ARCH_KEY: "arm64",
                                                                   b.CT_KEY: "on-demand"})]),
        Scenario("requirements-gt-cpu", "A NodePool requirement instance-cpu Gt 3 leaves out the 2-cpu types.",
                 [b.pod("web-0", "500m")], pools=[b.node_pool("default", [od_only(), gt])]),
        Scenario("min-values-family", "minValues 3 on the instance family: the options keep three families.",
                 [b.pod("web-0", "1")],
                 pools=[b.node_pool("default", [od_only(), b.req(b.FAMILY_KEY, "In", "c", "m", "r", min_values=3)])]),
        Scenario("min-values-unsatisfiable", "minValues 3 on the family, but a pod's 20 Gi leave fewer families "
                 "(Strict policy).", [b.pod("mem-0", "1", "20Gi")],
                 pools=[b.node_pool("default", [od_only(), b.req(b.FAMILY_KEY, "In", "c", "m", "r", min_values=3)])]),
        Scenario("min-values-best-effort", "The same with --min-values-policy BestEffort: minValues relaxed.",
                 [b.pod("mem-0", "1", "20Gi")],
                 pools=[b.node_pool("default", [od_only(), b.req(b.FAMILY_KEY, "In", "c", "m", "r", min_values=3)])],
                 options={"minValuesPolicy": "BestEffort"}),
        Scenario("taints-tolerated-or-not", "A tainted NodePool takes the pod that tolerates its taint; the other "
                 "pod has no NodePool.",
                 [b.pod("tolerant", "1", tolerations=[b.toleration("dedicated", "gpu")]), b.pod("plain", "1")],
                 pools=[b.node_pool("tainted", [od_only()], taints=[b.taint("dedicated", "gpu")])]),
        Scenario("limits-leave-small-types", "NodePool limits cpu 6 with a 4-cpu node: only 2-cpu types are left.",
                 replicas("web", 2, cpu="1500m"), cluster=[b.managed_node("node-1", "default", m4, "test-zone-a"),
                                                          b.pod("filler", "3800m", "1Gi", node="node-1")],
                 pools=[b.node_pool("default", [od_only()], limits={"cpu": "6"})]),
        Scenario("limits-exhausted", "NodePool limits cpu 4 used up by its node: no NodeClaim.",
                 [b.pod("web-0", "1")], cluster=[b.managed_node("node-1", "default", m4, "test-zone-a"),
                                                  b.pod("filler", "3800m", "1Gi", node="node-1")],
                 pools=[b.node_pool("default", [od_only()], limits={"cpu": "4"})]),
        Scenario("limits-nodes-exhausted", "NodePool limits nodes 1 used up by its node.",
                 [b.pod("web-0", "1")], cluster=[b.managed_node("node-1", "default", c2, "test-zone-a"),
                                                  b.pod("filler", "1800m", "1Gi", node="node-1")],
                 pools=[b.node_pool("default", [od_only()], limits={"nodes": "1"})]),
        Scenario("daemonset-overhead", "A DaemonSet's 500m on every new node: bigger instance types, and the "
                 "NodeClaim's requests count it.", replicas("web", 3, cpu="600m"), cluster=[ds],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("zonal-spread", "Six pods with a zonal spread (maxSkew 1): NodeClaims in each zone.",
                 replicas("web", 6, cpu="1", labels={"app": "web"}, spread=[b.zone_spread("web")]),
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("hostname-anti-affinity", "Three pods that refuse to share a host: three NodeClaims.",
                 replicas("db", 3, cpu="500m", labels={"app": "db"}, affinity=b.anti_affinity("db")),
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("preferred-affinity-relaxed", "A preferred node affinity for a zone no NodePool offers is "
                 "relaxed away.",
                 [b.pod("web-0", "1", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 10, "preference": {"matchExpressions": [
                         {"key": b.ZONE_KEY, "operator": "In", "values": ["mars-1"]}]}}]}})],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("schedule-anyway-spread-relaxed", "A ScheduleAnyway spread on a key no node has is relaxed.",
                 replicas("web", 2, cpu="1", labels={"app": "web"},
                          spread=[b.zone_spread("web", when="ScheduleAnyway", key="example.com/rack")]),
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("in-flight-claim-takes-pods", "A launched NodeClaim whose node has not registered yet takes the "
                 "pods.", replicas("web", 2, cpu="1"),
                 cluster=[b.in_flight_claim("default-abcde", "default", m4, "test-zone-c")]),
        Scenario("no-nodepool", "No NodePool at all: Karpenter says so for every pod.", [b.pod("web-0", "1")],
                 pools=[]),
        Scenario("incompatible-requirements", "The pod wants a label no NodePool has.",
                 [b.pod("web-0", "1", node_selector={"example.com/team": "blue"})],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("too-big-for-every-type", "No instance type has 64 cpus.", [b.pod("huge", "64")],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("pod-avoids-karpenter", "A pod with karpenter.sh/nodepool DoesNotExist is ignored.",
                 [b.pod("web-0", "1", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                     "nodeSelectorTerms": [{"matchExpressions": [{"key": b.POOL_KEY, "operator": "DoesNotExist"}]}]}}})]),
        Scenario("host-ports", "Two pods on the same host port cannot share a node.",
                 [b.pod("web-0", "500m", host_port=8080), b.pod("web-1", "500m", host_port=8080)],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("gpu-pod", "A pod asking for a GPU gets the GPU instance type.",
                 [b.pod("train-0", "1", "4Gi")] + [],
                 pools=[b.node_pool("default", [od_only()])]),
        Scenario("zonal-spread-unsatisfiable", "Two pods spread over the zones Karpenter knows (b from its NodePool, "
                 "c from a full node): the first goes to b, the second would need c, which the NodePool does not "
                 "offer: Karpenter's topology error, with the domain counts.",
                 replicas("web", 2, cpu="500m", labels={"app": "web"}, spread=[b.zone_spread("web")]),
                 cluster=[b.managed_node("node-c", "default", c2, "test-zone-c"),
                          b.pod("filler", "1800m", "1Gi", node="node-c")],
                 pools=[b.node_pool("default", [od_only(), b.req(b.ZONE_KEY, "In", "test-zone-b")])]),
        Scenario("two-spreads-one-key", "Two zonal spreads with different selectors both fail: the error names the "
                 "one Karpenter meets first (the oracle orders a pod's topologies by type, key, selector, maxSkew, "
                 "namespaces; upstream leaves it to map order).",
                 replicas("web", 2, cpu="500m", labels={"app": "web", "tier": "front"},
                          spread=[b.zone_spread("web") | {"labelSelector": {"matchLabels": {"tier": "front"}}},
                                  b.zone_spread("web")]),
                 cluster=[b.managed_node("node-c", "default", c2, "test-zone-c"),
                          b.pod("filler", "1800m", "1Gi", node="node-c", labels={"tier": "front"})],
                 pools=[b.node_pool("default", [od_only(), b.req(b.ZONE_KEY, "In", "test-zone-b")])]),
        Scenario("node-class-ec2", "A NodePool of the AWS provider's EC2NodeClass: its NodeClaim carries "
                 "karpenter.k8s.aws/ec2nodeclass, as a real cluster's does.", replicas("web", 2, cpu="1"),
                 pools=[b.node_pool("default", [od_only()], node_class=("karpenter.k8s.aws", "EC2NodeClass"))]),
    ]
    # the GPU pod's request
    gpu = next(sc for sc in out if sc.name == "gpu-pod").pending[0]
    gpu["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    gpu["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    return out


def write_inputs(chosen: Sequence[Scenario]) -> None:
    for sc in chosen:
        folder = SCENARIOS / sc.name
        folder.mkdir(parents=True, exist_ok=True)
        files = sc.files()
        for old in folder.iterdir():
            if old.name not in files and old.name != EXPECTED:
                old.unlink()
        for name, text in files.items():
            (folder / name).write_text(text)


def write_expected(names: Sequence[str], report: Callable[[str], None] = print) -> int:
    binary = oracle_path()
    failed = 0
    for name in names:
        folder = SCENARIOS / name
        try:
            result = run_oracle(binary, folder)
        except OracleError as e:
            report(f"{name}: oracle failed: {e}")
            failed += 1
            continue
        (folder / EXPECTED).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        report(f"{name}: written")
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="(re)write the scenarios' input files")
    ap.add_argument("--expected", nargs="*", metavar="NAME", help="write expected.json from the oracle "
                    "(all scenarios when no name is given)")
    args = ap.parse_args(argv)
    all_sc = scenarios()
    if args.write:
        write_inputs(all_sc)
    if args.expected is not None:
        names = args.expected or [sc.name for sc in all_sc]
        return 1 if write_expected(names) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
