"""Fitting output to a terminal: word-boundary wrapping, tables within the width, human units."""

from __future__ import annotations

import pytest

from kplan.cli.render.layout import (
    ELLIPSIS,
    SQUEEZED,
    Names,
    plain,
    shared_run,
    squeeze,
    table,
    visible_len,
    wrap,
)
from kplan.cli.render.units import human_bytes, human_cpu, usage
from kplan.model.quantity import resource_value

MESSAGE = ("0/12 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
           "1 node(s) were unschedulable, 8 Insufficient cpu, 8 Insufficient memory.")


def words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("width", [40, 80, 120])
def test_wrapping_keeps_every_word_whole_and_within_the_width(width: int) -> None:
    out = wrap(MESSAGE, width, "  ", hanging="    ")
    assert words(out) == words(MESSAGE)
    assert all(len(line) <= width for line in out.splitlines() if " " in line.strip())


def test_no_width_means_no_wrapping() -> None:
    assert wrap(MESSAGE, None) == MESSAGE
    rows = [["pod-a", "Unschedulable", MESSAGE]]
    assert "\n" not in table(rows, ["POD", "STATUS", "REASON"], None, wrap_columns=[2]).split("\n", 1)[1]


TABLES = [
    ("one wrapped column", [2], False),
    ("two wrapped columns", [1, 2], False),
    ("the last column under its row", [2], True),
]


@pytest.mark.parametrize(("wrap_columns", "spill"), [c[1:] for c in TABLES], ids=[c[0] for c in TABLES])
@pytest.mark.parametrize("width", [80, 120])
def test_a_table_fits_the_width_without_losing_a_word(wrap_columns: list[int], spill: bool, width: int) -> None:
    rows = [[f"ns/pod-{i}", f"Unschedulable since attempt {i}", MESSAGE] for i in range(3)]
    out = table(rows, ["POD", "STATUS", "REASON"], width, wrap_columns=wrap_columns, spill=spill)
    assert max(visible_len(line) for line in out.splitlines()) <= width
    want = words(table(rows, ["POD", "STATUS", "REASON"]))
    if spill and "REASON" not in out:  # the message went under its row, without its header
        want.remove("REASON")
    assert sorted(words(out)) == sorted(want)


def test_a_table_that_fits_is_left_as_it_is() -> None:
    rows = [["a", "b", "short"]]
    assert table(rows, ["X", "Y", "Z"], 80, wrap_columns=[2]) == table(rows, ["X", "Y", "Z"])


UNITS = [
    ("memory in mixed units reads in one notation", "memory", "140Mi", "1471840Ki", "140Mi/1.4Gi"),
    ("whole gibibytes", "memory", "3Gi", "30Gi", "3Gi/30Gi"),
    ("three significant digits", "memory", "3392Mi", "30Gi", "3.31Gi/30Gi"),
    ("nothing requested", "memory", "0", "16Gi", "0/16Gi"),
    ("cpu in cores when a node has a core or more", "cpu", "150m", "3920m", "0.15/3.92"),
    ("a millicore stays visible", "cpu", "1m", "4", "0.001/4"),
    ("cpu in millicores on a node below one core", "cpu", "100m", "500m", "100m/500m"),
    ("other resources as written", "nvidia.com/gpu", "1", "2", "1/2"),
]


@pytest.mark.parametrize(("resource", "requested", "allocatable", "want"), [c[1:] for c in UNITS],
                         ids=[c[0] for c in UNITS])
def test_human_units_within_a_cell(resource: str, requested: str, allocatable: str, want: str) -> None:
    assert usage(resource, resource_value(resource, requested), resource_value(resource, allocatable)) == want


def test_human_quantities() -> None:
    assert (human_bytes(512), human_bytes(2 ** 40 * 3 // 2), human_cpu(15890), human_cpu(999)) == \
        ("512", "1.5Ti", "15.9", "999m")


def test_every_registered_renderer_resolves_to_a_function_of_its_module() -> None:
    # renderers are imported on first use, so a misspelt name would otherwise fail only when
    # that format is first asked for
    from kplan.cli.render import _Lazy, registry

    lazy = [r for r in registry().values() if isinstance(r, _Lazy)]
    assert len(lazy) == 22  # the four -o name renderers follow explain -o html, the eighteenth
    for renderer in lazy:
        assert callable(renderer.resolve()), renderer


EKS = ["ip-10-0-10-170.ec2.internal", "ip-10-0-20-143.ec2.internal", "ip-10-0-10-170.ec2.internal-whatif-1"]
RUNS = [
    ("EC2's private DNS names share their domain", EKS[:2], ".ec2.internal"),
    ("clones of a node keep their own tail", EKS, ".ec2.internal"),
    ("GKE names share their cluster prefix", ["gke-prod-default-pool-8f3a9c1e-x7k2", "gke-prod-gpu-pool-1b2c3d4e-ab12"],
     "gke-prod-"),
    ("pods of one namespace share it", ["payments-processing/api-6d5d9bbfc-mthsz",
                                        "payments-processing/ledger-reconciliation-68cfc9746c-vd5vx"],
     "payments-processing/"),
    ("one name shares nothing", EKS[:1], ""),
    ("short names are never shortened", ["gen-a-1.x.internal", "gen-b-2"], ""),
    ("nothing shared", ["ip-10-0-10-170.ec2.internal", "worker-17.dc1.example.com"], ""),
]


@pytest.mark.parametrize(("names", "want"), [c[1:] for c in RUNS], ids=[c[0] for c in RUNS])
def test_the_run_long_names_share(names: list[str], want: str) -> None:
    assert shared_run(names) == want


SQUEEZES = [
    ("a name that fits stays whole", "ip-10-0-10-170.ec2.internal", 30, "ip-10-0-10-170.ec2.internal"),
    ("a pod keeps its namespace and its hash", "argocd/argocd-applicationset-controller-7cdf9bb95-td9fn", 48,
     "argocd/argocd-applicationset-co…-7cdf9bb95-td9fn"),
    ("a clone keeps its number", "ip-10-0-10-170.ec2.internal-whatif-12", 24, "ip-10-0-10-17…-whatif-12"),
    ("no tail short enough: the head alone", "recommendationservice", 12, "recommendat…"),
]


@pytest.mark.parametrize(("name", "budget", "want"), [c[1:] for c in SQUEEZES], ids=[c[0] for c in SQUEEZES])
def test_squeezing_a_name(name: str, budget: int, want: str) -> None:
    got = squeeze(name, budget)
    assert got == want and len(got) <= budget


def long_table(n: int = 6) -> tuple[list[list[str]], list[str], list[Names]]:
    nodes = [f"ip-10-0-{10 * (i % 3 + 1)}-{100 + i}.ec2.internal" for i in range(n)]
    apps = ["ledger-reconciliation-worker-68cfc9746c", "recommendationservice-7594db5666", "checkout-77987988cc"]
    pods = [f"payments-processing/{apps[i % 3]}-{i:05d}" for i in range(n)]
    rows = [[p, nd, "Unschedulable" if i % 2 else "Scheduled", MESSAGE if i % 2 else ""]
            for i, (p, nd) in enumerate(zip(pods, nodes, strict=True))]
    return rows, ["POD", "NODE", "STATUS", "REASON"], [Names("a node name", (1,), nodes), Names("a pod name", (0,), pods)]


@pytest.mark.parametrize("width", [60, 80, 100])
def test_long_names_are_shortened_to_fit_and_stay_distinct(width: int) -> None:
    rows, headers, names = long_table()
    notes: list[str] = []
    out = table(rows, headers, width, wrap_columns=[3], spill=True, names=names, notes=notes)
    lines = out.splitlines()
    assert max(visible_len(line) for line in lines) <= width
    shown = [line.split()[:2] for line in lines[1:] if not line.startswith("    ")]
    assert len({pod for pod, _ in shown}) == len(rows) and len({node for _, node in shown}) == len(rows)
    assert all(ELLIPSIS in node for _, node in shown)
    assert f"{ELLIPSIS} in a node name stands for .ec2.internal" in notes


def test_names_are_shortened_only_as_much_as_needed() -> None:
    rows, headers, names = long_table()
    # wide enough once the nodes lose their shared domain: the pods stay whole, nothing is squeezed
    notes: list[str] = []
    out = table(rows, headers, 101, wrap_columns=[3], spill=True, names=names, notes=notes)
    assert rows[0][0] in out and "ip-10-0-10-100…" in out and rows[0][1] not in out
    assert notes == [f"{ELLIPSIS} in a node name stands for .ec2.internal"]
    # a terminal as wide as the table: nothing shortened, nothing said
    notes = []
    assert table(rows, headers, 400, wrap_columns=[3], names=names, notes=notes) == \
        table(rows, headers, None, wrap_columns=[3], names=names)
    assert notes == []


def test_squeezed_names_are_said_to_be_whole_in_piped_output() -> None:
    rows, headers, names = long_table()
    notes: list[str] = []
    table(rows, headers, 60, wrap_columns=[3], spill=True, names=names, notes=notes)
    assert SQUEEZED in notes


def test_a_tight_layout_keeps_numbers_right_aligned_and_drops_trailing_blanks() -> None:
    assert plain([["a", 5], ["bb", 100]], ["NAME", "N"]).splitlines() == ["NAME    N", "a       5", "bb    100"]
