"""kplan's own opt-in score plugins: none of them exists in kube-scheduler v1.34.1.

They are in kplan's registry, so a KubeSchedulerConfiguration can enable, weight and configure
them like any plugin, but they are not in the default MultiPoint set: a profile that does not
name them schedules exactly as kube-scheduler does. Each has strict args (``<Name>Args``) and an
``explain(state, pod, table, rows)`` method returning one line per node (see
``kplan.framework.interfaces.ScoreExplainer``). Their specs carry ``extra={"upstream": False}``.
"""

from __future__ import annotations

from kplan.framework.registry import PluginSpec
from kplan.plugins.extra import networklatency, podcount, priorityboost, resourcelimits

NOT_UPSTREAM = {"upstream": False}


def extra_plugin_specs() -> list[PluginSpec]:
    return [
        PluginSpec(podcount.NAME, podcount.PodCount, frozenset({"score"}), podcount.ARGS_KIND,
                   podcount.decode_args, podcount.validate_args, extra=NOT_UPSTREAM),
        PluginSpec(resourcelimits.NAME, resourcelimits.ResourceLimits, frozenset({"preScore", "score"}),
                   resourcelimits.ARGS_KIND, resourcelimits.decode_args, resourcelimits.validate_args,
                   extra=NOT_UPSTREAM),
        PluginSpec(networklatency.NAME, networklatency.NetworkLatency, frozenset({"preScore", "score"}),
                   networklatency.ARGS_KIND, networklatency.decode_args, networklatency.validate_args,
                   extra=NOT_UPSTREAM),
        PluginSpec(priorityboost.NAME, priorityboost.PriorityBoost, frozenset({"preScore", "score"}),
                   priorityboost.ARGS_KIND, priorityboost.decode_args, priorityboost.validate_args,
                   extra=NOT_UPSTREAM),
    ]
