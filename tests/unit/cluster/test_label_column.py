"""LabelColumn's per-row views that PodTopologySpread reads each cycle: computed once, read-only."""

from __future__ import annotations

import numpy as np
import pytest

from kplan.cluster.node_table import LabelColumn
from tests.builders import make_node

ZONE = "topology.kubernetes.io/zone"


def column(*zones: str | None) -> LabelColumn:
    nodes = [make_node(f"n{i}").labels(**({"zone": z} if z is not None else {})).build() for i, z in enumerate(zones)]
    return LabelColumn.build("zone", nodes)


@pytest.mark.parametrize("zones, present, domains", [
    pytest.param(("a", "b", "a"), [True, True, True], [0, 1, 0], id="every node labelled"),
    # rows without the label form one more domain after the values
    pytest.param(("a", None, "b", None), [True, False, True, False], [0, 2, 1, 2], id="some unlabelled"),
    # ... unless some node has the label empty: the missing label is the value ""
    pytest.param(("a", "", None), [True, True, False], [0, 1, 1], id="an empty value among them"),
    pytest.param((None, None), [False, False], [0, 0], id="no node labelled"),
])
def test_present_and_domains(zones, present, domains) -> None:
    col = column(*zones)
    assert col.present.tolist() == present
    assert col.domains.tolist() == domains
    assert col.domains.dtype == np.int64


def test_the_views_are_computed_once_and_cannot_be_written() -> None:
    col = column("a", None)
    assert col.present is col.present and col.domains is col.domains
    with pytest.raises(ValueError):
        col.present[0] = False
    with pytest.raises(ValueError):
        col.domains[0] = 3
