"""Warnings for what the run takes as kube-scheduler would while its result says nothing of it
(kplan.scenario.build.unheard_of): the warning names the object; the scheduling result stays
kube-scheduler's (a pod held at PreEnqueue is Unschedulable with no message)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from kplan.cli.app import main

ROOT = Path(__file__).resolve().parents[3]
POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {{containers: [{{name: c, image: app{claims}}}]{extra}}}\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n{status}\n"


def pod(name: str = "web", ns: str = "default", claim: str = "") -> str:
    claims, extra = "", ""
    if claim:
        claims = ", resources: {claims: [{name: gpus}]}"
        extra = f", resourceClaims: [{{name: gpus, {claim}}}]"
    return POD.format(name=name, ns=ns, claims=claims, extra=extra)


class Row(NamedTuple):
    manifest: str
    cluster: str
    #: the warnings, without the 'warning: ' prefix; {m} is the manifest's path
    warnings: list[str]
    #: the pod's status and message in the JSON result: kube-scheduler's, unchanged
    status: tuple[str, str | None]


DRA = "fixtures/dra/cluster.yaml"
SHOP = "fixtures/cluster.yaml"
HELD = "kube-scheduler keeps the pod out of its queue (DynamicResources PreEnqueue) and reports no reason"

ROWS = {
    "a claim that does not exist": Row(
        pod("trainer", "ml", "resourceClaimName: no-such-claim"), DRA,
        [f'{{m}}: Pod ml/trainer: ResourceClaim "ml/no-such-claim" does not exist: {HELD}'], ("Unschedulable", None)),
    "a claim template that does not exist": Row(
        pod("trainer", "ml", "resourceClaimTemplateName: nope"), DRA,
        [f'{{m}}: Pod ml/trainer: ResourceClaimTemplate "ml/nope" does not exist, so no ResourceClaim is made from '
         f"it: {HELD}"], ("Unschedulable", None)),
    "a namespace the cluster does not list": Row(
        pod("lost", "nowhere"), SHOP,
        ['namespace nowhere is not among the cluster\'s 7 namespaces: the API server would refuse its pending pod '
         'lost (namespaces "nowhere" not found); simulated as if it existed'], ("Scheduled", None)),
    "a namespace of a cluster that lists none": Row(pod("lost", "nowhere"), "{tmp}/nodes.yaml", [],
                                                    ("Scheduled", None)),
    "a node without allocatable or capacity": Row(
        pod(), "{tmp}/nodes.yaml+{tmp}/bare.yaml",
        ["node bare has neither status.allocatable nor status.capacity: kube-scheduler sees no cpu, memory or pods "
         "there, so no pod fits (is the nodes' status missing from the cluster file?)"], ("Scheduled", None)),
    "a node whose allocatable has no pods": Row(
        pod(), "{tmp}/podless.yaml",
        ["node podless: status.allocatable has no pods entry: kube-scheduler allows 0 pods there (Too many pods)"],
        ("Unschedulable", "0/1 nodes are available: 1 Too many pods. preemption: "
                          "0/1 nodes are available: 1 No preemption victims found for incoming pod.")),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_what_kube_scheduler_does_not_say_is_a_warning(row: Row, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "nodes.yaml").write_text(NODE.format(name="n1", status="status: {allocatable: {cpu: '4', memory: "
                                                                       "8Gi, pods: '110'}}"))
    (tmp_path / "bare.yaml").write_text(NODE.format(name="bare", status=""))
    (tmp_path / "podless.yaml").write_text(NODE.format(name="podless", status="status: {allocatable: {cpu: '4', "
                                                                              "memory: 8Gi}}"))
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(row.manifest)
    clusters = [a for c in row.cluster.format(tmp=tmp_path).split("+") for a in ("--cluster", c)]
    with pytest.raises(SystemExit):
        main(["simulate", str(manifest), *clusters, "-o", "json"])
    out, err = capsys.readouterr()
    assert [line.removeprefix("warning: ") for line in err.splitlines()] == [w.format(m=manifest)
                                                                            for w in row.warnings]
    result = json.loads(out)["pods"][0]
    assert (result["status"], result["message"]) == row.status
