"""--autoscaler and --instance-types: usage errors are one line on stderr and exit code 2, before
or right after loading."""

from __future__ import annotations

import pytest

from tests.unit.cli.test_exit_codes import _project_root, run  # noqa: F401 (the fixture is used by name)

CLUSTER = "fixtures/cluster.yaml"
POOLS = "fixtures/karpenter/nodepools.yaml"
CATALOG = "fixtures/karpenter/instance-types.json"

CASES = [
    ("karpenter without a catalog", ["simulate", "fixtures/manifests", "-c", CLUSTER, "-c", POOLS,
                                     "--autoscaler", "karpenter"],
     "--autoscaler karpenter needs the instance types it may launch"),
    ("an autoscaler kplan does not model", ["simulate", "-c", CLUSTER, "--autoscaler", "keda",
                                            "--instance-types", CATALOG],
     "--autoscaler keda: kplan models karpenter, cluster-autoscaler"),
    ("the cluster-autoscaler without node groups", ["simulate", "-c", CLUSTER, "--autoscaler", "cluster-autoscaler"],
     "--autoscaler cluster-autoscaler needs its node groups: give --node-groups FILE"),
    ("node groups without the cluster-autoscaler", ["simulate", "-c", CLUSTER, "--node-groups",
                                                    "fixtures/cluster-autoscaler/node-groups.yaml"],
     "--node-groups goes with --autoscaler cluster-autoscaler"),
    ("an unknown expander", ["simulate", "-c", CLUSTER, "--autoscaler", "cluster-autoscaler", "--node-groups",
                             "fixtures/cluster-autoscaler/node-groups.yaml", "--expander", "least-waste,cheap"],
     "--expander least-waste,cheap: unknown expander 'cheap'"),
    ("a node group with a bad field", ["simulate", "-c", CLUSTER, "--autoscaler", "cluster-autoscaler",
                                       "--node-groups", "tests/fixtures/cluster-autoscaler/bad-node-groups.yaml"],
     "tests/fixtures/cluster-autoscaler/bad-node-groups.yaml: node group compute: maxSize: 1 is below minSize 2"),
    ("a catalog without an autoscaler", ["whatif", "-c", CLUSTER, "--instance-types", CATALOG],
     "--instance-types goes with --autoscaler karpenter or cluster-autoscaler"),
    ("karpenter without NodePools", ["simulate", "fixtures/manifests", "-c", CLUSTER, "--autoscaler", "karpenter",
                                     "--instance-types", CATALOG],
     "--autoscaler karpenter: the inputs hold no NodePool"),
    ("karpenter with --until-fit", ["whatif", "-c", CLUSTER, "--until-fit", "like=gen-a-1", "--autoscaler",
                                    "karpenter", "--instance-types", CATALOG],
     "--autoscaler and --until-fit ask the same question"),
    ("a catalog that is no file", ["simulate", "-c", CLUSTER, "-c", POOLS, "--autoscaler", "karpenter",
                                   "--instance-types", "no-such-catalog.json"], "no-such-catalog.json"),
]


@pytest.mark.parametrize(("args", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_usage_error_is_one_line_and_exit_code_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                     words: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], err


SHRINK = ["whatif", "-c", "fixtures/karpenter/managed-cluster.yaml", "-c", POOLS, "--tie-break", "lowest-name",
          "--autoscaler", "karpenter", "--instance-types", CATALOG, "--shrink"]


def test_shrink_with_karpenter_says_which_nodes_go_why_the_others_stay_and_the_saving(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    code, out, err = run(capsys, *SHRINK)
    assert code == 0, err
    assert ("Karpenter's disruption at 2026-01-01 00:00 UTC: 2 of 4 nodes go, $1.1750 -> $0.5414 per hour: saves "
            "$0.6336 per hour, $462.53 per month (730 h).") in out
    assert "  general-g5h6i: deleted (Empty, emptiness, command 1)\n" in out
    assert ("  general-a1b2c: deleted (Underutilized, single-node consolidation, command 2); its pods to "
            "general-d3e4f\n") in out
    assert ('  spot-j7k8l: kept: Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/batch-job-z1)\n'
            in out)
    # the run after: the pod of the deleted node is placed by kube-scheduler
    assert "default/web-7d4b9c-x1  moved     Running on general-a1b2c  Scheduled on general-d3e4f" in out


def test_shrink_with_karpenter_writes_a_valid_document(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import jsonschema

    from kplan.report.schema import shipped

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    code, out, err = run(capsys, *SHRINK, "-o", "json")
    doc = json.loads(out)
    assert [e.message for e in jsonschema.Draft202012Validator(shipped()).iter_errors(doc)] == []
    c = doc["consolidation"]
    assert {n["name"]: n["verdict"] for n in c["nodes"]} == {
        "general-a1b2c": "deleted", "general-d3e4f": "kept", "general-g5h6i": "deleted", "spot-j7k8l": "kept"}
    assert (c["savingPerHour"], c["now"]) == (0.6336, 1767225600.0)


def test_shrink_candidates_are_cluster_autoscalers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *SHRINK, "--shrink-candidates", "general-a1b2c")
    assert code == 2 and "--shrink-candidates is for cluster-autoscaler's --shrink" in err


def test_sweep_with_karpenter_prices_each_point_by_its_new_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import jsonschema

    from kplan.report.schema import shipped

    code, out, err = run(capsys, "sweep", "fixtures/karpenter/burst.yaml", "-c", CLUSTER, "-c", POOLS,
                         "--tie-break", "lowest-name", "--scale", "deployment/batch/render=10..30:20",
                         "--autoscaler", "karpenter", "--instance-types", CATALOG, "--seeds", "2", "--workers", "1",
                         "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [e.message for e in jsonschema.Draft202012Validator(shipped()).iter_errors(doc)] == []
    small, large = doc["points"]
    # 10 replicas fit the cluster; 30 do not: Karpenter launches nodes, and the point costs the most
    # they cost over the seeds
    assert [r["launched"] for r in small["runs"]] == [0, 0] and small["cost"] == 0
    assert all(r["launched"] > 0 for r in large["runs"])
    assert large["cost"] == max(r["launchedPricePerHour"] for r in large["runs"]) > 0


def test_capacity_with_karpenter_counts_replicas_up_to_the_nodepools_limits(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import jsonschema

    from kplan.report.schema import shipped

    code, out, err = run(capsys, "capacity", "fixtures/karpenter/burst.yaml", "-c", CLUSTER, "-c", POOLS,
                         "--tie-break", "lowest-name", "--autoscaler", "karpenter", "--instance-types", CATALOG,
                         "--limit", "200", "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [e.message for e in jsonschema.Draft202012Validator(shipped()).iter_errors(doc)] == []
    assert (doc["declared"], doc["replicas"], doc["limitReached"]) == ({"replicas": 30, "fit": 30}, 41, False)
    # the spot pool's 16 cores and the general pool's 100 are spent: the next replica gets Karpenter's limits
    cores = {"c6i.xlarge": 4, "c6i.2xlarge": 8, "m6i.8xlarge": 32, "m6i.12xlarge": 48}
    spent: dict[str, int] = {}
    for n in doc["launched"]:
        spent[n["nodePool"]] = spent.get(n["nodePool"], 0) + cores[n["instanceType"]]
    assert spent == {"spot": 16, "general": 100}
    assert "all available instance types exceed limits for nodepool (NodePool=general)" in doc["autoscaler"]


def test_the_html_reports_carry_the_consolidation_and_the_capacity_nodes(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    from pathlib import Path

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    page = Path(str(tmp_path)) / "shrink.html"
    code, _, err = run(capsys, *SHRINK, "-o", "html", "--output-file", str(page))
    assert code == 0, err
    text = page.read_text()
    assert "<h2>Karpenter's consolidation</h2>" in text
    assert "2 of 4 nodes go: $1.1750 → $0.5414 per hour, saving $0.6336 per hour, $462.53 per month (730 h)." in text
    assert "<td>general-g5h6i</td><td>general</td><td>m6i.xlarge</td>" in text
    page = Path(str(tmp_path)) / "capacity.html"
    code, _, err = run(capsys, "capacity", "fixtures/karpenter/burst.yaml", "-c", CLUSTER, "-c", POOLS,
                       "--tie-break", "lowest-name", "--autoscaler", "karpenter", "--instance-types", CATALOG,
                       "--limit", "200", "-o", "html", "--output-file", str(page))
    assert code == 0, err
    text = page.read_text()
    assert "<h2>Nodes the autoscaler launches for them</h2>" in text
    assert "Why Karpenter launches nothing for the next replica: all available instance types exceed limits" in text


CA = ["--autoscaler", "cluster-autoscaler", "--node-groups", "fixtures/cluster-autoscaler/node-groups.yaml",
      "--instance-types", CATALOG]
BURST = "fixtures/karpenter/burst.yaml"


@pytest.mark.parametrize(("args", "words"), [
    pytest.param(["simulate", "-c", CLUSTER, "-f", BURST, *CA],
                 ["compute                         3       8   0.6667  <-",
                  "Scale-up 1: compute +3 (least-waste chose it among 3 options).",
                  "NEW NODE       NODE GROUP    TYPE         CAPACITY    ZONE          $/HOUR    PODS"],
                 id="simulate shows the options, the choice and the new nodes of their group"),
    pytest.param(["whatif", "-c", CLUSTER, "-f", BURST, *CA],
                 ["  compute-5sxt9: compute, c6i.2xlarge on-demand in eu-west-1a, $0.3400 per hour, 3 pods"],
                 id="whatif lists the new nodes with their group"),
    pytest.param(["capacity", "-c", CLUSTER, BURST, *CA],
                 ["pod didn't trigger scale-up: 3 max node group size reached"],
                 id="capacity says why the next replica gets no node"),
    pytest.param(["sweep", "-c", CLUSTER, "-f", BURST, "--seeds", "1", *CA], ["cost 1.02/h"],
                 id="sweep counts the new nodes' cost"),
])
def test_the_cluster_autoscaler_on_every_command(capsys: pytest.CaptureFixture[str], args: list[str],
                                                 words: list[str]) -> None:
    code, out, err = run(capsys, *args)
    assert code == 0, err
    for w in words:
        assert w in out, out


def test_the_cluster_autoscaler_document_names_the_node_group_and_the_choice(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import jsonschema

    from kplan.report.schema import shipped

    code, out, err = run(capsys, "simulate", "-c", CLUSTER, "-f", BURST, *CA, "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert not list(jsonschema.Draft202012Validator(shipped()).iter_errors(doc))
    assert {n["nodeGroup"] for n in doc["launched"]} == {"compute"} and "nodePool" not in doc["launched"][0]
    (up,) = doc["autoscaling"]["scaleUps"]
    assert (up["chosen"], up["nodeCount"], up["why"]) == ("compute", 3, "least-waste chose it among 3 options")
    assert [(o["nodeGroup"], o["nodeCount"], o["podsHelped"]) for o in up["options"]] == [
        ("general-a", 2, 6), ("compute", 3, 8), ("memory", 3, 8)]


COOLDOWN = ("ScaleDownInCooldown: the cluster-autoscaler scaled up in this loop: no scale-down until "
            "--scale-down-delay-after-add has passed")


@pytest.mark.parametrize(("args", "words", "absent"), [
    # without node groups gen-a-1 (10 % cpu) goes; general-a (gen-a-1, gen-a-2 by its nodeSelector) is at
    # its minSize 2, so both stay and gen-c-1 goes instead
    pytest.param([], ["Changes: remove node gpu-c-1; remove node gen-c-3; remove node gen-c-1\n",
                      "  gen-a-1 (10% cpu): NodeGroupMinSizeReached: node group general-a is at its minSize 2\n"],
                 ["add nodes", "ScaleDownInCooldown"],
                 id="no pod pending: the scale-down alone, keeping a group at its minSize"),
    # the burst's 8 render pods fit nowhere: the scale-up comes first (compute +3, as simulate
    # launches them) and ends the loop, so the underused gpu-c-1, gen-c-3 and cp-a-1 all stay
    pytest.param(["-f", BURST], ["Changes: add nodes compute-", "Shrink: 0 of the 12 nodes considered can go",
                                 f"  gen-c-3 (0% cpu): {COOLDOWN}\n", f"  gpu-c-1 (0% nvidia.com/gpu): {COOLDOWN}\n",
                                 "After:  30/30 pending pods scheduled, 4 pods preempted (15 nodes)."],
                 ["remove node", "fit nowhere even before any removal"],
                 id="pods pending: the scale-up launches nodes and no node is removed in that loop"),
])
def test_shrink_with_the_cluster_autoscaler_scales_up_first(capsys: pytest.CaptureFixture[str], args: list[str],
                                                            words: list[str], absent: list[str]) -> None:
    code, out, err = run(capsys, "whatif", "-c", CLUSTER, *args, "--shrink", *CA)
    assert code == 0, err
    for w in words:
        assert w in out, out
    for w in absent:
        assert w not in out, out


def test_the_priority_expander_reads_its_configmap(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", "-c", CLUSTER, "-c", "tests/fixtures/cluster-autoscaler/priority-expander.yaml",
                         "-f", BURST, *CA, "--expander", "priority,least-waste")
    assert code == 0, err
    assert "Scale-up 1: memory +3 (priority chose it among 3 options)." in out


def test_the_price_expander_prices_groups_by_price_per_hour_and_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    # 12 nodes prefer 4 cores; general-a (pricePerHour 0.192, 7910m) spends least per pod's price:
    # (2 x 0.192 + 0.01727) / (6 x 0.08325 + 0.01727) x ((1.9775 - 1) x (1 - tanh(1/15)) + 1) = 1.485
    code, out, err = run(capsys, "simulate", "-c", CLUSTER, "-f", BURST, *CA, "--expander", "price")
    assert code == 0, err
    assert "general-a                       2       6   1.485   <-" in out
    assert "Scale-up 1: general-a +2 (price chose it among 3 options)." in out
    assert "Scale-up 2: compute +1 (price chose it among 2 options)." in out


def test_a_bad_priority_configmap_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", "-c", CLUSTER, "-c",
                         "tests/fixtures/cluster-autoscaler/bad-priority-expander.yaml", "-f", BURST, *CA,
                         "--expander", "priority")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "ConfigMap cluster-autoscaler-priority-expander: data.priorities: can't compile " \
        "regexp rule for priority 10 and rule memory(" in err, err


def test_the_status_configmap_gives_the_groups_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    # general-a is at its maxSize by the status: it offers no option
    code, out, err = run(capsys, "simulate", "-c", CLUSTER, "-c", "tests/fixtures/cluster-autoscaler/status.yaml",
                         "-f", BURST, *CA, "-o", "json")
    assert code == 0, err
    import json

    (up,) = json.loads(out)["autoscaling"]["scaleUps"]
    assert [o["nodeGroup"] for o in up["options"]] == ["compute", "memory"]
