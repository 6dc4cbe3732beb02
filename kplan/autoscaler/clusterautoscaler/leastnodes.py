"""The least-nodes expander (cluster-autoscaler expander/leastnodes/leastnodes.go): the options that
add the fewest nodes; an option of no node is not valid; ties all kept."""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.clusterautoscaler.expander import Option


def least_nodes(options: Sequence[Option]) -> list[Option]:
    valid = [o for o in options if o.node_count > 0]
    least = min((o.node_count for o in valid), default=0)
    return [o for o in valid if o.node_count == least]
