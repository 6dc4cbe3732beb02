"""Autoscalers as kplan models them: what they would add to (or take from) a cluster, given the
pods kube-scheduler left pending. Pure engine code: no I/O, clock or environment."""
