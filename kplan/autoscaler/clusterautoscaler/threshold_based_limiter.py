"""The estimator's limiter (cluster-autoscaler estimator/threshold_based_limiter.go): an
estimation may add at most ``max_nodes`` nodes; 0 means no limit (the flag
``--max-nodes-per-scaleup``, 1000 by default; the time threshold
``--max-nodegroup-binpacking-duration`` is not modelled: kplan's estimation is not timed)."""

from __future__ import annotations

from dataclasses import dataclass

#: --max-nodes-per-scaleup's default (config/flags/flags.go)
MAX_NODES_PER_SCALEUP = 1000


@dataclass
class ThresholdBasedLimiter:
    max_nodes: int = MAX_NODES_PER_SCALEUP
    nodes: int = 0

    def start_estimation(self) -> None:
        self.nodes = 0

    def permission_to_add_node(self) -> bool:
        """True, counting one more node, while the threshold is not reached."""
        if self.max_nodes > 0 and self.nodes >= self.max_nodes:
            return False
        self.nodes += 1
        return True
