"""NodePorts (reference 3.1 row 5 and the conflict rule of 3.5)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.framework.cycle_state import CycleState
from kplan.framework.status import Code
from kplan.model.objects import HostPort, Pod
from kplan.plugins.nodeports import ports_conflict
from tests.builders import PodBuilder, Verdict, make_node, make_plugin, make_pod, make_snapshot, run_filter

OK = Verdict(Code.SUCCESS, ())
TAKEN = Verdict(Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",))


def running(*ports: tuple[int, str | None, str | None]) -> PodBuilder:
    p = make_pod("running").node_name("n")
    for port, proto, ip in ports:
        p.host_port(port, proto, ip)
    return p


@pytest.mark.parametrize("used, wanted, verdict", [
    pytest.param(running((80, None, None)), make_pod().host_port(80), TAKEN,
                 id="the same port on all addresses conflicts"),
    pytest.param(running((80, None, "10.0.0.1")), make_pod().host_port(80), TAKEN,
                 id="wanting 0.0.0.0 conflicts with the port on any one address"),
    pytest.param(running((80, None, None)), make_pod().host_port(80, host_ip="10.0.0.1"), TAKEN,
                 id="a port on one address conflicts with the port in use on 0.0.0.0"),
    pytest.param(running((80, None, "10.0.0.1")), make_pod().host_port(80, host_ip="10.0.0.1"), TAKEN,
                 id="the same port on the same address conflicts"),
    pytest.param(running((80, None, "10.0.0.1")), make_pod().host_port(80, host_ip="10.0.0.2"), OK,
                 id="the same port on two different addresses does not conflict"),
    pytest.param(running((53, "UDP", None)), make_pod().host_port(53), OK,
                 id="the same port with another protocol does not conflict"),
    pytest.param(running((53, "TCP", None)), make_pod().host_port(53), TAKEN,
                 id="an empty protocol means TCP"),
    pytest.param(running((80, None, None)), make_pod().host_port(8080), OK, id="another port does not conflict"),
    pytest.param(running((80, None, None)), make_pod().host_port(8080).host_port(80, "TCP"), TAKEN,
                 id="one conflicting port among several is enough"),
    pytest.param(running((80, None, None)),
                 make_pod().init_container(ports=[{"containerPort": 80, "hostPort": 80}], sidecar=True), TAKEN,
                 id="a sidecar's host port is checked"),
    pytest.param(running((80, None, None)),
                 make_pod().init_container(ports=[{"containerPort": 80, "hostPort": 80}]), OK,
                 id="a plain init container's host port is not checked"),
    pytest.param(make_pod("running").node_name("n").init_container(ports=[{"containerPort": 80, "hostPort": 80}]),
                 make_pod().host_port(80), OK, id="a running plain init container holds no host port"),
    pytest.param(running(), make_pod().host_port(80), OK, id="a node without used ports accepts any"),
])
def test_node_ports(used: PodBuilder, wanted: PodBuilder, verdict: Verdict) -> None:
    snap = make_snapshot([make_node("n")], [used])
    assert run_filter(make_plugin("NodePorts", snap), wanted.build(), snap) == {"n": verdict}


def test_a_pod_without_host_ports_skips_the_plugin() -> None:
    snap = make_snapshot([make_node("n")], [running((80, None, None))])
    _, status = make_plugin("NodePorts", snap).pre_filter(None, make_pod().build())
    assert status.code == Code.SKIP


def test_a_freed_port_is_free_again() -> None:
    snap = make_snapshot([make_node("n")])
    holder = running((80, None, None)).build()
    snap.add_pod(holder, 0)
    plugin = make_plugin("NodePorts", snap)
    wanted = make_pod().host_port(80).build()
    assert run_filter(plugin, wanted, snap) == {"n": TAKEN}
    snap.remove_pod(holder)
    assert run_filter(plugin, wanted, snap) == {"n": OK}


def test_removing_one_of_two_pods_on_the_same_port_frees_the_port() -> None:
    # HostPortInfo is a set: the port is recorded once for both pods, and RemovePod deletes it
    # (kube-scheduler v1.34.1, framework/types.go); preemption's dry run relies on it
    snap = make_snapshot([make_node("n")])
    first = dataclasses.replace(running((80, None, None)).build(), uid="first")
    second = dataclasses.replace(running((80, None, None)).build(), uid="second")
    snap.add_pod(first, 0)
    snap.add_pod(second, 0)
    plugin = make_plugin("NodePorts", snap)
    wanted = make_pod().host_port(80).build()
    assert run_filter(plugin, wanted, snap) == {"n": TAKEN}
    snap.remove_pod(first)
    assert [p.uid for p in snap.table.pods[0]] == ["second"]
    assert run_filter(plugin, wanted, snap) == {"n": OK}
    snap.add_pod(first, 0)
    assert run_filter(plugin, wanted, snap) == {"n": TAKEN}


PORT_SHAPES = [(80, None, None), (80, None, "10.0.0.1"), (80, "UDP", None), (53, "UDP", "10.0.0.2"), (8080, None, None)]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, len(PORT_SHAPES) - 1), st.integers(0, 3)), max_size=25),
       st.integers(0, len(PORT_SHAPES) - 1))
def test_verdicts_match_the_pods_on_each_node(ops: list[tuple[bool, int, int]], wanted_shape: int) -> None:
    # binds and removals on four nodes; every node's verdict, on the table and on a fork in
    # another row order, must be what upstream's HostPortInfo says: a set of the ports of the
    # pods added, from which removing a pod deletes its ports (even where another pod there
    # holds the same one)
    names = ["a", "b", "c", "d"]
    snap = make_snapshot([make_node(n) for n in names])
    placed: list[tuple[Pod, int]] = []
    recorded: list[set[HostPort]] = [set() for _ in names]
    for i, (add, shape, row) in enumerate(ops):
        if add or not placed:
            pod = dataclasses.replace(running(PORT_SHAPES[shape]).node_name(names[row]).build(), uid=f"p{i}")
            snap.add_pod(pod, row)
            placed.append((pod, row))
            recorded[row].update(pod.host_ports)
        else:
            pod, row = placed.pop(row % len(placed))
            snap.remove_pod(pod)
            recorded[row].difference_update(pod.host_ports)
    plugin = make_plugin("NodePorts", snap)
    wanted = running(PORT_SHAPES[wanted_shape]).build()
    expected = {n: TAKEN if ports_conflict(wanted.host_ports, tuple(recorded[r])) else OK
                for r, n in enumerate(names)}
    assert run_filter(plugin, wanted, snap) == expected
    fork = snap.table.take([3, 1, 2, 0])
    verdicts = plugin.filter(CycleState(), wanted, fork, np.arange(4))
    assert [TAKEN if c else OK for c in verdicts.codes.tolist()] == [expected[n] for n in ("d", "b", "c", "a")]
