"""Karpenter's disruption (sigs.k8s.io/karpenter v1.15.0 pkg/controllers/disruption) as kplan
models it: which nodes Karpenter deletes or replaces, and why it keeps the others.
``controller.disrupt`` runs the methods in upstream's order until none acts."""
