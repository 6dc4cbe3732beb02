"""A node name that is not in the cluster (like=, --drain, --remove-node, --cordon, --until-fit,
--shrink-candidates): the error says which names were probably meant, on a cluster of any size."""

from __future__ import annotations

import pytest

from kplan.whatif.changes import unknown_node

EKS = ["ip-10-0-10-170.ec2.internal", "ip-10-0-20-143.ec2.internal", "ip-10-0-30-25.ec2.internal"]
BIG = [f"ip-10-{i // 250}-{i % 250}-{(i * 7) % 250}.ec2.internal" for i in range(1000)]

ROWS = {
    "a name cut short (without its domain) is matched by its beginning":
        ("--drain", "ip-10-0-10-170", EKS, "--drain: no node named 'ip-10-0-10-170' in the cluster; did you mean "
                                           "ip-10-0-10-170.ec2.internal?"),
    "like= echoes the name it was given, not an empty one":
        ("--add-node like=", "ip-10-0-10-170", EKS, "--add-node like=ip-10-0-10-170: no node named 'ip-10-0-10-170' "
                                                    "in the cluster; did you mean ip-10-0-10-170.ec2.internal?"),
    "a typo on a 1,000-node cluster names the close ones, not the first ten":
        ("--remove-node", "ip-10-0-12-84.ec2.internl", BIG,
         "--remove-node: no node named 'ip-10-0-12-84.ec2.internl' in the cluster; did you mean "
         "ip-10-0-12-84.ec2.internal or ip-10-3-12-84.ec2.internal or ip-10-2-12-84.ec2.internal?"),
    "nothing close on a small cluster lists its nodes":
        ("--cordon", "zzz", EKS, "--cordon: no node named 'zzz' in the cluster (nodes: " + ", ".join(EKS) + ")"),
    "nothing close on a large cluster says so":
        ("--cordon", "zzz", BIG, "--cordon: no node named 'zzz' in the cluster (none of its 1,000 nodes has a "
                                 "similar name)"),
}


@pytest.mark.parametrize(("option", "name", "names", "message"), ROWS.values(), ids=ROWS.keys())
def test_an_unknown_node_names_what_was_meant(option: str, name: str, names: list[str], message: str) -> None:
    assert str(unknown_node(option, name, names)) == message
