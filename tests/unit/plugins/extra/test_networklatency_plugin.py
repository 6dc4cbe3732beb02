"""NetworkLatency: nodes near the pods named by kplan.dev/talks-to score higher; kplan's own plugin."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from extra_builders import build, cluster, explain_by_name, node, pod, score_by_name

from kplan.errors import InputError
from kplan.framework.registry import ArgsError
from kplan.plugins.extra.networklatency import (
    ANNOTATION,
    NetworkLatency,
    decode_args,
    latency_scores,
    validate_args,
)

LATENCY = {"zone-a": {"zone-b": 2, "zone-c": 30}, "zone-b": {"zone-c": 30}}


def nodes() -> list[Any]:
    return [node("a1", zone="zone-a"), node("a2", zone="zone-a"), node("b1", zone="zone-b"),
            node("c1", zone="zone-c"), node("d1", zone="zone-d"), node("edge")]


def talker(selector: str | None, namespace: str = "shop") -> Any:
    return pod("client", namespace, annotations={} if selector is None else {ANNOTATION: selector})


def db(name: str = "db", namespace: str = "shop", **kw: Any) -> Any:
    return pod(name, namespace, labels={"app": "db", "tier": "data"}, **kw)


CASES = [
    ("a peer in zone-a: its zone 100, zone-b at 2 of 0..30 ms 93, zone-c 0, unknown and unlabelled 0",
     [(db(), "a1")], "app=db",
     {"a1": 100, "a2": 100, "b1": 93, "c1": 0, "d1": 0, "edge": 0}),
    ("peers in zone-a and zone-c: a node takes its nearest peer domain",
     [(db("db-0"), "a1"), (db("db-1"), "c1")], "app=db",
     {"a1": 100, "a2": 100, "b1": 0, "c1": 100, "d1": 0, "edge": 0}),
    ("no peer runs: every node 0",
     [], "app=db", {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 0, "edge": 0}),
    ("a peer on a node without the topology label has no known place: every node 0",
     [(db(), "edge")], "app=db", {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 0, "edge": 0}),
    ("a matching pod of another namespace is not a peer",
     [(db(namespace="other"), "a1")], "app=db", {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 0, "edge": 0}),
    ("a terminating peer is not a peer",
     [(db(deleting=True), "a1")], "app=db", {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 0, "edge": 0}),
    ("without the annotation every node scores 0",
     [(db(), "a1")], None, {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 0, "edge": 0}),
    ("a peer domain with no entries: only its own nodes have a latency, all equal, so 100",
     [(db(), "d1")], "app=db", {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "d1": 100, "edge": 0}),
    ("set-based selector with negation and existence, kubectl syntax",
     [(db("db-0"), "c1"), (pod("cache", "shop", labels={"app": "cache", "tier": "test"}), "a1")],
     "app in (db,cache),tier!=test,!canary,tier", {"a1": 0, "a2": 0, "b1": 0, "c1": 100, "d1": 0, "edge": 0}),
    ("an empty selector selects every pod of the namespace, as kubectl -l ''",
     [(pod("anything", "shop"), "b1")], "", {"a1": 93, "a2": 93, "b1": 100, "c1": 0, "d1": 0, "edge": 0}),
]


@pytest.mark.parametrize("placed,selector,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scores(placed: list[tuple[Any, str]], selector: str | None, want: dict[str, int]) -> None:
    snap = cluster(nodes(), placed)
    plugin = build(NetworkLatency, decode_args({"latencyMs": LATENCY}), snap)
    p = talker(selector)
    assert score_by_name(plugin, p, snap) == want
    # enabled at the score point only, PreScore does not run: the same scores
    assert score_by_name(plugin, p, snap, pre_score=False) == want


ROUNDING = [
    # (id, latencies per node (-1 unknown, -2 no label), expected)
    ("lowest 100, highest 0, linear between, rounded down", [2, 10, 16, 30], [100, 71, 50, 0]),
    ("93.33 rounds down to 93", [0, 2, 30], [100, 93, 0]),
    ("every known node at the same latency scores 100", [5, 5, -1], [100, 100, 0]),
    ("nodes without a latency score 0 and do not widen the range", [0, 4, -1, -2], [100, 0, 0, 0]),
    ("nothing known: all 0", [-1, -2], [0, 0]),
]


@pytest.mark.parametrize("lat,want", [c[1:] for c in ROUNDING], ids=[c[0] for c in ROUNDING])
def test_linear_mapping_and_rounding(lat: list[int], want: list[int]) -> None:
    assert latency_scores(np.array(lat, dtype=np.int64)).tolist() == want


def test_a_pair_given_once_applies_both_ways() -> None:
    snap = cluster(nodes(), [(db(), "a1")])
    plugin = build(NetworkLatency, decode_args({"latencyMs": {"zone-b": {"zone-a": 2}, "zone-c": {"zone-a": 4}}}), snap)
    assert score_by_name(plugin, talker("app=db"), snap)["b1"] == 50


def test_topology_key_is_configurable() -> None:
    ns = [node("r1", labels={"rack": "r1"}), node("r2", labels={"rack": "r2"}), node("r3", labels={"rack": "r3"})]
    snap = cluster(ns, [(db(), "r1")])
    args = decode_args({"topologyKey": "rack", "latencyMs": {"r1": {"r2": 1, "r3": 3}}})
    assert score_by_name(build(NetworkLatency, args, snap), talker("app=db"), snap) == {"r1": 100, "r2": 66, "r3": 0}


def test_peers_bound_and_removed_later_are_seen_through_the_table_listener() -> None:
    snap = cluster(nodes())
    plugin = build(NetworkLatency, decode_args({"latencyMs": LATENCY}), snap)
    p = talker("app=db")
    assert score_by_name(plugin, p, snap)["c1"] == 0
    peer = db()
    snap.add_pod(peer, snap.row_of("c1"))  # type: ignore[arg-type]
    assert score_by_name(plugin, p, snap)["c1"] == 100
    snap.remove_pod(peer)
    assert score_by_name(plugin, p, snap)["c1"] == 0


def test_malformed_annotation_is_an_input_error_naming_the_pod() -> None:
    snap = cluster(nodes(), [(db(), "a1")])
    plugin = build(NetworkLatency, decode_args({"latencyMs": LATENCY}), snap)
    with pytest.raises(InputError) as e:
        score_by_name(plugin, talker("app db"), snap)
    assert str(e.value) == ('pods.yaml: Pod shop/client: metadata.annotations["kplan.dev/talks-to"]: unable to parse '
                            "requirement: found 'db', expected: in, notin, =, ==, !=, gt, lt")


def test_explain_says_why_each_node_scored_what_it_did() -> None:
    snap = cluster(nodes(), [(db(), "a1")])
    plugin = build(NetworkLatency, decode_args({"latencyMs": LATENCY}), snap)
    lines = explain_by_name(plugin, talker("app=db"), snap)
    assert lines["b1"] == "93: zone-b: 2 ms to the nearest peer domain (zone-a); 0–30 ms over the scored nodes"
    assert lines["d1"] == "0: zone-d: no latency known to a peer domain (zone-a)"
    assert lines["edge"] == "0: the node has no topology.kubernetes.io/zone label"
    none = explain_by_name(plugin, talker("app=web"), snap)
    assert none["a1"] == ('0: no pod matching kplan.dev/talks-to "app=web" runs in namespace shop on a node with '
                          "topology.kubernetes.io/zone (skipped)")
    assert explain_by_name(plugin, talker(None), snap)["a1"] == "0: the pod has no kplan.dev/talks-to annotation (skipped)"


def test_args_defaults() -> None:
    args = decode_args(None)
    assert (args.topology_key, args.latency) == ("topology.kubernetes.io/zone", {})
    assert validate_args(args) == []


DECODE_ERRORS = [
    ("unknown field", {"latency": {}}, 'unknown field "latency"'),
    ("latencyMs not an object", {"latencyMs": ["zone-a"]}, "latencyMs: expected an object, got list"),
    ("a row not an object", {"latencyMs": {"zone-a": 3}}, "latencyMs.zone-a: expected an object, got int"),
    ("a fraction of a millisecond", {"latencyMs": {"zone-a": {"zone-b": 2.5}}},
     "latencyMs.zone-a.zone-b: expected an integer, got 2.5"),
    ("topologyKey not a string", {"topologyKey": 3}, "topologyKey: expected a string, got 3"),
]


@pytest.mark.parametrize("raw,message", [c[1:] for c in DECODE_ERRORS], ids=[c[0] for c in DECODE_ERRORS])
def test_strict_decoding(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgsError) as e:
        decode_args(raw)
    assert str(e.value) == message


VALIDATION = [
    ("negative latency", {"latencyMs": {"zone-a": {"zone-b": -1}}},
     ["latencyMs.zone-a.zone-b: Invalid value: -1: must be zero or positive"]),
    ("a pair given both ways with different values",
     {"latencyMs": {"zone-a": {"zone-b": 2}, "zone-b": {"zone-a": 3}}},
     ["latencyMs.zone-b.zone-a: Invalid value: 3: conflicts with latencyMs.zone-a.zone-b (2); "
      "a pair given once applies both ways"]),
    ("a pair given both ways with the same value is fine",
     {"latencyMs": {"zone-a": {"zone-b": 2}, "zone-b": {"zone-a": 2}}}, []),
    ("latency within a domain must be 0", {"latencyMs": {"zone-a": {"zone-a": 1}}},
     ["latencyMs.zone-a.zone-a: Invalid value: 1: the latency within a domain is 0"]),
    ("a zero self entry is fine", {"latencyMs": {"zone-a": {"zone-a": 0}}}, []),
    ("empty topologyKey", {"topologyKey": ""}, ["topologyKey: Required value"]),
    ("a domain that is no label value", {"latencyMs": {"zone a": {"zone-b": 1}}},
     ['latencyMs.zone a.zone-b: Invalid value: "zone a": a valid label must be an empty string or consist of '
      "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
      "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
      "[A-Za-z0-9])?')"]),
]


@pytest.mark.parametrize("raw,errors", [c[1:] for c in VALIDATION], ids=[c[0] for c in VALIDATION])
def test_validation(raw: dict[str, Any], errors: list[str]) -> None:
    assert validate_args(decode_args(raw)) == errors


def test_invalid_topology_key_uses_qualified_name_wording() -> None:
    (err,) = validate_args(decode_args({"topologyKey": "Bad/zone"}))
    assert err.startswith('topologyKey: Invalid value: "Bad/zone": prefix part a lowercase RFC 1123 subdomain')
