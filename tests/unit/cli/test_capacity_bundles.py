"""kplan capacity on real bundles: the object to count chosen from multi-document manifests, and
an answer that puts the declared replicas first."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.cli.render.capacity import capacity_table, ordinal
from kplan.errors import InputError
from kplan.io.replicas import choose_target
from kplan.model.raw import RawObject
from kplan.report.capacity import CapacityDocument, Declared, PodRef


def obj(kind: str, name: str, namespace: str | None = None) -> RawObject:
    md: dict[str, Any] = {"name": name}
    if namespace:
        md["namespace"] = namespace
    return RawObject({"kind": kind, "metadata": md}, f"bundle.yaml: {kind} {name}")


BUNDLE = [obj("Service", "web"), obj("Deployment", "web", "shop"), obj("StatefulSet", "db", "shop"),
          obj("CronJob", "nightly", "batch"), obj("DaemonSet", "exporter")]

CHOICES = [
    ("the only workload beside a Service", [obj("Service", "web"), obj("Deployment", "web")], None, "Deployment"),
    ("KIND/NAME", BUNDLE, "Deployment/web", "Deployment"),
    ("KIND/NS/NAME, kind in any case", BUNDLE, "statefulset/shop/db", "StatefulSet"),
    ("a CronJob", BUNDLE, "CronJob/nightly", "CronJob"),
]


@pytest.mark.parametrize(("objects", "wanted", "kind"), [c[1:] for c in CHOICES], ids=[c[0] for c in CHOICES])
def test_the_object_to_count(objects: list[RawObject], wanted: str | None, kind: str) -> None:
    assert choose_target(objects, wanted).doc["kind"] == kind


MISTAKES = [
    ("several workloads and no --workload", BUNDLE, None, "choose one with --workload"),
    ("nothing to count", [obj("Service", "web")], None, "no Pod or workload"),
    ("a DaemonSet is not counted", BUNDLE, "DaemonSet/exporter", "no such Pod or workload"),
    ("a malformed --workload", BUNDLE, "web", "give KIND/NAME"),
    ("the wrong namespace", BUNDLE, "Deployment/other/web", "no such Pod or workload"),
]


@pytest.mark.parametrize(("objects", "wanted", "says"), [c[1:] for c in MISTAKES], ids=[c[0] for c in MISTAKES])
def test_choosing_mistakes_name_the_way_out(objects: list[RawObject], wanted: str | None, says: str) -> None:
    with pytest.raises(InputError, match=says):
        choose_target(objects, wanted)


def doc(declared: int, fit: int, more: int, limit_reached: bool = False, workload: str = "Deployment shop/web",
        more_counted: bool = True) -> CapacityDocument:
    return CapacityDocument(workload=workload, pod=PodRef(namespace="shop", name="web", priority=0),
                            declared=Declared(replicas=declared, fit=fit), more_counted=more_counted, replicas=more,
                            placements={}, message="0/3 nodes are available.", limit_reached=limit_reached, limit=100,
                            evictions=(), nodes=())


HEADLINES = [
    ("declared first, then more", doc(3, 3, 8),
     "The 3 declared replicas of Deployment shop/web (priority 0) fit; 8 more would fit, 11 in all; "
     "the 12th fails: 0/3 nodes are available."),
    ("a declared replica does not fit", doc(3, 2, 0),
     "2 of the 3 declared replicas of Deployment shop/web (priority 0) fit; no more would fit: 0/3 nodes are available."),
    ("a Pod", doc(1, 1, 4, workload="Pod default/w"),
     "Pod default/w (priority 0) fits; 4 more would fit, 5 in all; the 6th fails: 0/3 nodes are available."),
    ("the limit", doc(2, 2, 100, limit_reached=True),
     "The 2 declared replicas of Deployment shop/web (priority 0) fit; 100+ more would fit, 102+ in all "
     "(the --limit stopped the count)."),
]


@pytest.mark.parametrize(("d", "want"), [c[1:] for c in HEADLINES], ids=[c[0] for c in HEADLINES])
def test_the_answer_puts_the_declared_replicas_first(d: CapacityDocument, want: str) -> None:
    assert capacity_table(d).splitlines()[0] == want


@pytest.mark.parametrize(("n", "want"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                         (13, "13th"), (21, "21st"), (112, "112th")])
def test_ordinals(n: int, want: str) -> None:
    assert ordinal(n) == want
