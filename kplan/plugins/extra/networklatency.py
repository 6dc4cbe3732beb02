"""NetworkLatency: prefer nodes close to the pods this pod talks to. kplan's own plugin.

kube-scheduler v1.34.1 has no network-aware scoring at all (reference §11); this plugin is
opt-in and never part of the default profile. It is for "what if the scheduler knew our
topology" questions, e.g. chatty services that pay for cross-zone traffic.

Peers: the pod names the pods it talks to with the annotation ``kplan.dev/talks-to`` holding a
label selector in kubectl's syntax (``a=b,c!=d,e in (f,g),!h,i``; an empty text selects every
pod). Peers are the bound, non-terminating pods of the *same namespace* that match it. A peer
domain is the ``topologyKey`` label value of a node running a peer; peers on nodes without the
label have no known place and are ignored.

Args (``NetworkLatencyArgs``):
  ``topologyKey``  node label whose values are the domains (default ``topology.kubernetes.io/zone``).
  ``latencyMs``    ``{domain: {domain: milliseconds}}``, whole non-negative numbers. Symmetric: a
                   pair given once applies both ways; giving it both ways with different values is
                   an error. The latency within a domain is 0 (a non-zero self entry is an error).
                   Only ratios matter, so units finer than 1 ms can be had by scaling every entry.

Score (no NormalizeScore):
  ``latency(node)`` = the smallest latency from the node's domain to any peer domain: 0 when the
  node's domain runs a peer, else the smallest *known* entry. A node without the label, or whose
  domain has no entry towards any peer domain, has no latency: it scores 0, as far as the worst.
  Over the scored nodes with a latency, ``lo``/``hi`` are the smallest and largest:
      score = 100 * (hi - latency) // (hi - lo)       (integer division: rounds down)
      score = 100 for every node with a latency when hi == lo
  PreScore returns Skip (every node scores 0) when the pod has no annotation or no peer runs in
  a known domain. A malformed selector is an input error naming the pod.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.interfaces import MAX_NODE_SCORE, Handle, PreScorePlugin, ScoreExplainer, ScorePlugin
from kplan.framework.status import OK, Status, skip
from kplan.model.name_rules import label_value, qualified_name
from kplan.model.objects import Pod
from kplan.model.parse import Where
from kplan.model.selector_syntax import SelectorSyntaxError, parse_selector
from kplan.model.selectors import LabelSelector
from kplan.plugins.extra.common import as_int, as_mapping, as_str, check_fields
from kplan.plugins.helper import PluginBase

NAME = "NetworkLatency"
ARGS_KIND = "NetworkLatencyArgs"
ANNOTATION = "kplan.dev/talks-to"
DEFAULT_TOPOLOGY_KEY = "topology.kubernetes.io/zone"
_STATE_KEY = "PreScore" + NAME
#: latency codes of a row besides milliseconds
NO_LABEL, UNKNOWN = -2, -1


@dataclass(frozen=True)
class NetworkLatencyArgs:
    topology_key: str = DEFAULT_TOPOLOGY_KEY
    #: every entry as written: (from, to, ms, field path)
    entries: tuple[tuple[str, str, int, str], ...] = ()
    #: symmetric lookup built from ``entries``: (a, b) and (b, a) → ms
    latency: Mapping[tuple[str, str], int] = field(default_factory=dict)


def decode_args(raw: Mapping[str, Any] | None) -> NetworkLatencyArgs:
    raw = raw or {}
    check_fields(raw, {"topologyKey", "latencyMs"})
    key = DEFAULT_TOPOLOGY_KEY
    if raw.get("topologyKey") is not None:
        key = as_str(raw["topologyKey"], "topologyKey")
    entries = []
    for a, row in as_mapping(raw.get("latencyMs"), "latencyMs").items():
        for b, ms in as_mapping(row, f"latencyMs.{a}").items():
            path = f"latencyMs.{a}.{b}"
            entries.append((str(a), str(b), as_int(ms, path), path))
    latency: dict[tuple[str, str], int] = {}
    for a, b, ms, _ in entries:
        latency.setdefault((a, b), ms)
        latency.setdefault((b, a), ms)
    return NetworkLatencyArgs(key, tuple(entries), latency)


def validate_args(args: NetworkLatencyArgs) -> list[str]:
    errs = []
    if not args.topology_key:
        errs.append("topologyKey: Required value")
    else:
        problems = qualified_name(args.topology_key)
        if problems:
            errs.append(f'topologyKey: Invalid value: "{args.topology_key}": {"; ".join(problems)}')
    first: dict[tuple[str, str], tuple[int, str]] = {}
    for a, b, ms, path in args.entries:
        for domain in dict.fromkeys((a, b)):
            problems = label_value(domain)
            if problems:
                errs.append(f'{path}: Invalid value: "{domain}": {"; ".join(problems)}')
        if ms < 0:
            errs.append(f"{path}: Invalid value: {ms}: must be zero or positive")
        elif a == b and ms != 0:
            errs.append(f"{path}: Invalid value: {ms}: the latency within a domain is 0")
        pair = (min(a, b), max(a, b))
        if pair in first and first[pair][0] != ms:
            errs.append(f"{path}: Invalid value: {ms}: conflicts with {first[pair][1]} ({first[pair][0]}); "
                        "a pair given once applies both ways")
        first.setdefault(pair, (ms, path))
    return errs


class PeerIndex:
    """namespace → label set → {row: pods} for the bound, non-terminating pods of one node table.

    A listener of the table, so a lookup costs the number of distinct label sets in the
    namespace (replicas share one), not the number of running pods.
    """

    def __init__(self, table: NodeTable) -> None:
        self.by_namespace: dict[str, dict[tuple[tuple[str, str], ...], tuple[Mapping[str, str], Counter[int]]]] = {}
        for row, pods in enumerate(table.pods):
            for pod in pods:
                self.pod_added(table, pod, row)

    def pod_added(self, table: NodeTable, pod: Pod, row: int) -> None:
        if pod.terminating:
            return
        sets = self.by_namespace.setdefault(pod.namespace, {})
        key = tuple(sorted(pod.labels.items()))
        entry = sets.get(key)
        if entry is None:
            entry = sets[key] = (pod.labels, Counter())
        entry[1][row] += 1

    def pod_removed(self, table: NodeTable, pod: Pod, row: int) -> None:
        if pod.terminating:
            return
        sets = self.by_namespace.get(pod.namespace, {})
        key = tuple(sorted(pod.labels.items()))
        entry = sets.get(key)
        if entry is None:
            return
        entry[1][row] -= 1
        if entry[1][row] <= 0:
            del entry[1][row]
            if not entry[1]:
                del sets[key]

    def rows_running(self, namespace: str, selector: LabelSelector) -> set[int]:
        rows: set[int] = set()
        for labels, counts in self.by_namespace.get(namespace, {}).values():
            if selector.matches(labels):
                rows.update(counts)
        return rows


@dataclass(frozen=True)
class _PreScoreState:
    selector_text: str
    #: peer domains, sorted
    peer_domains: tuple[str, ...]
    #: latency in ms per label code of the topology key; the extra last entry (code -1) is NO_LABEL
    by_code: np.ndarray


class NetworkLatency(PluginBase, PreScorePlugin, ScorePlugin, ScoreExplainer):
    name = NAME

    def __init__(self, args: Any, handle: Handle) -> None:
        super().__init__(args, handle)
        # the table is held by a weak reference: its id() could be reused by a later table
        self._index: tuple[weakref.ref[NodeTable], PeerIndex] | None = None
        self._selectors: dict[str, LabelSelector] = {}

    def index(self) -> PeerIndex:
        table = self.handle.snapshot.table
        if self._index is None or self._index[0]() is not table:
            index = PeerIndex(table)
            table.listeners.append(index)
            self._index = (weakref.ref(table), index)
        return self._index[1]

    def selector(self, pod: Pod, text: str) -> LabelSelector:
        sel = self._selectors.get(text)
        if sel is None:
            try:
                sel = self._selectors[text] = parse_selector(text)
            except SelectorSyntaxError as e:
                raise Where(pod.source, "Pod", pod.key).fail(f'metadata.annotations["{ANNOTATION}"]', str(e)) from None
        return sel

    def peer_domains(self, pod: Pod) -> tuple[str, tuple[str, ...]] | None:
        """(selector text, peer domains), or None when the pod names no peers."""
        text = pod.annotations.get(ANNOTATION)
        if text is None:
            return None
        selector = self.selector(pod, text)
        full = self.handle.snapshot.table
        col = full.labels(self.args.topology_key)
        codes = {int(col.codes[r]) for r in self.index().rows_running(pod.namespace, selector)}
        return text, tuple(sorted(col.values[c] for c in codes if c >= 0))

    def prepare(self, pod: Pod, table: NodeTable) -> _PreScoreState | None:
        """The pod's peer domains and every domain's latency to them; None when no peer runs."""
        found = self.peer_domains(pod)
        if found is None or not found[1]:
            return None
        text, peers = found
        col = table.labels(self.args.topology_key)
        latency = self.args.latency
        by_code = np.full(len(col.values) + 1, NO_LABEL, dtype=np.int64)
        for code, domain in enumerate(col.values):
            known = [0 if domain == p else latency.get((domain, p)) for p in peers]
            values = [ms for ms in known if ms is not None]
            by_code[code] = min(values) if values else UNKNOWN
        return _PreScoreState(text, peers, by_code)

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Status:
        s = self.prepare(pod, table)
        if s is None:
            return skip(NAME)
        state.write(_STATE_KEY, s)
        return OK

    def latencies(self, s: _PreScoreState, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        """Milliseconds per row, or UNKNOWN / NO_LABEL."""
        codes = table.labels(self.args.topology_key).codes[rows]
        return np.asarray(s.by_code[codes], dtype=np.int64)  # code -1 picks the NO_LABEL slot

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        # PreScore does not run when the plugin is enabled at the score point only: work it out here
        s: _PreScoreState | None = state.read(_STATE_KEY) or self.prepare(pod, table)
        if s is None:
            return np.zeros(len(rows), dtype=np.int64)
        return latency_scores(self.latencies(s, table, rows))

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]:
        key = self.args.topology_key
        s: _PreScoreState | None = state.read(_STATE_KEY) or self.prepare(pod, table)
        if s is None:
            found = self.peer_domains(pod)
            if found is None:
                why = f"the pod has no {ANNOTATION} annotation"
            else:
                why = f'no pod matching {ANNOTATION} "{found[0]}" runs in namespace {pod.namespace} on a node with {key}'
            return [f"0: {why} (skipped)"] * len(rows)
        lat = self.latencies(s, table, rows)
        scores = latency_scores(lat)
        known = lat[lat >= 0]
        span = f"{int(known.min())}–{int(known.max())} ms over the scored nodes" if len(known) else ""
        peers = ", ".join(s.peer_domains)
        col = table.labels(key)
        out = []
        for row, ms, sc in zip(rows, lat, scores, strict=True):
            code = int(col.codes[row])
            if ms == NO_LABEL:
                out.append(f"0: the node has no {key} label")
            elif ms == UNKNOWN:
                out.append(f"0: {col.values[code]}: no latency known to a peer domain ({peers})")
            else:
                out.append(f"{sc}: {col.values[code]}: {ms} ms to the nearest peer domain ({peers}); {span}")
        return out


def latency_scores(lat: np.ndarray) -> np.ndarray:
    """100 at the lowest known latency, 0 at the highest, rounded down between; 0 where unknown."""
    known = lat >= 0
    out = np.zeros(len(lat), dtype=np.int64)
    if not known.any():
        return out
    lo, hi = int(lat[known].min()), int(lat[known].max())
    if hi == lo:
        out[known] = MAX_NODE_SCORE
    else:
        out[known] = MAX_NODE_SCORE * (hi - lat[known]) // (hi - lo)
    return out

