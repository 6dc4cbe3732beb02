"""Cluster state: nodes in numpy columns, the pods on them, and the objects plugins read."""
