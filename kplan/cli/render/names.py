"""``-o name``: one ``kind/name`` line per Kubernetes object of the result, as ``kubectl get -o
name`` prints them (the resource in lower case, the object's name without its namespace; -o
jsonpath gives namespaces too).

Which objects a command's result is about:

- simulate: every pending pod of the run (the rows of the table), ``pod/NAME``;
- whatif: every pod the change affects (the document's ``changes``), ``pod/NAME``;
- explain pod: the pod explained, ``pod/NAME``;
- capacity: the nodes the counted replicas go to, ``node/NAME``.

A sweep's result is a grid of changes, not objects: it has no ``-o name``.
"""

from __future__ import annotations

from collections.abc import Iterable

from kplan.cli.render import RenderOptions
from kplan.report.capacity import CapacityDocument
from kplan.report.document import SimulationDocument
from kplan.report.explain import ExplanationDocument
from kplan.report.whatif import WhatIfDocument


def _lines(resource: str, names: Iterable[str]) -> str:
    return "".join(f"{resource}/{n}\n" for n in names)


def simulation_names(doc: SimulationDocument, opts: RenderOptions) -> str:
    return _lines("pod", (p.name for p in doc.pods))


def whatif_names(doc: WhatIfDocument, opts: RenderOptions) -> str:
    return _lines("pod", (c.name for c in doc.changes))


def explanation_names(doc: ExplanationDocument, opts: RenderOptions) -> str:
    return _lines("pod", [doc.pod.name])


def capacity_names(doc: CapacityDocument, opts: RenderOptions) -> str:
    return _lines("node", (node for node, count in doc.placements.items() if count > 0))
