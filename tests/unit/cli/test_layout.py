"""Fitting output to a terminal: word-boundary wrapping, tables within the width, human units."""

from __future__ import annotations

import pytest

from kplan.cli.render.layout import table, visible_len, wrap
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
    assert len(lazy) == 18  # explain -o html is the eighteenth
    for renderer in lazy:
        assert callable(renderer.resolve()), renderer
