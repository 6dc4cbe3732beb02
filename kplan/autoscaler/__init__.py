"""Autoscalers as kplan models them: what they would add to (or take from) a cluster, given the
pods kube-scheduler left pending. The role every node autoscaler plays for the planner is
kplan.autoscaler.provisioning; each autoscaler's own rules live in a sub-package (karpenter/).
Pure engine code: no I/O, clock or environment."""
