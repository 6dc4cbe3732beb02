"""The most-pods expander (cluster-autoscaler expander/mostpods/mostpods.go): the options that help
the most pods; ties all kept."""

from __future__ import annotations

from collections.abc import Sequence

from kplan.autoscaler.clusterautoscaler.expander import Option


def most_pods(options: Sequence[Option]) -> list[Option]:
    most = max((len(o.pods) for o in options), default=0)
    return [o for o in options if len(o.pods) == most]
