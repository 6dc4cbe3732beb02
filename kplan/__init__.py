"""kplan: an offline capacity planner for Kubernetes that replays kube-scheduler v1.34."""

__version__ = "0.1.0"
#: The kube-scheduler release whose behaviour kplan reproduces.
SCHEDULER_VERSION = "v1.34.1"
