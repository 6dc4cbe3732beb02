"""The release-to-release report's wording rules and the confirmation tool's profile switch."""

from __future__ import annotations

import pytest

from tests.fidelity.confirm import switched_off
from tests.fidelity.expected import reworded
from tests.fidelity.scenario import Doc, compare

FIT = "0/7 nodes are available: 2 Insufficient memory, 4 Insufficient cpu."
PRE = "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling."


def doc(message: str | None, node: str | None = None) -> Doc:
    return {"pods": [{"namespace": "default", "name": "p", "status": "Scheduled" if node else "Unschedulable",
                      "node": node, "message": message}], "preempted": []}


#: (case, releases, older message, newer message, same once reworded)
CASES = [
    ("DRA no-op reason before preemption's", ("1.36", "1.37"),
     f"{FIT} no new claims to deallocate, {PRE}", f"{FIT} {PRE}", True),
    ("DRA 'still not schedulable'", ("1.36", "1.37"),
     f"{FIT} still not schedulable, preemption: not eligible due to preemptionPolicy=Never.",
     f"{FIT} preemption: not eligible due to preemptionPolicy=Never.", True),
    ("DRA reason alone (no preemption in the profile)", ("1.36", "1.37"),
     f"{FIT} no new claims to deallocate", FIT, True),
    ("successful preemption's report", ("1.36", "1.37"),
     FIT, f"{FIT} preemption: found a potential placement for pod on node node-00001, preempting 2 victims", True),
    ("wording over two steps", ("1.35", "1.37"), f"{FIT} no new claims to deallocate, {PRE}", f"{FIT} {PRE}", True),
    ("a count that changes stays a difference", ("1.36", "1.37"),
     f"{FIT} no new claims to deallocate, {PRE}", f"{FIT.replace('4 Insufficient cpu', '3 Insufficient cpu')} {PRE}",
     False),
    ("1.37's wording is not forgiven between 1.35 and 1.36", ("1.35", "1.36"),
     f"{FIT} no new claims to deallocate, {PRE}", f"{FIT} {PRE}", False),
    ("1.34's taint names merge as #134740 writes them", ("1.34", "1.35"),
     "0/3 nodes are available: 1 node(s) had untolerated taint {a: b}, 2 node(s) had untolerated taint {c: d}.",
     "0/3 nodes are available: 3 node(s) had untolerated taint(s).", True),
]


@pytest.mark.parametrize(("case", "releases", "old", "new", "same"), CASES, ids=[c[0] for c in CASES])
def test_reworded_leaves_out_only_the_wording_that_changed(case: str, releases: tuple[str, str], old: str,
                                                           new: str, same: bool) -> None:
    a, b = releases
    assert (compare(reworded(a, b, doc(old)), reworded(a, b, doc(new))) == []) is same, case


def test_reworded_keeps_placements() -> None:
    assert compare(reworded("1.36", "1.37", doc(None, "n1")), reworded("1.36", "1.37", doc(None, "n2")))


def test_switched_off_disables_the_plugin_in_every_profile_and_keeps_the_rest() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler"},
                           {"schedulerName": "other", "plugins": {"score": {"enabled": [
                               {"name": "NodeResourcesBalancedAllocation", "weight": 3},
                               {"name": "ImageLocality", "weight": 1}]}},
                            "pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 5}}]}]}
    out = switched_off(config, {"score": ["NodeResourcesBalancedAllocation"]},
                       {"VolumeBinding": {"shape": [{"utilization": 0, "score": 0}]}})
    for prof in out["profiles"]:
        assert {"name": "NodeResourcesBalancedAllocation"} in prof["plugins"]["score"]["disabled"]
        assert all(e["name"] != "NodeResourcesBalancedAllocation" for e in prof["plugins"]["score"]["enabled"])
        args = next(c["args"] for c in prof["pluginConfig"] if c["name"] == "VolumeBinding")
        assert args["shape"] == [{"utilization": 0, "score": 0}]
    assert out["profiles"][1]["plugins"]["score"]["enabled"] == [{"name": "ImageLocality", "weight": 1}]
    assert out["profiles"][1]["pluginConfig"][0]["args"]["bindTimeoutSeconds"] == 5
    assert "plugins" not in config["profiles"][0]  # the input is left as it was
