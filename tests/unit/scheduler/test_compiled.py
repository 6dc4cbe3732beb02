"""The compiled scheduling cycle (kplan/scheduler/compiled.py, kernel/src/lib.rs) against the
per-plugin Python it stands in for: generated clusters, pods and profile variants through both
paths give the same run, pod by pod (node, status, message, attempts, nomination) and victim by
victim; and the kernel is really used where it covers the pods, and not where it does not.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kplan.scheduler.compiled as compiled
from kplan.framework.diagnosis import Diagnosis
from kplan.framework.release import Release
from kplan.framework.release_tables import RELEASES
from kplan.framework.runtime import Framework
from kplan.scheduler.cycle import Scheduler
from kplan.scheduler.explain import PodExplainer
from kplan.scheduler.kernel_switch import use_kernel
from kplan.scheduler.setup import SchedulerSetup
from kplan.scheduler.simulate import SimulationResult, run_simulation
from tests.builders import NodeBuilder, PodBuilder, expr, make_node, make_pod, scenario, term

needs_kernel = pytest.mark.skipif(compiled._kernel is None, reason="kplan._kernel is not built (tools/build_kernel.sh)")


def test_ci_builds_the_kernel() -> None:
    """Under CI the README's install builds kplan._kernel into the checkout (pip install -e): a
    build that silently fell back to the Python path would leave the kernel untested."""
    if os.environ.get("CI") != "true":
        pytest.skip("outside CI a checkout may run without the kernel (the Python path)")
    assert compiled._kernel is not None

VERSIONS = sorted(str(v) for v in RELEASES)
HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
#: a Service over app-0's pods: they get PodTopologySpread's default constraints
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "app-0", "namespace": "default"},
           "spec": {"selector": {"app": "app-0"}}}
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

#: profile variants: the default, other weights and strategies, plugins disabled, every node scored
PROFILES: list[dict[str, Any] | None] = [
    None,
    {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3},
                                                                    {"name": "memory", "weight": 1}]}}}]}]},
    {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "memory", "weight": 2},
                                                                     {"name": "cpu", "weight": 5}]}}}]}]},
    {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "score": {"disabled": [{"name": "ImageLocality"}, {"name": "NodeResourcesBalancedAllocation"}],
                  "enabled": [{"name": "TaintToleration", "weight": 7}]}}}]},
    {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "TaintToleration"}]}}}]},
    {"percentageOfNodesToScore": 100},
    {"percentageOfNodesToScore": 7},
    # a resource the kernel does not score: the Python path scores, the kernel still filters
    {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                     {"name": "memory", "weight": 1},
                                                                     {"name": "example.com/gpu", "weight": 2}]}}}]}]},
]


@contextmanager
def kernel(on: bool) -> Iterator[None]:
    use_kernel(on)
    try:
        yield
    finally:
        use_kernel(True)


class Calls:
    """Counts the kernel's calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.filter = self.score = 0
        real = compiled._kernel

        outer = self

        class Spy:
            OK = real.OK

            @staticmethod
            def find_feasible(*args: Any) -> Any:
                outer.filter += 1
                return real.find_feasible(*args)

            @staticmethod
            def score(*args: Any) -> Any:
                outer.score += 1
                return real.score(*args)

        monkeypatch.setattr(compiled, "_kernel", Spy)


def generated(seed: int, n_nodes: int, n_running: int, n_pending: int) -> tuple[list[NodeBuilder], list[PodBuilder],
                                                                                 list[PodBuilder]]:
    """A cluster and pods from one seed: zones, pools, taints (NoSchedule and PreferNoSchedule),
    images, small pod limits, a few nodes without cpu; pods with and without requests,
    nodeSelectors, tolerations, required and preferred node affinity, images, extended
    resources, and some the kernel leaves to Python (host ports, pod anti-affinity, topology
    spread, higher priority that preempts)."""
    rng = random.Random(seed)
    nodes: list[NodeBuilder] = []
    for i in range(n_nodes):
        b = make_node(f"n{i:03d}").zone(rng.choice("abc"))
        cpu = rng.choice(["0", "2", "4", "8", "16"]) if rng.random() < 0.05 else rng.choice(["2", "4", "8", "16"])
        b.alloc(cpu=cpu, memory=rng.choice(["4Gi", "8Gi", "32Gi"]), pods=str(rng.choice([3, 10, 110])))
        pool = rng.choice(["general", "general", "memory", "spot", "gpu"])
        b.labels(pool=pool, rank=str(rng.randrange(10)))
        if pool == "spot":
            b.taint("spot", "true", "PreferNoSchedule")
        if pool == "gpu":
            b.taint("gpu", "true", "NoSchedule")
            b.alloc(**{"example.com/gpu": "4"})
        if rng.random() < 0.3:
            b.taint("other", str(rng.randrange(2)), "PreferNoSchedule")
        if rng.random() < 0.4:
            b.image(rng.choice([50, 300, 900]) * 1024 * 1024, f"registry.example/app-{rng.randrange(4)}:1")
        nodes.append(b)

    def pod(name: str, plain: bool) -> PodBuilder:
        p = make_pod(name)
        p.labels(app=f"app-{rng.randrange(3)}")
        if rng.random() < 0.85:
            p.req(cpu=rng.choice(["100m", "500m", "1", "3"]), memory=rng.choice(["128Mi", "1Gi", "3Gi"]))
        p.image(f"registry.example/app-{rng.randrange(6)}:1")
        if rng.random() < 0.2:
            p.node_selector(pool=rng.choice(["general", "memory"]))
        if rng.random() < 0.3:
            p.toleration("spot", "true", "PreferNoSchedule")
        if rng.random() < 0.15:
            p.toleration("gpu", operator="Exists", effect="NoSchedule").req(**{"example.com/gpu": str(rng.randrange(1, 3))})
        if rng.random() < 0.2:
            p.preferred(rng.randrange(1, 100), term(expr("pool", "In", rng.choice(["memory", "spot"]))))
        if rng.random() < 0.1:
            p.required(term(expr("rank", "Gt", str(rng.randrange(8)))))
        if not plain:
            roll = rng.random()
            if roll < 0.05:
                p.host_port(8080)
            elif roll < 0.10:
                p.spec(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "app-0"}}, "topologyKey": "kubernetes.io/hostname"}]}})
            elif roll < 0.15:
                p.spec(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                                   "labelSelector": {"matchLabels": {"app": "app-1"}}}])
            elif roll < 0.20:
                p.priority_class("high")
        return p

    running = [pod(f"r{i:03d}", True).node_name(f"n{rng.randrange(n_nodes):03d}") for i in range(n_running)]
    pending = [pod(f"p{i:03d}", False) for i in range(n_pending)]
    return nodes, running, pending


def run(nodes: list[NodeBuilder], running: list[PodBuilder], pending: list[PodBuilder], release: str,
        config: dict[str, Any] | None, lowest_name: bool, seed: int, *, on: bool) -> SimulationResult:
    rel = Release.of(release)
    sc = scenario(nodes, pending, running, [HIGH, SERVICE], rel)
    with kernel(on):
        return run_simulation(sc.snapshot, SchedulerSetup.of(rel, {**CONFIG, **config} if config else None), sc.pending,
                              seed=seed, lowest_name=lowest_name, pdb_allowed=sc.pdb_allowed)


def summary(result: SimulationResult) -> list[object]:
    pods = [(o.pod.key, o.status, o.node, o.message, o.attempts, o.nominated_node) for o in result.pods]
    victims = [(e.pod.key, e.node, e.preemptor.key) for e in result.preempted]
    return [pods, victims]


@needs_kernel
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_nodes=st.sampled_from([1, 3, 12, 40, 130, 260]),
       density=st.integers(0, 4), n_pending=st.integers(1, 40), release=st.sampled_from(VERSIONS),
       profile=st.integers(0, len(PROFILES) - 1), lowest_name=st.booleans())
def test_the_kernel_and_the_python_path_run_alike(seed: int, n_nodes: int, density: int, n_pending: int,
                                                  release: str, profile: int, lowest_name: bool) -> None:
    nodes, running, pending = generated(seed, n_nodes, n_nodes * density, n_pending)
    config = PROFILES[profile]
    with_kernel = run(nodes, running, pending, release, config, lowest_name, seed, on=True)
    reference = run(nodes, running, pending, release, config, lowest_name, seed, on=False)
    assert summary(with_kernel) == summary(reference)


class Checked:
    """A CompiledCycle whose every answer is checked, in the cycle that asks, against the
    per-plugin Python's answer to the same question on the same state: the feasible rows in
    order and the nodes processed (Scheduler._find_feasible), every feasible node's total score
    (Framework.run_score) and, with the lowest-name tie-break, the chosen node."""

    def __init__(self, inner: compiled.CompiledCycle, scheduler: Scheduler, fw: Framework, log: list[str]) -> None:
        self.inner, self.scheduler, self.fw, self.log = inner, scheduler, fw, log

    def find_feasible(self, state: Any, pod: Any, table: Any, start: int, k: int) -> Any:
        got = self.inner.find_feasible(state, pod, table, start, k)
        if got is not None:
            diagnosis = Diagnosis(len(table))
            feasible, _ = self.scheduler._find_feasible(self.fw, pod, state, np.arange(len(table)), diagnosis)
            assert got[0].tolist() == feasible.tolist(), pod.key
            assert got[1] == len(feasible) + diagnosis.num_recorded, pod.key
            self.log.append("filter")
        return got

    def score(self, state: Any, pod: Any, table: Any, feasible: np.ndarray, lowest_name: bool) -> Any:
        got = self.inner.score(state, pod, table, feasible, lowest_name)
        if got is not None:
            totals, _, status = self.fw.run_score(state, pod, table, feasible)
            assert status.ok and got[0].tolist() == totals.tolist(), pod.key
            if lowest_name:
                assert got[1] == self.scheduler.select_host(totals, feasible), pod.key
            self.log.append("score")
        return got


@needs_kernel
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_nodes=st.sampled_from([2, 12, 130]), density=st.integers(0, 3),
       n_pending=st.integers(1, 30), release=st.sampled_from(VERSIONS), profile=st.integers(0, len(PROFILES) - 1),
       lowest_name=st.booleans())
def test_every_answer_of_the_kernel_is_the_python_path_s(seed: int, n_nodes: int, density: int, n_pending: int,
                                                         release: str, profile: int, lowest_name: bool) -> None:
    checked_run(seed, n_nodes, density, n_pending, release, profile, lowest_name)


@needs_kernel
@pytest.mark.parametrize("release", VERSIONS)
def test_the_answers_checked_are_many(release: str) -> None:
    log = checked_run(7, 130, 2, 40, release, 0, True)
    assert log.count("filter") >= 10 and log.count("score") >= 10


def checked_run(seed: int, n_nodes: int, density: int, n_pending: int, release: str, profile: int,
                lowest_name: bool) -> list[str]:
    """A generated run in which every kernel answer is checked (Checked); what was checked."""
    log: list[str] = []
    real = Scheduler._compiled

    def checked(self: Scheduler, fw: Framework, pod: Any) -> Any:
        inner = real(self, fw, pod)
        return None if inner is None else Checked(inner, self, fw, log)

    nodes, running, pending = generated(seed, n_nodes, n_nodes * density, n_pending)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Scheduler, "_compiled", checked)
        run(nodes, running, pending, release, PROFILES[profile], lowest_name, seed, on=True)
    return log


@needs_kernel
@pytest.mark.parametrize("release", VERSIONS)
@pytest.mark.parametrize("lowest_name", [True, False], ids=["lowest-name tie-break", "random tie-break"])
def test_the_kernel_places_plain_pods_as_python_does_and_is_used(release: str, lowest_name: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    nodes, running, pending = generated(7, 260, 500, 120)
    plain = [p for p in pending if "hostPorts" not in str(p.dict()) and "affinity" not in p.dict()["spec"]
             and "topologySpreadConstraints" not in p.dict()["spec"] and "priorityClassName" not in p.dict()["spec"]]
    calls = Calls(monkeypatch)
    with_kernel = run(nodes, running, plain, release, None, lowest_name, 3, on=True)
    assert calls.filter >= len(plain) // 2 and calls.score >= len(plain) // 2
    used = (calls.filter, calls.score)
    reference = run(nodes, running, plain, release, None, lowest_name, 3, on=False)
    assert (calls.filter, calls.score) == used  # the reference run did not call the kernel
    assert summary(with_kernel) == summary(reference)


@needs_kernel
def test_the_python_path_runs_without_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch)
    nodes, running, pending = generated(11, 40, 40, 20)
    run(nodes, running, pending, VERSIONS[-1], None, True, 0, on=False)
    assert (calls.filter, calls.score) == (0, 0)


@needs_kernel
@pytest.mark.parametrize("pod, filtered, scored", [
    pytest.param(make_pod("plain").req(cpu="1"), True, True, id="a plain pod is filtered and scored by the kernel"),
    pytest.param(make_pod("ports").req(cpu="1").host_port(80), False, True,
                 id="a pod with a host port is filtered by Python (NodePorts reads the nodes' pods), scored by the kernel"),
    pytest.param(make_pod("anti").req(cpu="1").labels(app="a").spec(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": "kubernetes.io/hostname"}}]}}), False, True,
                 id="a pod with required anti-affinity and preferred affinity: Python filters, the kernel sums "
                    "InterPodAffinity's scores from Python"),
    pytest.param(make_pod("spread").req(cpu="1").labels(app="a").spec(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": "a"}}}]), True, True,
                 id="a pod with a soft spread: the kernel filters, and sums PodTopologySpread's scores from Python"),
])
def test_what_the_kernel_covers(pod: PodBuilder, filtered: bool, scored: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch)
    nodes = [make_node(f"n{i}").zone("ab"[i % 2]).alloc(cpu="4", memory="8Gi", pods="110") for i in range(6)]
    running = [make_pod("b1").labels(app="b").req(cpu="1").node_name("n0")]
    run(nodes, running, [pod], VERSIONS[-1], None, True, 0, on=True)
    assert (calls.filter > 0, calls.score > 0) == (filtered, scored)


@needs_kernel
def test_explain_keeps_the_python_path_for_the_explained_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods="110") for i in range(4)]
    pods = [make_pod("a").req(cpu="1"), make_pod("b").req(cpu="1")]
    rel = Release.of(VERSIONS[-1])
    sc = scenario(nodes, pods, (), (), rel)
    explainer = PodExplainer(sc.pending[1].uid)
    calls = Calls(monkeypatch)
    run_simulation(sc.snapshot, SchedulerSetup.of(rel, None), sc.pending, seed=0, lowest_name=True,
                   pdb_allowed=sc.pdb_allowed, observer=explainer)
    # pod a through the kernel; pod b, explained, through the per-plugin Python with its scores
    assert (calls.filter, calls.score) == (1, 1)
    (attempt,) = explainer.attempts
    assert attempt.result.scores is not None and attempt.result.filtered is not None
