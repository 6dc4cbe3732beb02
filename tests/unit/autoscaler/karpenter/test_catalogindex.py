"""The catalog in columns gives the readable per-type answers (catalogindex.py against
instancetypes.py / nodeclaim.py), on the built-in AWS catalog and a range of requirements."""

from __future__ import annotations

import numpy as np
import pytest

from kplan.autoscaler.karpenter.catalogindex import catalog_index
from kplan.autoscaler.karpenter.instancetypes import (
    cheapest_launch_price,
    has_compatible_offering,
    instance_type_requirements,
)
from kplan.autoscaler.karpenter.nodeclaim import it_fits
from kplan.autoscaler.karpenter.requirements import Requirements, new_requirement
from kplan.io.catalog import read_catalog

R = new_requirement
CASES = [
    pytest.param([], id="no requirements allow every type"),
    pytest.param([R("kubernetes.io/arch", "In", ["arm64"])], id="an architecture"),
    pytest.param([R("karpenter.sh/capacity-type", "In", ["spot"]), R("topology.kubernetes.io/zone", "In",
                                                                      ["us-west-2a"])], id="spot in one zone"),
    pytest.param([R("topology.kubernetes.io/zone", "NotIn", ["us-west-2a", "us-west-2b", "us-west-2c",
                                                             "us-west-2d"])], id="no zone left"),
    pytest.param([R("karpenter.kwok.sh/instance-cpu", "Gt", ["8"])], id="more than 8 cpus as a bound"),
    pytest.param([R("karpenter.kwok.sh/instance-family", "NotIn", ["m5", "c5"]),
                  R("node.kubernetes.io/instance-type", "Exists")], id="families excluded"),
    pytest.param([R("example.com/team", "In", ["a"])], id="a key no type defines"),
    pytest.param([R("kubernetes.io/os", "DoesNotExist")], id="an operating system that must be absent"),
]


@pytest.mark.parametrize("reqs", CASES)
def test_the_columns_agree_with_the_readable_functions(reqs: list) -> None:  # type: ignore[type-arg]
    cat = read_catalog("aws")
    index = catalog_index(cat)
    assert index is not None
    r = Requirements(reqs)
    wk = cat.well_known_labels
    compat = index.compatible(r)
    offer = index.has_offering(r)
    prices = index.cheapest_launch_prices(r)
    need = {"cpu": 3500, "memory": 7 * 2**30, "pods": 3}
    fits = index.fits(need)
    for i, it in enumerate(cat.instance_types):
        assert compat[i] == (instance_type_requirements(it).intersects(r) is None), it.name
        assert offer[i] == has_compatible_offering(it, r, wk), it.name
        assert prices[i] == cheapest_launch_price(it, r, wk), it.name
        assert (fits[i] & offer[i]) == it_fits(it, need, r, wk)[0], it.name
    assert np.any(compat) or reqs
