"""LabelPreference through kplan, discovered as an installed plugin would be.

Nothing is installed: each test writes a ``*.dist-info`` with an ``entry_points.txt`` into a
temporary folder and puts it, and this package's ``src``, on ``sys.path`` (importlib.metadata
reads distributions from sys.path, exactly as for a real installation).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
SRC = HERE / "src"
KPLAN_ROOT = HERE.parent.parent  # the kplan checkout this example lives in (ignored when kplan is installed)

CLUSTER = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"node.kubernetes.io/lifecycle": life}},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    for name, life in (("a-spot", "spot"), ("b-spot", "spot"), ("c-on-demand", "on-demand"), ("d-plain", "none"))
]
PODS = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}]


def config(args: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": [{"name": "LabelPreference", "weight": 3}]}},
                          "pluginConfig": [{"name": "LabelPreference", "args": args}]}]}


def fake_install(root: Path) -> Path:
    """A dist-info as pip would leave it, declaring the entry point of pyproject.toml."""
    info = root / "kplan_example_plugin-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kplan-example-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[kplan.plugins]\nLabelPreference = kplan_example_plugin:LabelPreference\n")
    return root


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(SRC))
    monkeypatch.syspath_prepend(str(fake_install(tmp_path / "site")))
    if str(KPLAN_ROOT) not in sys.path:
        monkeypatch.syspath_prepend(str(KPLAN_ROOT))
    return tmp_path


def write(tmp: Path, name: str, docs: object) -> str:
    path = tmp / name
    items = docs if isinstance(docs, list) else [docs]
    path.write_text("".join("---\n" + json.dumps(d) + "\n" for d in items))
    return str(path)


def test_the_entry_point_is_found_and_runs_at_filter_and_score(installed: Path) -> None:
    from kplan.io.workspace import simulate_files

    cfg = write(installed, "config.yaml", config({"key": "node.kubernetes.io/lifecycle", "avoid": ["spot"],
                                                    "prefer": ["on-demand"]}))
    result = simulate_files([write(installed, "cluster.yaml", CLUSTER)], [write(installed, "pods.yaml", PODS)], cfg,
                            lowest_name=True)
    assert result.pods[0].node == "c-on-demand"


def test_avoided_nodes_are_rejected_with_the_plugins_reason(installed: Path) -> None:
    from kplan.io.workspace import simulate_files

    cfg = write(installed, "config.yaml", config({"key": "node.kubernetes.io/lifecycle",
                                                    "avoid": ["spot", "on-demand", "none"]}))
    result = simulate_files([write(installed, "cluster.yaml", CLUSTER)], [write(installed, "pods.yaml", PODS)], cfg)
    outcome = result.pods[0]
    assert outcome.status == "Unschedulable"
    # the rest of the message is kube-scheduler's PostFilter text (DynamicResources, preemption)
    assert outcome.message is not None and outcome.message.startswith(
        "0/4 nodes are available: 4 node(s) had an avoided node.kubernetes.io/lifecycle label. ")


@pytest.mark.parametrize("args,message", [
    ({"key": "k", "colour": "red"}, 'unknown field "colour"'),
    ({"avoid": ["x"]}, "profiles[0].pluginConfig[0].args.key: Required value"),
    ({"key": "k", "avoid": ["x"], "prefer": ["x"]}, 'prefer: Invalid value: "x": also in avoid'),
], ids=["unknown field", "key missing", "a value both avoided and preferred"])
def test_args_are_checked_by_kplans_configuration_loader(installed: Path, args: dict[str, object],
                                                        message: str) -> None:
    from kplan.errors import ConfigError
    from kplan.io.scheduler_config import scheduler_setup

    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        scheduler_setup(write(installed, "config.yaml", config(args)))


def test_the_kplan_command_finds_it_too(installed: Path) -> None:
    cfg = write(installed, "config.yaml", config({"key": "node.kubernetes.io/lifecycle", "prefer": ["none"]}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(installed / "site"), str(SRC), str(KPLAN_ROOT)]))
    out = subprocess.run([sys.executable, "-m", "kplan", "simulate", write(installed, "pods.yaml", PODS),
                          "--cluster", write(installed, "cluster.yaml", CLUSTER), "--scheduler-config", cfg,
                          "-o", "json"], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pods"][0]["node"] == "d-plain"
