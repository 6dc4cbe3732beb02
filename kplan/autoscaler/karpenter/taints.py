"""Taints as Karpenter's scheduler checks them: sigs.k8s.io/karpenter v1.15.0
pkg/scheduling/taints.go (Taints.ToleratesPod: every taint, PreferNoSchedule included, must be
tolerated; KnownEphemeralTaints, which an uninitialized node is expected to lose).
"""

from __future__ import annotations

from collections.abc import Sequence

from kplan.model.objects import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration

#: KnownEphemeralTaints (and the readiness.k8s.io/ prefix): taints a node sheds as it comes up
EPHEMERAL_TAINTS = (
    Taint("node.kubernetes.io/not-ready", "", NO_SCHEDULE),
    Taint("node.kubernetes.io/not-ready", "", NO_EXECUTE),
    Taint("node.kubernetes.io/unreachable", "", NO_SCHEDULE),
    Taint("node.cloudprovider.kubernetes.io/uninitialized", "true", NO_SCHEDULE),
    Taint("karpenter.sh/unregistered", "", NO_EXECUTE),
)
EPHEMERAL_TAINT_PREFIXES = ("readiness.k8s.io/",)


def is_known_ephemeral_taint(t: Taint) -> bool:
    """IsKnownEphemeralTaint: MatchTaint compares key and effect only."""
    if any(t.key == e.key and t.effect == e.effect for e in EPHEMERAL_TAINTS):
        return True
    return t.key.startswith(EPHEMERAL_TAINT_PREFIXES)


def pretty_taint(t: Taint) -> str:
    """pretty.Taint: ``key=value:Effect`` (``key:Effect`` without a value)."""
    return f"{t.key}:{t.effect}" if not t.value else f"{t.key}={t.value}:{t.effect}"


def tolerates_pod(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> str | None:
    """Taints.Tolerates: None when every taint is tolerated, else one error per taint that is not,
    joined as multierr joins them."""
    errors = [f"did not tolerate taint (taint={pretty_taint(t)})" for t in taints
              if not any(tol.tolerates(t) for tol in tolerations)]
    return "; ".join(errors) if errors else None
