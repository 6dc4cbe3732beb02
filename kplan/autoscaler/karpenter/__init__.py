"""Karpenter's provisioning as kplan models it (sigs.k8s.io/karpenter v1.15.0).

The engine API: ``launch`` turns a NodeClaim Karpenter would create into the node that registers;
``KarpenterCluster`` and ``ProvisioningResult`` are what ``solve`` (scheduler.py) reads and returns.
"""

from kplan.autoscaler.karpenter.launch import LaunchedNode, LaunchOption, launch
from kplan.autoscaler.karpenter.results import (
           ExistingNodePods,
           KarpenterCluster,
           NewNodeClaim,
           ProvisioningResult,
)

__all__ = ["ExistingNodePods", "KarpenterCluster", "LaunchOption", "LaunchedNode", "NewNodeClaim",
           "ProvisioningResult", "launch"]
