"""kplan's provisioning decision on a scenario folder, in the oracle's JSON
(oracle/karpenter/README.md): the folder's files read as kplan reads ``--cluster`` files, then
kplan's engine API (kplan.autoscaler.karpenter: ``solve`` and ``launch``) on the pending pods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fidelity.karpenter.oracle import CATALOG, object_files, options


def run_kplan(folder: Path) -> dict[str, Any]:
    """kplan's result for the scenario in ``folder``, in the oracle's JSON."""
    from kplan.autoscaler.karpenter import KarpenterCluster, launch, solve
    from kplan.autoscaler.karpenter.instancetypes import compatible_offerings
    from kplan.autoscaler.karpenter.requirements import from_spec
    from kplan.cli.common import cluster_objects
    from kplan.io.catalog import read_catalog
    from kplan.io.workspace import load_workspace
    from kplan.whatif.daemons import daemonset_template_pods

    opts = options(folder)
    objects, _, _ = cluster_objects([str(f) for f in object_files(folder)], progress=False)
    inputs = load_workspace(objects, []).inputs
    catalog = read_catalog(str(folder / CATALOG))
    cluster = KarpenterCluster(nodes=tuple(inputs.nodes), bound_pods=tuple(inputs.running),
                               node_pools=tuple(inputs.node_pools), node_claims=tuple(inputs.node_claims),
                               daemonset_pods=tuple(daemonset_template_pods(inputs)), catalog=catalog)
    result = solve(cluster, inputs.pending, preference_policy=opts.get("preferencePolicy", "Respect"),
                   min_values_policy=opts.get("minValuesPolicy", "Strict"))
    claims = []
    for i, claim in enumerate(result.new_node_claims):
        reqs = from_spec(claim.requirements)
        its = []
        for it in claim.instance_types:
            prices = [o.price for o in compatible_offerings(it.offerings, reqs, catalog.well_known_labels) if o.available]
            its.append({"name": it.name, "price": min(prices) if prices else -1.0})
        node = launch(claim, catalog, f"claim-{i}")
        if node is None:
            launched: dict[str, Any] = {"error": "all requested instance types were unavailable during launch",
                                        "options": []}
        else:
            launched = {"capacityType": node.capacity_type, "instanceType": node.instance_type.name,
                        "zone": node.zone, "price": node.price, "ec2Chooses": node.cloud_picks,
                        "options": [{"instanceType": o.instance_type, "zone": o.zone, "price": o.price}
                                    for o in node.options]}
        claims.append({"nodePool": claim.node_pool, "pods": [p.key for p in claim.pods], "instanceTypes": its,
                       "requirements": [
                           {"key": r.key, "operator": r.operator, "values": sorted(r.values), "minValues": r.min_values}
                           for r in claim.requirements],
                       "requests": dict(claim.requests), "launch": launched})
    return {"newNodeClaims": claims,
            "existingNodes": [{"node": e.name, "nodeClaim": e.node_claim, "pods": [p.key for p in e.pods]}
                              for e in result.existing_nodes],
            "podErrors": [{"pod": k, "error": v} for k, v in sorted(result.pod_errors.items())],
            "ignored": [{"pod": k, "error": v} for k, v in sorted(result.ignored.items())]}
