"""kplan: an offline capacity planner for Kubernetes that replays kube-scheduler 1.34 to 1.38
(kplan.framework.release_tables lists the releases modelled)."""

__version__ = "0.1.0"
