"""A scenario folder as the conformance suite has them, and the comparison of two results.

A folder holds ``cluster.yaml`` (everything that exists before the run: nodes, running pods,
classes, budgets, owners, DRA and storage objects), ``pods.yaml`` (the pending pods in creation
order) and ``scheduler-config.yaml``; each file is JSON documents separated by ``---`` lines,
which both kplan and the oracle read as YAML. Results have expected.json's shape:
``{"pods": [{"namespace", "name", "status", "node", "message"}], "preempted": [...]}``.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Doc = dict[str, Any]
FILES = ("cluster.yaml", "pods.yaml", "scheduler-config.yaml")


@dataclass
class Scenario:
    """The three files' documents; ``name`` names the folder it is written to."""

    name: str
    cluster: list[Doc]
    pods: list[Doc]
    config: Doc
    notes: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> Scenario:
        return Scenario(self.name, copy.deepcopy(self.cluster), copy.deepcopy(self.pods),
                        copy.deepcopy(self.config), dict(self.notes))

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cluster.yaml").write_text(dump_docs(self.cluster))
        (folder / "pods.yaml").write_text(dump_docs(self.pods))
        (folder / "scheduler-config.yaml").write_text(dump_docs([self.config]))
        return folder

    @staticmethod
    def read(folder: Path) -> Scenario:
        config = load_docs((folder / "scheduler-config.yaml").read_text())
        return Scenario(folder.name, load_docs((folder / "cluster.yaml").read_text()),
                        load_docs((folder / "pods.yaml").read_text()), config[0] if config else {})

    def size(self) -> int:
        """What the shrinker makes smaller: documents and the JSON text of them."""
        return len(self.cluster) + len(self.pods) + len(json.dumps([self.cluster, self.pods, self.config])) // 1000


def dump_docs(docs: list[Doc]) -> str:
    return "".join(f"---\n{json.dumps(d)}\n" for d in docs)


def load_docs(text: str) -> list[Doc]:
    """The documents of a file this module wrote (JSON between ``---`` lines); YAML otherwise."""
    out: list[Doc] = []
    try:
        for part in text.split("\n---"):
            part = part.strip().removeprefix("---").strip()
            if part:
                out.append(json.loads(part))
        return out
    except json.JSONDecodeError:
        from ruamel.yaml import YAML
        return [d for d in YAML(typ="safe").load_all(text) if d]


def key(p: Doc) -> str:
    return f"{p.get('namespace') or 'default'}/{p['name']}"


def victims(doc: Doc) -> list[str]:
    return sorted(v if isinstance(v, str) else key(v) for v in doc.get("preempted") or [])


def compare(expected: Doc, got: Doc) -> list[str]:
    """The differences of ``got`` from ``expected``, judged as the conformance checker judges them:
    status, node and message of every pending pod, and the sorted victims. A pending pod that was
    bound and later preempted is Scheduled with its node in one and may be Preempted in the other."""
    diffs = []
    want = {key(p): p for p in expected["pods"]}
    have = {key(p): p for p in got.get("pods", [])}
    for k in sorted(set(want) - set(have)):
        diffs.append(f"{k}: missing")
    for k in sorted(set(have) - set(want)):
        diffs.append(f"{k}: not a pending pod of this scenario")
    evicted = set(victims(expected)) | set(victims(got))
    for k in sorted(set(want) & set(have)):
        a, b = want[k], have[k]
        if k in evicted and {a.get("status"), b.get("status")} <= {"Scheduled", "Preempted"}:
            if a.get("node") != b.get("node"):
                diffs.append(f"{k}: node: want {a.get('node')!r}, got {b.get('node')!r}")
            continue
        for f in ("status", "node", "message"):
            if (a.get(f) or None) != (b.get(f) or None):
                diffs.append(f"{k}: {f}: want {a.get(f)!r}, got {b.get(f)!r}")
    if victims(got) != victims(expected):
        diffs.append(f"preempted: want {victims(expected)}, got {victims(got)}")
    return diffs


_TAINT = re.compile(r"node\(s\) had untolerated taint \{[^}]*\}")
_AVAILABLE = re.compile(r"(\d+/\d+ nodes are available: )(.*?)\.(?= |$)")


def without_taint_names(result: Doc) -> Doc:
    """The result with 1.34.1's ``node(s) had untolerated taint {key: value}`` reasons written as
    later patch releases write them (``node(s) had untolerated taint(s)``, #134740: one reason,
    counts summed, reasons re-sorted as FitError sorts them), for comparing kplan (1.34.1's text)
    with an oracle built on v1.34.2 or later."""
    out = dict(result)
    out["pods"] = [{**p, "message": _merge_taints(p["message"])} if p.get("message") else p
                   for p in result.get("pods", [])]
    return out


def _merge_taints(message: str) -> str:
    def one(m: re.Match[str]) -> str:
        counts: dict[str, int] = {}
        for part in m.group(2).split(", "):
            n, _, reason = part.partition(" ")
            if not n.isdigit():
                return m.group(0)
            counts[reason] = counts.get(reason, 0) + int(n)
        return m.group(1) + ", ".join(sorted(f"{n} {r}" for r, n in counts.items())) + "."
    return _AVAILABLE.sub(one, _TAINT.sub("node(s) had untolerated taint(s)", message))
