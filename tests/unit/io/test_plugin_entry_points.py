"""Third-party plugins from the ``kplan.plugins`` entry-point group, discovered for real.

Each test writes a module and a ``*.dist-info`` (METADATA + entry_points.txt) into a temporary
folder on sys.path: importlib.metadata finds it exactly as it finds an installed distribution.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kplan.errors import ConfigError
from kplan.io.plugin_entry_points import configured_plugin_names
from kplan.io.scheduler_config import scheduler_setup
from kplan.plugins import in_tree_registry
from tests.builders import simulate_files

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "kplan-example-plugin"

# A score plugin reading its raw args: 100 on the node named in args["node"], 0 elsewhere.
PREFER_NODE = '''
import numpy as np

class PreferNode:
    name = "PreferNode"
    seen_args = []

    def __init__(self, args, handle):
        self.args = args
        PreferNode.seen_args.append(args)

    def score(self, state, pod, table, rows):
        return np.array([100 if table.names[r] == self.args["node"] else 0 for r in rows], dtype=np.int64)
'''

NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
          "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for n in ("node-a", "node-b")]
PODS = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}]}}]


def install(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """What pip leaves behind for a distribution with ``kplan.plugins`` entry points."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[kplan.plugins]\n{lines}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


def config(tmp: Path, profile: dict[str, Any]) -> str:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", **profile}]}
    path = tmp / "config.yaml"
    path.write_text(json.dumps(doc))
    return str(path)


def files(tmp: Path) -> tuple[list[str], list[str]]:
    (tmp / "cluster.yaml").write_text("".join("---\n" + json.dumps(d) + "\n" for d in NODES))
    (tmp / "pods.yaml").write_text("".join("---\n" + json.dumps(d) + "\n" for d in PODS))
    return [str(tmp / "cluster.yaml")], [str(tmp / "pods.yaml")]


def score_profile(name: str, args: Any = None, weight: int = 10) -> dict[str, Any]:
    profile: dict[str, Any] = {"plugins": {"score": {"enabled": [{"name": name, "weight": weight}]}}}
    if args is not None:
        profile["pluginConfig"] = [{"name": name, "args": args}]
    return profile


def test_a_plugin_class_is_discovered_and_gets_its_raw_args(site: Path, tmp_path: Path) -> None:
    install(site, "prefer_node_dist", {"PreferNode": "prefer_node_mod:PreferNode"}, {"prefer_node_mod": PREFER_NODE})
    cluster, pods = files(tmp_path)
    assert simulate_files(cluster, pods, None, lowest_name=True).pods[0].node == "node-a"
    result = simulate_files(cluster, pods, config(tmp_path, score_profile("PreferNode", {"node": "node-b"})),
                            lowest_name=True)
    assert result.pods[0].node == "node-b"
    import prefer_node_mod  # the module the entry point loaded
    assert prefer_node_mod.PreferNode.seen_args == [{"node": "node-b"}]


def test_the_registry_entry_is_marked_third_party_with_the_points_of_the_class(site: Path, tmp_path: Path) -> None:
    install(site, "prefer_node_dist2", {"PreferNode": "prefer_node_mod2:PreferNode"},
            {"prefer_node_mod2": PREFER_NODE})
    registry = scheduler_setup(config(tmp_path, score_profile("PreferNode", {"node": "x"}))).registry
    spec = registry.get("PreferNode")
    assert in_tree_registry().get("PreferNode") is None  # the release's own registry is left as it was
    assert spec is not None and not spec.in_tree and spec.points == frozenset({"score"})
    assert not spec.upstream
    assert spec.origin == 'entry point "PreferNode = prefer_node_mod2:PreferNode" (group "kplan.plugins")'


SPEC_FACTORY = '''
import numpy as np
from kplan.framework.registry import ArgsError, ArgsKind, PluginSpec

class Plugin:
    def __init__(self, args, handle):
        self.args = args

    def pre_score(self, state, pod, table, rows):
        from kplan.framework.status import OK
        return OK

    def score(self, state, pod, table, rows):
        return np.array([self.args["b_score"] if table.names[r] == "node-b" else 0 for r in rows], dtype=np.int64)

def decode(raw):
    raw = raw or {}
    for k in raw:
        if k != "bScore":
            raise ArgsError(f'unknown field "{k}"')
    return {"b_score": raw.get("bScore", 100)}

def validate(args):
    return [] if 0 <= args["b_score"] <= 100 else [f"bScore: Invalid value: {args['b_score']}: not in [0, 100]"]

def make():
    return PluginSpec("Favour", Plugin, ArgsKind("FavourArgs", decode, validate))

SPEC = make()
'''


@pytest.mark.parametrize("target", ["spec_mod:make", "spec_mod:SPEC"],
                         ids=["a function returning a PluginSpec", "a PluginSpec object"])
def test_a_plugin_spec_with_typed_args(site: Path, tmp_path: Path, target: str) -> None:
    install(site, "favour_dist", {"Favour": target}, {"spec_mod": SPEC_FACTORY})
    cluster, pods = files(tmp_path)
    result = simulate_files(cluster, pods, config(tmp_path, score_profile("Favour", {"bScore": 100})),
                            lowest_name=True)
    assert result.pods[0].node == "node-b"
    with pytest.raises(ConfigError) as e:
        scheduler_setup(config(tmp_path, score_profile("Favour", {"bscore": 1})))
    assert str(e.value).endswith("decoding args for plugin Favour: strict decoding error: unknown field \"bscore\"")
    with pytest.raises(ConfigError) as e:
        scheduler_setup(config(tmp_path, score_profile("Favour", {"bScore": 101})))
    assert str(e.value).endswith("config.yaml: profiles[0].pluginConfig[0].args.bScore: Invalid value: 101: "
                                 "not in [0, 100]")


@pytest.mark.parametrize("profile,iface", [
    (score_profile("NotInstalled"), "ScorePlugin"),
    ({"plugins": {"multiPoint": {"enabled": [{"name": "NotInstalled"}]}}}, "PreFilterPlugin"),
], ids=["at the score point", "in multiPoint"])
def test_a_plugin_that_is_not_installed_keeps_kube_schedulers_words_plus_a_hint(
        site: Path, tmp_path: Path, profile: dict[str, Any], iface: str) -> None:
    path = config(tmp_path, profile)
    with pytest.raises(ConfigError) as e:
        scheduler_setup(path)
    assert str(e.value) == (
        f'{path}: initializing profiles: creating profile for scheduler name default-scheduler: {iface} '
        '"NotInstalled" does not exist (it is not built into kplan, and no installed package registers it in the '
        '"kplan.plugins" entry-point group)')


def test_discovery_is_lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def spy(**kw: Any) -> list[Any]:
        calls.append(kw["group"])
        return []

    monkeypatch.setattr("importlib.metadata.entry_points", spy)
    scheduler_setup(None)
    scheduler_setup(config(tmp_path, {"plugins": {"score": {"enabled": [{"name": "PodCount"}]}},
                                      "pluginConfig": [{"name": "ImageLocality", "args": {}}]}))
    assert calls == []  # built-in names never scan the installed distributions
    with pytest.raises(ConfigError):
        scheduler_setup(config(tmp_path, score_profile("Elsewhere")))
    assert calls == ["kplan.plugins"]


def test_kplans_own_names_are_never_looked_up(site: Path, tmp_path: Path) -> None:
    install(site, "shadow_dist", {"PodCount": "no_such_module:X"}, {})
    cfg = scheduler_setup(config(tmp_path, score_profile("PodCount"))).config
    assert cfg.profiles[0].weights["PodCount"] == 10


def test_a_configured_but_not_enabled_unknown_plugin_is_not_an_error(site: Path, tmp_path: Path) -> None:
    # kube-scheduler keeps pluginConfig of unknown names as raw bytes and never checks them
    cfg = scheduler_setup(config(tmp_path, {"pluginConfig": [{"name": "Ghost", "args": {"a": 1}}]})).config
    assert cfg.profiles[0].raw_args == {"Ghost": {"a": 1}}


BIND = '''
class Binder:
    name = "Binder"
    def __init__(self, args, handle): pass
    def bind(self, state, pod, node): pass
    def score(self, state, pod, table, rows): return rows * 0
'''
NOTHING = '''
class Idle:
    name = "Idle"
    def __init__(self, args, handle): pass
'''
MISNAMED = '''
class Other:
    name = "Other"
    def score(self, state, pod, table, rows): return rows * 0
'''
BROKEN = '''
import nonexistent_dependency_of_a_plugin
'''
NOT_A_PLUGIN = '''
VALUE = 42
'''
FAILS_TO_BUILD = '''
class Strict:
    name = "Strict"
    def __init__(self, args, handle):
        raise ValueError("weights must add up to 100")
    def score(self, state, pod, table, rows): return rows * 0
'''

BAD = [
    ("an unsupported extension point", "Binder", "bad_bind:Binder", {"bad_bind": BIND},
     'plugin "Binder": entry point "Binder = bad_bind:Binder" (group "kplan.plugins") implements BindPlugin; '
     "kplan runs third-party plugins only at PreFilter, Filter, PreScore, Score"),
    ("no extension point at all", "Idle", "bad_idle:Idle", {"bad_idle": NOTHING},
     'plugin "Idle": entry point "Idle = bad_idle:Idle" (group "kplan.plugins") implements none of '
     "PreFilter, Filter, PreScore, Score"),
    ("a class named differently", "Mine", "bad_name:Other", {"bad_name": MISNAMED},
     'plugin "Mine": class bad_name.Other is named "Other"; the entry point must be named after the plugin'),
    ("a module that fails to import", "Broken", "bad_import:Plugin", {"bad_import": BROKEN},
     'plugin "Broken": loading entry point "Broken = bad_import:Plugin" (group "kplan.plugins") failed: '
     "ModuleNotFoundError: No module named 'nonexistent_dependency_of_a_plugin'"),
    ("something that is no plugin", "Answer", "bad_value:VALUE", {"bad_value": NOT_A_PLUGIN},
     'plugin "Answer": entry point "Answer = bad_value:VALUE" (group "kplan.plugins") resolves to int, '
     "not a plugin class or a PluginSpec"),
]


@pytest.mark.parametrize("name,target,modules,message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_broken_plugins_are_one_line_config_errors(site: Path, tmp_path: Path, name: str, target: str,
                                                   modules: dict[str, str], message: str) -> None:
    install(site, f"dist_{name.lower()}", {name: target}, modules)
    path = config(tmp_path, score_profile(name))
    with pytest.raises(ConfigError) as e:
        scheduler_setup(path)
    assert str(e.value) == f"{path}: {message}"


def test_a_constructor_failure_reads_like_upstreams_plugin_initialisation_error(site: Path, tmp_path: Path) -> None:
    install(site, "strict_dist", {"Strict": "strict_mod:Strict"}, {"strict_mod": FAILS_TO_BUILD})
    cluster, pods = files(tmp_path)
    with pytest.raises(ConfigError) as e:
        simulate_files(cluster, pods, config(tmp_path, score_profile("Strict")))
    assert str(e.value) == 'initializing plugin "Strict": ValueError: weights must add up to 100'


def test_two_packages_providing_one_name(site: Path, tmp_path: Path) -> None:
    install(site, "first_dist", {"Twice": "one:P"}, {})
    install(site, "second_dist", {"Twice": "two:P"}, {})
    with pytest.raises(ConfigError, match='plugin "Twice" is provided by two entry points of group "kplan.plugins": '
                                          '"one:P" and "two:P"; uninstall one of them'):
        scheduler_setup(config(tmp_path, score_profile("Twice")))


def test_configured_names_skip_malformed_parts() -> None:
    doc = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A"}, "junk", {"name": 3}]},
                                     "filter": None, "multiPoint": {"enabled": [{"name": "B"}]}},
                         "pluginConfig": [{"name": "C"}, None]}, "junk"]}
    assert configured_plugin_names(doc) == {"A", "B", "C"}
    assert configured_plugin_names([]) == set()


def test_the_kplan_command_with_the_example_package(tmp_path: Path) -> None:
    """The example package of examples/ through a fresh interpreter: real discovery, real CLI."""
    site = tmp_path / "site"
    install(site, "kplan_example_plugin", {"LabelPreference": "kplan_example_plugin:LabelPreference"}, {})
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"tier": t}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for n, t in (("node-a", "spot"), ("node-b", "spot"), ("node-c", "on-demand"))]
    (tmp_path / "cluster.yaml").write_text("".join("---\n" + json.dumps(d) + "\n" for d in nodes))
    (tmp_path / "pods.yaml").write_text("".join("---\n" + json.dumps(d) + "\n" for d in PODS))
    cfg = config(tmp_path, {"plugins": {"multiPoint": {"enabled": [{"name": "LabelPreference"}]}},
                            "pluginConfig": [{"name": "LabelPreference", "args": {"key": "tier", "avoid": ["spot"]}}]})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(EXAMPLE / "src"), str(ROOT)]))
    cmd = [sys.executable, "-m", "kplan", "simulate", str(tmp_path / "pods.yaml"), "--cluster",
           str(tmp_path / "cluster.yaml"), "--scheduler-config", cfg, "-o", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pods"][0]["node"] == "node-c"

    # without the package on the path: one line on stderr, exit 2, no traceback
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f'error: {cfg}: initializing profiles: creating profile for scheduler name default-scheduler: '
        'PreFilterPlugin "LabelPreference" does not exist (it is not built into kplan, and no installed package '
        'registers it in the "kplan.plugins" entry-point group)']


def test_the_example_packages_own_tests_pass() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=EXAMPLE,
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


REJECT_ALL = '''
import numpy as np
from kplan.framework.status import Code, Verdicts, reason_id

class NoWay:
    name = "NoWay"
    def __init__(self, args, handle): pass
    def filter(self, state, pod, table, rows):
        return Verdicts.where(np.ones(len(rows), dtype=bool), Code.UNSCHEDULABLE, reason_id("node(s) said no"))
'''


def test_a_plugin_without_events_to_register_is_retried_after_any_event(site: Path, tmp_path: Path) -> None:
    install(site, "noway_dist", {"NoWay": "noway_mod:NoWay"}, {"noway_mod": REJECT_ALL})
    setup = scheduler_setup(config(tmp_path, {"plugins": {"filter": {"enabled": [{"name": "NoWay"}]}}}))
    registry, cfg = setup.registry, setup.config
    plugin = registry.get("NoWay").factory(None, None)  # type: ignore[union-attr]
    kinds = {kind for kind, hint in plugin.events_to_register() if hint is None}
    assert {"AssignedPodAdd", "AssignedPodDelete", "NodeAdd", "NodeUpdateLabel"} <= kinds
    assert cfg.profiles[0].points["filter"][-1] == "NoWay"
