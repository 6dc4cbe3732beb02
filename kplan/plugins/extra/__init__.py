"""kplan's own opt-in score plugins: none of them exists in kube-scheduler v1.34.1.

They are in kplan's registry, so a KubeSchedulerConfiguration can enable, weight and configure
them like any plugin, but they are not in the default MultiPoint set: a profile that does not
name them schedules exactly as kube-scheduler does. Each has strict args (``<Name>Args``) and an
``explain(state, pod, table, rows)`` method returning one line per node (see
``kplan.framework.interfaces.ScoreExplainer``). Their entries say ``upstream=False``.
"""

from __future__ import annotations

from kplan.framework.registry import ArgsKind, PluginSpec
from kplan.plugins.extra import networklatency, podcount, priorityboost, resourcelimits


def extra_plugin_specs() -> list[PluginSpec]:
    return [
        PluginSpec(podcount.NAME, podcount.PodCount,
                   ArgsKind(podcount.ARGS_KIND, podcount.decode_args, podcount.validate_args), upstream=False),
        PluginSpec(resourcelimits.NAME, resourcelimits.ResourceLimits,
                   ArgsKind(resourcelimits.ARGS_KIND, resourcelimits.decode_args, resourcelimits.validate_args),
                   upstream=False),
        PluginSpec(networklatency.NAME, networklatency.NetworkLatency,
                   ArgsKind(networklatency.ARGS_KIND, networklatency.decode_args, networklatency.validate_args),
                   upstream=False),
        PluginSpec(priorityboost.NAME, priorityboost.PriorityBoost,
                   ArgsKind(priorityboost.ARGS_KIND, priorityboost.decode_args, priorityboost.validate_args),
                   upstream=False),
    ]
