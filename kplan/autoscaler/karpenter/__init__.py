"""Karpenter's provisioning as kplan models it (sigs.k8s.io/karpenter v1.15.0).

The engine API: ``solve`` (scheduler.py) runs one provisioning round on a ``KarpenterCluster`` and
returns a ``ProvisioningResult``; ``launch`` turns each new NodeClaim into the node that registers.
"""

from kplan.autoscaler.karpenter.launch import LaunchedNode, LaunchOption, launch
from kplan.autoscaler.karpenter.results import (
           ExistingNodePods,
           KarpenterCluster,
           NewNodeClaim,
           ProvisioningResult,
)
from kplan.autoscaler.karpenter.scheduler import solve

__all__ = ["ExistingNodePods", "KarpenterCluster", "LaunchOption", "LaunchedNode", "NewNodeClaim",
           "ProvisioningResult", "launch", "solve"]
