"""The in-tree plugin registry (pkg/scheduler/framework/plugins/registry.go), written out by hand.

Each entry names the plugin's class and its args kind when it has one; the extension points
it implements are those of its class (``kplan.framework.registry.points_of``).
"""

from __future__ import annotations

from kplan.framework.registry import ArgsKind, PluginSpec, Registry
from kplan.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from kplan.plugins.extra import extra_plugin_specs
from kplan.plugins.noderesources import balanced_allocation, fit


def in_tree_registry() -> Registry:
    """Every plugin kplan ships, by name; each one's extension points come from its class."""
    return Registry([
        PluginSpec("SchedulingGates", schedulinggates.SchedulingGates),
        PluginSpec("PrioritySort", queuesort.PrioritySort),
        PluginSpec("NodeUnschedulable", nodeunschedulable.NodeUnschedulable),
        PluginSpec("NodeName", nodename.NodeName),
        PluginSpec("TaintToleration", tainttoleration.TaintToleration),
        PluginSpec("NodeAffinity", nodeaffinity.NodeAffinity,
                   ArgsKind("NodeAffinityArgs", nodeaffinity.decode_args, nodeaffinity.validate_args)),
        PluginSpec("NodePorts", nodeports.NodePorts),
        PluginSpec("NodeResourcesFit", fit.NodeResourcesFit,
                   ArgsKind("NodeResourcesFitArgs", fit.decode_args, fit.validate_args, validate_on_build=True)),
        PluginSpec("VolumeRestrictions", volumerestrictions.VolumeRestrictions),
        PluginSpec("NodeVolumeLimits", nodevolumelimits.NodeVolumeLimits),
        PluginSpec("VolumeBinding", volumebinding.VolumeBinding,
                   ArgsKind("VolumeBindingArgs", volumebinding.decode_args, volumebinding.validate_args)),
        PluginSpec("VolumeZone", volumezone.VolumeZone),
        PluginSpec("PodTopologySpread", podtopologyspread.PodTopologySpread,
                   ArgsKind("PodTopologySpreadArgs", podtopologyspread.decode_args, podtopologyspread.validate_args)),
        PluginSpec("InterPodAffinity", interpodaffinity.InterPodAffinity,
                   ArgsKind("InterPodAffinityArgs", interpodaffinity.decode_args, interpodaffinity.validate_args)),
        PluginSpec("DynamicResources", dynamicresources.DynamicResources,
                   ArgsKind("DynamicResourcesArgs", _dra_args, _dra_validate)),
        PluginSpec("DefaultPreemption", defaultpreemption.DefaultPreemption,
                   ArgsKind("DefaultPreemptionArgs", defaultpreemption.decode_args, defaultpreemption.validate_args)),
        PluginSpec("NodeResourcesBalancedAllocation", balanced_allocation.NodeResourcesBalancedAllocation,
                   ArgsKind("NodeResourcesBalancedAllocationArgs", balanced_allocation.decode_args,
                            balanced_allocation.validate_args)),
        PluginSpec("ImageLocality", imagelocality.ImageLocality),
        PluginSpec("DefaultBinder", defaultbinder.DefaultBinder),
        # kplan's own opt-in plugins: registered, but not in the default MultiPoint set
        *extra_plugin_specs(),
    ])


def _dra_args(raw: object) -> dict[str, object]:
    from kplan.framework.registry import ArgsError
    raw = raw or {}
    assert isinstance(raw, dict)
    for k in raw:
        if k != "filterTimeout":
            raise ArgsError(f'unknown field "{k}"')
    return {"filterTimeout": raw.get("filterTimeout", "10s")}


def _dra_validate(args: dict[str, object]) -> list[str]:
    t = str(args.get("filterTimeout") or "")
    if t.startswith("-"):
        return [f"filterTimeout: Invalid value: \"{t}\": must be zero or positive"]
    return []
